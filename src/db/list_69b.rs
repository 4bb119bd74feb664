//! SQL for the SAT's 69-B list (`efos_lists`, `efos_entries`): the entries of the list
//! loaded last, and every load as a version (`efos_lists`). A load replaces the entries
//! in one transaction, so readers see the old list or the new one, never a mix.

use super::sql::{params, Row};
use super::Conn;

use crate::domain::list_69b::{Entry, FlaggedInvoice, List, Listed, Published, Situation};

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
pub fn current(conn: &Conn) -> anyhow::Result<Option<Version>> {
    conn.opt(
        "SELECT id, loaded_at, updated_to, source, sha256, entries FROM efos_lists
             ORDER BY id DESC LIMIT 1",
        params![],
        |r| {
            Ok(Version {
                id: r.get(0)?,
                loaded_at: r.get(1)?,
                updated_to: r.get(2)?,
                source: r.get(3)?,
                sha256: r.get(4)?,
                entries: r.get(5)?,
            })
        },
    )
}

/// Replaces the entries with `list`'s as a new version; returns it and the taxpayers
/// whose situation changed. A list identical to the current one (same SHA-256) is not
/// loaded again: None.
pub fn load(
    conn: &Conn,
    list: &List,
    source: &str,
    sha256: &str,
    now: &str,
) -> anyhow::Result<Option<(Version, Vec<Changed>)>> {
    if current(conn)?.is_some_and(|v| v.sha256 == sha256) {
        return Ok(None);
    }
    let mut before: std::collections::BTreeMap<String, (String, String)> = Default::default();
    conn.each(
        "SELECT rfc, name, situation FROM efos_entries",
        params![],
        |r| {
            before.insert(r.get(0)?, (r.get(1)?, r.get(2)?));
            Ok(())
        },
    )?;
    let id: i64 = conn.one(
        "INSERT INTO efos_lists (loaded_at, updated_to, source, sha256, entries) VALUES (?1, ?2, ?3, ?4, ?5)
         RETURNING id",
        params![now, date(list.updated_to), source, sha256, list.entries.len() as i64],
        |r| r.get(0),
    )?;
    conn.exec("DELETE FROM efos_entries", params![])?;
    let mut changed = vec![];
    for e in &list.entries {
        conn.exec(
            "INSERT INTO efos_entries (rfc, list_id, name, situation, presumed_sat, presumed_dof,
            disproved_sat, disproved_dof, definitive_sat, definitive_dof, favorable_sat, favorable_dof)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
            params![
                e.rfc,
                id,
                e.name,
                e.situation.as_str(),
                date(e.presumed.sat),
                date(e.presumed.dof),
                date(e.disproved.sat),
                date(e.disproved.dof),
                date(e.definitive.sat),
                date(e.definitive.dof),
                date(e.favorable.sat),
                date(e.favorable.dof),
            ],
        )?;
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

/// An entry's columns (`l.`), with its version; `listed` reads them from `at` on.
pub const LISTED_COLUMNS: &str = "l.rfc, l.name, l.situation, l.presumed_sat, l.presumed_dof,
    l.disproved_sat, l.disproved_dof, l.definitive_sat, l.definitive_dof, l.favorable_sat,
    l.favorable_dof, l.list_id";
const LISTED_WIDTH: usize = 12;

/// The entry in `LISTED_COLUMNS` from `at` on; None when they are NULL (a LEFT JOIN
/// that found none).
pub fn listed(r: &Row, at: usize) -> anyhow::Result<Option<Listed>> {
    let Some(rfc) = r.get::<Option<String>>(at)? else {
        return Ok(None);
    };
    let day = |i: usize| -> anyhow::Result<Option<chrono::NaiveDate>> {
        Ok(r.get::<Option<String>>(at + i)?
            .and_then(|d| chrono::NaiveDate::parse_from_str(&d, "%Y-%m-%d").ok()))
    };
    let published = |i: usize| -> anyhow::Result<Published> {
        Ok(Published {
            sat: day(i)?,
            dof: day(i + 1)?,
        })
    };
    let situation: String = r.get(at + 2)?;
    Ok(Some(Listed {
        entry: Entry {
            rfc,
            name: r.get(at + 1)?,
            situation: Situation::parse(&situation)
                .ok_or_else(|| anyhow::anyhow!("unknown 69-B situation {situation:?}"))?,
            presumed: published(3)?,
            disproved: published(5)?,
            definitive: published(7)?,
            favorable: published(9)?,
        },
        list_version: r.get(at + 11)?,
    }))
}

/// The counterparty of an invoice row: the receiver of an issued one, the issuer of a
/// received one, as the list keys it.
/// Exactly the expression of the index `invoices_counterparty` on each engine, or the
/// screening scans every invoice.
fn counterparty(conn: &Conn) -> &'static str {
    conn.pick(
        "upper(iif(i.direction = 'issued', i.receiver_tax_id, i.issuer_tax_id))",
        "upper(CASE WHEN i.direction = 'issued' THEN i.receiver_tax_id ELSE i.issuer_tax_id END)",
    )
}

