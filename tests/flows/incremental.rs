//! Incremental reads (`updated_since`, `order=updated_at_asc`) and the changes they
//! report: a late cancellation seen by a second extraction (status, `cancelled_at`,
//! balances) and a cancelled payment complement (the invoice it paid owes it again).

use crate::common::app::{eventually, Client, TestApp, DEADLINE};
use crate::common::fake_sat_ws::FakeSatWs;
use crate::common::invoices::{
    assert_amount, dec, extract, id_of, invoices, invoices_by_uuid, month, sandbox, valid_entity,
    LOCAL_TIME,
};
use crate::flows::efirma_ws::{app_for, efirma_entity, load, run};
use cfdi_extract::sandbox::docs::{self as sandbox_docs, SandboxInvoice};
use chrono::{Months, NaiveDate};
use rust_decimal::Decimal;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// A month with a late-seen cancellation of a PPD invoice whose XML is not withheld.
fn month_with_late_cancelled_ppd(tax_id: &str) -> (NaiveDate, NaiveDate, SandboxInvoice) {
    for (year, m) in (2024..=2025).flat_map(|y| (1..=12).map(move |m| (y, m))) {
        let (from, to) = month(year, m);
        let late = sandbox(tax_id, "issued", from, to).into_iter().find(|i| {
            i.cancellation_seen_late && !i.xml_withheld_first && i.payment_method() == Some("PPD")
        });
        if let Some(inv) = late {
            return (from, to, inv);
        }
    }
    panic!("no late-cancelled PPD invoice for {tax_id}");
}

/// The invoice without `updated_at`: what a client sees change.
fn content(inv: &Value) -> Value {
    let mut inv = inv.clone();
    inv.as_object_mut().expect("object").remove("updated_at");
    inv
}

/// The service's timestamp of now, strictly after any write before it and strictly
/// before any write after it: the clock has ticked past the last write's microsecond
/// before it is read, and past the one read before the caller writes again.
fn now_between_writes() -> String {
    let micros = || chrono::Utc::now().timestamp_micros();
    let after = |t: i64| {
        eventually(DEADLINE, "the clock to tick", || {
            (micros() > t).then_some(())
        })
    };
    after(micros());
    let now = chrono::Utc::now();
    after(now.timestamp_micros());
    now.to_rfc3339_opts(chrono::SecondsFormat::Micros, true)
}

fn ids(list: &[Value]) -> BTreeSet<String> {
    list.iter().map(id_of).collect()
}

/// Pages of `limit` through the changes since `since`, asserting (updated_at, id) rises.
fn changes(client: &Client, entity: &str, since: &str, limit: usize) -> Vec<Value> {
    let since = since.replace('+', "%2B");
    let list = client.list_all(
        &format!("/v1/invoices?entity_id={entity}&updated_since={since}&order=updated_at_asc"),
        limit,
    );
    let keys: Vec<(String, String)> = list
        .iter()
        .map(|i| {
            (
                i["updated_at"].as_str().expect("updated_at").into(),
                id_of(i),
            )
        })
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "{keys:?}");
    list
}

