//! The schema is `schema.sql`, embedded: the current version's, idempotent, applied at
//! every open. `PRAGMA user_version` records the version; an older database first runs
//! the steps after its version (they bring its existing tables to the current shape),
//! then `schema.sql` adds whatever is new. A new database runs `schema.sql` alone.

use rusqlite::{Connection, Transaction, TransactionBehavior};

const SCHEMA: &str = include_str!("../../../schema.sql");

/// The schema version this binary writes.
pub const VERSION: i64 = 27;

/// Forward migrations: `(version, sql)` run in order for databases older than `version`.
/// Version 1 is the base schema.
const STEPS: &[(i64, &str)] = &[
    (2, STEP_2),
    (3, STEP_3),
    (4, STEP_4),
    (5, STEP_5),
    (6, STEP_6),
    (7, STEP_7),
    (8, STEP_8),
    (9, STEP_9),
    (10, STEP_10),
    (11, STEP_11),
    (12, STEP_12),
    (13, STEP_13),
    (14, STEP_14),
    (15, STEP_15),
    (16, STEP_16),
    (17, STEP_17),
    (18, STEP_18),
    (19, STEP_19),
    (20, STEP_20),
    (21, STEP_21),
    (24, STEP_24),
    (25, STEP_25),
    (26, STEP_26),
];

/// Version 2: delivery jobs carry their organization (fair claiming), and webhook
/// tokens get a sealed column (`serve` seals the plain ones at start, it has the key).
const STEP_2: &str = "
ALTER TABLE jobs ADD COLUMN org_id TEXT;
UPDATE jobs SET org_id = (SELECT w.org_id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
                          WHERE d.id = jobs.target_id)
 WHERE kind = 'deliver_webhook';
ALTER TABLE webhooks ADD COLUMN token_sealed BLOB;
";

/// Version 3: an invoice's concepts in pages of 1,000 (`ITEMS_PAGE` in db/invoices/mod.rs).
/// `invoices.items_json` keeps the first page (what the invoice object carries) and
/// `items_count` the total; later pages go to `invoice_item_pages`, so no read has to
/// load a 200,000-item document whole. Existing rows are split the same way.
const STEP_3: &str = "
ALTER TABLE invoices ADD COLUMN items_count INTEGER;
CREATE TABLE IF NOT EXISTS invoice_item_pages (
    invoice_id  TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    page        INTEGER NOT NULL,   -- items [page * 1000, page * 1000 + 1000)
    items_json  TEXT NOT NULL,
    PRIMARY KEY (invoice_id, page)
) WITHOUT ROWID;
UPDATE invoices SET items_count = json_array_length(items_json) WHERE items_json IS NOT NULL;
INSERT INTO invoice_item_pages (invoice_id, page, items_json)
    SELECT i.id, j.key / 1000, json_group_array(json(j.value) ORDER BY j.key)
    FROM invoices i, json_each(i.items_json) j
    WHERE i.items_count > 1000 AND j.key >= 1000
    GROUP BY i.id, j.key / 1000;
UPDATE invoices SET items_json =
    (SELECT json_group_array(json(j.value) ORDER BY j.key) FROM json_each(invoices.items_json) j
     WHERE j.key < 1000)
    WHERE items_count > 1000;
";

/// Version 4: extractions record their channel (`ciec` or `efirma`) and may fail with
/// the web service's own reasons. SQLite cannot change a CHECK in place, so the table is
/// rebuilt (nothing references it by foreign key).
const STEP_4: &str = "
CREATE TABLE extractions_v4 (
    id                  TEXT PRIMARY KEY,
    org_id              TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    entity_id           TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    status              TEXT NOT NULL CHECK (status IN ('pending', 'running', 'finished', 'failed')),
    period_from         TEXT NOT NULL,
    period_to           TEXT NOT NULL,
    download_type       TEXT NOT NULL CHECK (download_type IN ('issued', 'received')),
    started_at          TEXT,
    finished_at         TEXT,
    failed_reason       TEXT CHECK (failed_reason IN ('invalid_credentials', 'credentials_not_validated', 'sat_unavailable', 'internal_error',
                                                      'sat_request_limit', 'sat_request_rejected')),
    channel             TEXT CHECK (channel IN ('ciec', 'efirma')),
    invoices_found      INTEGER NOT NULL DEFAULT 0,
    invoices_processed  INTEGER NOT NULL DEFAULT 0,
    progress            INTEGER NOT NULL DEFAULT 0,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL
);
INSERT INTO extractions_v4 (id, org_id, entity_id, status, period_from, period_to, download_type,
    started_at, finished_at, failed_reason, channel, invoices_found, invoices_processed, progress,
    created_at, updated_at)
