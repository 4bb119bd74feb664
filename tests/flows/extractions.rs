//! Extractions against the sandbox tax authority, end to end over HTTP, with a local
//! webhook receiver; expected documents come from `sandbox_docs`.

use crate::common::app::{eventually, Client, TestApp, DEADLINE};
use crate::common::invoices::*;
use crate::common::receiver::{Receiver, Recorded};
use cfdi_extract::sandbox::docs::SandboxInvoice;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashSet};
use std::time::Duration;

/// The `extraction.update` deliveries of one extraction, in arrival order.
fn extraction_events(rx: &Receiver, extraction_id: &str) -> Vec<(Recorded, Value)> {
    rx.requests()
        .into_iter()
        .filter_map(|r| {
            let body: Value = serde_json::from_slice(&r.body).ok()?;
            (body["event"] == "extraction.update" && body["resource"]["id"] == extraction_id)
                .then_some((r, body))
        })
        .collect()
}

/// Waits until the extraction's events end with `last_status`; returns their bodies.
fn wait_extraction_events(rx: &Receiver, extraction_id: &str, last_status: &str) -> Vec<Value> {
    eventually(
        DEADLINE,
        &format!("extraction.update {last_status} of {extraction_id}"),
        || {
            let events = extraction_events(rx, extraction_id);
            events
                .iter()
                .any(|(_, b)| b["object"]["status"] == last_status)
                .then(|| events.into_iter().map(|(_, b)| b).collect())
        },
    )
}

fn statuses(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .map(|e| e["object"]["status"].as_str().unwrap_or("?").to_string())
        .collect()
}

#[track_caller]
fn assert_extraction_event(event: &Value, extraction_id: &str, entity: &Value) {
    assert_eq!(event["event"], "extraction.update", "{event}");
    let source = format!("extractions/{extraction_id}");
    assert_eq!(event["source"], source.as_str(), "{event}");
    assert_eq!(event["resource"]["type"], "Extraction", "{event}");
    assert_eq!(event["resource"]["id"], extraction_id, "{event}");
    assert_eq!(event["resource"]["path"], source.as_str(), "{event}");
    assert!(
        uuid::Uuid::parse_str(event["id"].as_str().unwrap_or("")).is_ok(),
        "{event}"
    );
    assert_timestamp(&event["created_at"], "event created_at");
    let object = &event["object"];
    assert_eq!(object["id"], extraction_id, "{event}");
    assert_eq!(object["entity_id"], entity["id"], "{event}");
    assert_eq!(
        object["entity"],
        json!({ "id": entity["id"], "tax_id": entity["tax_id"], "name": entity["name"] }),
        "object.entity is {{id, tax_id, name}}: {event}"
    );
}

#[test]
fn extraction_runs_pending_running_finished_with_ordered_webhooks_and_exact_counts() {
    let app = TestApp::spawn();
    let client = app.client();
    let rx = Receiver::start();
    let hook = client.create_webhook(&rx.url(), None);
    let token = hook["token"].as_str().expect("token").to_string();
    let tax_id = "EKU9003173C9";
    let entity = valid_entity(&client, tax_id, "sandbox1");
    let entity_id = id_of(&entity);
    let (from, to) = month(2026, 1);

    let created = create_extraction(&client, &entity_id, from, to, "issued");
    let id = id_of(&created);
    assert!(uuid::Uuid::parse_str(&id).is_ok());
    assert_eq!(created["entity_id"], entity_id.as_str());
    assert_eq!(
        created["options"],
        json!({ "period": { "from": "2026-01-01", "to": "2026-01-31" }, "download_type": "issued" })
    );
    for field in [
        "started_at",
        "finished_at",
        "failed_reason",
        "invoices_found",
        "invoices_processed",
    ] {
        assert!(
            created.as_object().is_some_and(|o| o.contains_key(field)),
            "extraction lacks {field}: {created}"
        );
    }
    assert!(created["started_at"].is_null() && created["finished_at"].is_null());
    assert!(created["failed_reason"].is_null());
    assert_timestamp(&created["created_at"], "created_at");
    assert_timestamp(&created["updated_at"], "updated_at");

    let done = wait_extraction_done(&client, &id);
    assert_eq!(done["status"], "finished", "{done}");
    assert!(done["failed_reason"].is_null(), "{done}");
    assert_timestamp(&done["started_at"], "started_at");
    assert_timestamp(&done["finished_at"], "finished_at");
    let (created_at, started, finished) = (
        done["created_at"].as_str().unwrap_or(""),
        done["started_at"].as_str().unwrap_or(""),
        done["finished_at"].as_str().unwrap_or(""),
    );
    assert!(created_at <= started && started <= finished, "{done}");
    assert_eq!(done["options"], created["options"]);

    let expected = sandbox(tax_id, "issued", from, to);
    let held = withheld(&expected);
    assert_eq!(found(&done) as usize, expected.len(), "invoices_found");
    assert_eq!(
        processed(&done) as usize,
        expected.len() - held,
        "invoices_processed = found - withheld"
    );
    let listed = invoices_by_uuid(&client, &entity_id);
    assert_eq!(listed.len(), expected.len() - held);
    // The default page is 50.
    let page = client.get("/v1/invoices").expect(200);
    assert_eq!(page["data"].as_array().map(Vec::len), Some(50));
    assert!(page["next_cursor"].is_string(), "{page}");
    let visible: BTreeSet<String> = expected
        .iter()
        .filter(|i| !i.xml_withheld_first)
        .map(|i| i.uuid.clone())
        .collect();
    assert_eq!(listed.keys().cloned().collect::<BTreeSet<_>>(), visible);
    for inv in &expected {
        if let Some(l) = listed.get(&inv.uuid) {
            assert_eq!(
                l["type"].as_str(),
                Some(inv.invoice_type.to_string().as_str())
            );
            assert_eq!(l["direction"], "issued");
            assert_eq!(l["issuer"]["tax_id"], tax_id);
            assert_eq!(dec(&l["total"]), inv.total, "{}", inv.uuid);
            assert_eq!(
                l["issued_at"],
                inv.issued_at.format(LOCAL_TIME).to_string().as_str()
            );
        }
    }

    let events = wait_extraction_events(&rx, &id, "finished");
    assert_eq!(statuses(&events), ["running", "finished"], "{events:?}");
    for event in &events {
        assert_extraction_event(event, &id, &entity);
    }
    let running = &events[0]["object"];
    assert_eq!(running["started_at"], done["started_at"]);
    assert!(running["finished_at"].is_null(), "{running}");
    let finished_event = &events[1]["object"];
    assert_eq!(finished_event["finished_at"], done["finished_at"]);
    assert_eq!(finished_event["invoices_found"], done["invoices_found"]);
    assert_eq!(
        finished_event["invoices_processed"],
        done["invoices_processed"]
    );
    for (request, _) in extraction_events(&rx, &id) {
        assert_eq!(
            request.header("authorization"),
            Some(format!("Bearer {token}").as_str())
        );
    }
    // The entity's own validation reached the webhook as entity.update.
    rx.wait_for_body("entity.update valid", DEADLINE, |b| {
        b["event"] == "entity.update"
            && b["object"]["id"] == entity_id.as_str()
            && b["object"]["credential_status"] == "valid"
    });
}

