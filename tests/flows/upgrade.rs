//! Upgrades through the binary: a database made by release 1's schema (the frozen
//! `src/db/schema_v1.sql`) migrates forward at `serve` and serves its data with its
//! sealed credentials and its documents stored before compression; a database newer than
//! the binary is refused, by `serve` and by `check`.

use crate::common::app::{add_user, cli_on, command, email, eventually, Creds, TestApp, DEADLINE};
use crate::common::engine::{OnTestDatabase, TestDb};
use crate::common::invoices::{
    extract, import_samples, month, sample_bytes, stored_certificate, stored_document,
};
use crate::common::receiver::Receiver;
use crate::common::sqlite_only;
use base64::Engine;
use cfdi_extract::crypto::Cipher;
use std::process::Stdio;
use tempfile::TempDir;

const SCHEMA_V1: &str = include_str!("../../src/db/schema_v1.sql");
const KEY: [u8; 32] = [7; 32];
const TOKEN: &str = "whsec_cmVsZWFzZS0xLXBsYWluLXRva2VuLWtlcHQtaW4tdGV4dA==";
const AT: &str = "2026-01-02T03:04:05.000000Z";

/// A data directory as release 1 left it: an org, an entity with a sealed CIEC, a
/// finished extraction, a webhook with its token in plain text, and the key file.
fn release_1_dir(webhook_url: &str) -> (TempDir, Creds, [String; 3]) {
    let dir = TempDir::new().expect("tmp");
    let ids = [(); 3].map(|_| uuid::Uuid::now_v7().to_string());
    let [org, entity, extraction] = ids.clone();
    let webhook = uuid::Uuid::now_v7().to_string();
    let sealed = Cipher::from_key(&KEY).seal("sandbox1").expect("seal");
    let conn = rusqlite::Connection::open(dir.path().join("cfdi-extract.db")).expect("db");
    conn.execute_batch(SCHEMA_V1).expect("schema 1");
    conn.execute("INSERT INTO orgs VALUES (?1, 'Old SA', ?2)", [&org, AT])
        .expect("org");
    conn.execute(
        "INSERT INTO entities VALUES (?1, ?2, 'EKU9003173C9', 'Old entity', ?3, 'valid', ?4, ?4)",
        rusqlite::params![entity, org, sealed, AT],
    )
    .expect("entity");
    conn.execute(
        "INSERT INTO extractions (id, org_id, entity_id, status, period_from, period_to,
             download_type, started_at, finished_at, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'finished', '2025-12-01', '2025-12-31', 'issued', ?4, ?4, ?4, ?4)",
        [&extraction, &org, &entity, AT],
    )
    .expect("extraction");
    conn.execute(
        r#"INSERT INTO webhooks VALUES (?1, ?2, ?3, ?4, '["extraction.update","entity.update"]', ?5)"#,
        [&webhook, &org, webhook_url, TOKEN, AT],
    )
    .expect("webhook");
    conn.pragma_update(None, "user_version", 1)
        .expect("version");
    drop(conn);
    let key = base64::engine::general_purpose::STANDARD.encode(KEY);
    std::fs::write(dir.path().join("secret.key"), key).expect("key");
    let creds = Creds {
        org_id: org,
        email: email("old"),
        password: "release-1-password".into(),
    };
    (dir, creds, [entity, extraction, webhook])
}

fn user_version(dir: &std::path::Path) -> i64 {
    let conn = rusqlite::Connection::open(dir.join("cfdi-extract.db")).expect("db");
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
        .expect("version")
}

