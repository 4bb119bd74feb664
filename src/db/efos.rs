//! SQL for the SAT's 69-B list (`efos_lists`, `efos_entries`): the entries of the list
//! loaded last, and every load as a version (`efos_lists`). A load replaces the entries
//! in one transaction, so readers see the old list or the new one, never a mix.

use rusqlite::{named_params, params, Connection, OptionalExtension};

use crate::domain::efos::{List, Situation};

/// A loaded version of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub id: i64,
    pub loaded_at: String,
    pub updated_to: Option<String>,
    pub source: String,
    pub sha256: String,
    pub entries: i64,
}

/// A taxpayer whose situation a load changed (`from` None: newly listed; `to` None:
/// no longer listed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Changed {
    pub rfc: String,
    pub name: String,
    pub from: Option<Situation>,
    pub to: Option<Situation>,
}

fn date(d: Option<chrono::NaiveDate>) -> Option<String> {
    d.map(|d| d.format("%Y-%m-%d").to_string())
}

/// The current version, if a list was ever loaded.
pub fn current(conn: &Connection) -> anyhow::Result<Option<Version>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, loaded_at, updated_to, source, sha256, entries FROM efos_lists
             ORDER BY id DESC LIMIT 1",
        )?
        .query_row([], |r| {
            Ok(Version {
                id: r.get(0)?,
                loaded_at: r.get(1)?,
                updated_to: r.get(2)?,
                source: r.get(3)?,
                sha256: r.get(4)?,
                entries: r.get(5)?,
            })
        })
        .optional()?)
}

/// Replaces the entries with `list`'s as a new version; returns it and the taxpayers
/// whose situation changed. A list identical to the current one (same SHA-256) is not
/// loaded again: None.
pub fn load(
    conn: &Connection,
    list: &List,
    source: &str,
    sha256: &str,
    now: &str,
) -> anyhow::Result<Option<(Version, Vec<Changed>)>> {
    if current(conn)?.is_some_and(|v| v.sha256 == sha256) {
        return Ok(None);
    }
    let mut before: std::collections::BTreeMap<String, (String, String)> = conn
        .prepare_cached("SELECT rfc, name, situation FROM efos_entries")?
        .query_map([], |r| Ok((r.get::<_, String>(0)?, (r.get(1)?, r.get(2)?))))?
        .collect::<Result<_, _>>()?;
    conn.execute(
        "INSERT INTO efos_lists (loaded_at, updated_to, source, sha256, entries) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![now, date(list.updated_to), source, sha256, list.entries.len() as i64],
    )?;
    let id = conn.last_insert_rowid();
    conn.execute("DELETE FROM efos_entries", [])?;
    let mut insert = conn.prepare_cached(
        "INSERT INTO efos_entries (rfc, list_id, name, situation, presumed_sat, presumed_dof,
            disproved_sat, disproved_dof, definitive_sat, definitive_dof, favorable_sat, favorable_dof)
         VALUES (:rfc, :list, :name, :situation, :ps, :pd, :ds, :dd, :fs, :fd, :ss, :sd)",
    )?;
    let mut changed = vec![];
    for e in &list.entries {
        insert.execute(named_params! {
            ":rfc": e.rfc, ":list": id, ":name": e.name, ":situation": e.situation.as_str(),
            ":ps": date(e.presumed.sat), ":pd": date(e.presumed.dof),
            ":ds": date(e.disproved.sat), ":dd": date(e.disproved.dof),
            ":fs": date(e.definitive.sat), ":fd": date(e.definitive.dof),
            ":ss": date(e.favorable.sat), ":sd": date(e.favorable.dof),
        })?;
        let from = before
            .remove(&e.rfc)
            .and_then(|(_, s)| Situation::parse(&s));
        if from != Some(e.situation) {
            changed.push(Changed {
                rfc: e.rfc.clone(),
                name: e.name.clone(),
                from,
                to: Some(e.situation),
            });
        }
    }
    changed.extend(before.into_iter().map(|(rfc, (name, s))| Changed {
        rfc,
        name,
        from: Situation::parse(&s),
        to: None,
    }));
    let version = current(conn)?.ok_or_else(|| anyhow::anyhow!("the list just loaded is gone"))?;
    Ok(Some((version, changed)))
}
