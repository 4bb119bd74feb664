//! What the service keeps of a webhook: the URL as it will call it, and the token
//! (the signing secret) sealed at rest, also when an older version stored it in plain.

use crate::api::webhooks::assert_signed;
use crate::common::app::{files_under, tax_id, TestApp, DEADLINE};
use crate::common::engine::database_holds;
use crate::common::receiver::Receiver;
use crate::common::sqlite_only;
use serde_json::json;
use std::path::Path;
use std::time::Duration;

/// Whether any file of the data directory (database, WAL, ...) holds `needle`.
/// In a file of the data directory, or in the database wherever it is.
pub(crate) fn on_disk(dir: &Path, needle: &str) -> bool {
    files_under(dir).iter().any(|f| {
        std::fs::read(f)
            .unwrap_or_default()
            .windows(needle.len())
            .any(|w| w == needle.as_bytes())
    }) || database_holds(dir, needle)
}

#[test]
fn webhook_url_is_stored_normalized_and_a_url_without_host_is_422() {
    let app = TestApp::spawn();
    let client = app.client();
    let errors = client
        .post_json("/v1/webhooks", &json!({ "url": "https:///no-host" }))
        .expect_field_error("url");
    assert!(errors.iter().any(|m| m.contains("host")), "{errors:?}");
    let hook = client.create_webhook("HTTPS://Example.COM:443/a/../b", None);
    assert_eq!(hook["url"], "https://example.com/b", "{hook}");
    let id = hook["id"].as_str().expect("id");
    let read = client.get(&format!("/v1/webhooks/{id}")).expect(200);
    assert_eq!(read["url"], "https://example.com/b", "{read}");

    // The stored URL is the one called.
    let receiver = Receiver::start();
    let raw = format!("http://127.0.0.1:{}/x/../hook", receiver.port);
    let hook = client.create_webhook(&raw, None);
    assert_eq!(hook["url"], receiver.url(), "{hook}");
    client.create_entity(&tax_id("NRM"), "12345678");
    assert_eq!(receiver.wait_for(1, DEADLINE)[0].path, "/hook");
}

#[test]
fn webhook_token_is_not_on_disk_in_plain_and_deliveries_still_verify() {
    let mut app = TestApp::spawn();
    let receiver = Receiver::start();
    let hook = app.client().create_webhook(&receiver.url(), None);
    let token = hook["token"].as_str().expect("token").to_string();
    let id = hook["id"].as_str().expect("id");
    let read = app.get(&format!("/v1/webhooks/{id}")).expect(200);
    assert_eq!(
        read["token"],
        token.as_str(),
        "GET returns the token: {read}"
    );
    app.client().create_entity(&tax_id("SEA"), "12345678");
    let r = receiver.wait_for(1, DEADLINE).remove(0);
    assert_signed(&r, &token);
    let secret = token.strip_prefix("whsec_").expect("whsec_");
    assert!(!on_disk(app.data_dir(), secret), "the token is on disk");
    app.sigterm();
    app.wait_exit(DEADLINE).expect("graceful stop");
    assert!(!on_disk(app.data_dir(), secret), "the token is on disk");
}

#[test]
fn a_plain_token_from_schema_1_is_sealed_at_start_and_still_signs() {
    sqlite_only!("the SQLite file taken back to schema 1, which PostgreSQL never had");
    let mut app = TestApp::spawn();
    let receiver = Receiver::start();
    let hook = app.client().create_webhook(&receiver.url(), None);
    let id = hook["id"].as_str().expect("id").to_string();
    app.sigterm();
    app.wait_exit(DEADLINE).expect("graceful stop");

    // Put the database back to schema 1: no sealed column, the token in plain text
    // (`documents` as schema 1 made it: a column with a foreign key cannot be dropped).
    let legacy = "whsec_bGVnYWN5LXBsYWluLXRva2VuLWZyb20tc2NoZW1hLTE=";
    let conn = rusqlite::Connection::open(app.data_dir().join("cfdi-extract.db")).expect("db");
    conn.execute_batch(
        "DROP INDEX jobs_deliveries_due;
         DROP INDEX jobs_deliveries_org;
         ALTER TABLE jobs DROP COLUMN org_id;
         ALTER TABLE jobs DROP COLUMN request_id;
         ALTER TABLE jobs DROP COLUMN lease_owner;
         ALTER TABLE jobs DROP COLUMN lease_until;
         ALTER TABLE webhooks DROP COLUMN token_sealed;
         ALTER TABLE invoices DROP COLUMN items_count;
         ALTER TABLE invoices DROP COLUMN stated_taxes_json;
         DROP INDEX invoices_sat_check;
         DROP INDEX invoices_sat_on_demand;
         DROP INDEX invoices_org_sat_state;
         ALTER TABLE invoices DROP COLUMN sat_state;
         ALTER TABLE invoices DROP COLUMN sat_cancellable;
         ALTER TABLE invoices DROP COLUMN sat_cancellation_status;
         ALTER TABLE invoices DROP COLUMN sat_efos;
         ALTER TABLE invoices DROP COLUMN sat_checked_at;
         ALTER TABLE invoices DROP COLUMN sat_not_found_since;
         ALTER TABLE invoices DROP COLUMN sat_check_at;
         ALTER TABLE invoices DROP COLUMN sat_check_urgent;
         DROP INDEX invoices_credited;
         ALTER TABLE invoices DROP COLUMN credited_uuid;
         DROP INDEX invoices_seal_pending;
         DROP INDEX invoices_seal_awaits;
         ALTER TABLE invoices DROP COLUMN seal_status;
         ALTER TABLE invoices DROP COLUMN seal_key;
         DROP TABLE seal_objects;
         ALTER TABLE invoices DROP COLUMN seal_awaits;
         DROP INDEX invoice_relations_named;
         ALTER TABLE invoice_relations DROP COLUMN invoice_issued_at;
         DROP TABLE invoice_relation_counts;
         DROP TABLE invoice_item_pages;
         ALTER TABLE extractions DROP COLUMN uuids;
         ALTER TABLE extractions DROP COLUMN uuids_not_found;
         ALTER TABLE sat_requests DROP COLUMN folio;
         DROP TABLE documents;
         DROP TABLE certificates;
         CREATE TABLE documents (
             invoice_id  TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
             kind        TEXT NOT NULL CHECK (kind IN ('xml', 'pdf')),
             content     BLOB NOT NULL,
             PRIMARY KEY (invoice_id, kind)
         ) WITHOUT ROWID;
         PRAGMA user_version = 1;",
    )
    .expect("back to schema 1");
    conn.execute("UPDATE webhooks SET token = ?1", [legacy])
        .expect("plain token");
    drop(conn);
    let secret = legacy.strip_prefix("whsec_").expect("whsec_");
    assert!(on_disk(app.data_dir(), secret), "set up: the plain token");

    app.start();
    let read = app.get(&format!("/v1/webhooks/{id}")).expect(200);
    assert_eq!(read["token"], legacy, "{read}");
    app.client().create_entity(&tax_id("OLD"), "12345678");
    let r = receiver.wait_for(1, DEADLINE).remove(0);
    assert_signed(&r, legacy);
    app.sigterm();
    app.wait_exit(Duration::from_secs(30))
        .expect("graceful stop");
    assert!(!on_disk(app.data_dir(), secret), "the plain token is gone");
}