SELECT id, org_id, entity_id, status, period_from, period_to, download_type,
    started_at, finished_at, failed_reason, CASE WHEN started_at IS NULL THEN NULL ELSE 'ciec' END,
    invoices_found, invoices_processed, progress, created_at, updated_at
FROM extractions;
DROP TABLE extractions;
ALTER TABLE extractions_v4 RENAME TO extractions;
";

/// Version 5: an extraction a schedule started names it. `schema.sql` then adds the
/// `schedules` table and the index on this column.
const STEP_5: &str = "ALTER TABLE extractions ADD COLUMN schedule_id TEXT;";

/// Version 6: invoice events. `events.event` loses its CHECK (the names come from code),
/// so the table is rebuilt. `deliveries` references it with ON DELETE CASCADE: `apply`
/// runs the steps with foreign keys off, or dropping the old table would delete every
/// delivery. `schema.sql` then adds the feed's indexes and `invoice_changes`.
const STEP_6: &str = "
CREATE TABLE events_v6 (
    id          TEXT PRIMARY KEY,
    org_id      TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    event       TEXT NOT NULL,
    source      TEXT NOT NULL,
    payload     TEXT NOT NULL,
    created_at  TEXT NOT NULL
);
INSERT INTO events_v6 (id, org_id, event, source, payload, created_at)
SELECT id, org_id, event, source, payload, created_at FROM events;
DROP TABLE events;
ALTER TABLE events_v6 RENAME TO events;
";

/// Version 7: a job remembers the API request that caused it, so that its log lines
/// carry that request's id (`crate::origin`). Self-contained: it needs no other step.
const STEP_7: &str = "ALTER TABLE jobs ADD COLUMN request_id TEXT;";

/// Version 8: documents are stored compressed and name their codec. Existing rows are
/// not rewritten: they read as `identity`, byte for byte as before.
const STEP_8: &str = "ALTER TABLE documents ADD COLUMN codec TEXT NOT NULL DEFAULT 'identity';";

/// Version 9: issuers' certificates are stored once (`schema.sql` adds `certificates`).
/// Existing rows keep theirs inside their XML (`certificate_id` NULL).
const STEP_9: &str =
    "ALTER TABLE documents ADD COLUMN certificate_id INTEGER REFERENCES certificates(id);";

/// Version 10: the taxes a document states outside its concepts (`cfdi::StatedTaxes`:
/// CFDI 3.2's, local and payroll taxes), for the period summary. Rows stored before
/// read as none until their document is imported or extracted again.
const STEP_10: &str = "ALTER TABLE invoices ADD COLUMN stated_taxes_json TEXT;";

/// Version 11: the sandbox keeps its state in a store of its own (`db::sandbox`,
/// `sandbox.db`); the service's database drops its copy. A sandbox e.firma request in
/// flight is forgotten: its run asks the sandbox again.
const STEP_11: &str = "
DROP TABLE IF EXISTS sandbox_bulk_downloads;
DROP TABLE IF EXISTS sandbox_bulk_requests;
DROP TABLE IF EXISTS sandbox_listings;
";

/// Version 12: the index the SAT workers claim through takes their lane's name
/// (`jobs_sat_due`, created by `schema.sql`).
const STEP_12: &str = "DROP INDEX IF EXISTS jobs_provider_due;";

/// Version 13: CFDI de Retenciones (`retentions`, `retention_documents`). New tables
/// only, which `schema.sql` creates: no existing row changes.
const STEP_13: &str = "";