#[test]
fn a_release_1_database_migrates_at_start_and_serves_with_its_credentials() {
    sqlite_only!("release 1's SQLite file upgraded in place");
    let rx = Receiver::start();
    let (dir, creds, [entity, extraction, webhook]) = release_1_dir(&rx.url());
    let mut app = TestApp::start_in(dir, creds.clone(), &[]);
    add_user(app.data_dir(), &creds);
    assert_eq!(
        user_version(app.data_dir()),
        cfdi_extract::db::migrate::VERSION,
        "migrated to the current schema"
    );

    let client = app.client();
    let e = client.get(&format!("/v1/entities/{entity}")).expect(200);
    assert_eq!(e["tax_id"], "EKU9003173C9", "{e}");
    let x = client
        .get(&format!("/v1/extractions/{extraction}"))
        .expect(200);
    assert_eq!(x["status"], "finished", "{x}");
    let w = client.get(&format!("/v1/webhooks/{webhook}")).expect(200);
    assert_eq!(
        w["token"], TOKEN,
        "the plain token, now sealed, still reads: {w}"
    );
    cli_on(app.data_dir(), &["check"], None).expect_success("check after the migration");

    // The CIEC release 1 sealed still logs in; the event goes to the old webhook.
    let (from, to) = month(2026, 1);
    extract(&client, &entity, from, to, "issued");
    rx.wait_for_body("an extraction event", DEADLINE, |b| {
        b["event"] == "extraction.update"
    });

    // A binary older than its database: refused by serve and by check, untouched.
    app.sigterm();
    app.wait_exit(DEADLINE).expect("stopped");
    let conn = rusqlite::Connection::open(app.data_dir().join("cfdi-extract.db")).expect("db");
    conn.pragma_update(None, "user_version", 99).expect("newer");
    drop(conn);
    let mut serve = command()
        .arg("serve")
        .arg("--data-dir")
        .arg(app.data_dir())
        .args(["--port", "0"])
        .on_test_database()
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let status = eventually(DEADLINE, "serve to refuse", || {
        serve.try_wait().expect("wait")
    });
    assert!(!status.success());
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut serve.stderr.take().expect("stderr"), &mut stderr)
        .expect("read");
    assert!(
        stderr.contains(&format!(
            "schema version 99, newer than this binary ({}); upgrade cfdi-extract",
            cfdi_extract::db::migrate::VERSION
        )),
        "{stderr}"
    );
    let check = cli_on(app.data_dir(), &["check"], None);
    assert!(!check.status.success(), "{check:?}");
    assert!(check.stdout.contains("newer than this binary"), "{check:?}");
    assert_eq!(user_version(app.data_dir()), 99, "left as it was");
}

/// Documents release 1 stored as they came (before the `codec` column) are served byte
/// for byte after the migration and left as they were; new documents are compressed.
#[test]
fn documents_stored_before_compression_are_served_byte_for_byte_after_the_upgrade() {
    sqlite_only!("release 1's SQLite file upgraded in place");
    let rx = Receiver::start();
    let (dir, creds, [entity, _, _]) = release_1_dir(&rx.url());
    let xml = sample_bytes("cfdi40-ingreso-pue-real-tfd.xml");
    let pdf = b"%PDF-1.4\n% stored by release 1, uncompressed\n%%EOF\n".repeat(20);
    let old = uuid::Uuid::now_v7().to_string();
    let conn = rusqlite::Connection::open(dir.path().join("cfdi-extract.db")).expect("db");
    conn.execute(
        "INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed, type,
             issued_at, has_pdf, created_at, updated_at)
         VALUES (?1, ?2, ?3, 'F0000000-0000-4000-8000-000000000001', 'issued', 1, 'I', ?4, 1, ?4, ?4)",
        [&old, &creds.org_id, &entity, AT],
    )
    .expect("invoice");
    conn.execute(
        "INSERT INTO documents VALUES (?1, 'xml', ?2), (?1, 'pdf', ?3)",
        rusqlite::params![old, xml, pdf],
    )
    .expect("documents");
    drop(conn);

    let app = TestApp::start_in(dir, creds.clone(), &[]);
    add_user(app.data_dir(), &creds);
    let client = app.client();
    let get = |id: &str, format: &str| {
        let resp = client.get(&format!("/v1/invoices/{id}/cfdi?format={format}"));
        assert_eq!(resp.status, 200, "{id} {format}: {}", resp.text());
        resp.body
    };
    assert!(get(&old, "xml") == xml, "the old XML byte for byte");
    assert!(get(&old, "pdf") == pdf, "the old PDF byte for byte");
    for (kind, len) in [("xml", xml.len()), ("pdf", pdf.len())] {
        assert_eq!(
            stored_document(app.data_dir(), &old, kind),
            Some(("identity".to_string(), len)),
            "the old {kind} is left as it was"
        );
    }

    // A document stored now is compressed, and served the same.
    let file = "cfdi40-ingreso-pue-descuento-tfd.xml";
    let new = import_samples(&app, &entity, "issued", &[file])
        .remove(file)
        .expect("imported");
    let original = sample_bytes(file);
    assert!(get(&new, "xml") == original, "the new XML byte for byte");
    let (codec, len) = stored_document(app.data_dir(), &new, "xml").expect("stored");
    assert_eq!(codec, "zstd-cfdi1");
    assert!(len < original.len(), "{len} of {} bytes", original.len());
    // Its issuer certificate is kept apart (schema 9); the old document keeps its own.
    assert!(stored_certificate(app.data_dir(), &new).is_some());
    assert_eq!(stored_certificate(app.data_dir(), &old), None);
    cli_on(app.data_dir(), &["check"], None).expect_success("check after the migration");
}