#[test]
fn create_answers_422_with_dotted_names_before_404_for_unknown_entities() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&client.create_entity("EKU9003173C9", "sandbox1"));
    let good_options = json!({ "period": { "from": "2026-01-01", "to": "2026-01-31" }, "download_type": "issued" });
    let with_options = |options: Value| json!({ "entity_id": entity_id, "options": options });
    let period = |from: Value, to: Value| {
        with_options(json!({ "period": { "from": from, "to": to }, "download_type": "issued" }))
    };
    let cases: Vec<(Value, &[&str])> = vec![
        (json!({}), &["entity_id", "options"]),
        (json!({ "options": good_options }), &["entity_id"]),
        (
            json!({ "entity_id": "not-a-uuid", "options": good_options }),
            &["entity_id"],
        ),
        (
            json!({ "entity_id": "  ", "options": good_options }),
            &["entity_id"],
        ),
        (
            json!({ "entity_id": 42, "options": good_options }),
            &["entity_id"],
        ),
        (json!({ "entity_id": entity_id }), &["options"]),
        (
            with_options(json!({ "download_type": "issued" })),
            &["options.period"],
        ),
        (
            period(json!("2026-02-01"), json!("2026-01-31")),
            &["options.period.to"],
        ),
        (
            period(json!("2026-02-30"), json!("2026-03-31")),
            &["options.period.from"],
        ),
        (
            period(json!("2026-01-01"), json!("soon")),
            &["options.period.to"],
        ),
        (
            period(json!("01/01/2026"), json!("2026-01-31")),
            &["options.period.from"],
        ),
        (
            with_options(json!({ "period": { "to": "2026-01-31" }, "download_type": "issued" })),
            &["options.period.from"],
        ),
        (
            with_options(
                json!({ "period": { "from": "2026-01-01", "to": "2026-01-31" }, "download_type": "other" }),
            ),
            &["options.download_type"],
        ),
        (
            with_options(json!({ "period": { "from": "2026-01-01", "to": "2026-01-31" } })),
            &["options.download_type"],
        ),
    ];
    for (body, fields) in cases {
        let resp = client.post_json("/v1/extractions", &body);
        assert_eq!(resp.status, 422, "{body}: {}", resp.text());
        for field in fields {
            resp.expect_field_error(field);
        }
    }
    for raw in [&b"not json"[..], b"[]", b""] {
        let resp = client.post_raw("/v1/extractions", raw);
        assert_eq!(resp.status, 422, "{}", resp.text());
        resp.expect_field_error("body");
    }

    // Well-formed but unknown, or another organization's: 404 on entity_id.
    let unknown = "01960000-0000-7000-8000-000000000000";
    let body = client
        .post_json(
            "/v1/extractions",
            &json!({ "entity_id": unknown, "options": good_options }),
        )
        .expect_error(404);
    assert_eq!(body, json!({ "errors": { "entity_id": ["not found"] } }));
    let other = app.create_user_in_new_org();
    let client_b = app.client_as(&other);
    let body = client_b
        .post_json(
            "/v1/extractions",
            &json!({ "entity_id": entity_id, "options": good_options }),
        )
        .expect_error(404);
    assert_eq!(body, json!({ "errors": { "entity_id": ["not found"] } }));
    // Invalid body and unknown entity: 422 first.
    let resp = client.post_json(
        "/v1/extractions",
        &json!({ "entity_id": unknown, "options": { "period": { "from": "2026-02-01", "to": "2026-01-01" }, "download_type": "issued" } }),
    );
    resp.expect_field_error("options.period.to");
    let resp = client_b.post_json(
        "/v1/extractions",
        &json!({ "entity_id": entity_id, "options": { "download_type": "both" } }),
    );
    assert_eq!(resp.status, 422, "{}", resp.text());
    // Nothing was created by any of these.
    assert_eq!(client.get("/v1/extractions").expect(200)["data"], json!([]));

    // Same-day periods and RFC 3339 timestamps (date part used) are fine.
    let ok = client
        .post_json(
            "/v1/extractions",
            &extraction_body(
                &entity_id,
                date("2026-01-05"),
                date("2026-01-05"),
                "received",
            ),
        )
        .expect(201);
    assert_eq!(
        ok["options"]["period"],
        json!({ "from": "2026-01-05", "to": "2026-01-05" })
    );
    let ok = client
        .post_json(
            "/v1/extractions",
            &json!({ "entity_id": entity_id, "unknown": 1, "options": { "period": { "from": "2026-01-01T00:00:00Z", "to": "2026-01-31T23:59:59Z" }, "download_type": "issued" } }),
        )
        .expect(201);
    assert_eq!(
        ok["options"]["period"],
        json!({ "from": "2026-01-01", "to": "2026-01-31" })
    );
    assert_eq!(ok["status"], "pending");
}