/// Version 14: the SAT's status of each invoice (`sat::status`). Every stored invoice
/// gets a first check, oldest first; `schema.sql` then adds the checker's index.
const STEP_14: &str = "
ALTER TABLE invoices ADD COLUMN sat_state TEXT CHECK (sat_state IN ('active', 'cancelled', 'not_found', 'not_registered'));
ALTER TABLE invoices ADD COLUMN sat_cancellable TEXT CHECK (sat_cancellable IN ('not_cancellable', 'without_acceptance', 'with_acceptance'));
ALTER TABLE invoices ADD COLUMN sat_cancellation_status TEXT CHECK (sat_cancellation_status IN ('in_process', 'deadline_passed',
    'cancelled_with_acceptance', 'cancelled_without_acceptance', 'rejected'));
ALTER TABLE invoices ADD COLUMN sat_efos TEXT CHECK (sat_efos IN ('listed', 'not_listed', 'unknown'));
ALTER TABLE invoices ADD COLUMN sat_checked_at TEXT;
ALTER TABLE invoices ADD COLUMN sat_not_found_since TEXT;
ALTER TABLE invoices ADD COLUMN sat_check_at TEXT;
ALTER TABLE invoices ADD COLUMN sat_check_urgent INTEGER NOT NULL DEFAULT 0;
UPDATE invoices SET sat_check_at = created_at WHERE xml_processed = 1;
";

/// Version 15: an extraction names its document class (existing runs are invoices);
/// `schema.sql` adds the retentions' listing statuses and their event marks.
const STEP_15: &str = "
ALTER TABLE extractions ADD COLUMN document_class TEXT NOT NULL DEFAULT 'invoices'
    CHECK (document_class IN ('invoices', 'retentions'));
";