/// The names of the tables of the SQLite file `name` in `dir`.
fn tables(dir: &std::path::Path, name: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(dir.join(name)).expect("db");
    let mut names = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .expect("prepare");
    let tables = names
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("names");
    tables
}

/// A sandbox deployment's database loses its sandbox tables at the upgrade; the
/// simulated SAT starts afresh in `sandbox.db` and extracts as before.
#[test]
fn the_sandbox_tables_leave_the_database_for_a_store_of_their_own() {
    sqlite_only!("release 1's SQLite file upgraded in place");
    let rx = Receiver::start();
    let (dir, creds, [entity, extraction, _]) = release_1_dir(&rx.url());
    let conn = rusqlite::Connection::open(dir.path().join("cfdi-extract.db")).expect("db");
    conn.execute(
        "INSERT INTO sandbox_listings VALUES (?1, 'issued', 'A-LISTED-UUID', ?2)",
        [&entity, &extraction],
    )
    .expect("a sandbox listing of release 1");
    drop(conn);
    let app = TestApp::start_in(dir, creds.clone(), &[]);
    add_user(app.data_dir(), &creds);

    let service = tables(app.data_dir(), "cfdi-extract.db");
    assert!(service.contains(&"entities".to_string()), "{service:?}");
    assert!(
        service.iter().all(|t| !t.starts_with("sandbox_")),
        "{service:?}"
    );
    let sandbox = tables(app.data_dir(), "sandbox.db");
    for table in ["listings", "requests", "downloads"] {
        assert!(sandbox.contains(&table.to_string()), "{sandbox:?}");
    }

    let client = app.client();
    let (from, to) = month(2026, 1);
    let done = extract(&client, &entity, from, to, "issued");
    assert!(done["invoices_found"].as_i64() > Some(0), "{done}");
    let conn = rusqlite::Connection::open(app.data_dir().join("sandbox.db")).expect("db");
    let listed: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM listings WHERE entity_id = ?1",
            [&entity],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(
        listed,
        done["invoices_found"].as_i64().expect("found"),
        "the run's listing, in the sandbox's own store only"
    );
}

/// Takes a current database back to schema 25's shape (no seal columns), as a
/// database stored before the service verified seals.
fn back_to_schema_25(dir: &std::path::Path) {
    let conn = rusqlite::Connection::open(dir.join("cfdi-extract.db")).expect("db");
    conn.execute_batch(
        "DROP INDEX invoices_seal_pending; DROP INDEX invoices_seal_awaits;
         DROP INDEX retentions_seal_pending; DROP INDEX retentions_seal_awaits;
         ALTER TABLE invoices DROP COLUMN seal_status; ALTER TABLE invoices DROP COLUMN seal_key;
         ALTER TABLE invoices DROP COLUMN seal_awaits;
         ALTER TABLE retentions DROP COLUMN seal_status; ALTER TABLE retentions DROP COLUMN seal_key;
         ALTER TABLE retentions DROP COLUMN seal_awaits; DROP TABLE seal_objects;
         PRAGMA user_version = 25;",
    )
    .expect("schema 25");
}

/// A server with a sandbox taxpayer's month extracted and every stamp verified, and the
/// month's invoices as listed.
fn a_verified_month() -> (TestApp, Vec<serde_json::Value>) {
    let app = TestApp::spawn_with(&[]);
    let client = app.client();
    // Validated first: an extraction of a pending credential fails.
    let entity = crate::common::invoices::id_of(&crate::common::invoices::valid_entity(
        &client,
        "AAA010101AAA",
        "sandbox1",
    ));
    extract(
        &client,
        &entity,
        month(2025, 3).0,
        month(2025, 3).0,
        "issued",
    );
    // Their stamps verified once the sandbox's SAT certificate is fetched (the
    // extraction fetches none).
    let stored = eventually(DEADLINE, "every stamp verified", || {
        let all = client.list_all("/v1/invoices", 100);
        all.iter()
            .all(|i| i["seal"]["status"] == "valid")
            .then_some(all)
    });
    (app, stored)
}

