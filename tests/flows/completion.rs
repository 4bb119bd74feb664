//! A summary that misses invoices says so and lists their UUIDs; one call fetches
//! exactly those by UUID (the sandbox's e.firma web service and portal, the fake SAT web
//! service's; the fake portal's search by folio fiscal is `tests/portal/binary.rs`), after
//! which the summary counts them and says it is complete (`/docs/summary#complete`).

use crate::common::app::{Client, TestApp};
use crate::common::efirma_files::FIEL_RFC;
use crate::common::fake_sat_ws::{FakeSatWs, Settings};
use crate::common::invoices::{
    date, extraction_body, id_of, invoices_by_uuid, processed, valid_entity, wait_extraction_done,
};
use crate::flows::efirma_ws::{app_for, efirma_entity};
use cfdi_extract::sandbox::docs as sandbox_docs;
use chrono::{Days, NaiveDate};
use serde_json::{json, Value};
use std::collections::BTreeSet;

const FROM: &str = "2026-03-01";
const TO: &str = "2026-03-10";

fn summary(client: &Client, entity: &str) -> Value {
    client
        .get(&format!(
            "/v1/entities/{entity}/summary?from={FROM}&to={TO}&direction=issued"
        ))
        .expect(200)
}

fn complete(client: &Client, entity: &str) -> (u16, Value) {
    let resp = client.request(
        "POST",
        &format!("/v1/entities/{entity}/summary/complete?from={FROM}&to={TO}"),
        None,
        &[],
    );
    (resp.status, resp.json())
}

/// The summary's missing UUIDs, checked against its own unresolved payments.
fn missing(s: &Value) -> BTreeSet<String> {
    let listed: BTreeSet<String> = s["missing_invoices"]["uuids"]
        .as_array()
        .expect("uuids")
        .iter()
        .map(|u| u.as_str().expect("uuid").to_string())
        .collect();
    let unresolved: Vec<&Value> = s["unresolved_payments"]
        .as_array()
        .expect("unresolved")
        .iter()
        .filter(|u| u["reason"] == "invoice_not_found")
        .collect();
    let paid: BTreeSet<String> = unresolved
        .iter()
        .map(|u| u["related_uuid"].as_str().expect("uuid").to_uppercase())
        .collect();
    assert_eq!(listed, paid, "{s}");
    assert_eq!(s["missing_invoices"]["count"], listed.len(), "{s}");
    assert_eq!(s["missing_invoices"]["payments"], unresolved.len(), "{s}");
    assert_eq!(s["complete"], listed.is_empty(), "{s}");
    listed
}