#[test]
fn updated_since_returns_exactly_the_invoices_a_second_extraction_changed() {
    let tax_id = "AAA010101AAA";
    let (from, to, late) = month_with_late_cancelled_ppd(tax_id);
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&valid_entity(&client, tax_id, "sandbox1"));

    extract(&client, &entity, from, to, "issued");
    let before = invoices_by_uuid(&client, &entity);
    let was = &before[&late.uuid];
    assert_eq!(was["status"], "active", "first seen active: {was}");
    assert!(was["cancelled_at"].is_null(), "{was}");
    assert_eq!(dec(&was["due_amount"]), dec(&was["total"]), "unpaid: {was}");
    let since = now_between_writes();
    assert!(
        changes(&client, &entity, &since, 50).is_empty(),
        "nothing changed yet"
    );

    extract(&client, &entity, from, to, "issued");
    let after = invoices_by_uuid(&client, &entity);
    let changed: BTreeSet<String> = after
        .iter()
        .filter(|(uuid, inv)| before.get(*uuid).is_none_or(|b| content(b) != content(inv)))
        .map(|(_, inv)| id_of(inv))
        .collect();
    let now = &after[&late.uuid];
    assert!(changed.contains(&id_of(now)));
    assert!(changed.len() < after.len(), "some invoices did not change");

    // The late cancellation reached the invoice and its balance.
    assert_eq!(now["status"], "cancelled", "{now}");
    let cancelled_at = late.cancelled_at.expect("cancelled").format(LOCAL_TIME);
    assert_eq!(now["cancelled_at"], cancelled_at.to_string().as_str());
    assert_amount(&now["due_amount"], "0", "a cancelled invoice owes nothing");
    assert_eq!(now["id"], was["id"]);
    let outstanding = invoices(&client, &format!("entity_id={entity}&outstanding=true"));
    assert!(!ids(&outstanding).contains(&id_of(now)));

    // Exactly the changed invoices, in pages of two, whichever the order.
    assert_eq!(ids(&changes(&client, &entity, &since, 2)), changed);
    let by_issue = invoices(
        &client,
        &format!("entity_id={entity}&updated_since={since}"),
    );
    assert_eq!(ids(&by_issue), changed);
    // The same instant in another offset is the same point.
    let t = chrono::DateTime::parse_from_rfc3339(&since).expect("timestamp");
    let local = t
        .with_timezone(&chrono::FixedOffset::west_opt(6 * 3600).expect("offset"))
        .to_rfc3339_opts(chrono::SecondsFormat::Micros, false);
    assert_eq!(ids(&changes(&client, &entity, &local, 50)), changed);

    // Inclusive: asking from the last updated_at seen returns that instant's invoices
    // again (a sync dedupes them by id), then everything after it.
    let last_seen = before
        .values()
        .filter_map(|i| i["updated_at"].as_str())
        .max()
        .expect("invoices")
        .to_string();
    let at_last: BTreeSet<String> = before
        .values()
        .filter(|i| i["updated_at"] == last_seen.as_str())
        .map(id_of)
        .collect();
    let resumed = ids(&changes(&client, &entity, &last_seen, 7));
    assert_eq!(resumed, &changed | &at_last);
}

#[test]
fn incremental_parameters_are_validated_by_name() {
    let tax_id = "AAA010101AAA";
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    let (from, _) = month(2025, 3);
    extract(&client, &entity, from, from, "issued");
    for bad in [
        "yesterday",
        "2026-01-31",
        "2026-13-01T00:00:00Z",
        "2026-01-31T10:00:00",
    ] {
        client
            .get(&format!("/v1/invoices?updated_since={bad}"))
            .expect_field_error("updated_since");
        client
            .get(&format!("/v1/invoices/export?updated_since={bad}"))
            .expect_field_error("updated_since");
    }
    client
        .get("/v1/invoices?order=updated_at")
        .expect_field_error("order");
    // A cursor of one order is refused by the other.
    let by_issue = client.get("/v1/invoices?limit=1").expect(200);
    let by_update = client
        .get("/v1/invoices?limit=1&order=updated_at_asc")
        .expect(200);
    let (c1, c2) = (
        by_issue["next_cursor"].as_str().expect("more than one"),
        by_update["next_cursor"].as_str().expect("more than one"),
    );
    client
        .get(&format!("/v1/invoices?order=updated_at_asc&cursor={c1}"))
        .expect_field_error("cursor");
    client
        .get(&format!("/v1/invoices?cursor={c2}"))
        .expect_field_error("cursor");
    // The export takes the filter too: a point after every change exports no rows.
    let later = now_between_writes();
    let csv = client
        .get(&format!("/v1/invoices/export?updated_since={later}"))
        .text();
    assert_eq!(csv.trim_end().lines().count(), 1, "only the header: {csv}");
}

