//! SQL for the SAT's 69-B list (`efos_lists`, `efos_entries`): the entries of the list
//! loaded last, and every load as a version (`efos_lists`). A load replaces the entries
//! in one transaction, so readers see the old list or the new one, never a mix; its
//! rows are staged (`efos_staging`) and compared with the current ones
//! (`efos_changes`) in SQL, both tables empty outside a load.

use super::sql::{params, Row};
use super::Conn;

use crate::domain::list_69b::{Entry, FlaggedInvoice, Listed, Published, Situation};

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

/// Stages one row of a list being loaded (in the load's transaction); a repeated RFC
/// keeps its last row. `replace` makes the staged rows the current list.
pub fn stage(conn: &Conn, e: &Entry) -> anyhow::Result<()> {
    conn.exec(
        "INSERT INTO efos_staging (rfc, name, situation, presumed_sat, presumed_dof,
            disproved_sat, disproved_dof, definitive_sat, definitive_dof, favorable_sat, favorable_dof)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
         ON CONFLICT (rfc) DO UPDATE SET name = excluded.name, situation = excluded.situation,
            presumed_sat = excluded.presumed_sat, presumed_dof = excluded.presumed_dof,
            disproved_sat = excluded.disproved_sat, disproved_dof = excluded.disproved_dof,
            definitive_sat = excluded.definitive_sat, definitive_dof = excluded.definitive_dof,
            favorable_sat = excluded.favorable_sat, favorable_dof = excluded.favorable_dof",
        params![
            e.rfc,
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
    Ok(())
}

/// How many rows a statement of `replace` moves between the tables: one statement over
/// a million rows would keep every page it rewrites (free pages the last load left,
/// already in the file) in SQLite's statement journal, which is in memory
/// (`temp_store = MEMORY`).
const PAGE: i64 = 5000;

/// Calls `f` with consecutive ranges `(from, to]` of `table`'s RFCs, `PAGE` at a time.
fn by_pages(
    conn: &Conn,
    table: &str,
    mut f: impl FnMut(&str, &str) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let sql = format!(
        "SELECT max(rfc) FROM (SELECT rfc FROM {table} WHERE rfc > ?1 ORDER BY rfc LIMIT ?2) page"
    );
    let mut from = String::new();
    while let Some(to) = conn.one::<Option<String>>(&sql, params![from, PAGE], |r| r.get(0))? {
        f(&from, &to)?;
        from = to;
    }
    Ok(())
}

/// Makes the staged rows the entries, as a new version; returns it and how many
/// taxpayers' situation changed (newly listed, moved, or no longer listed), which stay
/// in `efos_changes` for `change` and `each_invoice_changed` until `forget_changes`.
/// All in SQL, a page at a time, so a load of any length takes the same memory.
pub fn replace(
    conn: &Conn,
    updated_to: Option<chrono::NaiveDate>,
    source: &str,
    sha256: &str,
    now: &str,
) -> anyhow::Result<(Version, u64)> {
    by_pages(conn, "efos_staging", |from, to| {
        conn.exec(
            "INSERT INTO efos_changes (rfc, name, previous, situation)
             SELECT s.rfc, s.name, e.situation, s.situation
             FROM efos_staging s LEFT JOIN efos_entries e ON e.rfc = s.rfc
             WHERE s.rfc > ?1 AND s.rfc <= ?2 AND e.situation IS DISTINCT FROM s.situation",
            params![from, to],
        )?;
        Ok(())
    })?;
    by_pages(conn, "efos_entries", |from, to| {
        conn.exec(
            "INSERT INTO efos_changes (rfc, name, previous, situation)
             SELECT e.rfc, e.name, e.situation, NULL FROM efos_entries e
             WHERE e.rfc > ?1 AND e.rfc <= ?2
               AND NOT EXISTS (SELECT 1 FROM efos_staging s WHERE s.rfc = e.rfc)",
            params![from, to],
        )?;
        Ok(())
    })?;
    let id: i64 = conn.one(
        "INSERT INTO efos_lists (loaded_at, updated_to, source, sha256, entries)
         VALUES (?1, ?2, ?3, ?4, (SELECT count(*) FROM efos_staging))
         RETURNING id",
        params![now, date(updated_to), source, sha256],
        |r| r.get(0),
    )?;
    // Not one DELETE: with foreign keys on, SQLite deletes the rows of a table that has
    // one a row at a time (it does not truncate), every page into the statement journal.
    by_pages(conn, "efos_entries", |from, to| {
        conn.exec(
            "DELETE FROM efos_entries WHERE rfc > ?1 AND rfc <= ?2",
            params![from, to],
        )?;
        Ok(())
    })?;
    by_pages(conn, "efos_staging", |from, to| {
        conn.exec(
            "INSERT INTO efos_entries (rfc, list_id, name, situation, presumed_sat, presumed_dof,
                disproved_sat, disproved_dof, definitive_sat, definitive_dof, favorable_sat, favorable_dof)
             SELECT rfc, ?3, name, situation, presumed_sat, presumed_dof,
                disproved_sat, disproved_dof, definitive_sat, definitive_dof, favorable_sat, favorable_dof
             FROM efos_staging WHERE rfc > ?1 AND rfc <= ?2",
            params![from, to, id],
        )?;
        Ok(())
    })?;
    conn.exec("DELETE FROM efos_staging", params![])?;
    let changed: i64 = conn.one("SELECT count(*) FROM efos_changes", params![], |r| r.get(0))?;
    let version = current(conn)?.ok_or_else(|| anyhow::anyhow!("the list just loaded is gone"))?;
    Ok((version, changed.try_into()?))
}

