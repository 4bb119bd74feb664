//! `/v1/webhooks` and the delivery of events: body, headers, Standard Webhooks
//! signatures, event filters, retries, timeouts and deletion.

use crate::common::app::{as_u64, quiet, tax_id, Client, TestApp, DEADLINE};
use crate::common::receiver::{Receiver, Recorded, Reply};
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::{Duration, Instant};

/// Every event name: what an absent or empty `events` subscribes to.
const ALL_EVENTS: [&str; 7] = [
    "extraction.update",
    "entity.update",
    "invoice.created",
    "invoice.updated",
    "retention.created",
    "retention.updated",
    "counterparty.69b_changed",
];

fn event_set(v: &Value) -> HashSet<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("events is an array: {v}"))
        .iter()
        .map(|e| e.as_str().expect("event name").to_string())
        .collect()
}

fn set(names: &[&str]) -> HashSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

/// Independent Standard Webhooks check: HMAC-SHA256 over `id.timestamp.body`, keyed
/// with the base64-decoded bytes after `whsec_`.
fn expected_signature(token: &str, id: &str, timestamp: &str, body: &[u8]) -> String {
    use base64::engine::general_purpose::STANDARD;
    use base64::Engine;
    use hmac::{Hmac, KeyInit, Mac};
    let key = STANDARD
        .decode(token.strip_prefix("whsec_").expect("whsec_ token"))
        .expect("token is base64 after whsec_");
    let mut mac = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(&key).expect("any key length");
    mac.update(format!("{id}.{timestamp}.").as_bytes());
    mac.update(body);
    format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

/// Asserts the delivery's authentication headers and signature against `token`.
#[track_caller]
pub fn assert_signed(r: &Recorded, token: &str) {
    let body = r.text();
    assert_eq!(
        r.header("authorization"),
        Some(format!("Bearer {token}").as_str()),
        "bearer token; headers {:?}",
        r.headers
    );
    assert!(
        r.header("content-type")
            .unwrap_or("")
            .starts_with("application/json"),
        "content-type; headers {:?}",
        r.headers
    );
    assert_eq!(r.method, "POST");
    let id = r.header("webhook-id").expect("webhook-id header");
    let ts = r
        .header("webhook-timestamp")
        .expect("webhook-timestamp header");
    let sig = r
        .header("webhook-signature")
        .expect("webhook-signature header");
    let ts_num: i64 = ts.parse().expect("timestamp in seconds");
    let now = chrono::Utc::now().timestamp();
    assert!(
        (now - ts_num).abs() < 300,
        "timestamp {ts} is now-ish ({now})"
    );
    assert_eq!(
        r.json()["id"].as_str(),
        Some(id),
        "webhook-id is the body id: {body}"
    );
    assert!(
        cfdi_extract::webhook_signing::verify(token, id, ts_num, &r.body, sig),
        "the library verifies {sig}; body: {body}"
    );
    let expected = expected_signature(token, id, ts, &r.body);
    assert!(
        sig.split(' ').any(|s| s == expected),
        "independent HMAC {expected} in {sig}; body: {body}"
    );
    // A different secret or body does not verify.
    let other = format!(
        "whsec_{}",
        base64::Engine::encode(&base64::engine::general_purpose::STANDARD, [7u8; 32])
    );
    assert!(!cfdi_extract::webhook_signing::verify(
        &other, id, ts_num, &r.body, sig
    ));
    assert!(!cfdi_extract::webhook_signing::verify(
        token, id, ts_num, b"{}", sig
    ));
}

/// Waits until the only delivery of `webhook_id` satisfies `pred`; returns it.
fn wait_delivery(
    client: &Client,
    webhook_id: &str,
    what: &str,
    pred: impl Fn(&Value) -> bool,
) -> Value {
    let mut last = vec![];
    let found = crate::common::app::eventually(DEADLINE, what, || {
        last = client.deliveries(webhook_id);
        last.iter().find(|d| pred(d)).cloned()
    });
    assert_eq!(last.len(), 1, "one delivery: {last:?}");
    found
}

fn entity_updates_of(r: &Receiver, entity_id: &str) -> Vec<Value> {
    r.requests()
        .iter()
        .map(Recorded::json)
        .filter(|b| b["event"] == "entity.update" && b["resource"]["id"] == entity_id)
        .collect()
}

#[test]
fn create_webhook_returns_201_with_whsec_token_and_both_events_when_events_absent() {
    let app = TestApp::spawn();
    let res = app.post_json(
        "/v1/webhooks",
        &json!({ "url": "https://example.com/hooks" }),
    );
    let hook = res.expect(201);
    let mut keys: Vec<&str> = hook
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        ["created_at", "events", "id", "token", "url"],
        "{hook}"
    );
    assert_eq!(hook["url"], "https://example.com/hooks");
    assert_eq!(event_set(&hook["events"]), set(&ALL_EVENTS), "{hook}");
    let token = hook["token"].as_str().expect("token");
    let raw = token
        .strip_prefix("whsec_")
        .expect("token starts with whsec_");
    let bytes = base64::Engine::decode(&base64::engine::general_purpose::STANDARD, raw)
        .expect("base64 after whsec_");
    assert_eq!(bytes.len(), 32, "32 random bytes");
    crate::api::entities::assert_timestamp(&hook["created_at"]);

    // Empty means all; a subset is kept; each webhook gets its own token.
    let all = app
        .post_json(
            "/v1/webhooks",
            &json!({ "url": "http://127.0.0.1:9/x", "events": [] }),
        )
        .expect(201);
    assert_eq!(event_set(&all["events"]), set(&ALL_EVENTS), "{all}");
    let one = app
        .post_json(
            "/v1/webhooks",
            &json!({ "url": "https://example.com/a", "events": ["entity.update"] }),
        )
        .expect(201);
    assert_eq!(event_set(&one["events"]), set(&["entity.update"]), "{one}");
    assert_ne!(one["token"], hook["token"]);
}

