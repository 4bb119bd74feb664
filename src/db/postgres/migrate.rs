//! The PostgreSQL schema is `schema.sql` here, embedded: `schema.sql` at the top
//! translated (a change to one is made to the other), idempotent, applied at every
//! start. The version (the same `VERSION` as SQLite's) is a row of
//! `cfdi_extract_schema`. Instances starting together take turns on an advisory lock,
//! and the whole migration is one transaction (PostgreSQL's DDL is transactional): the
//! others wait, none half-applies.

use super::connection::{Connection, Single, Transaction};
use crate::db::sql::params;
use crate::db::sql::Driver;
use crate::db::sqlite::migrate::VERSION;

const SCHEMA: &str = include_str!("schema.sql");

/// The advisory lock migrations take.
const MIGRATIONS: i64 = 0x6366_6469_0002;

/// Forward steps for databases older than `version` (PostgreSQL started at 16).
const STEPS: &[(i64, &str)] = &[
    (
        17,
        "ALTER TABLE jobs ADD COLUMN IF NOT EXISTS lease_owner TEXT COLLATE \"C\";
         ALTER TABLE jobs ADD COLUMN IF NOT EXISTS lease_until TEXT COLLATE \"C\";",
    ),
    // SQLite's STEP_18: relations read a page at a time.
    (
        18,
        "ALTER TABLE invoice_relations ADD COLUMN IF NOT EXISTS invoice_issued_at TEXT COLLATE \"C\" NOT NULL DEFAULT '';
         UPDATE invoice_relations r SET invoice_issued_at = coalesce(i.issued_at, '')
             FROM invoices i WHERE i.id = r.invoice_id;
         DROP INDEX IF EXISTS invoice_relations_related;
         ALTER TABLE invoices ADD COLUMN IF NOT EXISTS credited_uuid TEXT COLLATE \"C\";
         UPDATE invoices SET credited_uuid =
             (SELECT CASE WHEN count(DISTINCT r.related_uuid) = 1 THEN min(r.related_uuid) END
              FROM invoice_relations r WHERE r.invoice_id = invoices.id AND r.relation_type IN ('01', '03'))
          WHERE id IN (SELECT invoice_id FROM invoice_relations WHERE relation_type IN ('01', '03'));
         CREATE TABLE IF NOT EXISTS invoice_relation_counts (
             invoice_id     TEXT COLLATE \"C\" NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
             related_uuid   TEXT COLLATE \"C\" NOT NULL,
             entity_id      TEXT COLLATE \"C\" NOT NULL,
             times          BIGINT NOT NULL,
             PRIMARY KEY (invoice_id, related_uuid)
         );
         INSERT INTO invoice_relation_counts (invoice_id, related_uuid, entity_id, times)
             SELECT invoice_id, related_uuid, min(entity_id), count(*) FROM invoice_relations
             GROUP BY invoice_id, related_uuid;",
    ),
    // 19: `sat_certificates`, a new table `schema.sql` creates.
    (19, ""),
    // SQLite's STEP_20: several schedules per entity, monthly ones, either document class.
    (
        20,
        "ALTER TABLE schedules DROP CONSTRAINT IF EXISTS schedules_entity_id_key;
         ALTER TABLE schedules ADD COLUMN IF NOT EXISTS monthly_day BIGINT;
         ALTER TABLE schedules ADD COLUMN IF NOT EXISTS monthly_at TEXT COLLATE \"C\";
         ALTER TABLE schedules ADD COLUMN IF NOT EXISTS months_before BIGINT;
         ALTER TABLE schedules ADD COLUMN IF NOT EXISTS document_classes TEXT COLLATE \"C\";
         CREATE INDEX IF NOT EXISTS schedules_entity ON schedules (entity_id);",
    ),
    // `idempotency_keys` is new: schema.sql adds it (see the SQLite step).
    (21, ""),
    // `suppliers` is new: schema.sql adds it (see the SQLite step).
    (24, ""),
    // SQLite's STEP_25: extractions by UUID.
    (
        25,
        "ALTER TABLE extractions ADD COLUMN IF NOT EXISTS uuids TEXT COLLATE \"C\";
         ALTER TABLE extractions ADD COLUMN IF NOT EXISTS uuids_not_found TEXT COLLATE \"C\";
         ALTER TABLE sat_requests ADD COLUMN IF NOT EXISTS folio TEXT COLLATE \"C\";",
    ),
    // SQLite's STEP_26: each document's seal verification.
    (
        26,
        "ALTER TABLE invoices ADD COLUMN IF NOT EXISTS seal_status TEXT COLLATE \"C\"
             CHECK (seal_status IN ('valid', 'invalid', 'unverified'));
         ALTER TABLE invoices ADD COLUMN IF NOT EXISTS seal_json TEXT COLLATE \"C\";
         ALTER TABLE invoices ADD COLUMN IF NOT EXISTS seal_awaits TEXT COLLATE \"C\";
         ALTER TABLE retentions ADD COLUMN IF NOT EXISTS seal_status TEXT COLLATE \"C\"
             CHECK (seal_status IN ('valid', 'invalid', 'unverified'));
         ALTER TABLE retentions ADD COLUMN IF NOT EXISTS seal_json TEXT COLLATE \"C\";
         ALTER TABLE retentions ADD COLUMN IF NOT EXISTS seal_awaits TEXT COLLATE \"C\";",
    ),
    // SQLite's version 27 (`move_seals`): each `seal` object once, in `seal_objects`,
    // under the key `db::content_key` computes (the first 16 bytes of its SHA-256, hex).
    (
        27,
        "CREATE TABLE IF NOT EXISTS seal_objects (
             key     TEXT COLLATE \"C\" PRIMARY KEY,
             object  TEXT COLLATE \"C\" NOT NULL
         );
         ALTER TABLE invoices ADD COLUMN IF NOT EXISTS seal_key TEXT COLLATE \"C\";
         ALTER TABLE retentions ADD COLUMN IF NOT EXISTS seal_key TEXT COLLATE \"C\";
         INSERT INTO seal_objects (key, object)
             SELECT DISTINCT left(encode(sha256(convert_to(seal_json, 'UTF8')), 'hex'), 32), seal_json
               FROM (SELECT seal_json FROM invoices UNION SELECT seal_json FROM retentions) o
              WHERE seal_json IS NOT NULL
             ON CONFLICT DO NOTHING;
         UPDATE invoices SET seal_key = left(encode(sha256(convert_to(seal_json, 'UTF8')), 'hex'), 32)
          WHERE seal_json IS NOT NULL;
         UPDATE retentions SET seal_key = left(encode(sha256(convert_to(seal_json, 'UTF8')), 'hex'), 32)
          WHERE seal_json IS NOT NULL;
         ALTER TABLE invoices DROP COLUMN seal_json;
         ALTER TABLE retentions DROP COLUMN seal_json;",
    ),
];