#[test]
fn list_filters_by_entity_and_status_pages_and_hides_other_organizations() {
    let app = TestApp::spawn();
    let client = app.client();
    let good = id_of(&valid_entity(&client, "EKU9003173C9", "sandbox1"));
    let bad = id_of(&client.create_entity("AAA010101AAA", "bad12345"));
    client.wait_for_credential(&bad, "invalid");
    let mut good_ids = vec![];
    for day in ["2026-01-01", "2026-01-02", "2026-01-03"] {
        good_ids.push(id_of(&create_extraction(
            &client,
            &good,
            date(day),
            date(day),
            "issued",
        )));
    }
    let mut bad_ids = vec![];
    for day in ["2026-01-01", "2026-01-02"] {
        bad_ids.push(id_of(&create_extraction(
            &client,
            &bad,
            date(day),
            date(day),
            "received",
        )));
    }
    for id in good_ids.iter().chain(&bad_ids) {
        wait_extraction_done(&client, id);
    }

    let ids = |query: &str| -> Vec<String> {
        client
            .list_all(&format!("/v1/extractions{query}"), 500)
            .iter()
            .map(id_of)
            .collect()
    };
    let all = ids("");
    assert_eq!(all.len(), 5);
    let mut newest_first: Vec<String> = good_ids.iter().chain(&bad_ids).cloned().collect();
    newest_first.reverse();
    assert_eq!(all, newest_first, "newest first");
    let set = |v: &[String]| v.iter().cloned().collect::<BTreeSet<_>>();
    assert_eq!(set(&ids(&format!("?entity_id={good}"))), set(&good_ids));
    assert_eq!(set(&ids(&format!("?entity_id={bad}"))), set(&bad_ids));
    assert_eq!(set(&ids("?status=finished")), set(&good_ids));
    assert_eq!(set(&ids("?status=failed")), set(&bad_ids));
    assert!(ids("?status=pending").is_empty());
    assert!(ids("?status=running").is_empty());
    assert!(ids(&format!("?entity_id={good}&status=failed")).is_empty());
    // Pages of two: every extraction once, in the same order.
    let paged: Vec<String> = client
        .list_all("/v1/extractions", 2)
        .iter()
        .map(id_of)
        .collect();
    assert_eq!(paged, all);
    let first_page = client.get("/v1/extractions?limit=2").expect(200);
    assert_eq!(first_page["data"].as_array().map(Vec::len), Some(2));
    assert!(first_page["next_cursor"].is_string());

    for (query, field) in [
        ("status=done", "status"),
        ("status=FINISHED", "status"),
        ("entity_id=nope", "entity_id"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("cursor=garbage", "cursor"),
    ] {
        client
            .get(&format!("/v1/extractions?{query}"))
            .expect_field_error(field);
    }

    let other = app.create_user_in_new_org();
    let client_b = app.client_as(&other);
    assert_eq!(
        client_b.get("/v1/extractions").expect(200)["data"],
        json!([])
    );
    assert_eq!(
        client_b
            .get(&format!("/v1/extractions?entity_id={good}"))
            .expect(200)["data"],
        json!([])
    );
    client_b
        .get(&format!("/v1/extractions/{}", good_ids[0]))
        .expect_not_found();
    client.get("/v1/extractions/not-a-uuid").expect_not_found();
    client
        .get("/v1/extractions/01960000-0000-7000-8000-000000000000")
        .expect_not_found();
    client
        .get(&format!("/v1/extractions/{}", good_ids[0]))
        .expect(200);
}

/// An extraction of one day that ends `failed`; returns it and its webhook events.
fn failing_extraction(
    client: &Client,
    rx: &Receiver,
    entity_id: &str,
    reason: &str,
) -> (Value, Vec<Value>) {
    let created = create_extraction(
        client,
        entity_id,
        date("2026-01-10"),
        date("2026-01-10"),
        "issued",
    );
    let id = id_of(&created);
    let done = wait_extraction_done(client, &id);
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["failed_reason"], reason, "{done}");
    assert_timestamp(&done["finished_at"], "finished_at");
    let events = wait_extraction_events(rx, &id, "failed");
    let last = events.last().expect("an event");
    assert_eq!(last["object"]["failed_reason"], reason);
    assert_eq!(last["object"]["finished_at"], done["finished_at"]);
    (done, events)
}

#[test]
fn extraction_fails_credentials_not_validated_when_the_authority_is_unreachable() {
    let app = TestApp::spawn();
    let client = app.client();
    let rx = Receiver::start();
    client.create_webhook(&rx.url(), None);
    let entity = client.create_entity("OFF900101AAA", "sandbox1");
    let entity_id = id_of(&entity);
    let (done, events) = failing_extraction(&client, &rx, &entity_id, "credentials_not_validated");
    assert!(done["started_at"].is_null(), "never started: {done}");
    assert_eq!(statuses(&events), ["failed"]);
    assert_extraction_event(&events[0], &id_of(&done), &entity);
    assert_eq!(
        client.get(&format!("/v1/entities/{entity_id}")).expect(200)["credential_status"],
        "pending"
    );
    assert_eq!(done["invoices_found"], 0);
}

#[test]
fn extraction_fails_invalid_credentials_without_starting_when_the_credential_is_invalid() {
    let app = TestApp::spawn();
    let client = app.client();
    let rx = Receiver::start();
    client.create_webhook(&rx.url(), None);
    let entity = client.create_entity("AAA010101AAA", "bad12345");
    let entity_id = id_of(&entity);
    client.wait_for_credential(&entity_id, "invalid");
    let (done, events) = failing_extraction(&client, &rx, &entity_id, "invalid_credentials");
    assert!(done["started_at"].is_null(), "never started: {done}");
    assert_eq!(statuses(&events), ["failed"]);
}

#[test]
fn extraction_fails_invalid_credentials_after_starting_and_the_entity_turns_invalid_when_the_password_changed(
) {
    let app = TestApp::spawn();
    let client = app.client();
    let rx = Receiver::start();
    client.create_webhook(&rx.url(), None);
    let entity = valid_entity(&client, "XAXX010101000", "chg12345");
    let entity_id = id_of(&entity);
    let (done, events) = failing_extraction(&client, &rx, &entity_id, "invalid_credentials");
    assert_timestamp(&done["started_at"], "started_at (it started)");
    assert_eq!(statuses(&events), ["running", "failed"]);
    for event in &events {
        assert_extraction_event(event, &id_of(&done), &entity);
    }
    let after = client.get(&format!("/v1/entities/{entity_id}")).expect(200);
    assert_eq!(after["credential_status"], "invalid", "{after}");
    let update = rx.wait_for_body("entity.update invalid", DEADLINE, |b| {
        b["event"] == "entity.update"
            && b["object"]["id"] == entity_id.as_str()
            && b["object"]["credential_status"] == "invalid"
    });
    let body = update.json();
    assert_eq!(body["source"], format!("entities/{entity_id}").as_str());
    assert_eq!(body["resource"]["type"], "Entity");
    assert_eq!(body["resource"]["id"], entity_id.as_str());
    assert!(body["object"].get("ciec_password").is_none());
    // A later extraction fails at once: the credential is now invalid.
    let (done, events) = failing_extraction(&client, &rx, &entity_id, "invalid_credentials");
    assert!(done["started_at"].is_null(), "{done}");
    assert_eq!(statuses(&events), ["failed"]);
}

#[test]
fn extraction_fails_sat_unavailable_after_starting_when_the_invoice_service_is_down() {
    let app = TestApp::spawn();
    let client = app.client();
    let rx = Receiver::start();
    client.create_webhook(&rx.url(), None);
    let entity = valid_entity(&client, "UNA900101AAA", "sandbox1");
    let entity_id = id_of(&entity);
    let (done, events) = failing_extraction(&client, &rx, &entity_id, "sat_unavailable");
    assert_timestamp(&done["started_at"], "started_at (it started)");
    assert_eq!(statuses(&events), ["running", "failed"]);
    assert_eq!(
        client.get(&format!("/v1/entities/{entity_id}")).expect(200)["credential_status"],
        "valid"
    );
    assert!(invoices(&client, &format!("entity_id={entity_id}")).is_empty());
}

