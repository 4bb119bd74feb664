//! Invoice events through the binary: one `invoice.created` per invoice an extraction
//! makes visible, one `invoice.updated` per invoice a later run changes (with what
//! changed), nothing for the rest; and the events feed holding exactly what the
//! webhooks carried, under the same ids.

use crate::common::app::{quiet, Client, TestApp, DEADLINE};
use crate::common::invoices::*;
use crate::common::receiver::Receiver;
use cfdi_extract::sandbox::docs::SandboxInvoice;
use chrono::NaiveDate;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

const INVOICE_EVENTS: &[&str] = &["invoice.created", "invoice.updated"];

/// A tax id and month of 2025 whose issued invoices include a late-seen cancellation
/// of a PPD invoice that owes its whole total (no complement of the month pays it),
/// so cancelling it changes its balance.
fn month_with_late_ppd_cancellation() -> (String, NaiveDate, NaiveDate, SandboxInvoice) {
    for tax_id in [
        "AAA010101AAA",
        "EVE010101AAA",
        "EVE020202BBB",
        "EVE030303CCC",
    ] {
        for m in 1..=12 {
            let (from, to) = month(2025, m);
            let docs = sandbox(tax_id, "issued", from, to);
            let paid: BTreeSet<&str> = docs
                .iter()
                .filter_map(|d| d.payment().map(|p| p.related_uuid.as_str()))
                .collect();
            let found = docs.iter().find(|i| {
                i.cancellation_seen_late
                    && !i.xml_withheld_first
                    && i.invoice_type == 'I'
                    && i.payment_method() == Some("PPD")
                    && !paid.contains(i.uuid.as_str())
            });
            if let Some(inv) = found {
                return (tax_id.to_string(), from, to, inv.clone());
            }
        }
    }
    panic!("no month with a late PPD cancellation");
}

/// The fields `invoice.updated` reports, as the invoice object shows them.
const TRACKED: &[&str] = &[
    "status",
    "cancelled_at",
    "has_pdf",
    "paid_amount",
    "due_amount",
    "last_payment_date",
    "fully_paid_at",
    "payment_conflicts",
];

fn same(a: &Value, b: &Value) -> bool {
    if a.is_number() && b.is_number() {
        dec(a) == dec(b)
    } else {
        a == b
    }
}

/// Field -> (from, to).
type Changes = BTreeMap<String, (Value, Value)>;

/// The changes an update between two states of an invoice must report.
fn expected_changes(before: &Value, after: &Value) -> Changes {
    TRACKED
        .iter()
        .filter(|f| !same(&before[**f], &after[**f]))
        .map(|f| (f.to_string(), (before[*f].clone(), after[*f].clone())))
        .collect()
}

/// Waits for `n` more deliveries (beyond `seen`), then checks no more arrive.
fn next_deliveries(receiver: &Receiver, seen: usize, n: usize) -> Vec<Value> {
    receiver.wait_for(seen + n, DEADLINE);
    quiet(Duration::from_millis(700), "deliveries", || {
        receiver.count()
    });
    let all = receiver.requests();
    assert_eq!(all.len(), seen + n, "no redundant or extra deliveries");
    all[seen..].iter().map(|r| r.json()).collect()
}

fn get_invoice(client: &Client, id: &str) -> Value {
    client.get(&format!("/v1/invoices/{id}")).expect(200)
}

