//! Deliveries share the service fairly: an organization whose receivers never answer
//! holds neither the validation/extraction workers nor another organization's
//! deliveries; and an organization has at most 20 webhooks.

use crate::common::app::{eventually, tax_id, TestApp, DEADLINE};
use crate::common::invoices::{date, extract, id_of, import_samples, processed, valid_entity};
use crate::common::receiver::{Receiver, Reply};
use serde_json::json;
use std::time::{Duration, Instant};

const MAX_WEBHOOKS: usize = 20;

/// A server whose first organization has 20 webhooks to a receiver that holds every
/// request for `hang_secs` (attempts time out after `timeout`), and three entities
/// whose events go to all of them.
fn org_with_hanging_webhooks(timeout: &str, hang_secs: u64) -> (TestApp, Receiver) {
    let app = TestApp::spawn_with(&[
        "--webhook-timeout",
        timeout,
        "--webhook-retry-schedule",
        "0s",
    ]);
    let hanging = Receiver::start();
    hanging.set_default(Reply::Hang(Duration::from_secs(hang_secs)));
    let a = app.client();
    for _ in 0..MAX_WEBHOOKS {
        a.create_webhook(&hanging.url(), None);
    }
    for _ in 0..3 {
        a.create_entity(&tax_id("HNG"), "12345678");
    }
    (app, hanging)
}

#[test]
fn another_orgs_validation_and_delivery_go_out_while_one_org_has_20_hanging_webhooks() {
    // An attempt may hang for 30 s; the other organization must not wait for that.
    let (app, hanging) = org_with_hanging_webhooks("30s", 60);
    // Organization A's deliveries now hang in the receiver (60 of them queued).
    hanging.wait_for(4, DEADLINE);

    let b = app.client_as(&app.create_user_in_new_org());
    let answering = Receiver::start();
    b.create_webhook(&answering.url(), Some(&["entity.update"]));
    let started = Instant::now();
    let entity = b.create_entity(&tax_id("FAR"), "12345678");
    let id = entity["id"].as_str().expect("id").to_string();
    let prompt = Duration::from_secs(10);
    eventually(
        prompt,
        "B's entity to validate while A's deliveries hang",
        || {
            let e = b.get(&format!("/v1/entities/{id}")).expect(200);
            (e["credential_status"] == "valid").then_some(())
        },
    );
    answering.wait_for_body("B's entity.update (valid)", prompt, |body| {
        body["resource"]["id"] == id.as_str() && body["object"]["credential_status"] == "valid"
    });
    assert!(
        started.elapsed() < prompt,
        "B was served after {:?}",
        started.elapsed()
    );
    // A's receiver still holds its connections: B did not wait for them to time out.
    assert!(
        hanging.count() < MAX_WEBHOOKS * 3,
        "A's deliveries are not all done: {}",
        hanging.count()
    );
}

#[test]
fn a_second_orgs_deliveries_go_out_side_by_side_while_another_org_holds_its_half() {
    // A's hanging receivers hold its half of the 16 delivery workers. B's receiver
    // hangs too, so each of B's deliveries holds a worker: B gets several at once (a
    // quarter of the workers stays for organizations with none running), not one
    // after the other.
    let (app, hanging) = org_with_hanging_webhooks("60s", 90);
    hanging.wait_for(8, DEADLINE);

    let b = app.client_as(&app.create_user_in_new_org());
    let slow = Receiver::start();
    slow.set_default(Reply::Hang(Duration::from_secs(90)));
    b.create_webhook(&slow.url(), Some(&["entity.update"]));
    for _ in 0..3 {
        b.create_entity(&tax_id("SID"), "12345678");
    }
    // Nothing answers for 60 s: three arrivals before that are three workers at once.
    slow.wait_for(3, Duration::from_secs(30));
    assert_eq!(hanging.count(), 8, "A still holds its half and no more");
}