#[test]
fn extractions_of_one_entity_run_one_at_a_time_in_creation_order() {
    let app = TestApp::spawn_with(&["--sim-latency", "100ms"]);
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, "EKU9003173C9", "sandbox1"));
    let ids: Vec<String> = ["2026-02-01", "2026-02-02", "2026-02-03"]
        .iter()
        .map(|d| {
            id_of(&create_extraction(
                &client,
                &entity_id,
                date(d),
                date(d),
                "issued",
            ))
        })
        .collect();
    let done: Vec<Value> = ids
        .iter()
        .map(|id| wait_extraction_done(&client, id))
        .collect();
    for d in &done {
        assert_eq!(d["status"], "finished", "{d}");
    }
    for pair in done.windows(2) {
        let (prev_end, next_start) = (
            pair[0]["finished_at"].as_str().expect("finished_at"),
            pair[1]["started_at"].as_str().expect("started_at"),
        );
        assert!(
            next_start >= prev_end,
            "{} started at {next_start}, before {} finished at {prev_end}",
            pair[1]["id"],
            pair[0]["id"]
        );
    }
}

/// A PPD invoice of month `m` (of 2025) whose first installment lands in month `m + 1`,
/// none of whose documents are withheld; with its complements of `m + 1`.
struct OutOfOrder {
    month: u32,
    invoice: SandboxInvoice,
    complements: Vec<SandboxInvoice>,
}

fn find_out_of_order(tax_id: &str) -> OutOfOrder {
    for m in 1..=11 {
        let (f, t) = month(2025, m);
        let (nf, nt) = month(2025, m + 1);
        let this = sandbox(tax_id, "issued", f, t);
        let next = sandbox(tax_id, "issued", nf, nt);
        let mut best: Option<OutOfOrder> = None;
        for inv in this.iter().filter(|i| {
            i.payment_method() == Some("PPD") && !i.xml_withheld_first && i.cancelled_at.is_none()
        }) {
            let complements: Vec<SandboxInvoice> = next
                .iter()
                .filter(|p| p.payment().is_some_and(|p| p.related_uuid == inv.uuid))
                .cloned()
                .collect();
            let first_here = complements
                .iter()
                .any(|p| p.payment().is_some_and(|p| p.installment == 1));
            if !first_here || complements.iter().any(|p| p.xml_withheld_first) {
                continue;
            }
            let candidate = OutOfOrder {
                month: m,
                invoice: inv.clone(),
                complements,
            };
            // Prefer two installments in the later month.
            if candidate.complements.len() >= 2 {
                return candidate;
            }
            best.get_or_insert(candidate);
        }
        if let Some(b) = best {
            return b;
        }
    }
    panic!("no PPD invoice paid first in the next month for {tax_id}");
}

#[test]
fn complement_extracted_before_its_invoice_is_applied_when_the_invoice_arrives() {
    let tax_id = "EKU9003173C9";
    let case = find_out_of_order(tax_id);
    let inv = &case.invoice;
    let paid: Decimal = case
        .complements
        .iter()
        .filter_map(|p| p.payment().map(|p| p.amount))
        .sum();
    assert!(paid > Decimal::ZERO);
    let last_paid_at = case
        .complements
        .iter()
        .filter_map(|p| p.payment().map(|p| p.paid_at))
        .max()
        .expect("a payment");

    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    let (later_from, later_to) = month(2025, case.month + 1);
    let (from, to) = month(2025, case.month);

    // The later month first: its complements land, the invoice they pay is absent.
    extract(&client, &entity_id, later_from, later_to, "issued");
    assert!(
        invoice_by_uuid(&client, &inv.uuid).is_none(),
        "the PPD invoice of the earlier month is not there yet"
    );
    for p in &case.complements {
        let listed = invoice_by_uuid(&client, &p.uuid)
            .unwrap_or_else(|| panic!("complement {} is listed", p.uuid));
        assert_eq!(listed["type"], "P");
        let full = client
            .get(&format!("/v1/invoices/{}", id_of(&listed)))
            .expect(200);
        let related: Vec<String> = full["payments"]
            .as_array()
            .expect("payments")
            .iter()
            .flat_map(|p| {
                p["related_documents"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
            })
            .filter_map(|d| d["uuid"].as_str().map(str::to_string))
            .collect();
        assert!(related.contains(&inv.uuid), "{full}");
    }

    // Then the invoice's month: its aggregates include the complements at once.
    extract(&client, &entity_id, from, to, "issued");
    let listed = invoice_by_uuid(&client, &inv.uuid).expect("the invoice is listed");
    let got = client
        .get(&format!("/v1/invoices/{}", id_of(&listed)))
        .expect(200);
    assert_eq!(got["payment_method"], "PPD");
    assert_eq!(dec(&got["total"]), inv.total);
    assert_eq!(
        dec(&got["paid_amount"]),
        paid,
        "paid = installments of the later month: {got}"
    );
    assert_eq!(
        dec(&got["due_amount"]),
        inv.total - paid,
        "due = total - paid: {got}"
    );
    assert_eq!(
        got["last_payment_date"],
        last_paid_at.format(LOCAL_TIME).to_string().as_str()
    );
    if inv.total == paid {
        assert_eq!(got["fully_paid_at"], got["last_payment_date"]);
    } else {
        assert!(got["fully_paid_at"].is_null(), "{got}");
        let outstanding = invoices(
            &client,
            &format!("entity_id={entity_id}&payment_method=PPD&outstanding=true"),
        );
        assert!(outstanding.iter().any(|i| i["uuid"] == inv.uuid.as_str()));
    }

    let entries = client
        .get(&format!("/v1/invoices/{}/payments", id_of(&listed)))
        .expect(200);
    let entries = entries["data"].as_array().expect("data").clone();
    assert_eq!(entries.len(), case.complements.len(), "{entries:?}");
    let paged = client.list_all(&format!("/v1/invoices/{}/payments", id_of(&listed)), 1);
    assert_eq!(paged, entries, "pages of one give the same entries");
    client
        .get(&format!("/v1/invoices/{}/payments?limit=0", id_of(&listed)))
        .expect_field_error("limit");
    let mut expected: Vec<&SandboxInvoice> = case.complements.iter().collect();
    expected.sort_by_key(|p| p.payment().map(|p| p.paid_at));
    for (entry, p) in entries.iter().zip(expected) {
        let pay = p.payment().expect("payment");
        assert_eq!(entry["payment_uuid"], p.uuid.as_str());
        assert_eq!(entry["installment"], json!(pay.installment));
        assert_eq!(dec(&entry["amount_paid"]), pay.amount);
        assert_eq!(dec(&entry["previous_balance"]), pay.previous_balance);
        assert_eq!(dec(&entry["outstanding_balance"]), pay.outstanding_balance);
        assert_eq!(
            entry["paid_at"],
            pay.paid_at.format(LOCAL_TIME).to_string().as_str()
        );
        assert_eq!(entry["cancelled"], false);
    }
}

/// A month of 2025 with a late-seen cancellation whose XML is not withheld.
fn month_with_late_cancellation(tax_id: &str) -> (u32, Vec<SandboxInvoice>) {
    for m in 1..=12 {
        let (f, t) = month(2025, m);
        let docs = sandbox(tax_id, "issued", f, t);
        let late = docs
            .iter()
            .any(|i| i.cancellation_seen_late && !i.xml_withheld_first);
        let early = docs.iter().any(|i| {
            i.cancelled_at.is_some() && !i.cancellation_seen_late && !i.xml_withheld_first
        });
        if late && early && withheld(&docs) > 0 {
            return (m, docs);
        }
    }
    panic!("no month with a late cancellation for {tax_id}");
}

#[test]
fn extracting_a_period_twice_adds_no_duplicates_completes_withheld_xml_and_shows_late_cancellations(
) {
    let tax_id = "AAA010101AAA";
    let (m, expected) = month_with_late_cancellation(tax_id);
    let (from, to) = month(2025, m);
    let held = withheld(&expected);
    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));

    let first = extract(&client, &entity_id, from, to, "issued");
    assert_eq!(found(&first) as usize, expected.len());
    assert_eq!(processed(&first) as usize, expected.len() - held);
    let after_first = invoices_by_uuid(&client, &entity_id);
    assert_eq!(after_first.len(), expected.len() - held);
    for inv in expected.iter().filter(|i| !i.xml_withheld_first) {
        let listed = &after_first[&inv.uuid];
        match (inv.cancelled_at, inv.cancellation_seen_late) {
            (Some(_), true) => {
                assert_eq!(
                    listed["status"], "active",
                    "first listing sees it active: {listed}"
                );
                assert!(listed["cancelled_at"].is_null(), "{listed}");
            }
            (Some(at), false) => {
                assert_eq!(listed["status"], "cancelled", "{listed}");
                assert_eq!(
                    listed["cancelled_at"],
                    at.format(LOCAL_TIME).to_string().as_str()
                );
                assert_amount(
                    &listed["due_amount"],
                    "0",
                    "a cancelled invoice owes nothing",
                );
            }
            (None, _) => assert_eq!(listed["status"], "active", "{listed}"),
        }
    }

    let second = extract(&client, &entity_id, from, to, "issued");
    assert_eq!(found(&second) as usize, expected.len());
    assert_eq!(
        processed(&second) as usize,
        held,
        "the second run processes only the XML it lacked"
    );
    let after_second = invoices_by_uuid(&client, &entity_id);
    assert_eq!(
        after_second.len(),
        expected.len(),
        "no duplicates, none missing"
    );
    assert_eq!(
        after_second.keys().cloned().collect::<HashSet<_>>(),
        uuids(&expected)
    );
    for inv in &expected {
        let listed = &after_second[&inv.uuid];
        if let Some(at) = inv.cancelled_at {
            assert_eq!(listed["status"], "cancelled", "{listed}");
            assert_eq!(
                listed["cancelled_at"],
                at.format(LOCAL_TIME).to_string().as_str()
            );
            assert_amount(&listed["due_amount"], "0", "cancelled: due 0");
        } else {
            assert_eq!(listed["status"], "active", "{listed}");
        }
        // Invoices seen in both runs keep their id.
        if let Some(before) = after_first.get(&inv.uuid) {
            assert_eq!(before["id"], listed["id"], "{}", inv.uuid);
        }
    }
    let cancelled = invoices(&client, &format!("entity_id={entity_id}&status=cancelled"));
    assert_eq!(
        cancelled.len(),
        expected.iter().filter(|i| i.cancelled_at.is_some()).count()
    );
}

