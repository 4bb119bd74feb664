//! The e.firma channel's real SOAP client, through the binary, against a local fake of
//! the SAT's bulk-download web service that checks every request's signature with the
//! certificate it carries (`tests/common/fake_sat_ws.rs`), answers in the recorded
//! shapes and serves packages built from the sandbox's documents.

use crate::common::app::{eventually, Client, TestApp, DEADLINE};
use crate::common::efirma_files::{efirma_upload, FIEL_RFC};
use crate::common::fake_sat_ws::{FakeSatWs, Op, Settings};
use crate::common::invoices::{
    create_extraction, date, found, id_of, invoices_by_uuid, processed, wait_extraction_done,
};
use crate::common::receiver::Receiver;
use crate::flows::metrics::{metrics_url, scrape, value};
use cfdi_extract::sandbox::docs as sandbox_docs;
use chrono::NaiveDate;
use serde_json::Value;
use std::collections::BTreeSet;

/// The sandbox's issued documents of the test RFC for `from..=to`, given to the fake;
/// their uuids.
pub(crate) fn load(fake: &FakeSatWs, from: NaiveDate, to: NaiveDate) -> BTreeSet<String> {
    let dir = sandbox_docs::Direction::Issued;
    sandbox_docs::invoices_for_period(FIEL_RFC, dir, from, to)
        .iter()
        .map(|invoice| {
            let xml = sandbox_docs::render_xml(FIEL_RFC, dir, invoice).expect("xml");
            fake.add_cfdi(&xml)
        })
        .collect()
}

/// A server whose e.firma channel is the fake, checking back every `poll`.
pub(crate) fn app_for(fake: &FakeSatWs, poll: &str) -> TestApp {
    let url = fake.url();
    TestApp::spawn_with(&[
        "--sat-ws-url",
        &url,
        "--sat-ws-poll",
        poll,
        "--metrics-address",
        "127.0.0.1:0",
    ])
}

/// An entity with the test e.firma; waits until the fake has authenticated it.
pub(crate) fn efirma_entity(client: &Client, status: &str) -> String {
    let entity = client.create_entity(FIEL_RFC, "sandbox1");
    let id = id_of(&entity);
    client
        .request(
            "PUT",
            &format!("/v1/entities/{id}/efirma"),
            Some(efirma_upload().to_string().as_bytes()),
            &[],
        )
        .expect(200);
    eventually(DEADLINE, &format!("the e.firma to be {status}"), || {
        let e = client.get(&format!("/v1/entities/{id}")).expect(200);
        (e["efirma"]["status"] == status).then_some(())
    });
    id
}

pub(crate) fn run(client: &Client, entity: &str, from: NaiveDate, to: NaiveDate) -> Value {
    let created = create_extraction(client, entity, from, to, "issued");
    wait_extraction_done(client, &id_of(&created))
}

fn stored_uuids(client: &Client, entity: &str) -> BTreeSet<String> {
    invoices_by_uuid(client, entity).into_keys().collect()
}

