//! The schema is `schema.sql`, embedded: the current version's, idempotent, applied at
//! every open. `PRAGMA user_version` records the version; an older database first runs
//! the steps after its version (they bring its existing tables to the current shape),
//! then `schema.sql` adds whatever is new. A new database runs `schema.sql` alone.

use rusqlite::{Connection, TransactionBehavior};

const SCHEMA: &str = include_str!("../../schema.sql");

/// The schema version this binary writes.
pub const VERSION: i64 = 2;

/// Forward migrations: `(version, sql)` run in order for databases older than `version`.
/// Version 1 is the base schema.
const STEPS: &[(i64, &str)] = &[(2, STEP_2)];

/// Version 2: delivery jobs carry their organization (fair claiming), and webhook
/// tokens get a sealed column (`serve` seals the plain ones at start, it has the key).
const STEP_2: &str = "
ALTER TABLE jobs ADD COLUMN org_id TEXT;
UPDATE jobs SET org_id = (SELECT w.org_id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
                          WHERE d.id = jobs.target_id)
 WHERE kind = 'deliver_webhook';
ALTER TABLE webhooks ADD COLUMN token_sealed BLOB;
";

pub fn apply(conn: &mut Connection) -> anyhow::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > VERSION {
        anyhow::bail!(
            "the database has schema version {current}, newer than this binary ({VERSION}); upgrade cfdi-extract"
        );
    }
    // Version 0 is a new database, unless a binary from before versioning made it.
    let has_tables: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs')",
        [],
        |r| r.get(0),
    )?;
    let from = if has_tables { current.max(1) } else { VERSION };
    for (version, sql) in STEPS {
        if from < *version {
            tx.execute_batch(sql)?;
        }
    }
    tx.execute_batch(SCHEMA)?;
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

    /// The tables of schema 1 that later steps change, as version 1 made them.
    const V1_TABLES: &str = "
        CREATE TABLE webhooks (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, url TEXT NOT NULL,
            token TEXT NOT NULL, events TEXT NOT NULL, created_at TEXT NOT NULL);
        CREATE TABLE deliveries (id TEXT PRIMARY KEY, webhook_id TEXT NOT NULL,
            event_id TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
            response_status INTEGER, last_error TEXT, last_attempt_at TEXT,
            next_attempt_at TEXT, created_at TEXT NOT NULL);
        CREATE TABLE jobs (id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL,
            target_id TEXT NOT NULL, serial_key TEXT, status TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0, run_at TEXT NOT NULL, locked_at TEXT,
            last_error TEXT, created_at TEXT NOT NULL);
        INSERT INTO webhooks VALUES ('w1', 'o1', 'https://a.mx', 'whsec_x', '[]', 't');
        INSERT INTO deliveries (id, webhook_id, event_id, status, created_at)
            VALUES ('d1', 'w1', 'e1', 'pending', 't');
        INSERT INTO jobs (kind, target_id, status, run_at, created_at)
            VALUES ('deliver_webhook', 'd1', 'queued', 't', 't'),
                   ('validate_credential', 'x', 'queued', 't', 't');
        PRAGMA user_version = 1;";

    #[test]
    fn a_version_1_database_steps_forward_keeping_its_rows() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        conn.execute_batch(V1_TABLES).expect("v1");
        apply(&mut conn).expect("migrate");
        let orgs: Vec<Option<String>> = conn
            .prepare("SELECT org_id FROM jobs ORDER BY id")
            .expect("prepare")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(orgs, [Some("o1".to_string()), None]);
        let (token, sealed): (String, Option<Vec<u8>>) = conn
            .query_row("SELECT token, token_sealed FROM webhooks", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("webhook");
        assert_eq!((token.as_str(), sealed), ("whsec_x", None));
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .expect("version");
        assert_eq!(v, VERSION);
        apply(&mut conn).expect("again");
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        conn.pragma_update(None, "user_version", VERSION + 1)
            .expect("set");
        assert!(apply(&mut conn).is_err());
    }
}