/// How the load under way changed `rfc` (upper case), if it did.
pub fn change(conn: &Conn, rfc: &str) -> anyhow::Result<Option<Changed>> {
    conn.opt(
        "SELECT rfc, name, previous, situation FROM efos_changes WHERE rfc = ?1",
        params![rfc],
        |r| {
            let situation = |i: usize| -> anyhow::Result<_> {
                Ok(r.get::<Option<String>>(i)?
                    .as_deref()
                    .and_then(Situation::parse))
            };
            Ok(Changed {
                rfc: r.get(0)?,
                name: r.get(1)?,
                from: situation(2)?,
                to: situation(3)?,
            })
        },
    )
}

/// Ends a load: its changes are told (its events written).
pub fn forget_changes(conn: &Conn) -> anyhow::Result<()> {
    conn.exec("DELETE FROM efos_changes", params![])?;
    Ok(())
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

/// How many changed taxpayers `each_invoice_changed` looks up at once.
const CHANGES_PAGE: i64 = 500;

/// Calls `f` with each processed invoice, of any organization, whose counterparty the
/// load under way changed (`replace`), a page of changed taxpayers at a time.
pub fn each_invoice_changed(
    conn: &Conn,
    mut f: impl FnMut(Exposed, &FlaggedInvoice),
) -> anyhow::Result<()> {
    let sql = invoices_with_sql(conn);
    let mut after = String::new();
    loop {
        let rfcs: Vec<String> = conn.all(
            "SELECT rfc FROM efos_changes WHERE rfc > ?1 ORDER BY rfc LIMIT ?2",
            params![after, CHANGES_PAGE],
            |r| r.get(0),
        )?;
        let Some(last) = rfcs.last().cloned() else {
            return Ok(());
        };
        conn.each(&sql, params![serde_json::to_string(&rfcs)?], |r| {
            let exposed = Exposed {
                org_id: r.get(0)?,
                entity_id: r.get(1)?,
                rfc: r.get(2)?,
            };
            f(exposed, &flagged_invoice(r, 3)?);
            Ok(())
        })?;
        after = last;
    }
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
    use super::*;
    use crate::db::Memory;

    fn entry(rfc: &str, situation: Situation) -> Entry {
        Entry {
            rfc: rfc.into(),
            name: format!("{rfc} SA"),
            situation,
            presumed: Published::default(),
            disproved: Published::default(),
            definitive: Published::default(),
            favorable: Published::default(),
        }
    }

    fn load(conn: &Conn, entries: &[Entry], sha: &str) -> (Version, u64) {
        for e in entries {
            stage(conn, e).expect("stage");
        }
        replace(conn, None, "test", sha, "now").expect("replace")
    }

    fn count(conn: &Conn, table: &str) -> i64 {
        crate::db::testing::count(conn, table)
    }

    #[test]
    fn a_load_replaces_the_entries_and_records_what_it_changed() {
        use Situation::*;
        let conn = Memory::new();
        let (first, changed) = load(
            &conn,
            &[
                entry("AAA010101AAA", Presumed),
                entry("BBB010101BBB", Definitive),
                entry("CCC010101CCC", Disproved),
            ],
            "1",
        );
        assert_eq!((first.entries, changed), (3, 3), "all newly listed");
        forget_changes(&conn).expect("forget");
        // A moves, B stays, C goes, D comes (twice: its last row counts).
        let (second, changed) = load(
            &conn,
            &[
                entry("AAA010101AAA", Definitive),
                entry("BBB010101BBB", Definitive),
                entry("DDD010101DDD", Presumed),
                entry("DDD010101DDD", FavorableRuling),
            ],
            "2",
        );
        assert_eq!((second.id, second.entries, changed), (first.id + 1, 3, 3));
        let moved = |rfc: &str| change(&conn, rfc).expect("change").map(|c| (c.from, c.to));
        assert_eq!(
            moved("AAA010101AAA"),
            Some((Some(Presumed), Some(Definitive)))
        );
        assert_eq!(moved("BBB010101BBB"), None);
        assert_eq!(moved("CCC010101CCC"), Some((Some(Disproved), None)));
        assert_eq!(moved("DDD010101DDD"), Some((None, Some(FavorableRuling))));
        let d = entry_of(&conn, "DDD010101DDD");
        assert_eq!(
            (d.entry.situation, d.list_version),
            (FavorableRuling, second.id)
        );
        assert!(super::entry(&conn, "CCC010101CCC")
            .expect("entry")
            .is_none());
        assert_eq!(count(&conn, "efos_staging"), 0, "staging is emptied");
        forget_changes(&conn).expect("forget");
        assert_eq!(count(&conn, "efos_changes"), 0);
    }

    fn entry_of(conn: &Conn, rfc: &str) -> Listed {
        super::entry(conn, rfc).expect("entry").expect("listed")
    }

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