#[test]
fn efirma_extraction_through_the_fake_service_stores_every_document_once() {
    let fake = FakeSatWs::start_with(Settings {
        in_progress_checks: 3,
        cfdi_per_package: 7,
        metadata_per_package: 10,
        ..Settings::default()
    });
    let (from, to) = (date("2026-01-05"), date("2026-01-09"));
    let uuids = load(&fake, from, to);
    assert!(uuids.len() > 14, "several packages: {}", uuids.len());
    let app = app_for(&fake, "50ms");
    let client = app.client();
    let receiver = Receiver::start();
    client.create_webhook(&receiver.url(), Some(&["extraction.update"]));
    let entity = efirma_entity(&client, "valid");

    let done = run(&client, &entity, from, to);
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["channel"], "efirma", "{done}");
    assert_eq!(found(&done), uuids.len() as u64, "{done}");
    assert_eq!(processed(&done), uuids.len() as u64, "{done}");
    assert_eq!(stored_uuids(&client, &entity), uuids);
    // A metadata and a CFDI request, each checked until finished (1 + 3 + 1 checks).
    assert_eq!(fake.request_ids().len(), 2, "{:?}", fake.calls());
    assert!(fake.count(Op::Verify) >= 10, "{:?}", fake.calls());
    // One sign-in, the credential check's: every step of the run reused its token (the
    // run takes seconds; a token lasts five minutes).
    assert_eq!(fake.count(Op::Authenticate), 1, "{:?}", fake.calls());
    // The server counts the same calls on /metrics; `bench/run` reads this line.
    let metrics = scrape(&metrics_url(&app));
    let mut counted = Vec::new();
    for (op, call) in [
        (Op::Authenticate, "authenticate"),
        (Op::Query, "query"),
        (Op::Verify, "verify"),
        (Op::Download, "download"),
    ] {
        let series =
            format!(r#"cfdi_extract_sat_calls_total{{service="web_service",call="{call}"}}"#);
        let n = value(&metrics, &series).unwrap_or(0.0) as usize;
        assert_eq!(n, fake.count(op), "{call}: {metrics}");
        counted.push(format!("{call}={n}"));
    }
    println!(
        "sat calls per extraction: documents={} {}",
        uuids.len(),
        counted.join(" ")
    );
    let statuses: Vec<String> = receiver
        .wait_for(2, DEADLINE)
        .iter()
        .map(|r| {
            r.json()["object"]["status"]
                .as_str()
                .unwrap_or("")
                .to_string()
        })
        .collect();
    assert_eq!(statuses, ["running", "finished"]);
}

#[test]
fn a_kept_token_the_sat_no_longer_takes_is_renewed_once_and_the_run_goes_on() {
    let fake = FakeSatWs::start_with(Settings {
        in_progress_checks: 4,
        token_lifetime: chrono::Duration::minutes(1),
        ..Settings::default()
    });
    let (from, to) = (date("2026-02-09"), date("2026-02-10"));
    let uuids = load(&fake, from, to);
    let app = app_for(&fake, "100ms");
    let client = app.client();
    let entity = efirma_entity(&client, "valid");
    let created = create_extraction(&client, &entity, from, to, "issued");
    let path = format!("/v1/extractions/{}", id_of(&created));
    eventually(DEADLINE, "a first check", || {
        let e = client.get(&path).expect(200);
        (e["waiting"]["checks"].as_u64() >= Some(1)).then_some(())
    });
    // The SAT's clock passes the token's minute (not the signed timestamps' five): it
    // answers the kept token with 300, which also means a refused e.firma, so the client
    // signs in once more before believing it.
    fake.advance(chrono::Duration::minutes(2));
    let done = wait_extraction_done(&client, &id_of(&created));
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(stored_uuids(&client, &entity), uuids);
    let refused = fake.calls().iter().filter(|c| c.code == Some(300)).count();
    assert_eq!(refused, 1, "{:?}", fake.calls());
    // The check's sign-in and the one after the 300 (more only on a run slow enough for
    // the new token's own minute to pass).
    assert!(fake.count(Op::Authenticate) >= 2, "{:?}", fake.calls());
    let e = client.get(&format!("/v1/entities/{entity}")).expect(200);
    assert_eq!(e["efirma"]["status"], "valid", "{e}");
}

