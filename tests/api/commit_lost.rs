//! A COMMIT whose answer is lost (issue 37, item 7): the binary asks PostgreSQL, by
//! transaction id on a new connection, whether the transaction committed, and answers
//! accordingly; it never says "did nothing" without knowing it. The fault is made on
//! purpose by a proxy between the binary and the server (`common::pg_proxy`).

use crate::common::app::{provision, tax_id, Resp, TestApp};
use crate::common::engine::{self, postgres_only};
use crate::common::pg_proxy::{Cut, PgProxy};
use serde_json::json;
use std::time::Duration;

const MARKER: &str = "INSERT INTO entities";

/// A server whose database connections all go through a proxy.
fn behind_a_proxy() -> (TestApp, PgProxy) {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let creds = provision(dir.path(), "Acme SA de CV");
    let url = engine::database_url(dir.path()).expect("a PostgreSQL database");
    let parsed = url::Url::parse(&url).expect("url");
    let upstream = format!(
        "{}:{}",
        parsed.host_str().expect("host"),
        parsed.port().unwrap_or(5432)
    );
    let proxy = PgProxy::start(&upstream);
    let app = TestApp::start_in(dir, creds, &["--database-url", &proxy.url(&url)]);
    (app, proxy)
}

fn create(app: &TestApp, tax_id: &str, key: Option<&str>) -> Resp {
    let body = json!({ "tax_id": tax_id, "name": "Lost SA", "ciec_password": "12345678" });
    let bytes = serde_json::to_vec(&body).expect("json");
    let mut headers = vec![("Content-Type", "application/json")];
    if let Some(key) = key {
        headers.push(("Idempotency-Key", key));
    }
    app.client()
        .request("POST", "/v1/entities", Some(&bytes), &headers)
}

fn entities(app: &TestApp) -> Vec<String> {
    app.client()
        .list_all("/v1/entities", 100)
        .iter()
        .map(|e| e["tax_id"].as_str().expect("tax_id").to_string())
        .collect()
}

#[test]
fn a_commit_that_committed_but_lost_its_answer_is_answered_201() {
    postgres_only!("a lost COMMIT answer from PostgreSQL");
    let (app, proxy) = behind_a_proxy();
    proxy.cut_next_commit(MARKER, Cut::AfterCommit, Duration::from_millis(500));
    let rfc = tax_id("LST");
    let created = create(&app, &rfc, None);
    assert_eq!(proxy.cuts(), 1, "the commit's answer was dropped");
    let entity = created.expect(201);
    assert_eq!(entity["tax_id"], rfc.as_str());
    assert_eq!(entities(&app), [rfc]);
    assert!(
        app.stderr_lines()
            .iter()
            .any(|l| l.contains("lost during COMMIT") && l.contains("committed")),
        "{:?}",
        app.stderr_lines()
    );
}

#[test]
fn a_commit_that_never_reached_the_server_is_a_503_that_did_nothing() {
    postgres_only!("a COMMIT lost on its way to PostgreSQL");
    let (app, proxy) = behind_a_proxy();
    proxy.cut_next_commit(MARKER, Cut::BeforeCommit, Duration::ZERO);
    let refused = create(&app, &tax_id("NOT"), None);
    assert_eq!(proxy.cuts(), 1);
    let body = refused.expect_error(503);
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert!(
        body["message"].as_str().expect("message").contains("retry"),
        "{body}"
    );
    assert!(entities(&app).is_empty(), "it did nothing, as it said");
}

#[test]
fn a_commit_whose_outcome_stays_unknown_says_so_and_the_same_key_makes_the_retry_safe() {
    postgres_only!("a lost COMMIT answer while PostgreSQL stays out of reach");
    let (app, proxy) = behind_a_proxy();
    // Out of reach for longer than the binary asks (10 s): it cannot know.
    proxy.cut_next_commit(MARKER, Cut::AfterCommit, Duration::from_secs(12));
    let rfc = tax_id("UNK");
    let unknown = create(&app, &rfc, Some("unknown-1"));
    assert_eq!(proxy.cuts(), 1);
    let body = unknown.expect_error(503);
    assert_eq!(unknown.header("retry-after"), Some("1"));
    let message = body["message"].as_str().expect("message");
    assert!(
        message.contains("unknown") && message.contains("Idempotency-Key"),
        "{message}"
    );
    // The retry with the key once the database is back: the first request's answer,
    // not a second entity (nor a 422 for a taken tax id).
    let retried =
        crate::common::app::eventually(Duration::from_secs(30), "the database back", || {
            let resp = create(&app, &rfc, Some("unknown-1"));
            (resp.status != 503).then_some(resp)
        });
    let entity = retried.expect(201);
    assert_eq!(entity["tax_id"], rfc.as_str());
    assert_eq!(retried.header("idempotent-replayed"), Some("true"));
    assert_eq!(entities(&app), [rfc]);
}
