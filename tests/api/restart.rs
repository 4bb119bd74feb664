//! Durability: deliveries and jobs survive a crash (SIGKILL) or a graceful stop.

use crate::common::app::{as_u64, tax_id, Client, TestApp, DEADLINE};
use crate::common::receiver::Receiver;
use serde_json::Value;
use std::time::Duration;

/// Retries every 200 ms for 20 s: enough to outlast a stop and a start on a loaded CI
/// machine (a shorter schedule let a delivery exhaust its attempts before the receiver
/// came back), short enough that a resumed receiver hears within 200 ms.
fn long_schedule() -> String {
    let mut steps = vec!["0s"];
    steps.extend(std::iter::repeat_n("200ms", 100));
    steps.join(",")
}

fn first_failed_attempt(client: &Client, webhook_id: &str) -> Value {
    crate::common::app::eventually(DEADLINE, "a failed delivery attempt", || {
        client
            .deliveries(webhook_id)
            .into_iter()
            .find(|d| as_u64(&d["attempts"]) >= 1)
    })
}

#[test]
fn delivery_arrives_after_restart_when_server_was_killed_while_receiver_was_down() {
    let mut receiver = Receiver::down();
    let mut app = TestApp::spawn_with(&["--webhook-retry-schedule", &long_schedule()]);
    let hook = app.client().create_webhook(&receiver.url(), None);
    let hook_id = hook["id"].as_str().expect("id").to_string();
    let e = app.client().create_entity(&tax_id("KIL"), "12345678");
    let d = first_failed_attempt(&app.client(), &hook_id);
    assert_eq!(d["status"], "pending", "retries remain: {d}");
    let event_id = d["event_id"].as_str().expect("event_id").to_string();

    app.restart(); // SIGKILL, then a new process on the same data dir
    receiver.resume();

    let r = receiver.wait_for_body("the event after the restart", DEADLINE, |b| {
        b["id"] == event_id.as_str()
    });
    let body = r.json();
    assert_eq!(body["event"], "entity.update", "{body}");
    assert_eq!(body["resource"]["id"], e["id"], "{body}");
    assert_eq!(body["object"]["credential_status"], "valid", "{body}");
    assert_eq!(r.header("webhook-id"), Some(event_id.as_str()));
    crate::api::webhooks::assert_signed(&r, hook["token"].as_str().expect("token"));

    let done = crate::common::app::eventually(DEADLINE, "the delivery to succeed", || {
        app.client()
            .deliveries(&hook_id)
            .into_iter()
            .find(|d| d["status"] != "pending")
    });
    assert_eq!(done["status"], "succeeded", "{done}");
    assert_eq!(done["event_id"], event_id.as_str(), "{done}");
    assert!(as_u64(&done["attempts"]) >= 2, "{done}");
    // One event, one delivery: nothing duplicated or lost.
    assert_eq!(app.client().deliveries(&hook_id).len(), 1);
    assert!(receiver
        .requests()
        .iter()
        .all(|r| r.header("webhook-id") == Some(event_id.as_str())));
}

#[test]
fn credential_validation_completes_after_restart_when_server_was_killed_mid_validation() {
    let mut app = TestApp::spawn_with(&["--sim-latency", "1s"]);
    let e = app.client().create_entity(&tax_id("MID"), "12345678");
    let id = e["id"].as_str().expect("id");
    app.restart();
    app.client().wait_for_credential(id, "valid");
}

#[test]
fn pending_work_is_kept_when_server_is_stopped_with_sigterm() {
    let mut receiver = Receiver::down();
    let mut app = TestApp::spawn_with(&[
        "--sim-latency",
        "300ms",
        "--webhook-retry-schedule",
        &long_schedule(),
    ]);
    let hook = app.client().create_webhook(&receiver.url(), None);
    let hook_id = hook["id"].as_str().expect("id").to_string();
    let first = app.client().create_entity(&tax_id("TRM"), "12345678");
    first_failed_attempt(&app.client(), &hook_id);
    // A validation is in flight when the signal comes.
    let second = app.client().create_entity(&tax_id("TRM"), "12345678");

    app.sigterm();
    let status = app
        .wait_exit(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("still running 10 s after SIGTERM\n{}", app.output()));
    assert!(status.success(), "{status:?}\n{}", app.output());

    app.start();
    receiver.resume();
    let second_id = second["id"].as_str().expect("id");
    app.client().wait_for_credential(second_id, "valid");
    for e in [&first, &second] {
        receiver.wait_for_body("each entity's entity.update", DEADLINE, |b| {
            b["resource"]["id"] == e["id"] && b["object"]["credential_status"] == "valid"
        });
    }
    // Data, credentials and the stored password key survived.
    app.client()
        .get(&format!("/v1/webhooks/{hook_id}"))
        .expect(200);
    assert_eq!(
        app.get("/v1/entities").expect(200)["data"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}
