//! A burst of deliveries to one receiver sent back to back by a single delivery worker,
//! which claims its next delivery in the transaction that records its last attempt:
//! every delivery arrives exactly as often as its recorded attempts, and ends recorded.

use crate::common::app::{as_u64, eventually, tax_id, TestApp, DEADLINE};
use crate::common::receiver::{Receiver, Reply};
use serde_json::Value;
use std::collections::HashMap;

/// An organization's most webhooks: every event becomes this many deliveries.
const WEBHOOKS: usize = 20;

#[test]
fn every_delivery_of_a_burst_arrives_and_is_recorded_when_one_worker_sends_them_back_to_back() {
    let app = TestApp::spawn_with(&[
        "--delivery-workers",
        "1",
        "--webhook-retry-schedule",
        "0s,100ms",
    ]);
    let receiver = Receiver::start();
    // One failure in the middle of the burst: retried, while the worker goes on.
    let mut replies = vec![Reply::Status(200); 25];
    replies.push(Reply::Status(500));
    receiver.reply_with(&replies);
    let client = app.client();
    let tokens: HashMap<String, String> = (0..WEBHOOKS)
        .map(|_| {
            let hook = client.create_webhook(&receiver.url(), Some(&["entity.update"]));
            let field = |name: &str| hook[name].as_str().expect(name).to_string();
            (field("id"), field("token"))
        })
        .collect();
    for _ in 0..3 {
        let entity = client.create_entity(&tax_id("BST"), "12345678");
        client.wait_for_credential(entity["id"].as_str().expect("id"), "valid");
    }
    let events = client.list_all("/v1/events", 100).len();
    assert!(events >= 3, "an entity.update per validation: {events}");

    let deliveries: Vec<(&String, Vec<Value>)> =
        eventually(DEADLINE, "every delivery to be done", || {
            let all: Vec<_> = tokens
                .iter()
                .map(|(id, token)| (token, client.deliveries(id)))
                .collect();
            let done = all
                .iter()
                .all(|(_, ds)| ds.len() == events && ds.iter().all(|d| d["status"] != "pending"));
            done.then_some(all)
        });

    // (bearer token, webhook-id) of every request the receiver got.
    let mut arrived: HashMap<(String, String), u64> = HashMap::new();
    let requests = receiver.requests();
    for r in &requests {
        let token = r.header("authorization").expect("authorization");
        let id = r.header("webhook-id").expect("webhook-id");
        *arrived
            .entry((token.to_string(), id.to_string()))
            .or_default() += 1;
    }
    let mut attempts = 0;
    let mut retried = 0;
    for (token, ds) in &deliveries {
        for d in ds {
            assert_eq!(d["status"], "succeeded", "{d}");
            assert_eq!(as_u64(&d["response_status"]), 200, "{d}");
            let n = as_u64(&d["attempts"]);
            let key = (
                format!("Bearer {token}"),
                d["event_id"].as_str().expect("event_id").to_string(),
            );
            assert_eq!(arrived.get(&key), Some(&n), "arrivals of {d}");
            attempts += n;
            retried += usize::from(n > 1);
        }
    }
    assert_eq!(
        requests.len() as u64,
        attempts,
        "no request beyond the attempts"
    );
    assert_eq!(retried, 1, "only the delivery answered 500 was retried");
    assert!(requests.len() >= WEBHOOKS * 3);
}