#[test]
fn create_webhook_returns_422_on_the_field_when_input_is_invalid() {
    let app = TestApp::spawn();
    let cases = [
        (json!({}), "url"),
        (json!({ "url": "" }), "url"),
        (json!({ "url": null }), "url"),
        (json!({ "url": 42 }), "url"),
        (json!({ "url": "/relative/path" }), "url"),
        (json!({ "url": "example.com/hook" }), "url"),
        (json!({ "url": "ftp://example.com/hook" }), "url"),
        (json!({ "url": "http://" }), "url"),
        (json!({ "url": "not a url" }), "url"),
        (
            json!({ "url": "https://example.com", "events": "entity.update" }),
            "events",
        ),
        (
            json!({ "url": "https://example.com", "events": { "a": 1 } }),
            "events",
        ),
        (
            json!({ "url": "https://example.com", "events": ["invoice.deleted"] }),
            "events",
        ),
        (
            json!({ "url": "https://example.com", "events": ["entity.update", "nope"] }),
            "events",
        ),
        (
            json!({ "url": "https://example.com", "events": [1] }),
            "events",
        ),
    ];
    for (body, field) in cases {
        let res = app.post_json("/v1/webhooks", &body);
        assert_eq!(res.status, 422, "{body}: {}", res.text());
        res.expect_field_error(field);
    }
    let list = app.get("/v1/webhooks").expect(200);
    assert_eq!(list["data"], json!([]), "nothing created: {list}");
}

#[test]
fn webhooks_can_be_listed_read_and_deleted_when_they_exist() {
    let app = TestApp::spawn();
    let a = app.client().create_webhook("https://example.com/a", None);
    let b = app.client().create_webhook("https://example.com/b", None);
    let list = app.get("/v1/webhooks").expect(200);
    let ids: Vec<&Value> = list["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|w| &w["id"])
        .collect();
    assert_eq!(ids, [&b["id"], &a["id"]], "newest first: {list}");
    assert!(list["next_cursor"].is_null(), "{list}");
    let paged = app.client().list_all("/v1/webhooks", 1);
    assert_eq!(paged.len(), 2);

    let path = format!("/v1/webhooks/{}", a["id"].as_str().expect("id"));
    let got = app.get(&path).expect(200);
    assert_eq!(got, a, "GET returns the created webhook");
    let deliveries = app.get(&format!("{path}/deliveries")).expect(200);
    assert_eq!(deliveries, json!({ "data": [], "next_cursor": null }));

    let res = app.delete(&path);
    assert_eq!(res.status, 204, "{}", res.text());
    assert!(res.body.is_empty());
    app.get(&path).expect_not_found();
    app.get(&format!("{path}/deliveries")).expect_not_found();
    app.delete(&path).expect_not_found();
    let list = app.get("/v1/webhooks").expect(200);
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "{list}");
}

