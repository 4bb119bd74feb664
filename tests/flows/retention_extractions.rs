//! Extracting CFDI de Retenciones through the binary (`options.document_class`): through
//! the sandbox (its documented monthly rules), and through the e.firma channel's real
//! SOAP client against fakes of the SAT's web service, one for the invoices' hosts and
//! one for the retentions' (their own token), serving the shared samples. Documents end
//! up listed by `/v1/retentions`, byte for byte; a later listing's cancellation makes
//! one coalesced `retention.updated`. Bad classes, and retentions for an entity the
//! e.firma web service cannot reach, are refused with the contract's field errors.

use crate::common::app::{Client, TestApp};
use crate::common::efirma_files::FIEL_RFC;
use crate::common::fake_sat_ws::{FakeSatWs, Op, Settings};
use crate::common::invoices::{
    date, extract, extraction_body, found, id_of, import, invoice_by_uuid, processed, sandbox,
    valid_entity, wait_extraction_done,
};
use crate::flows::efirma_ws::efirma_entity;
use crate::flows::retentions::invoice_under;
use cfdi_extract::sandbox::docs::{self as sandbox_docs, SandboxRetention};
use chrono::NaiveDate;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

const PLATFORMS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/retenciones-samples/ret10-plataformastecnologicas-tfd10.xml"
);

fn retentions_body(entity: &str, from: NaiveDate, to: NaiveDate, direction: &str) -> Value {
    let mut body = extraction_body(entity, from, to, direction);
    body["options"]["document_class"] = json!("retentions");
    body
}

/// Runs a retentions extraction to its end and asserts it finished.
fn extract_retentions(
    client: &Client,
    entity: &str,
    from: NaiveDate,
    to: NaiveDate,
    direction: &str,
) -> Value {
    let created = client
        .post_json(
            "/v1/extractions",
            &retentions_body(entity, from, to, direction),
        )
        .expect(201);
    assert_eq!(
        created["options"]["document_class"], "retentions",
        "{created}"
    );
    let done = wait_extraction_done(client, &id_of(&created));
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["channel"], "efirma", "{done}");
    assert_eq!(done["options"]["document_class"], "retentions", "{done}");
    done
}

/// The entity's retentions by UUID.
fn stored(client: &Client, entity: &str) -> BTreeMap<String, Value> {
    client
        .list_all(&format!("/v1/retentions?entity_id={entity}"), 100)
        .into_iter()
        .map(|r| (r["uuid"].as_str().expect("uuid").to_string(), r))
        .collect()
}

fn xml_of(client: &Client, retention: &Value) -> Vec<u8> {
    let path = format!("/v1/retentions/{}/cfdi?format=xml", id_of(retention));
    let resp = client.get(&path);
    assert_eq!(resp.status, 200, "{}", resp.text());
    resp.body
}

/// The feed's events of `kind`, oldest first.
fn events(client: &Client, kind: &str) -> Vec<Value> {
    let mut all: Vec<Value> = client
        .list_all("/v1/events", 100)
        .into_iter()
        .filter(|e| e["event"] == kind)
        .collect();
    all.reverse();
    all
}

fn uuids(docs: &[SandboxRetention]) -> BTreeSet<String> {
    docs.iter().map(|r| r.uuid.clone()).collect()
}