/// Extracts the period's issued invoices, then completes the summary: it first misses
/// some invoices, and after one call exactly those are stored and it is complete.
fn extract_then_complete(client: &Client, entity: &str) -> BTreeSet<String> {
    let body = json!({
        "entity_id": entity,
        "options": { "period": { "from": FROM, "to": TO }, "download_type": "issued" },
    });
    let created = client.post_json("/v1/extractions", &body).expect(201);
    let done = wait_extraction_done(client, &id_of(&created));
    assert_eq!(done["status"], "finished", "{done}");

    let before = summary(client, entity);
    let wanted = missing(&before);
    assert!(!wanted.is_empty(), "payments of earlier invoices: {before}");
    let stored: BTreeSet<String> = invoices_by_uuid(client, entity).into_keys().collect();
    assert!(wanted.is_disjoint(&stored));
    // The accountant's sheet says so too, and lists them.
    let xlsx = client.get(&format!(
        "/v1/entities/{entity}/summary?from={FROM}&to={TO}&direction=issued&format=xlsx"
    ));
    let rows = crate::flows::summary::sheet_rows(&xlsx.body, "Resumen");
    assert!(rows.contains(&vec!["Periodo completo".to_string(), "No".to_string()]));
    let listed: BTreeSet<String> = (rows.iter())
        .filter(|r| r.first().map(String::as_str) == Some("UUID que falta"))
        .map(|r| r[1].clone())
        .collect();
    assert_eq!(listed, wanted);

    // The sandbox withholds an invoice's XML the first time it is listed (as the SAT
    // may): such a UUID is reported not found, stays missing, and the next call gets it.
    let mut left = wanted.clone();
    for round in 1..=2 {
        let (status, answer) = complete(client, entity);
        assert_eq!(status, 202, "{answer}");
        assert_eq!(answer["missing_invoices"], left.len(), "{answer}");
        let runs = answer["extractions"].as_array().expect("extractions");
        assert_eq!(runs.len(), 1, "the issued side only misses: {answer}");
        let run = &runs[0];
        assert_eq!(run["options"]["download_type"], "issued");
        let asked: BTreeSet<String> =
            serde_json::from_value(run["options"]["uuids"].clone()).expect("uuids");
        assert_eq!(asked, left);
        let done = wait_extraction_done(client, &id_of(run));
        assert_eq!(done["status"], "finished", "{done}");
        let not_found: BTreeSet<String> =
            serde_json::from_value(done["uuids_not_found"].clone()).expect("not found");
        assert_eq!(
            processed(&done),
            (left.len() - not_found.len()) as u64,
            "{done}"
        );
        assert_eq!(missing(&summary(client, entity)), not_found);
        left = not_found;
        if left.is_empty() {
            break;
        }
        assert!(round < 2, "still missing after a second call: {left:?}");
    }
    let now: BTreeSet<String> = invoices_by_uuid(client, entity).into_keys().collect();
    assert_eq!(
        now.difference(&stored).cloned().collect::<BTreeSet<_>>(),
        wanted
    );
    let after = summary(client, entity);
    assert_eq!(after["complete"], true, "{after}");
    // The payments left out are counted now; nothing else changed sides.
    let unresolved = |s: &Value| s["unresolved_payments"].as_array().map_or(0, Vec::len);
    let left_out = before["missing_invoices"]["payments"]
        .as_u64()
        .expect("payments");
    assert_eq!(
        unresolved(&after) as u64,
        unresolved(&before) as u64 - left_out,
        "{after}"
    );
    // Nothing left to fetch: no extraction.
    let (status, answer) = complete(client, entity);
    assert_eq!(
        (status, &answer["extractions"]),
        (200, &json!([])),
        "{answer}"
    );
    wanted
}

#[test]
fn the_sandbox_portal_completes_a_summary_by_folio_fiscal() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&valid_entity(&client, "AAA010101AAA", "sandbox1"));
    extract_then_complete(&client, &entity);
}

#[test]
fn the_sandbox_completes_a_summary_with_exactly_the_invoices_it_misses() {
    let app = TestApp::spawn_with(&["--sat-ws-poll", "50ms"]);
    let client = app.client();
    let entity = efirma_entity(&client, "valid");
    extract_then_complete(&client, &entity);

    // A UUID the sandbox never issued for this taxpayer is reported not found.
    let never = "0F000000-0000-4000-8000-000000000000";
    let body = json!({
        "entity_id": entity,
        "options": {
            "period": { "from": FROM, "to": TO }, "download_type": "received",
            "uuids": [never.to_lowercase()],
        },
    });
    let created = client.post_json("/v1/extractions", &body).expect(201);
    assert_eq!(created["options"]["uuids"], json!([never]), "{created}");
    let done = wait_extraction_done(&client, &id_of(&created));
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["uuids_not_found"], json!([never]), "{done}");
    assert_eq!(processed(&done), 0, "{done}");
}

/// The sandbox's issued documents of the test RFC for `from..=to`, given to the fake.
fn load(fake: &FakeSatWs, from: NaiveDate, to: NaiveDate) {
    let dir = sandbox_docs::Direction::Issued;
    for invoice in sandbox_docs::invoices_for_period(FIEL_RFC, dir, from, to) {
        fake.add_cfdi(&sandbox_docs::render_xml(FIEL_RFC, dir, &invoice).expect("xml"));
    }
}