/// How the server is stopped in the middle of an extraction.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Stop {
    Kill,
    Term,
    /// kill -9, and another instance on the same PostgreSQL database finishes it.
    Takeover,
    /// A second instance starts on the same PostgreSQL database and the database
    /// restarts under both; either may finish the run.
    DatabaseRestart,
}

/// What an interrupted run extracts, and when it is stopped.
struct Interrupted {
    tax_id: &'static str,
    from: &'static str,
    to: &'static str,
    latency: &'static str,
    /// Stop once more than this many documents are processed (and not all of them).
    after_processed: u64,
}

/// A day of a `BIG` tax id: about 740 documents, 15 download batches of 150 ms.
const BIG_DAY: Interrupted = Interrupted {
    tax_id: "BIG900101AAA",
    from: "2026-03-02",
    to: "2026-03-02",
    latency: "150ms",
    after_processed: 0,
};

/// A month of a normal tax id: five listing windows of a week; stopped in a later one.
const MONTH: Interrupted = Interrupted {
    tax_id: "EKU9003173C9",
    from: "2026-01-01",
    to: "2026-01-31",
    latency: "100ms",
    after_processed: 100,
};

/// Runs the extraction, stops the server when the run is part-way, starts it again on
/// the same data directory, and checks the run completes exactly once.
fn interrupted_extraction_resumes(stop: Stop, run: &Interrupted) {
    let tax_id = run.tax_id;
    let (from, to) = (date(run.from), date(run.to));
    let expected = sandbox(tax_id, "issued", from, to);
    let held = withheld(&expected);
    let total = expected.len() as u64;

    let args = ["--sim-latency", run.latency, "--job-lease", "2s"];
    let mut app = TestApp::spawn_with(&args);
    let client = app.client();
    let rx = Receiver::start();
    client.create_webhook(&rx.url(), Some(&["extraction.update"]));
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    let id = id_of(&create_extraction(&client, &entity_id, from, to, "issued"));
    let path = format!("/v1/extractions/{id}");
    let midway = eventually(
        Duration::from_secs(30),
        "the extraction to be running, part-way",
        || {
            let e = client.get(&path).expect(200);
            assert_ne!(
                e["status"], "finished",
                "finished before it could be stopped: {e}"
            );
            assert_ne!(e["status"], "failed", "{e}");
            let n = processed(&e);
            (e["status"] == "running" && n > run.after_processed && n < total - held as u64)
                .then_some(e)
        },
    );
    assert!(found(&midway) <= total, "{midway}");
    let mut other = None;
    match stop {
        Stop::Kill => app.restart(),
        Stop::Takeover => {
            app.kill();
            let mut second = app.beside(&args);
            second.start();
            other = Some(second);
        }
        Stop::DatabaseRestart => {
            let mut second = app.beside(&args);
            second.start();
            crate::common::engine::restart_server();
            other = Some(second);
        }
        Stop::Term => {
            app.sigterm();
            let status = app
                .wait_exit(Duration::from_secs(10))
                .expect("the server exits after SIGTERM");
            assert!(status.success(), "{status:?}\n{}", app.output());
            app.start();
        }
    }
    let client = other.as_ref().unwrap_or(&app).client();
    if let Stop::DatabaseRestart = stop {
        // Until the instance has connected again, a request may be the 503 that did
        // nothing and says to retry (/docs/operations#postgresql-outage): as a client
        // would, retry it until the instance serves again.
        eventually(DEADLINE, "the instance to serve after the restart", || {
            (client.get(&path).status == 200).then_some(())
        });
    }
    let done = wait_extraction_done(&client, &id);
    assert_eq!(done["status"], "finished", "{stop:?}: {done}");
    assert_eq!(found(&done), total);
    assert_eq!(
        processed(&done) + held as u64,
        total,
        "{stop:?}: processed + withheld = found: {done}"
    );
    assert_eq!(done["started_at"], midway["started_at"], "started once");
    let listed = invoices_by_uuid(&client, &entity_id);
    assert_eq!(listed.len() as u64, total - held as u64, "{stop:?}");
    let visible: HashSet<String> = expected
        .iter()
        .filter(|i| !i.xml_withheld_first)
        .map(|i| i.uuid.clone())
        .collect();
    assert_eq!(listed.keys().cloned().collect::<HashSet<_>>(), visible);
    // One `running` and one `finished`, whatever happened in between.
    let events = wait_extraction_events(&rx, &id, "finished");
    assert_eq!(statuses(&events), ["running", "finished"], "{stop:?}");
}