#[test]
fn entity_update_is_delivered_signed_when_entity_validates() {
    let app = TestApp::spawn();
    let receiver = Receiver::start();
    let hook = app.client().create_webhook(&receiver.url(), None);
    let token = hook["token"].as_str().expect("token");
    let e = app.client().create_entity(&tax_id("HOK"), "12345678");
    let id = e["id"].as_str().expect("id");

    let r = receiver.wait_for_body("entity.update valid", DEADLINE, |b| {
        b["event"] == "entity.update" && b["object"]["credential_status"] == "valid"
    });
    assert_eq!(r.path, "/hook");
    assert_signed(&r, token);
    let body = r.json();
    assert_eq!(body["source"], format!("entities/{id}"), "{body}");
    assert_eq!(
        body["resource"],
        json!({ "type": "Entity", "id": id, "path": format!("entities/{id}") }),
        "{body}"
    );
    assert!(
        uuid::Uuid::parse_str(body["id"].as_str().unwrap_or("")).is_ok(),
        "{body}"
    );
    crate::api::entities::assert_timestamp(&body["created_at"]);
    let current = app.get(&format!("/v1/entities/{id}")).expect(200);
    assert_eq!(body["object"], current, "object is the entity: {body}");
    assert!(!r.text().contains("12345678"), "{}", r.text());
    assert!(!r.text().contains("ciec_password"), "{}", r.text());

    let d = wait_delivery(
        &app.client(),
        hook["id"].as_str().expect("id"),
        "succeeded",
        |d| d["status"] == "succeeded",
    );
    assert_eq!(d["event"], "entity.update", "{d}");
    assert_eq!(d["event_id"], body["id"], "{d}");
    assert_eq!(as_u64(&d["attempts"]), 1, "{d}");
    assert_eq!(as_u64(&d["response_status"]), 200, "{d}");
    assert!(d["next_attempt_at"].is_null(), "{d}");
    assert!(d["last_error"].is_null(), "{d}");
    crate::api::entities::assert_timestamp(&d["last_attempt_at"]);
    crate::api::entities::assert_timestamp(&d["created_at"]);
    // Exactly once.
    assert_eq!(receiver.count(), 1, "{:?}", receiver.requests());
}

#[test]
fn entity_update_is_delivered_as_invalid_when_password_is_rejected() {
    let app = TestApp::spawn();
    let receiver = Receiver::start();
    let hook = app
        .client()
        .create_webhook(&receiver.url(), Some(&["entity.update"]));
    let e = app.client().create_entity(&tax_id("REJ"), "badpass1");
    let r = receiver.wait_for_body("entity.update invalid", DEADLINE, |b| {
        b["object"]["credential_status"] == "invalid"
    });
    assert_signed(&r, hook["token"].as_str().expect("token"));
    assert_eq!(r.json()["resource"]["id"], e["id"]);
}

