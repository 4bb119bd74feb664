//! The schema is `schema.sql`, embedded. It is idempotent and applied at every open;
//! `PRAGMA user_version` records the version so later releases can step forward.

use rusqlite::{Connection, TransactionBehavior};

const SCHEMA: &str = include_str!("../../schema.sql");

/// The schema version this binary writes.
pub const VERSION: i64 = 1;

/// Forward migrations: `(version, sql)` run in order for databases older than `version`.
/// Version 1 is the base schema itself.
const STEPS: &[(i64, &str)] = &[];

pub fn apply(conn: &mut Connection) -> anyhow::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > VERSION {
        anyhow::bail!(
            "the database has schema version {current}, newer than this binary ({VERSION}); upgrade cfdi-extract"
        );
    }
    tx.execute_batch(SCHEMA)?;
    for (version, sql) in STEPS {
        if current < *version {
            tx.execute_batch(sql)?;
        }
    }
    if current != VERSION {
        tx.pragma_update(None, "user_version", VERSION)?;
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_applies_twice_and_records_its_version() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        apply(&mut conn).expect("first");
        apply(&mut conn).expect("second");
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .expect("version");
        assert_eq!(v, VERSION);
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        conn.pragma_update(None, "user_version", VERSION + 1)
            .expect("set");
        assert!(apply(&mut conn).is_err());
    }
}