#[test]
fn deliveries_queued_together_go_out_side_by_side_not_in_one_workers_turn() {
    // Two imported documents' invoice.created to a receiver that never answers: one
    // worker taking both in one batch would send the second only after the first timed
    // out; the claim spreads a short backlog over the workers free (`DeliveryShare`).
    let app = TestApp::spawn_with(&["--webhook-timeout", "60s", "--webhook-retry-schedule", "0s"]);
    let hanging = Receiver::start();
    hanging.set_default(Reply::Hang(Duration::from_secs(90)));
    let client = app.client();
    let entity = id_of(&valid_entity(&client, "H&E951128469", "sandbox1"));
    client.create_webhook(&hanging.url(), Some(&["invoice.created"]));
    let imported = import_samples(
        &app,
        &entity,
        "issued",
        &[
            "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
            "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
        ],
    );
    assert_eq!(imported.len(), 2, "{imported:?}");
    // Nothing answers for 60 s: two arrivals before that are two workers at once.
    hanging.wait_for(2, Duration::from_secs(30));
}

#[test]
fn a_21st_webhook_is_refused_with_422_on_body_when_an_org_has_20() {
    let app = TestApp::spawn();
    let receiver = Receiver::start();
    let client = app.client();
    for _ in 0..MAX_WEBHOOKS {
        client.create_webhook(&receiver.url(), None);
    }
    let errors = client
        .post_json("/v1/webhooks", &json!({ "url": receiver.url() }))
        .expect_field_error("body");
    assert!(
        errors.iter().any(|m| m.contains("at most 20 webhooks")),
        "{errors:?}"
    );
    let listed = client.list_all("/v1/webhooks", 50);
    assert_eq!(listed.len(), MAX_WEBHOOKS);
    // The cap is per organization; deleting one makes room again.
    let other = app.client_as(&app.create_user_in_new_org());
    other.create_webhook(&receiver.url(), None);
    let first = listed[0]["id"].as_str().expect("id");
    client.delete(&format!("/v1/webhooks/{first}")).expect(204);
    client.create_webhook(&receiver.url(), None);
}

#[test]
fn a_hanging_webhook_holds_back_only_its_own_deliveries_in_its_organization() {
    // A worker sends a batch of one webhook's deliveries in turn: the hanging webhook's
    // batch must not hold back the same organization's other webhook.
    let app = TestApp::spawn_with(&["--webhook-timeout", "60s", "--webhook-retry-schedule", "0s"]);
    let hanging = Receiver::start();
    hanging.set_default(Reply::Hang(Duration::from_secs(120)));
    let answering = Receiver::start();
    let a = app.client();
    a.create_webhook(&hanging.url(), None);
    a.create_webhook(&answering.url(), None);
    let started = Instant::now();
    // Fewer hanging deliveries than the organization's share of workers (8 of 16), so
    // only a batch that mixed the two webhooks could hold the answering one back.
    for _ in 0..4 {
        a.create_entity(&tax_id("HLD"), "12345678");
    }
    hanging.wait_for(1, DEADLINE);
    // An event for each entity's validation at least, answered long before the hanging
    // receiver's first attempt could time out.
    answering.wait_for(4, Duration::from_secs(40));
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the answering webhook waited {:?}",
        started.elapsed()
    );
}

#[test]
fn a_slow_receivers_burst_goes_out_side_by_side_not_one_batch_in_turn() {
    // One extraction's invoice.created events, committed together, to a receiver that
    // never answers within the timeout: after the first slow send the rest of the batch
    // goes to the other workers, so attempts overlap instead of coming a timeout apart.
    let app = TestApp::spawn_with(&["--webhook-timeout", "1s", "--webhook-retry-schedule", "0s"]);
    let client = app.client();
    let entity = id_of(&valid_entity(&client, "H&E951128469", "sandbox1"));
    let slow = Receiver::start();
    slow.set_default(Reply::Hang(Duration::from_secs(30)));
    client.create_webhook(&slow.url(), Some(&["invoice.created"]));
    let day = date("2026-01-05");
    let n = processed(&extract(&client, &entity, day, day, "issued"));
    assert!(n >= 4, "a burst: {n} invoices");
    let arrivals: Vec<Instant> = slow.wait_for(4, DEADLINE).iter().map(|r| r.at).collect();
    // One worker sending its batch in turn would space every attempt a timeout (1 s)
    // apart; side by side, some two come well within it.
    let closest = arrivals
        .windows(2)
        .map(|w| w[1].saturating_duration_since(w[0]))
        .min()
        .expect("two arrivals");
    assert!(
        closest < Duration::from_millis(900),
        "attempts came one timeout apart: {arrivals:?}"
    );
}