#[test]
fn entity_updates_arrive_in_order_when_credential_status_changes() {
    let app = TestApp::spawn();
    let receiver = Receiver::start();
    app.client().create_webhook(&receiver.url(), None);
    let e = app.client().create_entity(&tax_id("ORD"), "12345678");
    let id = e["id"].as_str().expect("id");
    app.client().wait_for_credential(id, "valid");
    app.patch_json(
        &format!("/v1/entities/{id}"),
        &json!({ "ciec_password": "badpass1" }),
    )
    .expect(200);
    app.client().wait_for_credential(id, "invalid");
    let statuses =
        crate::common::app::eventually(DEADLINE, "three entity.update deliveries", || {
            let got = entity_updates_of(&receiver, id);
            (got.len() >= 3).then_some(got)
        });
    let seq: Vec<&str> = statuses
        .iter()
        .map(|b| b["object"]["credential_status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(seq, ["valid", "pending", "invalid"], "{statuses:?}");
    let ids: HashSet<&str> = statuses
        .iter()
        .map(|b| b["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids.len(), 3, "one event id per change");
}

#[test]
fn webhook_receives_no_entity_update_when_subscribed_to_extraction_events_only() {
    let app = TestApp::spawn();
    let filtered = Receiver::start();
    let everything = Receiver::start();
    let only_extractions = app
        .client()
        .create_webhook(&filtered.url(), Some(&["extraction.update"]));
    let all = app.client().create_webhook(&everything.url(), None);
    let e = app.client().create_entity(&tax_id("FLT"), "12345678");
    everything.wait_for_body("entity.update on the unfiltered webhook", DEADLINE, |b| {
        b["event"] == "entity.update" && b["resource"]["id"] == e["id"]
    });
    // Deliveries are written with the event, so the filtered webhook has none now.
    let none = app
        .client()
        .deliveries(only_extractions["id"].as_str().expect("id"));
    assert!(none.is_empty(), "{none:?}");
    assert_eq!(filtered.count(), 0, "{:?}", filtered.requests());
    assert_eq!(
        app.client()
            .deliveries(all["id"].as_str().expect("id"))
            .len(),
        1
    );
}

#[test]
fn delivery_is_retried_with_the_same_webhook_id_when_receiver_fails_twice() {
    let app = TestApp::spawn_with(&["--webhook-retry-schedule", "0s,100ms,100ms"]);
    let receiver = Receiver::start();
    receiver.reply_with(&[Reply::Status(500), Reply::Status(500)]);
    let hook = app.client().create_webhook(&receiver.url(), None);
    let token = hook["token"].as_str().expect("token");
    app.client().create_entity(&tax_id("RTY"), "12345678");

    let d = wait_delivery(
        &app.client(),
        hook["id"].as_str().expect("id"),
        "succeeded",
        |d| d["status"] != "pending",
    );
    assert_eq!(d["status"], "succeeded", "{d}");
    assert_eq!(as_u64(&d["attempts"]), 3, "{d}");
    assert_eq!(as_u64(&d["response_status"]), 200, "{d}");
    assert!(d["last_error"].is_null(), "{d}");
    assert!(d["next_attempt_at"].is_null(), "{d}");

    let requests = receiver.requests();
    assert_eq!(requests.len(), 3, "{requests:?}");
    let ids: HashSet<&str> = requests
        .iter()
        .map(|r| r.header("webhook-id").expect("webhook-id"))
        .collect();
    assert_eq!(ids.len(), 1, "same webhook-id on every attempt: {ids:?}");
    assert_eq!(ids.iter().next().copied(), d["event_id"].as_str());
    let bodies: HashSet<&[u8]> = requests.iter().map(|r| r.body.as_slice()).collect();
    assert_eq!(bodies.len(), 1, "same body on every attempt");
    for r in &requests {
        assert_signed(r, token);
    }
    // The retries waited (about 100 ms each, ±20%).
    let gap = requests[2].at.duration_since(requests[0].at);
    assert!(
        gap >= Duration::from_millis(140),
        "retries too fast: {gap:?}"
    );
}

#[test]
fn delivery_records_the_failed_attempt_when_receiver_answers_500() {
    let app = TestApp::spawn_with(&["--webhook-retry-schedule", "0s,1h"]);
    let receiver = Receiver::start();
    receiver.set_default(Reply::Status(500));
    let hook = app.client().create_webhook(&receiver.url(), None);
    app.client().create_entity(&tax_id("FLF"), "12345678");
    let d = wait_delivery(
        &app.client(),
        hook["id"].as_str().expect("id"),
        "one attempt",
        |d| as_u64(&d["attempts"]) == 1,
    );
    assert_eq!(d["status"], "pending", "{d}");
    assert_eq!(as_u64(&d["response_status"]), 500, "{d}");
    assert!(d["last_error"].is_string(), "{d}");
    crate::api::entities::assert_timestamp(&d["next_attempt_at"]);
    assert!(
        d["next_attempt_at"].as_str() > d["last_attempt_at"].as_str(),
        "{d}"
    );
}

#[test]
fn delivery_counts_a_redirect_or_4xx_as_a_failed_attempt_and_any_2xx_as_success() {
    let app = TestApp::spawn_with(&["--webhook-retry-schedule", "0s,50ms,50ms"]);
    let receiver = Receiver::start();
    receiver.reply_with(&[Reply::Status(302), Reply::Status(401)]);
    receiver.set_default(Reply::Status(204));
    let hook = app.client().create_webhook(&receiver.url(), None);
    app.client().create_entity(&tax_id("RED"), "12345678");
    let d = wait_delivery(
        &app.client(),
        hook["id"].as_str().expect("id"),
        "settled",
        |d| d["status"] != "pending",
    );
    assert_eq!(d["status"], "succeeded", "{d}");
    assert_eq!(as_u64(&d["attempts"]), 3, "{d}");
    assert_eq!(as_u64(&d["response_status"]), 204, "{d}");
    assert_eq!(receiver.count(), 3);
}

#[test]
fn delivery_fails_after_the_last_attempt_when_receiver_never_answers() {
    let app = TestApp::spawn_with(&[
        "--webhook-timeout",
        "300ms",
        "--webhook-retry-schedule",
        "0s,50ms",
    ]);
    let receiver = Receiver::start();
    receiver.set_default(Reply::Hang(Duration::from_secs(10)));
    let hook = app.client().create_webhook(&receiver.url(), None);
    app.client().create_entity(&tax_id("TMO"), "12345678");

    let started = Instant::now();
    let d = wait_delivery(
        &app.client(),
        hook["id"].as_str().expect("id"),
        "failed",
        |d| d["status"] != "pending",
    );
    assert_eq!(d["status"], "failed", "{d}");
    assert_eq!(as_u64(&d["attempts"]), 2, "{d}");
    assert!(d["next_attempt_at"].is_null(), "{d}");
    assert!(
        d["response_status"].is_null(),
        "a timeout has no status: {d}"
    );
    assert!(
        d["last_error"].as_str().is_some_and(|e| !e.is_empty()),
        "{d}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "the timeout applies"
    );
    let requests = receiver.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(
        requests[0].header("webhook-id"),
        requests[1].header("webhook-id")
    );
}

#[test]
fn delivery_fails_when_receiver_refuses_connections() {
    let app = TestApp::spawn_with(&["--webhook-retry-schedule", "0s,50ms,50ms"]);
    let receiver = Receiver::down();
    let hook = app.client().create_webhook(&receiver.url(), None);
    app.client().create_entity(&tax_id("REF"), "12345678");
    let d = wait_delivery(
        &app.client(),
        hook["id"].as_str().expect("id"),
        "failed",
        |d| d["status"] != "pending",
    );
    assert_eq!(d["status"], "failed", "{d}");
    assert_eq!(as_u64(&d["attempts"]), 3, "{d}");
    assert!(d["response_status"].is_null(), "{d}");
    assert!(d["next_attempt_at"].is_null(), "{d}");
}

#[test]
fn delete_webhook_drops_its_pending_deliveries() {
    let app = TestApp::spawn_with(&["--webhook-retry-schedule", "0s,2s,2s"]);
    let failing = Receiver::start();
    failing.set_default(Reply::Status(500));
    let hook = app.client().create_webhook(&failing.url(), None);
    let hook_id = hook["id"].as_str().expect("id");
    let e = app.client().create_entity(&tax_id("DRP"), "12345678");
    let id = e["id"].as_str().expect("id");
    let first = failing.wait_for(1, DEADLINE)[0].at;
    wait_delivery(&app.client(), hook_id, "first attempt recorded", |d| {
        as_u64(&d["attempts"]) == 1 && d["next_attempt_at"].is_string()
    });

    let res = app.delete(&format!("/v1/webhooks/{hook_id}"));
    assert_eq!(res.status, 204, "{}", res.text());
    app.get(&format!("/v1/webhooks/{hook_id}/deliveries"))
        .expect_not_found();

    // Another webhook still gets new events...
    let sentinel = Receiver::start();
    app.client().create_webhook(&sentinel.url(), None);
    app.patch_json(
        &format!("/v1/entities/{id}"),
        &json!({ "ciec_password": "87654321" }),
    )
    .expect(200);
    sentinel.wait_for(2, DEADLINE);
    // ...and the deleted one gets nothing more, even after its retry time has passed.
    let retry_due = first + Duration::from_millis(3000);
    let left = retry_due.saturating_duration_since(Instant::now());
    let count = quiet(
        left + Duration::from_millis(200),
        "the deleted hook's requests",
        || failing.count(),
    );
    assert_eq!(count, 1, "{:?}", failing.requests());
}

#[test]
fn delivery_is_refused_when_block_private_is_on_and_url_is_loopback() {
    let app = TestApp::spawn_with(&["--webhook-block-private", "--webhook-retry-schedule", "0s"]);
    let receiver = Receiver::start();
    let hook = app.client().create_webhook(&receiver.url(), None);
    app.client().create_entity(&tax_id("PRV"), "12345678");
    let d = wait_delivery(
        &app.client(),
        hook["id"].as_str().expect("id"),
        "failed",
        |d| d["status"] != "pending",
    );
    assert_eq!(d["status"], "failed", "{d}");
    assert_eq!(as_u64(&d["attempts"]), 1, "{d}");
    assert!(d["last_error"].is_string(), "{d}");
    assert_eq!(receiver.count(), 0, "nothing reaches a loopback receiver");
}

#[test]
fn entity_updates_wait_for_a_failing_earlier_one_when_they_concern_the_same_entity() {
    let app = TestApp::spawn_with(&["--webhook-retry-schedule", "0s,400ms,400ms"]);
    let receiver = Receiver::start();
    receiver.reply_with(&[Reply::Status(500)]);
    let hook = app.client().create_webhook(&receiver.url(), None);
    let e = app.client().create_entity(&tax_id("HOL"), "12345678");
    let id = e["id"].as_str().expect("id");
    receiver.wait_for(1, DEADLINE);
    // While the first event waits for its retry, two more events of the same entity.
    app.patch_json(
        &format!("/v1/entities/{id}"),
        &json!({ "ciec_password": "badpass1" }),
    )
    .expect(200);
    let got = crate::common::app::eventually(DEADLINE, "four deliveries", || {
        let got = entity_updates_of(&receiver, id);
        (got.len() >= 4).then_some(got)
    });
    let seq: Vec<&str> = got
        .iter()
        .map(|b| b["object"]["credential_status"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(seq, ["valid", "valid", "pending", "invalid"], "{got:?}");
    let deliveries = app.client().list_all(
        &format!(
            "/v1/webhooks/{}/deliveries",
            hook["id"].as_str().expect("id")
        ),
        1,
    );
    assert_eq!(deliveries.len(), 3, "{deliveries:?}");
    let ids: HashSet<&str> = deliveries
        .iter()
        .map(|d| d["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids.len(), 3, "pages hold distinct deliveries");
    // Newest first: the reverse of the order the events happened in.
    let mut event_ids: Vec<&str> = vec![];
    for b in &got {
        let id = b["id"].as_str().unwrap_or("");
        if !event_ids.contains(&id) {
            event_ids.push(id);
        }
    }
    event_ids.reverse();
    let listed: Vec<&str> = deliveries
        .iter()
        .map(|d| d["event_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(listed, event_ids, "{deliveries:?}");
}

#[test]
fn first_attempt_waits_for_the_first_step_when_schedule_starts_with_a_delay() {
    let app = TestApp::spawn_with(&["--webhook-retry-schedule", "700ms"]);
    let receiver = Receiver::start();
    app.client().create_webhook(&receiver.url(), None);
    app.client().create_entity(&tax_id("DLY"), "12345678");
    let r = receiver.wait_for(1, DEADLINE).remove(0);
    let created = r.json()["created_at"]
        .as_str()
        .expect("created_at")
        .to_string();
    let created: std::time::SystemTime = chrono::DateTime::parse_from_rfc3339(&created)
        .expect("timestamp")
        .with_timezone(&chrono::Utc)
        .into();
    let waited = r.received.duration_since(created).unwrap_or_default();
    assert!(
        waited >= Duration::from_millis(650),
        "first attempt after {waited:?}, schedule says 700ms"
    );
}