#[test]
fn a_retention_extraction_through_the_sandbox_lists_its_documents_and_later_cancellations() {
    let app = TestApp::spawn_with(&["--sat-ws-poll", "50ms"]);
    let client = app.client();
    let entity = efirma_entity(&client, "valid");
    // The latest whole year (past the sandbox's special years) with a cancelled one.
    let year_of = |year: i32| {
        let (from, to) = (
            date(&format!("{year}-01-01")),
            date(&format!("{year}-12-31")),
        );
        let dir = sandbox_docs::Direction::Received;
        (
            from,
            to,
            sandbox_docs::retentions_for_period(FIEL_RFC, dir, from, to),
        )
    };
    let (from, to, expected) = (2020..=2025)
        .rev()
        .map(year_of)
        .find(|(_, _, docs)| docs.iter().any(|r| r.cancelled_at.is_some()))
        .expect("a year with a cancelled document");
    let cancelled: BTreeSet<String> = expected
        .iter()
        .filter(|r| r.cancelled_at.is_some())
        .map(|r| r.uuid.clone())
        .collect();
    assert!(expected.len() >= 18, "{}", expected.len());
    assert!(!cancelled.is_empty(), "the year has a cancelled document");

    let done = extract_retentions(&client, &entity, from, to, "received");
    assert_eq!(found(&done), expected.len() as u64, "{done}");
    assert_eq!(processed(&done), expected.len() as u64, "{done}");
    let listed = stored(&client, &entity);
    assert_eq!(
        listed.keys().cloned().collect::<BTreeSet<_>>(),
        uuids(&expected)
    );
    // No invoice came with them.
    let invoices = client.list_all(&format!("/v1/invoices?entity_id={entity}"), 100);
    assert!(invoices.is_empty(), "{invoices:?}");
    // The first listing sees every one active; each comes back as the sandbox wrote it.
    for r in &expected {
        let row = &listed[&r.uuid];
        assert_eq!(row["status"], "active", "{row}");
        assert_eq!(row["direction"], "received");
        assert_eq!(row["retention_key"], r.key);
        assert_eq!(row["issuer"]["tax_id"], r.issuer_tax_id.as_str());
        assert_eq!(
            xml_of(&client, row),
            sandbox_docs::render_retention_xml(r).expect("xml")
        );
    }
    // April's dividends, worked by hand: ISR is 10% of the amount paid.
    let dividends = &expected.iter().find(|r| r.key == "14").expect("dividends");
    let row = &listed[&dividends.uuid];
    let withheld = dividends.withheld_cents();
    assert_eq!(withheld, (dividends.operation_cents + 5) / 10);
    assert_eq!(
        row["totals"]["withheld"].to_string(),
        format!("{}.{:02}", withheld / 100, withheld % 100)
    );
    let created = events(&client, "retention.created");
    assert_eq!(created.len(), expected.len());

    // A later extraction of the year lists the cancelled ones as such: one coalesced
    // retention.updated each, nothing for the rest.
    let again = extract_retentions(&client, &entity, from, to, "received");
    assert_eq!(found(&again), expected.len() as u64, "{again}");
    let updated = events(&client, "retention.updated");
    let named: BTreeSet<String> = updated
        .iter()
        .map(|e| e["object"]["uuid"].as_str().expect("uuid").to_string())
        .collect();
    assert_eq!(named, cancelled);
    assert_eq!(updated.len(), cancelled.len());
    for e in &updated {
        assert_eq!(e["object"]["status"], "cancelled", "{e}");
        assert_eq!(
            e["changes"]["status"],
            json!({"from": "active", "to": "cancelled"})
        );
        assert!(e["changes"]["cancelled_at"]["to"].is_string(), "{e}");
    }
    assert_eq!(events(&client, "retention.created").len(), expected.len());
    let listed = stored(&client, &entity);
    for uuid in &cancelled {
        assert_eq!(listed[uuid]["status"], "cancelled");
    }
}