#[test]
fn extraction_killed_while_running_resumes_after_restart_without_duplicates() {
    interrupted_extraction_resumes(Stop::Kill, &BIG_DAY);
}

#[test]
fn extraction_killed_on_one_instance_is_finished_by_another_without_duplicates() {
    crate::common::engine::postgres_only!("a second instance on the shared database");
    interrupted_extraction_resumes(Stop::Takeover, &BIG_DAY);
}

#[test]
#[ignore = "restarts its PostgreSQL server: .ci/run runs it alone, on a server of its own"]
fn extraction_survives_a_postgresql_restart_under_two_instances() {
    crate::common::engine::postgres_only!("a restart of the shared PostgreSQL database");
    interrupted_extraction_resumes(Stop::DatabaseRestart, &BIG_DAY);
}

#[test]
fn extraction_of_a_month_killed_in_a_later_window_resumes_and_counts_exactly() {
    interrupted_extraction_resumes(Stop::Kill, &MONTH);
}

#[test]
fn extraction_stopped_with_sigterm_while_running_resumes_after_restart() {
    interrupted_extraction_resumes(Stop::Term, &BIG_DAY);
}

#[test]
fn overlapping_periods_add_each_invoice_once_and_complete_xml_withheld_in_the_overlap() {
    let tax_id = "EKU9003173C9";
    let (a_from, a_to) = (date("2025-06-01"), date("2025-06-20"));
    let (b_from, b_to) = (date("2025-06-10"), date("2025-06-30"));
    let first_docs = sandbox(tax_id, "issued", a_from, a_to);
    let second_docs = sandbox(tax_id, "issued", b_from, b_to);
    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));

    let first = extract(&client, &entity_id, a_from, a_to, "issued");
    assert_eq!(found(&first) as usize, first_docs.len());
    let second = extract(&client, &entity_id, b_from, b_to, "issued");
    assert_eq!(found(&second) as usize, second_docs.len());

    // Withheld XML comes on any later extraction that lists the invoice again: those
    // of the overlap are complete, the others still wait.
    let in_both = |i: &SandboxInvoice| {
        let d = i.issued_at.date();
        b_from <= d && d <= a_to
    };
    let all: Vec<&SandboxInvoice> = first_docs
        .iter()
        .chain(second_docs.iter().filter(|i| !in_both(i)))
        .collect();
    let expected: HashSet<String> = all
        .iter()
        .filter(|i| !i.xml_withheld_first || in_both(i))
        .map(|i| i.uuid.clone())
        .collect();
    assert!(
        all.iter().any(|i| i.xml_withheld_first && in_both(i)),
        "the overlap has withheld XML"
    );
    assert!(
        all.iter().any(|i| i.xml_withheld_first && !in_both(i)),
        "outside the overlap too"
    );
    let listed = invoices_by_uuid(&client, &entity_id);
    assert_eq!(listed.keys().cloned().collect::<HashSet<_>>(), expected);
    // The second run processed its new invoices and the overlap's withheld ones only.
    let new_in_second = second_docs
        .iter()
        .filter(|i| !in_both(i) && !i.xml_withheld_first)
        .count();
    let completed = second_docs
        .iter()
        .filter(|i| in_both(i) && i.xml_withheld_first)
        .count();
    assert_eq!(
        processed(&second) as usize,
        new_in_second + completed,
        "{second}"
    );
}

#[test]
fn received_extraction_lists_invoices_the_entity_received() {
    let tax_id = "EKU9003173C9";
    let (from, to) = (date("2026-01-01"), date("2026-01-07"));
    let expected = sandbox(tax_id, "received", from, to);
    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    let done = extract(&client, &entity_id, from, to, "received");
    assert_eq!(found(&done) as usize, expected.len());
    let listed = invoices(
        &client,
        &format!("entity_id={entity_id}&direction=received"),
    );
    assert_eq!(listed.len(), expected.len() - withheld(&expected));
    assert!(listed
        .iter()
        .all(|i| i["receiver"]["tax_id"] == tax_id && i["direction"] == "received"));
    assert!(invoices(&client, &format!("entity_id={entity_id}&direction=issued")).is_empty());
    assert_eq!(
        invoices(&client, &format!("receiver_tax_id={tax_id}")).len(),
        listed.len()
    );
}