/// A PPD invoice of the e.firma test RFC paid by complements in the same two months,
/// none withheld; with the window.
fn paid_ppd() -> (NaiveDate, NaiveDate, SandboxInvoice, Vec<SandboxInvoice>) {
    let rfc = crate::common::efirma_files::FIEL_RFC;
    for m in 1..=10 {
        let (from, _) = month(2025, m);
        let to = from
            .checked_add_months(Months::new(2))
            .and_then(|d| d.pred_opt())
            .expect("window end");
        let docs =
            sandbox_docs::invoices_for_period(rfc, sandbox_docs::Direction::Issued, from, to);
        for inv in docs.iter().filter(|i| {
            i.payment_method() == Some("PPD") && i.cancelled_at.is_none() && !i.xml_withheld_first
        }) {
            let paying: Vec<SandboxInvoice> = docs
                .iter()
                .filter(|p| p.payment().is_some_and(|p| p.related_uuid == inv.uuid))
                .cloned()
                .collect();
            if paying.len() >= 2 && paying.iter().all(|p| !p.xml_withheld_first) {
                return (from, to, inv.clone(), paying);
            }
        }
    }
    panic!("no PPD invoice with two complements in a two-month window");
}

fn amount_of(p: &SandboxInvoice) -> Decimal {
    p.payment().expect("a complement").amount
}

#[test]
fn a_cancelled_payment_complement_restores_the_due_amount_of_the_invoice_it_paid() {
    let (from, to, inv, paying) = paid_ppd();
    let fake = FakeSatWs::start();
    load(&fake, from, to);
    let app = app_for(&fake, "50ms");
    let client = app.client();
    let entity = efirma_entity(&client, "valid");

    let first = run(&client, &entity, from, to);
    assert_eq!(first["status"], "finished", "{first}");
    let by_uuid: BTreeMap<String, Value> = invoices_by_uuid(&client, &entity);
    let paid: Decimal = paying.iter().map(amount_of).sum();
    let before = &by_uuid[&inv.uuid];
    assert_eq!(dec(&before["paid_amount"]), paid, "{before}");
    assert_eq!(dec(&before["due_amount"]), inv.total - paid, "{before}");

    // The SAT cancels the last complement after the first run saw it.
    let cancelled = paying.last().expect("a complement");
    let at = cancelled.issued_at + chrono::Duration::days(1);
    fake.cancel(&cancelled.uuid, at);
    let since = now_between_writes();
    let second = run(&client, &entity, from, to);
    assert_eq!(second["status"], "finished", "{second}");

    let after = invoices_by_uuid(&client, &entity);
    let complement = &after[&cancelled.uuid];
    assert_eq!(complement["status"], "cancelled", "{complement}");
    assert_eq!(
        complement["cancelled_at"],
        at.format(LOCAL_TIME).to_string().as_str()
    );
    let now = &after[&inv.uuid];
    let still_paid = paid - amount_of(cancelled);
    assert_eq!(dec(&now["paid_amount"]), still_paid, "{now}");
    assert_eq!(
        dec(&now["due_amount"]),
        inv.total - still_paid,
        "the cancelled payment is owed again: {now}"
    );
    assert!(now["fully_paid_at"].is_null(), "{now}");
    let entries = client
        .get(&format!("/v1/invoices/{}/payments", id_of(now)))
        .expect(200);
    let flags: Vec<(String, bool)> = entries["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|e| {
            let uuid = e["payment_uuid"].as_str().expect("uuid").to_string();
            (uuid, e["cancelled"].as_bool().expect("cancelled"))
        })
        .collect();
    assert!(flags.contains(&(cancelled.uuid.clone(), true)), "{flags:?}");
    assert_eq!(flags.iter().filter(|(_, c)| *c).count(), 1, "{flags:?}");

    // Exactly the complement and the invoice it paid changed.
    let expected = BTreeSet::from([id_of(complement), id_of(now)]);
    assert_eq!(ids(&changes(&client, &entity, &since, 1)), expected);
}
