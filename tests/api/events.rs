//! Event retention through the binary: `--event-retention-days 0` keeps an event only
//! while one of its deliveries is pending.

use crate::common::app::{eventually, quiet, TestApp, DEADLINE};
use crate::common::receiver::Receiver;
use std::time::Duration;

fn event_ids(client: &crate::common::app::Client) -> Vec<String> {
    client
        .list_all("/v1/events", 100)
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn events_past_retention_are_purged_unless_a_delivery_is_pending() {
    let app = TestApp::spawn_with(&[
        "--event-retention-days",
        "0",
        "--event-purge-every",
        "100ms",
        "--webhook-retry-schedule",
        "0s,1h",
    ]);
    let client = app.client();
    let receiver = Receiver::down();
    let hook = client.create_webhook(&receiver.url(), Some(&["entity.update"]));
    let hook_id = hook["id"].as_str().expect("id").to_string();
    let entity = client.create_entity("AAA010101AAA", "sandbox1");
    client.wait_for_credential(entity["id"].as_str().expect("id"), "valid");
    // The first attempt failed and the next is an hour away: the event stays.
    eventually(DEADLINE, "a failed first attempt", || {
        client
            .deliveries(&hook_id)
            .first()
            .filter(|d| d["attempts"] == 1 && d["status"] == "pending")
            .cloned()
    });
    let kept = event_ids(&client);
    assert_eq!(kept.len(), 1, "the entity.update is kept");
    let still = quiet(Duration::from_millis(500), "the kept events", || {
        event_ids(&client)
    });
    assert_eq!(still, kept, "still pending, still kept");

    // An organization without webhooks keeps nothing past zero days.
    let other = app.client_as(&app.create_user_in_new_org());
    let theirs = other.create_entity("BBB010101BBB", "sandbox1");
    other.wait_for_credential(theirs["id"].as_str().expect("id"), "valid");
    eventually(DEADLINE, "their event purged", || {
        event_ids(&other).is_empty().then_some(())
    });

    // Deleting the webhook drops its pending delivery: then the event goes too.
    client
        .delete(&format!("/v1/webhooks/{hook_id}"))
        .expect(204);
    eventually(DEADLINE, "the event purged", || {
        event_ids(&client).is_empty().then_some(())
    });
    client
        .get(&format!("/v1/events/{}", kept[0]))
        .expect_not_found();
}

#[test]
fn the_retention_setting_is_validated() {
    let out = crate::common::app::run_cli(&["serve", "--event-retention-days", "4000"], None);
    assert!(!out.status.success());
    assert!(
        out.stderr.contains("event-retention-days"),
        "{}",
        out.stderr
    );
}