#[test]
fn a_retention_extraction_through_the_fake_web_service_uses_the_retentions_hosts() {
    let invoices_ws = FakeSatWs::start();
    let retentions_ws = FakeSatWs::start_with(Settings {
        cfdi_per_package: 2,
        ..Settings::default()
    });
    // The shared sample EKU9003173C9 issued in September 2020, and the sandbox's
    // documents it issued that month.
    let (from, to) = (date("2020-09-01"), date("2020-09-30"));
    let sample = std::fs::read(PLATFORMS).expect("sample");
    let sample_uuid = retentions_ws.add_retention(&sample);
    let generated =
        sandbox_docs::retentions_for_period(FIEL_RFC, sandbox_docs::Direction::Issued, from, to);
    let mut expected: BTreeMap<String, Vec<u8>> = BTreeMap::from([(sample_uuid.clone(), sample)]);
    for r in &generated {
        let xml = sandbox_docs::render_retention_xml(r).expect("xml");
        expected.insert(retentions_ws.add_retention(&xml), xml);
    }
    assert!(expected.len() >= 2, "{}", expected.len());
    let app = TestApp::spawn_with(&[
        "--sat-ws-url",
        &invoices_ws.url(),
        "--sat-ws-retentions-url",
        &retentions_ws.url(),
        "--sat-ws-poll",
        "50ms",
    ]);
    let client = app.client();
    let entity = efirma_entity(&client, "valid");

    let done = extract_retentions(&client, &entity, from, to, "issued");
    assert_eq!(found(&done), expected.len() as u64, "{done}");
    assert_eq!(processed(&done), expected.len() as u64, "{done}");
    let listed = stored(&client, &entity);
    assert_eq!(
        listed.keys().cloned().collect::<BTreeSet<_>>(),
        expected.keys().cloned().collect()
    );
    for (uuid, xml) in &expected {
        assert_eq!(&xml_of(&client, &listed[uuid]), xml, "{uuid} byte for byte");
    }
    let platform = &listed[&sample_uuid];
    assert_eq!(platform["retention_key"], "26");
    assert_eq!(platform["totals"]["withheld"].to_string(), "1294.758400");
    // The retentions' hosts took the run, with a token of their own; the invoices'
    // hosts only checked the e.firma.
    assert!(
        retentions_ws.count(Op::Authenticate) >= 1,
        "{:?}",
        retentions_ws.calls()
    );
    assert_eq!(
        retentions_ws.request_ids().len(),
        2,
        "a metadata and a CFDI request"
    );
    assert_eq!(invoices_ws.count(Op::Query), 0, "{:?}", invoices_ws.calls());

    // Cancelled at the SAT since: the next run's listing says so.
    let at = NaiveDate::from_ymd_opt(2020, 9, 20)
        .and_then(|d| d.and_hms_opt(10, 0, 0))
        .expect("time");
    retentions_ws.cancel(&sample_uuid, at);
    extract_retentions(&client, &entity, from, to, "issued");
    let updated = events(&client, "retention.updated");
    assert_eq!(updated.len(), 1, "{updated:?}");
    assert_eq!(updated[0]["object"]["uuid"], sample_uuid.as_str());
    assert_eq!(
        updated[0]["changes"],
        json!({
            "status": {"from": "active", "to": "cancelled"},
            "cancelled_at": {"from": null, "to": "2020-09-20T10:00:00"}
        })
    );
    assert_eq!(
        stored(&client, &entity)[&sample_uuid]["status"],
        "cancelled"
    );
    assert_eq!(events(&client, "retention.created").len(), expected.len());
}

#[test]
fn document_class_is_validated_and_retentions_need_the_efirma() {
    let app = TestApp::spawn();
    let client = app.client();
    let ciec_only = id_of(&valid_entity(&client, "AAA010101AAA", "sandbox1"));
    let (from, to) = (date("2026-01-01"), date("2026-01-31"));
    let with_class = |class: Value| {
        let mut body = extraction_body(&ciec_only, from, to, "received");
        body["options"]["document_class"] = class;
        client.post_json("/v1/extractions", &body)
    };
    for bad in [
        json!("receipts"),
        json!(""),
        json!(7),
        json!(["retentions"]),
    ] {
        let messages = with_class(bad.clone()).expect_field_error("options.document_class");
        assert!(!messages.is_empty(), "{bad}");
    }
    // Invoices, named or not, keep the contract's exact options.
    for class in [Value::Null, json!("invoices")] {
        let created = with_class(class).expect(201);
        assert_eq!(
            created["options"],
            json!({ "period": { "from": "2026-01-01", "to": "2026-01-31" }, "download_type": "received" })
        );
    }
    // The CIEC portal does not serve retentions: an entity without an e.firma is refused.
    let messages = with_class(json!("retentions")).expect_field_error("options.document_class");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("e.firma web service only")),
        "{messages:?}"
    );
}

#[test]
fn a_retentions_run_whose_efirma_is_gone_when_it_starts_fails_before_starting() {
    // Slow checks keep the entity's first run (its invoices, through the e.firma) going,
    // so the retentions run waits behind it (one run per entity at a time).
    let app = TestApp::spawn_with(&["--sat-ws-poll", "3s"]);
    let client = app.client();
    let entity = efirma_entity(&client, "valid");
    let (from, to) = (date("2025-03-01"), date("2025-03-31"));
    let first = client
        .post_json(
            "/v1/extractions",
            &extraction_body(&entity, from, to, "received"),
        )
        .expect(201);
    let queued = client
        .post_json(
            "/v1/extractions",
            &retentions_body(&entity, from, to, "received"),
        )
        .expect(201);
    client
        .request(
            "DELETE",
            &format!("/v1/entities/{entity}/efirma"),
            None,
            &[],
        )
        .expect(204);
    let done = wait_extraction_done(&client, &id_of(&queued));
    assert_eq!(done["status"], "failed", "{done}");
    assert_eq!(done["failed_reason"], "invalid_credentials", "{done}");
    assert_eq!(done["started_at"], Value::Null, "it never started: {done}");
    assert!(done.get("channel").is_none(), "{done}");
    wait_extraction_done(&client, &id_of(&first));
}