/// Which of an entity's invoices `each_flagged_invoice` reads.
#[derive(Debug, Default, Clone)]
pub struct Flagged<'a> {
    pub direction: Option<&'a str>,
    /// `YYYY-MM-DD`: issued on or after `from`, before `before`.
    pub period: Option<(&'a str, &'a str)>,
    pub situation: Option<Situation>,
}

fn flagged_invoice(r: &Row, at: usize) -> anyhow::Result<FlaggedInvoice> {
    let amount = |i: usize| -> anyhow::Result<rust_decimal::Decimal> {
        Ok(super::invoices::dec(r.get(at + i)?).unwrap_or_default())
    };
    Ok(FlaggedInvoice {
        direction: r.get(at)?,
        currency: r.get(at + 1)?,
        subtotal: amount(2)?,
        total: amount(3)?,
        cancelled: r.get::<String>(at + 4)? == "cancelled",
    })
}

const INVOICE_COLUMNS: &str = "i.direction, i.currency, i.subtotal, i.total, i.status";

/// Calls `f` with each processed invoice of the entity whose counterparty is on the
/// list, with the counterparty's entry.
pub fn each_flagged_invoice(
    conn: &Conn,
    org_id: &str,
    entity_id: &str,
    which: &Flagged,
    mut f: impl FnMut(&Listed, &FlaggedInvoice),
) -> anyhow::Result<()> {
    let (from, before) = which.period.unwrap_or(("", "\u{10FFFF}"));
    let counterparty = counterparty(conn);
    conn.each(
        &format!(
            "SELECT {LISTED_COLUMNS}, {INVOICE_COLUMNS}
         FROM invoices i JOIN efos_entries l ON l.rfc = {counterparty}
         WHERE i.entity_id = ?1 AND i.org_id = ?2 AND i.xml_processed = 1
           AND (?3 IS NULL OR i.direction = ?3)
           AND i.issued_at >= ?4 AND i.issued_at < ?5
           AND (?6 IS NULL OR l.situation = ?6)"
        ),
        params![
            entity_id,
            org_id,
            which.direction,
            from,
            before,
            which.situation.map(Situation::as_str),
        ],
        |r| {
            if let Some(listed) = listed(r, 0)? {
                f(&listed, &flagged_invoice(r, LISTED_WIDTH)?);
            }
            Ok(())
        },
    )
}

/// An entity with invoices whose counterparty is one of a load's changed taxpayers.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Exposed {
    pub org_id: String,
    pub entity_id: String,
    pub rfc: String,
}

/// Served by `invoices_counterparty`: a load's events never scan every invoice in its
/// write transaction.
fn invoices_with_sql(conn: &Conn) -> String {
    let counterparty = counterparty(conn);
    format!(
        "SELECT i.org_id, i.entity_id, {counterparty}, {INVOICE_COLUMNS} FROM invoices i
         WHERE i.xml_processed = 1 AND {counterparty} IN (SELECT value FROM json_each(?1))"
    )
}

/// Calls `f` with each processed invoice, of any organization, whose counterparty is
/// in `rfcs` (upper case).
pub fn each_invoice_with(
    conn: &Conn,
    rfcs: &[&str],
    mut f: impl FnMut(Exposed, &FlaggedInvoice),
) -> anyhow::Result<()> {
    if rfcs.is_empty() {
        return Ok(());
    }
    conn.each(
        &invoices_with_sql(conn),
        params![serde_json::to_string(rfcs)?],
        |r| {
            let exposed = Exposed {
                org_id: r.get(0)?,
                entity_id: r.get(1)?,
                rfc: r.get(2)?,
            };
            f(exposed, &flagged_invoice(r, 3)?);
            Ok(())
        },
    )
}

/// The entry of `rfc` (upper case) on the list loaded last.
pub fn entry(conn: &Conn, rfc: &str) -> anyhow::Result<Option<Listed>> {
    Ok(conn
        .opt(
            &format!("SELECT {LISTED_COLUMNS} FROM efos_entries l WHERE l.rfc = ?1"),
            params![rfc],
            |r| listed(r, 0),
        )?
        .flatten())
}

#[cfg(test)]
mod tests {
    use super::params;
    use crate::db::Memory;

    #[test]
    fn a_loads_events_find_invoices_by_their_counterparty_index() {
        let conn = Memory::new();
        let plan: Vec<String> = conn
            .all(
                &format!("EXPLAIN QUERY PLAN {}", super::invoices_with_sql(&conn)),
                params!["[]"],
                |r| r.get::<String>(3),
            )
            .expect("explain");
        let plan = plan.join("\n");
        assert!(plan.contains("USING INDEX invoices_counterparty"), "{plan}");
    }
}