#[test]
fn two_organizations_extracting_the_same_tax_id_each_get_their_own_invoices() {
    let tax_id = "EKU9003173C9";
    let (from, to) = (date("2025-09-01"), date("2025-09-10"));
    let expected = sandbox(tax_id, "issued", from, to);
    let visible = expected.len() - withheld(&expected);
    let app = TestApp::spawn();
    let client_a = app.client();
    let other = app.create_user_in_new_org();
    let client_b = app.client_as(&other);
    let entity_a = id_of(&valid_entity(&client_a, tax_id, "sandbox1"));
    let entity_b = id_of(&valid_entity(&client_b, tax_id, "sandbox1"));

    let ext_a = extract(&client_a, &entity_a, from, to, "issued");
    let ext_b = extract(&client_b, &entity_b, from, to, "issued");
    // Each entity's first extraction is its own: the same documents are withheld.
    for ext in [&ext_a, &ext_b] {
        assert_eq!(found(ext) as usize, expected.len());
        assert_eq!(processed(ext) as usize, visible);
    }
    let a = invoices(&client_a, "");
    let b = invoices(&client_b, "");
    assert_eq!(a.len(), visible);
    assert_eq!(b.len(), visible);
    assert!(a.iter().all(|i| i["entity_id"] == entity_a.as_str()));
    assert!(b.iter().all(|i| i["entity_id"] == entity_b.as_str()));
    let ids_a: HashSet<String> = a.iter().map(id_of).collect();
    assert!(
        b.iter().all(|i| !ids_a.contains(&id_of(i))),
        "distinct invoices"
    );
    let sample = id_of(&a[0]);
    client_b
        .get(&format!("/v1/invoices/{sample}"))
        .expect_not_found();
    client_b
        .get(&format!("/v1/extractions/{}", id_of(&ext_a)))
        .expect_not_found();
    assert_eq!(
        client_b
            .get(&format!("/v1/extractions?entity_id={entity_a}"))
            .expect(200)["data"],
        json!([])
    );
}

#[test]
fn complement_withheld_on_the_first_run_counts_once_a_later_run_gets_its_xml() {
    let tax_id = "EKU9003173C9";
    // A PPD invoice and one of its complements in the same two months, the complement's
    // XML withheld on the first extraction.
    let (case, from, to) = (1..=11)
        .find_map(|m| {
            let (from, _) = month(2025, m);
            let (_, to) = month(2025, m + 1);
            let docs = sandbox(tax_id, "issued", from, to);
            docs.iter()
                .filter(|i| {
                    i.payment_method() == Some("PPD")
                        && !i.xml_withheld_first
                        && i.cancelled_at.is_none()
                })
                .find_map(|inv| {
                    let complements: Vec<SandboxInvoice> = docs
                        .iter()
                        .filter(|p| p.payment().is_some_and(|p| p.related_uuid == inv.uuid))
                        .cloned()
                        .collect();
                    complements
                        .iter()
                        .any(|p| p.xml_withheld_first)
                        .then(|| (inv.clone(), complements))
                })
                .map(|c| (c, from, to))
        })
        .expect("a PPD invoice with a withheld complement");
    let (inv, complements) = case;
    let sum = |only_visible: bool| -> Decimal {
        complements
            .iter()
            .filter(|p| !(only_visible && p.xml_withheld_first))
            .filter_map(|p| p.payment().map(|p| p.amount))
            .sum()
    };

    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    extract(&client, &entity_id, from, to, "issued");
    let listed = invoice_by_uuid(&client, &inv.uuid).expect("the PPD invoice is listed");
    let id = id_of(&listed);
    assert_eq!(
        dec(&listed["paid_amount"]),
        sum(true),
        "a metadata-only complement does not count yet: {listed}"
    );
    assert_eq!(dec(&listed["due_amount"]), inv.total - sum(true));
    let entries = client.list_all(&format!("/v1/invoices/{id}/payments"), 500);
    assert_eq!(
        entries.len(),
        complements.iter().filter(|p| !p.xml_withheld_first).count()
    );

    extract(&client, &entity_id, from, to, "issued");
    let got = client.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(dec(&got["paid_amount"]), sum(false), "{got}");
    assert_eq!(dec(&got["due_amount"]), inv.total - sum(false), "{got}");
    let entries = client.list_all(&format!("/v1/invoices/{id}/payments"), 500);
    assert_eq!(entries.len(), complements.len());
}

#[test]
fn extractions_of_different_entities_run_in_parallel() {
    let app = TestApp::spawn_with(&["--sim-latency", "200ms"]);
    let client = app.client();
    let a = id_of(&valid_entity(&client, "EKU9003173C9", "sandbox1"));
    let b = id_of(&valid_entity(&client, "AAA010101AAA", "sandbox1"));
    let day = date("2026-02-01");
    let ext_a = id_of(&create_extraction(&client, &a, day, day, "issued"));
    let ext_b = id_of(&create_extraction(&client, &b, day, day, "issued"));
    let done_a = wait_extraction_done(&client, &ext_a);
    let done_b = wait_extraction_done(&client, &ext_b);
    let s = |v: &Value, f: &str| v[f].as_str().expect("timestamp").to_string();
    assert!(
        s(&done_b, "started_at") < s(&done_a, "finished_at")
            && s(&done_a, "started_at") < s(&done_b, "finished_at"),
        "the two runs overlap in time: {done_a} {done_b}"
    );
}