/// `/docs/invoices#same-uuid` across the two classes through extractions: a retention
/// the run brings under the UUID of an invoice imported before, and an invoice a run
/// brings under the UUID of a retention imported before, are each the run's conflict;
/// the stored document is kept and the run's others are stored.
#[test]
fn an_extraction_refuses_a_document_of_either_class_under_a_stored_documents_uuid() {
    let app = TestApp::spawn_with(&["--sat-ws-poll", "50ms"]);
    let client = app.client();
    let entity = efirma_entity(&client, "valid");
    let dir = tempfile::TempDir::new().expect("tmp");
    let conflict_of = |done: &Value, uuid: &str| {
        assert_eq!(done["invoices_conflicting"], 1, "{done}");
        let conflicts = done["conflicts"].as_array().expect("conflicts");
        assert_eq!(conflicts.len(), 1, "{done}");
        assert_eq!(conflicts[0]["uuid"], uuid, "{done}");
        let reason = conflicts[0]["reason"].as_str().unwrap_or("");
        assert!(reason.contains("is already stored"), "{reason}");
    };

    // Retentions: an invoice the entity received holds one of the year's UUIDs.
    let (from, to) = (date("2024-01-01"), date("2024-12-31"));
    let expected =
        sandbox_docs::retentions_for_period(FIEL_RFC, sandbox_docs::Direction::Received, from, to);
    assert!(expected.len() >= 2, "{}", expected.len());
    let taken = &expected[0].uuid;
    let invoice = invoice_under(
        &dir,
        "invoice.xml",
        taken,
        "AAA010101AAA",
        FIEL_RFC,
        "2024-01-05T10:00:00",
    );
    let invoice_id = import(&app, &entity, "received", &[invoice])[0].1.clone();
    let done = extract_retentions(&client, &entity, from, to, "received");
    assert_eq!(found(&done), expected.len() as u64, "{done}");
    assert_eq!(processed(&done), expected.len() as u64 - 1, "{done}");
    conflict_of(&done, taken);
    let listed = stored(&client, &entity);
    let mut others = uuids(&expected);
    others.remove(taken);
    assert_eq!(listed.keys().cloned().collect::<BTreeSet<_>>(), others);
    let kept = client
        .get(&format!("/v1/invoices/{invoice_id}"))
        .expect(200);
    assert_eq!(kept["uuid"], taken.as_str());
    assert_eq!(kept["total"].to_string(), "116.00");

    // Invoices: a retention the entity received holds one of a month's invoice UUIDs.
    let (from, to) = (date("2024-03-01"), date("2024-03-31"));
    let invoices = sandbox(FIEL_RFC, "received", from, to);
    let held = &invoices
        .iter()
        .find(|i| !i.xml_withheld_first && i.cancelled_at.is_none())
        .expect("an invoice served at once")
        .uuid;
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/retenciones-samples/ret10-dividendos-nacional-tfd10.xml"
    ))
    .expect("sample");
    let retention = dir.path().join("retention.xml");
    let edited = text
        .replace("a6d77767-7fa2-4acd-a8a0-f3126aff9fbe", held)
        .replace(
            "RFCRecep=\"XAXX010101000\"",
            &format!("RFCRecep=\"{FIEL_RFC}\""),
        );
    assert!(edited.contains(held.as_str()) && edited.contains(FIEL_RFC));
    std::fs::write(&retention, edited).expect("write");
    let retention_id = import(&app, &entity, "received", &[retention])[0].1.clone();
    let done = extract(&client, &entity, from, to, "received");
    conflict_of(&done, held);
    assert!(processed(&done) > 0, "the run's others are stored: {done}");
    assert!(
        invoice_by_uuid(&client, held).is_none(),
        "the run's document under the retention's UUID is not stored"
    );
    let kept = client
        .get(&format!("/v1/retentions/{retention_id}"))
        .expect(200);
    assert_eq!(kept["uuid"], held.as_str());
    assert_eq!(kept["totals"]["withheld"].to_string(), "3500.00");
}