pub fn apply(conn: &Connection) -> anyhow::Result<()> {
    let tx = Transaction::with_lock(conn, MIGRATIONS)?;
    let conn = <crate::db::sql::Conn as ref_cast::RefCast>::ref_cast(tx.conn() as &dyn Driver);
    let current = Single::version(conn)?;
    if current == Some(VERSION) {
        // Current: nothing to take a table lock for (every CLI command opens the
        // database while servers write).
        return tx.commit();
    }
    // Changing it: each table a step alters is locked by the ALTER until the commit,
    // so no write lands in between.
    conn.batch("CREATE TABLE IF NOT EXISTS cfdi_extract_schema (version BIGINT NOT NULL)")?;
    if let Some(current) = current {
        if current > VERSION {
            anyhow::bail!(
                "the database has schema version {current}, newer than this binary ({VERSION}); upgrade cfdi-extract"
            );
        }
        for (version, sql) in STEPS {
            if current < *version {
                conn.batch(sql)?;
            }
        }
    }
    conn.batch(SCHEMA)?;
    match current {
        None => conn.exec(
            "INSERT INTO cfdi_extract_schema VALUES (?1)",
            params![VERSION],
        )?,
        Some(v) if v != VERSION => conn.exec(
            "UPDATE cfdi_extract_schema SET version = ?1",
            params![VERSION],
        )?,
        Some(_) => 0,
    };
    tx.commit()
}