#[test]
fn a_request_waiting_through_several_checks_survives_kill_9() {
    let fake = FakeSatWs::start_with(Settings {
        in_progress_checks: 4,
        ..Settings::default()
    });
    let (from, to) = (date("2026-02-02"), date("2026-02-03"));
    let uuids = load(&fake, from, to);
    let mut app = app_for(&fake, "100ms");
    let client = app.client();
    let entity = efirma_entity(&client, "valid");
    let created = create_extraction(&client, &entity, from, to, "issued");
    let path = format!("/v1/extractions/{}", id_of(&created));
    let waiting = eventually(DEADLINE, "a few checks", || {
        let e = client.get(&path).expect(200);
        (e["waiting"]["checks"].as_u64() >= Some(2)).then_some(e)
    });
    assert_eq!(waiting["waiting"]["state"], "submitted", "{waiting}");

    app.restart(); // SIGKILL, then the same data directory again
    let done = wait_extraction_done(&app.client(), &id_of(&created));
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(stored_uuids(&app.client(), &entity), uuids);
    // Nothing was asked twice: the restart went on checking the requests it had.
    assert_eq!(fake.request_ids().len(), 2, "{:?}", fake.calls());
}

#[test]
fn a_window_over_the_maximum_is_split_and_a_lost_answer_is_adopted() {
    let fake = FakeSatWs::start_with(Settings {
        max_cfdi: 12,
        ..Settings::default()
    });
    let (from, to) = (date("2026-03-02"), date("2026-03-07"));
    let uuids = load(&fake, from, to);
    assert!(uuids.len() > 24, "{}", uuids.len());
    // The first query's answer is lost (HTTP 500) after the SAT recorded it: asking
    // again answers 5005 naming the live request, which is adopted.
    fake.lose_query_answers(1);
    let app = app_for(&fake, "50ms");
    let client = app.client();
    let entity = efirma_entity(&client, "valid");

    let done = run(&client, &entity, from, to);
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(stored_uuids(&client, &entity), uuids);
    assert_eq!(processed(&done), uuids.len() as u64, "{done}");
    let duplicates = fake.calls().iter().filter(|c| c.code == Some(5005)).count();
    assert_eq!(duplicates, 1, "{:?}", fake.calls());
    // The metadata request, then CFDI requests split until each holds 12 at most.
    assert!(fake.request_ids().len() >= 4, "{:?}", fake.request_ids());
}

#[test]
fn a_package_is_never_downloaded_a_third_time() {
    let fake = FakeSatWs::start();
    let (from, to) = (date("2026-04-06"), date("2026-04-07"));
    let uuids = load(&fake, from, to);
    // The first two downloads fail at the SAT (404): the package cannot be had again,
    // so the request is made again and its new package downloaded.
    fake.fail_next(Op::Download, 2);
    let app = app_for(&fake, "50ms");
    let client = app.client();
    let entity = efirma_entity(&client, "valid");

    let done = run(&client, &entity, from, to);
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(stored_uuids(&client, &entity), uuids);
    let mut per_package = std::collections::BTreeMap::new();
    for call in fake.calls().iter().filter(|c| c.op == Op::Download) {
        *per_package.entry(call.id.clone()).or_insert(0) += 1;
    }
    assert!(per_package.values().all(|n| *n <= 2), "{per_package:?}");
    assert!(per_package.values().any(|n| *n == 2), "{per_package:?}");
}

#[test]
fn the_sats_refusals_end_the_run_as_documented() {
    let fake = FakeSatWs::start();
    let window = |s: &str| date(s).and_hms_opt(0, 0, 0);
    let limit = window("2026-05-04");
    fake.exhaust_lifetime(move |q| q.start == limit);
    let rejected = window("2026-05-11");
    fake.reject(move |q| q.start == rejected);
    let expired = window("2026-05-18");
    fake.expire_first(move |q| q.start == expired);
    for (from, to) in [
        ("2026-05-04", "2026-05-05"),
        ("2026-05-11", "2026-05-12"),
        ("2026-05-18", "2026-05-19"),
    ] {
        load(&fake, date(from), date(to));
    }
    let app = app_for(&fake, "50ms");
    let client = app.client();
    let entity = efirma_entity(&client, "valid");

    let limited = run(&client, &entity, date("2026-05-04"), date("2026-05-05"));
    assert_eq!(limited["failed_reason"], "sat_request_limit", "{limited}");
    let refused = run(&client, &entity, date("2026-05-11"), date("2026-05-12"));
    assert_eq!(
        refused["failed_reason"], "sat_request_rejected",
        "{refused}"
    );
    let remade = run(&client, &entity, date("2026-05-18"), date("2026-05-19"));
    assert_eq!(remade["status"], "finished", "{remade}");
    assert!(processed(&remade) > 0, "{remade}");
    // Nothing in the window: finished with nothing (the SAT answers 5004).
    let empty = run(&client, &entity, date("2026-06-01"), date("2026-06-02"));
    assert_eq!(empty["status"], "finished", "{empty}");
    assert_eq!(found(&empty), 0, "{empty}");
}