#[test]
fn extractions_announce_each_visible_invoice_once_and_later_changes_as_updates() {
    let (tax_id, from, to, late) = month_with_late_ppd_cancellation();
    let receiver = Receiver::start();
    let app = TestApp::spawn();
    let client = app.client();
    client.create_webhook(&receiver.url(), Some(INVOICE_EVENTS));
    let entity_id = id_of(&valid_entity(&client, &tax_id, "sandbox1"));

    // First run: one invoice.created per visible invoice, carrying it as GET shows it.
    extract(&client, &entity_id, from, to, "issued");
    let first = invoices_by_uuid(&client, &entity_id);
    let created = next_deliveries(&receiver, 0, first.len());
    let mut announced = BTreeSet::new();
    for body in &created {
        assert_eq!(body["event"], "invoice.created", "{body}");
        let id = body["resource"]["id"].as_str().expect("id").to_string();
        assert_eq!(body["resource"]["type"], "Invoice");
        assert_eq!(body["source"], format!("invoices/{id}"));
        assert_eq!(
            body["object"],
            get_invoice(&client, &id),
            "the invoice as it is"
        );
        assert!(announced.insert(id), "one event per invoice");
    }
    let visible: BTreeSet<String> = first.values().map(id_of).collect();
    assert_eq!(announced, visible);

    // Second run: withheld XML arrives (created), late cancellations and the balances
    // they move (updated, with exactly what changed), nothing for the unchanged rest.
    extract(&client, &entity_id, from, to, "issued");
    let second = invoices_by_uuid(&client, &entity_id);
    // Invoice id -> None for a creation, or the changes of an update.
    let mut expected: BTreeMap<String, Option<Changes>> = BTreeMap::new();
    for (uuid, now) in &second {
        match first.get(uuid) {
            None => {
                expected.insert(id_of(now), None);
            }
            Some(before) => {
                let changes = expected_changes(before, now);
                if !changes.is_empty() {
                    expected.insert(id_of(now), Some(changes));
                }
            }
        }
    }
    let bodies = next_deliveries(&receiver, created.len(), expected.len());
    for body in &bodies {
        let id = body["resource"]["id"].as_str().expect("id");
        let want = expected
            .remove(id)
            .unwrap_or_else(|| panic!("unexpected {body}"));
        assert_eq!(body["object"], get_invoice(&client, id));
        match want {
            None => assert_eq!(body["event"], "invoice.created", "{body}"),
            Some(changes) => {
                assert_eq!(body["event"], "invoice.updated", "{body}");
                let got = body["changes"].as_object().expect("changes");
                let keys: BTreeSet<&String> = got.keys().collect();
                assert_eq!(keys, changes.keys().collect(), "{body}");
                for (field, (from, to)) in &changes {
                    assert!(same(&got[field]["from"], from), "{field} of {body}");
                    assert!(same(&got[field]["to"], to), "{field} of {body}");
                }
            }
        }
    }
    assert!(expected.is_empty(), "never announced: {expected:?}");
    let cancelled = bodies
        .iter()
        .find(|b| b["object"]["uuid"] == late.uuid.as_str())
        .expect("the late cancellation is announced");
    let changes = &cancelled["changes"];
    assert_eq!(
        changes["status"],
        json!({"from": "active", "to": "cancelled"})
    );
    let at = late
        .cancelled_at
        .expect("cancelled")
        .format(LOCAL_TIME)
        .to_string();
    assert_eq!(changes["cancelled_at"], json!({"from": null, "to": at}));
    assert_amount(
        &changes["due_amount"]["from"],
        &late.total.to_string(),
        "owed",
    );
    assert_amount(
        &changes["due_amount"]["to"],
        "0",
        "a cancelled invoice owes nothing",
    );

    // The feed holds what the webhook carried, byte for byte, under the same ids.
    let delivered: BTreeMap<String, Value> = receiver
        .requests()
        .iter()
        .map(|r| (r.header("webhook-id").expect("id").to_string(), r.json()))
        .collect();
    let filter = "event=invoice.created,invoice.updated";
    let oldest = client.list_all(&format!("/v1/events?{filter}&order=oldest"), 7);
    let fed: BTreeMap<String, Value> = oldest.iter().map(|e| (id_of(e), e.clone())).collect();
    assert_eq!(fed, delivered);
    let mut newest = client.list_all(&format!("/v1/events?{filter}"), 11);
    newest.reverse();
    assert_eq!(newest, oldest, "newest first is the same list reversed");
    let ids: Vec<String> = oldest.iter().map(id_of).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted, "oldest first");

    // Filters: one resource, one type; the single read.
    let late_id = id_of(&cancelled["object"]);
    let of_one = client.list_all(&format!("/v1/events?resource_id={late_id}&order=oldest"), 1);
    let kinds: Vec<&str> = of_one
        .iter()
        .map(|e| e["event"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(kinds, ["invoice.created", "invoice.updated"]);
    let runs = client.list_all("/v1/events?resource_type=Extraction", 50);
    assert_eq!(runs.len(), 4, "running and finished, twice");
    assert!(runs.iter().all(|e| e["event"] == "extraction.update"));
    let updates = client.list_all("/v1/events?event=invoice.updated", 50);
    assert_eq!(
        updates.len(),
        bodies
            .iter()
            .filter(|b| b["event"] == "invoice.updated")
            .count()
    );
    let one = client.get(&format!("/v1/events/{}", ids[0])).expect(200);
    assert_eq!(one, oldest[0]);

    // Another organization sees none of it.
    let other = app.client_as(&app.create_user_in_new_org());
    other
        .get(&format!("/v1/events/{}", ids[0]))
        .expect_not_found();
    assert!(other.list_all("/v1/events", 50).is_empty());
    assert!(other
        .list_all(&format!("/v1/events?resource_id={late_id}"), 50)
        .is_empty());

    // Bad parameters are 422s on their names.
    for (query, field) in [
        ("cursor=not-a-cursor", "cursor"),
        ("event=invoice.deleted", "event"),
        ("order=sideways", "order"),
        ("resource_id=42", "resource_id"),
        ("resource_type=Webhook", "resource_type"),
        ("limit=0", "limit"),
    ] {
        client
            .get(&format!("/v1/events?{query}"))
            .expect_field_error(field);
    }
    client.get("/v1/events/not-a-uuid").expect_not_found();
}

#[test]
fn each_imported_file_announces_what_it_changed() {
    let receiver = Receiver::start();
    let app = TestApp::spawn();
    let client = app.client();
    client.create_webhook(&receiver.url(), Some(INVOICE_EVENTS));
    let mut entities = BTreeMap::new();
    let ppd = "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml";
    let payment = "cfdi40-pago20-tfd-full-payment-of-ppd.xml";
    let ids = import_by_issuer(&app, &mut entities, &[ppd]);
    let first = next_deliveries(&receiver, 0, 1);
    assert_eq!(first[0]["event"], "invoice.created");
    assert_eq!(first[0]["object"]["id"], ids[ppd].as_str());

    // The complement: created itself, and the invoice it pays updated (paid in full).
    let paid_by = import_by_issuer(&app, &mut entities, &[payment]);
    let bodies = next_deliveries(&receiver, 1, 2);
    let of = |id: &str| {
        bodies
            .iter()
            .find(|b| b["resource"]["id"] == id)
            .unwrap_or_else(|| panic!("no event of {id}: {bodies:?}"))
    };
    assert_eq!(of(&paid_by[payment])["event"], "invoice.created");
    let update = of(&ids[ppd]);
    assert_eq!(update["event"], "invoice.updated");
    assert_eq!(update["object"], get_invoice(&client, &ids[ppd]));
    let changes = &update["changes"];
    assert_amount(&changes["paid_amount"]["from"], "0", "unpaid before");
    assert_amount(&changes["due_amount"]["to"], "0", "paid in full");
    assert!(changes["fully_paid_at"]["to"].is_string(), "{changes}");
    assert!(changes.get("status").is_none(), "{changes}");

    // The same file again changes nothing: no event.
    import_by_issuer(&app, &mut entities, &[payment]);
    next_deliveries(&receiver, 3, 0);
}
