//! The planner's statistics, kept up with the tables. PostgreSQL's autovacuum analyzes
//! a table a minute or more after it changed, one table at a time and slowed by its
//! cost delay; until then a new database's plans come from an empty table's
//! statistics. With those the planner read an invoice by id through a partial index on
//! its organization, every row of the organization checked in turn, and an ingest on a
//! new database ran at 235 invoices/s (`bench/run engines`). So while the server runs,
//! a thread looks every few seconds for tables changed by more rows than they held at
//! their last analysis (a table that doubled: plans need the sizes' order of magnitude,
//! and an ANALYZE of a wide table costs most of a second) and analyzes them; one
//! instance at a time (an advisory lock tried, not waited on), and the others find
//! nothing left to do. Autovacuum refines the statistics later, as ever.

use crate::db::sql::params;
use crate::db::store::Db;
use crate::periodic::Periodic;
use std::time::Duration;

const INTERVAL: Duration = Duration::from_secs(2);

/// Rows changed, beyond the table's count at its last analysis, that make it worth
/// analyzing again.
const CHANGED_ROWS: i64 = 500;

pub fn start(db: &Db) -> anyhow::Result<Periodic> {
    let db = db.clone();
    Periodic::spawn("statistics", INTERVAL, move || {
        if let Err(e) = analyze_changed(&db) {
            log::debug!("analyzing changed tables: {e:#}");
        }
        INTERVAL
    })
}

/// Analyzes the schema's tables changed enough since their last analysis (by anyone,
/// autovacuum included); how many.
pub fn analyze_changed(db: &Db) -> anyhow::Result<usize> {
    db.tx(|tx| {
        let ours: bool = tx.one(
            "SELECT pg_try_advisory_xact_lock(hashtextextended('statistics', 0))",
            params![],
            |r| r.get(0),
        )?;
        if !ours {
            return Ok(0);
        }
        // The count at the last analysis is `reltuples` (-1 before the first): against
        // the live count, a table that only grew by inserts was never analyzed again.
        let tables = tx.all(
            "SELECT format('%I.%I', s.schemaname, s.relname)
               FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
              WHERE s.schemaname = current_schema()
                AND s.n_mod_since_analyze > ?1 + GREATEST(c.reltuples, 0)::bigint",
            params![CHANGED_ROWS],
            |r| r.get::<String>(0),
        )?;
        if !tables.is_empty() {
            tx.batch(&format!("ANALYZE {}", tables.join(", ")))?;
        }
        Ok(tables.len())
    })
}