#[test]
fn an_efirma_the_sat_refuses_turns_invalid_and_extractions_use_the_ciec() {
    let fake = FakeSatWs::start();
    fake.refuse_authentication_for(FIEL_RFC);
    let app = app_for(&fake, "50ms");
    let client = app.client();
    let receiver = Receiver::start();
    client.create_webhook(&receiver.url(), Some(&["entity.update"]));
    let entity = efirma_entity(&client, "invalid");
    receiver.wait_for_body("entity.update with the e.firma invalid", DEADLINE, |b| {
        b["object"]["efirma"]["status"] == "invalid"
    });
    let done = run(&client, &entity, date("2026-01-05"), date("2026-01-06"));
    assert_eq!(done["status"], "finished", "{done}");
    assert!(done.get("channel").is_none(), "the CIEC channel: {done}");
    assert_eq!(fake.count(Op::Query), 0);
}

/// A package document whose UUID names another document already stored: the run keeps
/// the stored one and lists the conflict (`invoices_conflicting`, `conflicts`); the
/// other documents are stored as usual.
#[test]
fn a_package_document_under_a_stored_uuid_is_recorded_on_the_run_and_the_stored_kept() {
    let fake = FakeSatWs::start_with(Settings::default());
    let (from, to) = (date("2026-01-05"), date("2026-01-06"));
    let uuids = load(&fake, from, to);
    let taken = uuids.iter().next().expect("a document").clone();
    let app = app_for(&fake, "50ms");
    let client = app.client();
    let entity = efirma_entity(&client, "valid");

    // Stored first: another document of the entity, forged under that UUID.
    let dir = tempfile::TempDir::new().expect("tmp");
    let sample = "cfdi40-ingreso-pue-descuento-tfd.xml";
    let forged = crate::flows::import::edited_sample(
        &dir,
        "forged.xml",
        sample,
        &[("6F35D3B5-3651-5370-BC2C-14CDBE384CD7", &taken)],
    );
    let id =
        crate::common::invoices::import(&app, &entity, "issued", std::slice::from_ref(&forged))
            .remove(0)
            .1;
    let before = client.get(&format!("/v1/invoices/{id}")).expect(200);

    let done = run(&client, &entity, from, to);
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(processed(&done), uuids.len() as u64 - 1, "{done}");
    assert_eq!(done["invoices_conflicting"], 1, "{done}");
    let conflicts = done["conflicts"].as_array().expect("conflicts");
    assert_eq!(conflicts.len(), 1, "{done}");
    assert_eq!(conflicts[0]["uuid"], taken.as_str(), "{done}");
    let reason = conflicts[0]["reason"].as_str().unwrap_or("");
    assert!(reason.contains("already stored"), "{reason}");
    // The same object from the API, and the stored document untouched.
    let read = client
        .get(&format!("/v1/extractions/{}", id_of(&done)))
        .expect(200);
    assert_eq!(read["conflicts"], done["conflicts"]);
    let after = client.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(after["total"], before["total"], "{after}");
    assert_eq!(after["type"], before["type"], "{after}");
    let xml = client.get(&format!("/v1/invoices/{id}/cfdi?format=xml"));
    assert_eq!(xml.body, std::fs::read(&forged).expect("forged"));
    assert_eq!(stored_uuids(&client, &entity), uuids);
}
