//! `--webhook-block-private`: deliveries to private, reserved, documentation and
//! local addresses are refused before any connection, and the log says why.

use crate::common::app::{as_u64, eventually, tax_id, TestApp, DEADLINE};
use crate::common::receiver::Receiver;
use serde_json::Value;

#[test]
fn deliveries_to_every_blocked_range_are_refused_and_logged_when_block_private_is_on() {
    let app = TestApp::spawn_with(&["--webhook-block-private", "--webhook-retry-schedule", "0s"]);
    let receiver = Receiver::start();
    let port = receiver.port;
    let targets = [
        format!("http://localhost:{port}/hook"), // a name that resolves to loopback
        format!("http://127.0.0.1:{port}/hook"),
        "http://198.18.0.1/hook".to_string(),   // benchmarking
        "http://192.0.2.1/hook".to_string(),    // documentation
        "http://198.51.100.1/hook".to_string(), // documentation
        "http://203.0.113.1/hook".to_string(),  // documentation
        "http://240.0.0.1/hook".to_string(),    // reserved
        "http://224.0.0.1/hook".to_string(),    // multicast
        format!("http://[64:ff9b::7f00:1]:{port}/hook"), // NAT64 of 127.0.0.1
        format!("http://[2002:7f00:1::1]:{port}/hook"), // 6to4 of 127.0.0.1
        "http://[2001:db8::1]/hook".to_string(), // documentation
        "http://[ff02::1]/hook".to_string(),    // multicast
    ];
    let client = app.client();
    let hooks: Vec<Value> = targets
        .iter()
        .map(|url| client.create_webhook(url, Some(&["entity.update"])))
        .collect();
    client.create_entity(&tax_id("BLK"), "12345678");
    for hook in &hooks {
        let id = hook["id"].as_str().expect("id");
        let d = eventually(DEADLINE, &format!("{} to fail", hook["url"]), || {
            client
                .deliveries(id)
                .into_iter()
                .find(|d| d["status"] != "pending")
        });
        assert_eq!(d["status"], "failed", "{hook}: {d}");
        assert_eq!(as_u64(&d["attempts"]), 1, "{hook}: {d}");
        let error = d["last_error"].as_str().unwrap_or_default();
        assert!(
            error.contains("resolves to") && error.contains("--webhook-block-private"),
            "{}: refused before connecting: {error}",
            hook["url"]
        );
    }
    assert_eq!(receiver.count(), 0, "nothing reaches the local receiver");
}