#[test]
fn deleting_an_entity_while_its_extraction_runs_leaves_no_invoices_behind() {
    // One worker: a job queued after the running one ends only after it.
    let app = TestApp::spawn_with(&["--sim-latency", "200ms", "--workers", "1"]);
    let client = app.client();
    let witness = id_of(&valid_entity(&client, "EKU9003173C9", "sandbox1"));
    let big = id_of(&valid_entity(&client, "BIG900101AAA", "sandbox1"));
    let day = date("2026-03-02");
    let total = sandbox("BIG900101AAA", "issued", day, day).len() as u64;
    let id = id_of(&create_extraction(&client, &big, day, day, "issued"));
    eventually(
        Duration::from_secs(30),
        "the BIG extraction to be part-way",
        || {
            let e = client.get(&format!("/v1/extractions/{id}")).expect(200);
            assert_ne!(e["status"], "finished", "{e}");
            (e["status"] == "running" && processed(&e) > 0 && processed(&e) < total).then_some(e)
        },
    );
    client.delete(&format!("/v1/entities/{big}")).expect(204);
    // The witness's extraction runs after the deleted entity's job has ended.
    let w = extract(&client, &witness, day, day, "issued");
    client
        .get(&format!("/v1/extractions/{id}"))
        .expect_not_found();
    assert!(invoices(&client, &format!("entity_id={big}")).is_empty());
    let all = invoices(&client, "");
    assert_eq!(
        all.len() as u64,
        processed(&w),
        "only the witness's invoices"
    );
    assert!(all.iter().all(|i| i["entity_id"] == witness.as_str()));
    assert_eq!(
        client.get("/v1/extractions").expect(200)["data"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn every_invoice_of_an_extracted_period_matches_the_sandbox_and_the_payment_rules() {
    let tax_id = "AAA010101AAA";
    let (from, to) = (date("2025-04-01"), date("2025-05-31"));
    let docs = sandbox(tax_id, "issued", from, to);
    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    extract(&client, &entity_id, from, to, "issued");
    let listed = invoices_by_uuid(&client, &entity_id);
    assert_eq!(listed.len(), docs.len() - withheld(&docs));

    let mut outstanding = BTreeSet::new();
    let mut checked_ppd_paid = 0;
    for inv in docs.iter().filter(|i| !i.xml_withheld_first) {
        let got = &listed[&inv.uuid];
        let what = format!("{} {}: {got}", inv.invoice_type, inv.uuid);
        assert_eq!(
            got["type"].as_str(),
            Some(inv.invoice_type.to_string().as_str()),
            "{what}"
        );
        assert_eq!(got["version"], "4.0", "{what}");
        assert_eq!(got["currency"], inv.currency(), "{what}");
        assert_eq!(
            got["payment_method"].as_str(),
            inv.payment_method(),
            "{what}"
        );
        assert_eq!(got["payment_form"].as_str(), inv.payment_form(), "{what}");
        assert_eq!(got["series"], inv.serie(), "{what}");
        assert_eq!(got["folio"], inv.folio(), "{what}");
        assert_eq!(
            got["issuer"]["tax_id"],
            inv.issuer_tax_id.as_str(),
            "{what}"
        );
        assert_eq!(got["issuer"]["name"], inv.issuer_name.as_str(), "{what}");
        assert_eq!(
            got["receiver"]["tax_id"],
            inv.receiver_tax_id.as_str(),
            "{what}"
        );
        assert_eq!(
            got["receiver"]["name"],
            inv.receiver_name.as_str(),
            "{what}"
        );
        assert_eq!(dec(&got["total"]), inv.total, "{what}");
        assert_eq!(got["has_pdf"], inv.has_pdf, "{what}");
        if inv.currency() == "USD" {
            assert!(dec(&got["exchange_rate"]) > Decimal::ONE, "{what}");
        }
        // One extraction: late cancellations still show active.
        let cancelled = inv.cancelled_at.is_some() && !inv.cancellation_seen_late;
        assert_eq!(
            got["status"],
            if cancelled { "cancelled" } else { "active" },
            "{what}"
        );
        let zero = Decimal::ZERO;
        let (paid, due) = match (inv.invoice_type, inv.payment_method()) {
            ('I', Some("PPD")) => {
                let pays: Vec<_> = docs
                    .iter()
                    .filter(|p| !p.xml_withheld_first)
                    .filter_map(|p| p.payment().filter(|p| p.related_uuid == inv.uuid))
                    .collect();
                let paid: Decimal = pays.iter().map(|p| p.amount).sum();
                let last = pays.iter().map(|p| p.paid_at).max();
                assert_eq!(
                    got["last_payment_date"].as_str(),
                    last.map(|t| t.format(LOCAL_TIME).to_string()).as_deref(),
                    "{what}"
                );
                if paid == inv.total {
                    assert_eq!(got["fully_paid_at"], got["last_payment_date"], "{what}");
                } else {
                    assert!(got["fully_paid_at"].is_null(), "{what}");
                }
                if paid > zero {
                    checked_ppd_paid += 1;
                }
                let due = if cancelled { zero } else { inv.total - paid };
                (paid, due)
            }
            ('I', _) => (inv.total, zero),
            _ => (zero, zero),
        };
        assert_eq!(dec(&got["paid_amount"]), paid, "paid_amount of {what}");
        assert_eq!(dec(&got["due_amount"]), due, "due_amount of {what}");
        assert_eq!(got["payment_conflicts"], false, "{what}");
        if due > zero {
            outstanding.insert(inv.uuid.clone());
        }
    }
    assert!(
        checked_ppd_paid > 5,
        "the period pays some of its own PPD invoices"
    );
    let listed_outstanding: BTreeSet<String> =
        invoices(&client, &format!("entity_id={entity_id}&outstanding=true"))
            .iter()
            .map(|i| i["uuid"].as_str().unwrap_or("").to_string())
            .collect();
    assert_eq!(listed_outstanding, outstanding, "outstanding=true");
}

#[test]
fn sandbox_prefixes_apply_to_lower_case_tax_ids_and_a_new_password_recovers() {
    let app = TestApp::spawn();
    let client = app.client();
    let rx = Receiver::start();
    client.create_webhook(&rx.url(), None);
    let una = client.create_entity("una900101aaa", "sandbox1");
    assert_eq!(una["tax_id"], "UNA900101AAA");
    let una_id = id_of(&una);
    client.wait_for_credential(&una_id, "valid");
    failing_extraction(&client, &rx, &una_id, "sat_unavailable");
    let off = id_of(&client.create_entity("off900101aaa", "sandbox1"));
    failing_extraction(&client, &rx, &off, "credentials_not_validated");

    // A password changed at the SAT, then fixed with PATCH.
    let chg = id_of(&valid_entity(&client, "eku9003173c9", "chg12345"));
    failing_extraction(&client, &rx, &chg, "invalid_credentials");
    client.wait_for_credential(&chg, "invalid");
    client
        .patch_json(
            &format!("/v1/entities/{chg}"),
            &json!({ "ciec_password": "sandbox1" }),
        )
        .expect(200);
    client.wait_for_credential(&chg, "valid");
    let day = date("2026-01-10");
    let done = extract(&client, &chg, day, day, "issued");
    let expected = sandbox("EKU9003173C9", "issued", day, day);
    assert_eq!(found(&done) as usize, expected.len());
}

#[test]
fn an_ended_run_says_why_it_processed_fewer_than_it_found() {
    let tax_id = "AAA010101AAA";
    let (m, expected) = month_with_late_cancellation(tax_id);
    let (from, to) = month(2025, m);
    let held = withheld(&expected) as u64;
    assert!(
        held > 0,
        "the sandbox withholds some XML on a first listing"
    );
    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));

    // The first run: the listed invoices whose XML the SAT has not served yet.
    let first = extract(&client, &entity_id, from, to, "issued");
    let first = client
        .get(&format!("/v1/extractions/{}", id_of(&first)))
        .expect(200);
    assert_eq!(
        first["unprocessed"],
        json!({"awaiting_xml": held, "conflicting": 0, "stored_before": 0}),
        "{first}"
    );
    // The second: those completed, the rest stored by the first.
    let second = extract(&client, &entity_id, from, to, "issued");
    let second = client
        .get(&format!("/v1/extractions/{}", id_of(&second)))
        .expect(200);
    assert_eq!(
        second["unprocessed"],
        json!({"awaiting_xml": 0, "conflicting": 0, "stored_before": found(&second) - held}),
        "{second}"
    );
    // The first now finds nothing awaiting either: its listing is complete.
    let first = client
        .get(&format!("/v1/extractions/{}", id_of(&first)))
        .expect(200);
    assert_eq!(first["unprocessed"]["awaiting_xml"], 0, "{first}");
    // The list leaves it out (it reads the database per run); a run that processed all
    // it found has none.
    let page = client
        .get(&format!("/v1/extractions?entity_id={entity_id}"))
        .expect(200);
    assert!(page["data"][0].get("unprocessed").is_none(), "{page}");
}