#[test]
fn the_fake_sat_is_asked_by_folio_for_exactly_the_invoices_the_summary_misses() {
    let fake = FakeSatWs::start_with(Settings {
        in_progress_checks: 1,
        ..Settings::default()
    });
    // Every invoice the period's complements can pay: up to 120 days before it.
    let first = date(FROM).checked_sub_days(Days::new(120)).expect("date");
    load(&fake, first, date(TO));
    let app = app_for(&fake, "50ms");
    let client = app.client();
    let entity = efirma_entity(&client, "valid");
    let before = fake.asked_uuids();
    assert!(before.is_empty(), "{before:?}");
    let wanted = extract_then_complete(&client, &entity);
    let asked: Vec<String> = fake.asked_uuids();
    assert_eq!(asked.len(), wanted.len(), "each once: {asked:?}");
    assert_eq!(asked.into_iter().collect::<BTreeSet<_>>(), wanted);
}

#[test]
fn bad_uuid_extractions_are_422_and_another_organizations_entity_is_404() {
    let app = TestApp::spawn_with(&["--sat-ws-poll", "50ms"]);
    let client = app.client();
    let efirma = efirma_entity(&client, "valid");
    let ciec = id_of(&valid_entity(&client, "AAA010101AAA", "sandbox1"));
    let with = |entity: &str, uuids: Value| {
        json!({
            "entity_id": entity,
            "options": {
                "period": { "from": FROM, "to": TO }, "download_type": "issued", "uuids": uuids,
            },
        })
    };
    let many: Vec<String> = (0..=500)
        .map(|i| format!("00000000-0000-4000-8000-{i:012}"))
        .collect();
    for bad in [
        json!([]),
        json!(many),
        json!(["70A17DCA-B359-4483-8B50"]),
        json!("70A17DCA-B359-4483-8B50-854F9433E42D"),
    ] {
        let errors = client
            .post_json("/v1/extractions", &with(&efirma, bad.clone()))
            .expect_field_error("options.uuids");
        assert!(!errors.is_empty(), "{bad}");
    }
    // 500 fit.
    client
        .post_json("/v1/extractions", &with(&efirma, json!(many[..500])))
        .expect(201);
    // An entity whose CIEC is not valid, without an e.firma, has no channel for it.
    let doomed = id_of(&client.create_entity("BAD010101AAA", "badpass1"));
    client.wait_for_credential(&doomed, "invalid");
    let one = json!(["70A17DCA-B359-4483-8B50-854F9433E42D"]);
    let errors = client
        .post_json("/v1/extractions", &with(&doomed, one.clone()))
        .expect_field_error("options.uuids");
    assert!(errors[0].contains("no channel"), "{errors:?}");
    // A CIEC one has the portal's search by folio fiscal.
    client
        .post_json("/v1/extractions", &with(&ciec, one))
        .expect(201);

    let post = |c: &Client, entity: &str, query: &str| {
        c.request(
            "POST",
            &format!("/v1/entities/{entity}/summary/complete?{query}"),
            None,
            &[],
        )
    };
    post(&client, &efirma, &format!("to={TO}")).expect_field_error("from");
    post(&client, &efirma, "from=2026-03-10&to=2026-03-01").expect_field_error("to");
    post(
        &client,
        &efirma,
        &format!("from={FROM}&to={TO}&direction=both"),
    )
    .expect_field_error("direction");
    let other = app.client_as(&app.create_user_in_new_org());
    post(&other, &efirma, &format!("from={FROM}&to={TO}")).expect_not_found();

    // A summary that misses invoices, once the entity's CIEC is refused (and it has no
    // e.firma), cannot be completed.
    let created = client
        .post_json(
            "/v1/extractions",
            &extraction_body(&ciec, date(FROM), date(TO), "issued"),
        )
        .expect(201);
    let done = wait_extraction_done(&client, &id_of(&created));
    assert_eq!(done["status"], "finished", "{done}");
    assert!(!missing(&summary(&client, &ciec)).is_empty());
    client
        .patch_json(
            &format!("/v1/entities/{ciec}"),
            &json!({"ciec_password": "badpass1"}),
        )
        .expect(200);
    client.wait_for_credential(&ciec, "invalid");
    let errors =
        post(&client, &ciec, &format!("from={FROM}&to={TO}")).expect_field_error("entity_id");
    assert!(errors[0].contains("no channel"), "{errors:?}");
}