#[test]
fn documents_stored_before_seals_were_verified_are_verified_once_in_the_background() {
    sqlite_only!("a schema 25 SQLite file upgraded in place");
    let (mut app, stored) = a_verified_month();
    let client = app.client();
    assert!(!stored.is_empty());
    let updates = client
        .list_all("/v1/events?event=invoice.updated", 100)
        .len();
    app.kill();
    back_to_schema_25(app.data_dir());
    app.start();
    assert_eq!(
        user_version(app.data_dir()),
        cfdi_extract::db::migrate::VERSION
    );
    let client = app.client();
    let verified = eventually(DEADLINE, "every invoice verified", || {
        let all = client.list_all("/v1/invoices", 100);
        all.iter()
            .all(|i| i["seal"]["status"].is_string())
            .then_some(all)
    });
    assert_eq!(verified.len(), stored.len());
    // The sandbox's documents are sealed under its authority, trusted with
    // `--sat sandbox`, and stamped with its SAT certificate, fetched from it.
    for invoice in &verified {
        assert_eq!(
            invoice["seal"]["checks"]["issuer_seal"]["status"],
            serde_json::json!("valid"),
            "{invoice}"
        );
    }
    // A first answer is no change: no event, no new updated_at.
    let after = client.list_all("/v1/events?event=invoice.updated", 100);
    assert_eq!(after.len(), updates, "{after:?}");
    assert_eq!(verified, stored, "the same objects, the same answers");
}

/// A version 26 database, whose rows each held their `seal` object, moves each distinct
/// object to `seal_objects` once and keeps its key in the rows (version 27): the same
/// objects listed, no event, and one stored object where every invoice held a copy.
#[test]
fn seal_objects_held_by_each_row_move_to_one_stored_copy_each() {
    let (mut app, stored) = a_verified_month();
    let client = app.client();
    assert!(stored.len() > 1);
    let events = client.list_all("/v1/events", 100).len();
    app.kill();
    let mut db = TestDb::open(app.data_dir());
    let text = db.pick("TEXT", "TEXT COLLATE \"C\"").to_string();
    let version = db.pick(
        "PRAGMA user_version = 26",
        "UPDATE cfdi_extract_schema SET version = 26",
    );
    db.batch(&format!(
        "ALTER TABLE invoices ADD COLUMN seal_json {text};
         UPDATE invoices SET seal_json = (SELECT object FROM seal_objects WHERE key = seal_key);
         ALTER TABLE invoices DROP COLUMN seal_key;
         ALTER TABLE retentions ADD COLUMN seal_json {text};
         ALTER TABLE retentions DROP COLUMN seal_key;
         DROP TABLE seal_objects;
         {version};"
    ));
    drop(db);
    app.start();
    let client = app.client();
    assert_eq!(client.list_all("/v1/invoices", 100), stored);
    assert_eq!(client.list_all("/v1/events", 100).len(), events);
    let mut db = TestDb::open(app.data_dir());
    let version = db
        .pick(
            "PRAGMA user_version",
            "SELECT version FROM cfdi_extract_schema",
        )
        .to_string();
    assert!(
        db.try_rows("SELECT seal_json FROM invoices", &[]).is_err(),
        "the column is gone"
    );
    let mut count = |sql: &str| db.value(sql, &[]).int().expect(sql);
    assert_eq!(count(&version), cfdi_extract::db::migrate::VERSION);
    assert_eq!(
        count("SELECT count(*) FROM seal_objects"),
        1,
        "one certificate, one answer"
    );
    assert_eq!(
        count("SELECT count(*) FROM invoices WHERE xml_processed = 1 AND seal_key IS NOT NULL"),
        stored.len() as i64
    );
    assert_eq!(
        count("SELECT count(*) FROM invoices WHERE seal_key NOT IN (SELECT key FROM seal_objects)"),
        0
    );
}