/// Version 16: each invoice's CFDI relations (`invoice_relations`, read both ways) and
/// the index of its 69-B counterparty. The relations of the invoices already stored are
/// read from their XML at the server's start (`ops::relations_backfill`); the version
/// makes an older binary, which would store invoices without them, refuse the database.
const STEP_16: &str = "
CREATE TABLE IF NOT EXISTS invoice_relations (
    invoice_id     TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    entity_id      TEXT NOT NULL,
    relation_type  TEXT,
    related_uuid   TEXT NOT NULL,
    PRIMARY KEY (invoice_id, position)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS invoice_relations_related ON invoice_relations (entity_id, related_uuid);
CREATE INDEX IF NOT EXISTS invoices_counterparty
    ON invoices (upper(iif(direction = 'issued', receiver_tax_id, issuer_tax_id))) WHERE xml_processed = 1;
";

/// Version 17: what several instances on one PostgreSQL database share. A running
/// job's lease (`db::lease`): which instance holds it and until when, so a dead one's
/// jobs are requeued once it runs out; and failed logins (`login_failures`, created by
/// `schema.sql`), so the throttle counts across instances. On SQLite one process holds
/// the database: it recovers every running job at start and counts failures in memory.
const STEP_17: &str = "
ALTER TABLE jobs ADD COLUMN lease_owner TEXT;
ALTER TABLE jobs ADD COLUMN lease_until TEXT;
";

/// Version 18: relations are read a page at a time (`db::invoices::relations`). Each row
/// carries its invoice's `issued_at`, so the index that finds the documents naming an
/// invoice (replacing `invoice_relations_related`, created by `schema.sql`) also reads
/// them in their order; each invoice carries the one UUID its 01/03 relations name, so a
/// credit note counts once however many relations it writes; and how many times each
/// document names each UUID is kept (`invoice_relation_counts`, created by `schema.sql`
/// and filled here), so counting what names an invoice reads a row per document.
const STEP_18: &str = "
ALTER TABLE invoice_relations ADD COLUMN invoice_issued_at TEXT NOT NULL DEFAULT '';
UPDATE invoice_relations SET invoice_issued_at =
    coalesce((SELECT issued_at FROM invoices WHERE invoices.id = invoice_relations.invoice_id), '');
DROP INDEX IF EXISTS invoice_relations_related;
ALTER TABLE invoices ADD COLUMN credited_uuid TEXT;
UPDATE invoices SET credited_uuid =
    (SELECT CASE WHEN count(DISTINCT r.related_uuid) = 1 THEN min(r.related_uuid) END
     FROM invoice_relations r WHERE r.invoice_id = invoices.id AND r.relation_type IN ('01', '03'))
 WHERE id IN (SELECT invoice_id FROM invoice_relations WHERE relation_type IN ('01', '03'));
CREATE TABLE IF NOT EXISTS invoice_relation_counts (
    invoice_id     TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    related_uuid   TEXT NOT NULL,
    entity_id      TEXT NOT NULL,
    times          INTEGER NOT NULL,
    PRIMARY KEY (invoice_id, related_uuid)
) WITHOUT ROWID;
INSERT INTO invoice_relation_counts (invoice_id, related_uuid, entity_id, times)
    SELECT invoice_id, related_uuid, min(entity_id), count(*) FROM invoice_relations
    GROUP BY invoice_id, related_uuid;
";

/// Version 19: the SAT's stamping certificates (`sat_certificates`, a new table that
/// `schema.sql` creates), so stamps verify offline (`seal`). No existing row changes.
const STEP_19: &str = "";

/// Version 20: the month closes itself (issue 40). An entity may have several schedules,
/// monthly ones among them, extracting either document class: `schedules` loses the
/// UNIQUE on `entity_id` (SQLite cannot drop it in place, so the table is rebuilt; it is
/// created first for a database from before version 5, which has none yet) and gains its
/// monthly timing and classes (its indexes go with the old table and are made again).
const STEP_20: &str = "
CREATE TABLE IF NOT EXISTS schedules (
    id TEXT PRIMARY KEY, org_id TEXT NOT NULL, entity_id TEXT NOT NULL UNIQUE,
    directions TEXT NOT NULL, every_seconds INTEGER, daily_at TEXT, lookback_days INTEGER NOT NULL,
    status TEXT NOT NULL, paused_reason TEXT, next_run_at TEXT NOT NULL, last_run_at TEXT,
    created_at TEXT NOT NULL, updated_at TEXT NOT NULL
);
CREATE TABLE schedules_v20 (
    id              TEXT PRIMARY KEY,
    org_id          TEXT NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
    entity_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    directions      TEXT NOT NULL,
    every_seconds   INTEGER,
    daily_at        TEXT,
    lookback_days   INTEGER NOT NULL,
    status          TEXT NOT NULL CHECK (status IN ('active', 'paused')),
    paused_reason   TEXT,
    next_run_at     TEXT NOT NULL,
    last_run_at     TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    monthly_day     INTEGER,
    monthly_at      TEXT,
    months_before   INTEGER,
    document_classes TEXT
);
INSERT INTO schedules_v20 (id, org_id, entity_id, directions, every_seconds, daily_at,
    lookback_days, status, paused_reason, next_run_at, last_run_at, created_at, updated_at)
SELECT id, org_id, entity_id, directions, every_seconds, daily_at, lookback_days, status,
    paused_reason, next_run_at, last_run_at, created_at, updated_at FROM schedules;
DROP TABLE schedules;
ALTER TABLE schedules_v20 RENAME TO schedules;
CREATE INDEX IF NOT EXISTS schedules_org_id ON schedules (org_id, id);
CREATE INDEX IF NOT EXISTS schedules_due ON schedules (status, next_run_at);
CREATE INDEX IF NOT EXISTS schedules_entity ON schedules (entity_id);
";

/// Version 21: the answers of POST requests that carried an `Idempotency-Key`
/// (`schema.sql` adds `idempotency_keys`); the version makes an older binary, which
/// would not honour the keys, refuse the database.
const STEP_21: &str = "";

/// Version 24: the DIOT's per-supplier settings (`suppliers`, a new table that
/// `schema.sql` creates). No existing row changes.
const STEP_24: &str = "";

/// Version 25: extractions by UUID (issue 40). A run names the CFDI it fetches
/// (`extractions.uuids`) and, once ended, those the SAT did not give
/// (`uuids_not_found`); the e.firma channel asks for each by folio, a request that
/// names its UUID (`sat_requests.folio`). A database from before the e.firma channel
/// has no `sat_requests` yet: it is created first in its earlier shape.
const STEP_25: &str = "
CREATE TABLE IF NOT EXISTS sat_requests (
    id              TEXT PRIMARY KEY,
    extraction_id   TEXT NOT NULL REFERENCES extractions(id) ON DELETE CASCADE,
    entity_id       TEXT NOT NULL REFERENCES entities(id) ON DELETE CASCADE,
    kind            TEXT NOT NULL CHECK (kind IN ('metadata', 'cfdi')),
    direction       TEXT NOT NULL CHECK (direction IN ('issued', 'received')),
    window_start    TEXT NOT NULL,
    window_end      TEXT NOT NULL,
    state           TEXT NOT NULL CHECK (state IN ('new', 'submitted', 'downloading', 'done', 'split')),
    sat_request_id  TEXT,
    sat_state       INTEGER,
    cfdi_count      INTEGER,
    checks          INTEGER NOT NULL DEFAULT 0,
    remade          INTEGER NOT NULL DEFAULT 0,
    next_check_at   TEXT,
    last_code       INTEGER,
    last_message    TEXT,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL
);
ALTER TABLE extractions ADD COLUMN uuids TEXT;
ALTER TABLE extractions ADD COLUMN uuids_not_found TEXT;
ALTER TABLE sat_requests ADD COLUMN folio TEXT;
";

/// Version 26: each invoice's and retention's seal verification (`seal::verify`): its
/// status, the `seal` object, and the SAT certificate its stamp waits for. NULL until
/// verified: the seal verifier (`ops::seals`) verifies what was stored before, once,
/// in the background; `schema.sql` adds its indexes.
const STEP_26: &str = "
ALTER TABLE invoices ADD COLUMN seal_status TEXT CHECK (seal_status IN ('valid', 'invalid', 'unverified'));
ALTER TABLE invoices ADD COLUMN seal_json TEXT;
ALTER TABLE invoices ADD COLUMN seal_awaits TEXT;
";

/// Version 26's `retentions` half, run only where the table exists without them: a
/// database older than version 13 has none yet (`schema.sql` creates it with them).
const STEP_26_RETENTIONS: &str = "
ALTER TABLE retentions ADD COLUMN seal_status TEXT CHECK (seal_status IN ('valid', 'invalid', 'unverified'));
ALTER TABLE retentions ADD COLUMN seal_json TEXT;
ALTER TABLE retentions ADD COLUMN seal_awaits TEXT;
";

/// Version 27: the `seal` objects move from each document's row (`seal_json`) to
/// `seal_objects`, once each, and the row keeps its key (`db::content_key`). Runs after
/// `schema.sql` (which creates `seal_objects`) on each table that still has the column.
fn move_seals(tx: &Transaction) -> anyhow::Result<()> {
    for table in ["invoices", "retentions"] {
        let has = |column: &str| {
            tx.query_row(
                "SELECT EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)",
                [table, column],
                |r| r.get::<_, bool>(0),
            )
        };
        if !has("seal_json")? {
            continue;
        }
        if !has("seal_key")? {
            tx.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN seal_key TEXT"))?;
        }
        tx.execute_batch(
            "CREATE TEMP TABLE IF NOT EXISTS seal_moved (object TEXT PRIMARY KEY, key TEXT NOT NULL)",
        )?;
        let objects: Vec<String> = tx
            .prepare(&format!(
                "SELECT DISTINCT seal_json FROM {table} WHERE seal_json IS NOT NULL"
            ))?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        for object in objects {
            let key = crate::db::content_key::of(&object);
            tx.execute(
                "INSERT INTO seal_objects (key, object) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                [&key, &object],
            )?;
            tx.execute(
                "INSERT INTO temp.seal_moved (object, key) VALUES (?1, ?2) ON CONFLICT DO NOTHING",
                [&object, &key],
            )?;
        }
        tx.execute_batch(&format!(
            "UPDATE {table} SET seal_key = (SELECT key FROM temp.seal_moved WHERE object = seal_json)
              WHERE seal_json IS NOT NULL;
             ALTER TABLE {table} DROP COLUMN seal_json;"
        ))?;
    }
    tx.execute_batch("DROP TABLE IF EXISTS temp.seal_moved")?;
    Ok(())
}

pub fn apply(conn: &mut Connection) -> anyhow::Result<()> {
    // Table rebuilds must not cascade (see STEP_6). The pragma is ignored inside a
    // transaction, so it is set around it and restored whatever happens.
    let foreign_keys: bool = conn.query_row("PRAGMA foreign_keys", [], |r| r.get(0))?;
    conn.pragma_update(None, "foreign_keys", false)?;
    let applied = apply_steps(conn);
    conn.pragma_update(None, "foreign_keys", foreign_keys)?;
    applied
}

fn apply_steps(conn: &mut Connection) -> anyhow::Result<()> {
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
    // The table, without the columns (`pragma_table_info` is empty for no table).
    let retentions_unsealed: bool = tx.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('retentions'))
            AND NOT EXISTS (SELECT 1 FROM pragma_table_info('retentions') WHERE name = 'seal_status')",
        [],
        |r| r.get(0),
    )?;
    if from < 26 && retentions_unsealed {
        tx.execute_batch(STEP_26_RETENTIONS)?;
    }
    tx.execute_batch(SCHEMA)?;
    if from < 27 {
        move_seals(&tx)?;
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

    /// The schema as version 1 released it, for stepping real old databases forward.
    const SCHEMA_V1: &str = include_str!("../schema_v1.sql");

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

    /// Rows in a version 1 database (created from `SCHEMA_V1`) that later steps change.
    const V1_TABLES: &str = "
        INSERT INTO orgs VALUES ('o1', 'O', 't');
        INSERT INTO events VALUES ('e1', 'o1', 'entity.update', 's', '{}', 't');
        INSERT INTO webhooks VALUES ('w1', 'o1', 'https://a.mx', 'whsec_x', '[]', 't');
        INSERT INTO deliveries (id, webhook_id, event_id, status, created_at)
            VALUES ('d1', 'w1', 'e1', 'pending', 't');
        INSERT INTO jobs (kind, target_id, status, run_at, created_at)
            VALUES ('deliver_webhook', 'd1', 'queued', 't', 't'),
                   ('validate_credential', 'x', 'queued', 't', 't');
        INSERT INTO entities VALUES ('n1', 'o1', 'AAA010101AAA', 'E', x'00', 'valid', 't', 't');
        INSERT INTO extractions (id, org_id, entity_id, status, period_from, period_to,
                download_type, started_at, failed_reason, invoices_found, created_at, updated_at)
            VALUES ('x1', 'o1', 'n1', 'failed', '2026-01-01', '2026-01-31', 'issued', 't',
                    'sat_unavailable', 7, 't', 't'),
                   ('x2', 'o1', 'n1', 'pending', '2026-01-01', '2026-01-31', 'issued', NULL,
                    NULL, 0, 't', 't');
        PRAGMA user_version = 1;";

    #[test]
    fn a_version_1_database_steps_forward_keeping_its_rows() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        conn.execute_batch(SCHEMA_V1).expect("v1 schema");
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
        // Version 4 rebuilt extractions: rows kept, started ones on the CIEC channel.
        let rows: Vec<(String, Option<String>, Option<String>, i64)> = conn
            .prepare(
                "SELECT id, channel, failed_reason, invoices_found FROM extractions ORDER BY id",
            )
            .expect("prepare")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(
            rows,
            [
                (
                    "x1".into(),
                    Some("ciec".into()),
                    Some("sat_unavailable".into()),
                    7
                ),
                ("x2".into(), None, None, 0)
            ]
        );
        // Version 5: extractions can name a schedule, and schedules exist.
        conn.execute_batch("SELECT schedule_id FROM extractions; SELECT id FROM schedules;")
            .expect("version 5 columns");
        // Version 7: jobs name the request that caused them; old jobs name none.
        let causes: Vec<Option<String>> = conn
            .prepare("SELECT request_id FROM jobs")
            .expect("version 7 column")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(causes, [None, None]);
        apply(&mut conn).expect("again");
    }

    /// A version 5 database: version 1's tables stepped forward to 5 by hand.
    fn version_5_database() -> Connection {
        let conn = Connection::open_in_memory().expect("memory db");
        conn.execute_batch(SCHEMA_V1).expect("v1 schema");
        conn.execute_batch(V1_TABLES).expect("rows");
        for (_, sql) in STEPS.iter().filter(|(v, _)| *v <= 5) {
            conn.execute_batch(sql).expect("step");
        }
        conn.pragma_update(None, "user_version", 5)
            .expect("version");
        conn
    }

    #[test]
    fn version_6_rebuilds_events_without_cascading_to_deliveries() {
        let mut conn = version_5_database();
        // As every pooled connection has it: with foreign keys on, dropping `events`
        // would delete the deliveries that reference it.
        conn.pragma_update(None, "foreign_keys", true).expect("on");
        assert!(
            conn.execute(
                "INSERT INTO events VALUES ('e2', 'o1', 'invoice.created', 's', '{}', 't')",
                []
            )
            .is_err(),
            "version 5 checks the names"
        );
        apply(&mut conn).expect("migrate");
        let kept: Vec<(String, String)> = conn
            .prepare("SELECT d.id, e.event FROM deliveries d JOIN events e ON e.id = d.event_id")
            .expect("prepare")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(kept, [("d1".to_string(), "entity.update".to_string())]);
        let on: bool = conn
            .query_row("PRAGMA foreign_keys", [], |r| r.get(0))
            .expect("pragma");
        assert!(on, "the connection's setting is restored");
        conn.execute(
            "INSERT INTO events VALUES ('e2', 'o1', 'invoice.created', 's', '{}', 't')",
            [],
        )
        .expect("any name now");
        // The foreign key still holds and still cascades.
        conn.execute("DELETE FROM events WHERE id = 'e1'", [])
            .expect("delete");
        let left: i64 = conn
            .query_row("SELECT COUNT(*) FROM deliveries", [], |r| r.get(0))
            .expect("count");
        assert_eq!(left, 0);
    }

    #[test]
    fn version_3_splits_stored_items_into_pages_keeping_numbers_as_written() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        conn.execute_batch(SCHEMA_V1).expect("version 1");
        conn.pragma_update(None, "user_version", 1).expect("set");
        let items: Vec<String> = (0..2_500)
            .map(|i| format!(r#"{{"n":{i},"amount":1.50}}"#))
            .collect();
        conn.execute_batch(&format!(
            "INSERT INTO orgs VALUES ('o', 'O', 'now');
             INSERT INTO entities VALUES ('e', 'o', 'AAA010101AAA', 'E', x'00', 'valid', 'now', 'now');
             INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed, items_json, created_at, updated_at)
             VALUES ('big', 'o', 'e', 'U1', 'issued', 1, '[{}]', 'now', 'now'),
                    ('small', 'o', 'e', 'U2', 'issued', 1, '[{{\"amount\":2.0}}]', 'now', 'now');",
            items.join(",")
        ))
        .expect("seed");
        apply(&mut conn).expect("migrate");
        let row = |sql: &str| -> (i64, String) {
            conn.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect(sql)
        };
        let (count, first) = row("SELECT items_count, items_json FROM invoices WHERE id = 'big'");
        assert_eq!(count, 2_500);
        assert_eq!(first, format!("[{}]", items[..1000].join(",")));
        let (pages, last) = row(
            "SELECT COUNT(*), max(items_json) FILTER (WHERE page = 2) FROM invoice_item_pages WHERE invoice_id = 'big'",
        );
        assert_eq!(pages, 2);
        assert_eq!(last, format!("[{}]", items[2000..].join(",")));
        let (count, small) = row("SELECT items_count, items_json FROM invoices WHERE id = 'small'");
        assert_eq!((count, small.as_str()), (1, r#"[{"amount":2.0}]"#));
    }

    #[test]
    fn version_8_keeps_stored_documents_readable_as_they_were() {
        let mut conn = version_5_database();
        conn.execute_batch(
            "INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed, created_at, updated_at)
                 VALUES ('i', 'o1', 'n1', 'U', 'issued', 1, 't', 't');
             INSERT INTO documents VALUES ('i', 'xml', x'3C436F6D70726F62616E74652F3E');",
        )
        .expect("a document stored before version 8");
        apply(&mut conn).expect("migrate");
        let codec: String = conn
            .query_row("SELECT codec FROM documents", [], |r| r.get(0))
            .expect("codec");
        assert_eq!(codec, "identity");
        let conn = <crate::db::sql::Conn as ref_cast::RefCast>::ref_cast(&conn);
        let xml = crate::db::documents::get(conn, "i", "xml").expect("read");
        assert_eq!(xml.as_deref(), Some(&b"<Comprobante/>"[..]));
    }

    #[test]
    fn version_11_drops_the_sandbox_tables_and_keeps_the_rest() {
        let mut conn = version_5_database();
        let tables = |conn: &Connection| -> Vec<String> {
            conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
                .expect("prepare")
                .query_map([], |r| r.get(0))
                .expect("query")
                .collect::<Result<_, _>>()
                .expect("names")
        };
        conn.execute_batch(
            "CREATE TABLE sandbox_bulk_requests (id TEXT PRIMARY KEY);
             CREATE TABLE sandbox_bulk_downloads (package_id TEXT PRIMARY KEY,
                 request_id TEXT REFERENCES sandbox_bulk_requests(id) ON DELETE CASCADE);
             INSERT INTO sandbox_bulk_requests VALUES ('r');
             INSERT INTO sandbox_bulk_downloads VALUES ('r_01', 'r');
             INSERT INTO sandbox_listings VALUES ('n1', 'issued', 'U', 'x');",
        )
        .expect("a version 10 database's sandbox rows");
        assert!(tables(&conn).contains(&"sandbox_listings".to_string()));
        apply(&mut conn).expect("migrate");
        let after = tables(&conn);
        assert!(
            after.iter().all(|t| !t.starts_with("sandbox_")),
            "{after:?}"
        );
        let entities: i64 = conn
            .query_row("SELECT COUNT(*) FROM entities", [], |r| r.get(0))
            .expect("count");
        assert_eq!(entities, 1, "the service's rows stay");
        assert!(
            !SCHEMA.contains("sandbox_"),
            "schema.sql has no sandbox table"
        );
    }

    /// Version 17's relations (no `invoice_issued_at`, no `credited_uuid`) read as
    /// version 18 writes them: each row dated by its invoice, each credit note naming
    /// one invoice (however many times) credits it, one naming two credits none.
    #[test]
    fn version_18_dates_relations_and_finds_what_each_note_credits() {
        let mut conn = version_5_database();
        for (_, sql) in STEPS.iter().filter(|(v, _)| (6..=17).contains(v)) {
            conn.execute_batch(sql).expect("step");
        }
        conn.pragma_update(None, "user_version", 17)
            .expect("version");
        conn.execute_batch(
            "INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed, issued_at, created_at, updated_at)
                 VALUES ('one', 'o1', 'n1', 'N1', 'issued', 1, '2025-01-02T00:00:00', 't', 't'),
                        ('two', 'o1', 'n1', 'N2', 'issued', 1, '2025-01-03T00:00:00', 't', 't');
             INSERT INTO invoice_relations VALUES ('one', 0, 'n1', '01', 'A'), ('one', 1, 'n1', '04', 'B'),
                 ('one', 2, 'n1', '01', 'A'), ('two', 0, 'n1', '01', 'A'), ('two', 1, 'n1', '03', 'C');",
        )
        .expect("version 17 rows");
        apply(&mut conn).expect("migrate");
        let rows: Vec<(String, String)> = conn
            .prepare("SELECT invoice_id, invoice_issued_at FROM invoice_relations ORDER BY invoice_id, position")
            .expect("prepare")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert!(
            rows.iter()
                .all(|(id, at)| at.starts_with(match id.as_str() {
                    "one" => "2025-01-02",
                    _ => "2025-01-03",
                })),
            "{rows:?}"
        );
        let credited: Vec<Option<String>> = conn
            .prepare("SELECT credited_uuid FROM invoices ORDER BY id")
            .expect("prepare")
            .query_map([], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        assert_eq!(credited, [Some("A".to_string()), None]);
        let times: Vec<(String, String, i64)> = conn
            .prepare(
                "SELECT invoice_id, related_uuid, times FROM invoice_relation_counts ORDER BY 1, 2",
            )
            .expect("prepare")
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows");
        let row = |i: &str, u: &str, n| (i.to_string(), u.to_string(), n);
        assert_eq!(
            times,
            [
                row("one", "A", 2),
                row("one", "B", 1),
                row("two", "A", 1),
                row("two", "C", 1)
            ]
        );
        let old_index: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = 'invoice_relations_related'",
                [],
                |r| r.get(0),
            )
            .expect("count");
        assert_eq!(old_index, 0, "invoice_relations_named replaces it");
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        conn.pragma_update(None, "user_version", VERSION + 1)
            .expect("set");
        assert!(apply(&mut conn).is_err());
    }
}
