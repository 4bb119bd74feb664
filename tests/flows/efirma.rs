//! Extractions through the e.firma channel against the sandbox's simulation of the SAT's
//! bulk-download web service: the same invoices and webhooks as the CIEC channel, waits
//! that survive `kill -9`, and the SAT's answers by window year (`/docs/sandbox#efirma`).

use crate::common::app::{eventually, Client, TestApp, DEADLINE};
use crate::common::efirma_files::{efirma_upload, FIEL_RFC};
use crate::common::invoices::{
    create_extraction, date, extract, found, id_of, invoices_by_uuid, processed,
    wait_extraction_done,
};
use crate::common::receiver::Receiver;
use serde_json::Value;

/// Checks of the simulated service come quickly: 50 ms, 100 ms, 200 ms, ...
const FAST_POLL: &[&str] = &["--sat-ws-poll", "50ms"];

/// An entity with the test e.firma, checked `valid` by the (simulated) service.
fn efirma_entity(client: &Client) -> String {
    let entity = client.create_entity(FIEL_RFC, "sandbox1");
    let id = id_of(&entity);
    let path = format!("/v1/entities/{id}/efirma");
    client
        .request(
            "PUT",
            &path,
            Some(efirma_upload().to_string().as_bytes()),
            &[],
        )
        .expect(200);
    eventually(DEADLINE, "the e.firma to be checked valid", || {
        let e = client.get(&format!("/v1/entities/{id}")).expect(200);
        (e["efirma"]["status"] == "valid").then_some(())
    });
    id
}

/// The fields two channels must agree on, per uuid.
fn comparable(invoices: &std::collections::BTreeMap<String, Value>) -> Vec<String> {
    invoices
        .iter()
        .map(|(uuid, i)| {
            format!(
                "{uuid} {} {} {} {} {}",
                i["type"], i["total"], i["status"], i["paid_amount"], i["issued_at"]
            )
        })
        .collect()
}

#[test]
fn efirma_extraction_gives_the_invoices_and_webhooks_of_the_ciec_channel() {
    let app = TestApp::spawn_with(FAST_POLL);
    let (from, to) = (date("2026-01-05"), date("2026-01-12"));

    // Organization A: the CIEC channel.
    let ciec = app.client();
    let ciec_entity = id_of(&crate::common::invoices::valid_entity(
        &ciec, FIEL_RFC, "sandbox1",
    ));
    let by_ciec = extract(&ciec, &ciec_entity, from, to, "issued");
    assert!(by_ciec.get("channel").is_none(), "{by_ciec}");

    // Organization B: the same taxpayer with its e.firma.
    let efirma = app.client_as(&app.create_user_in_new_org());
    let receiver = Receiver::start();
    efirma.create_webhook(&receiver.url(), Some(&["extraction.update"]));
    let efirma_entity = efirma_entity(&efirma);
    let by_efirma = extract(&efirma, &efirma_entity, from, to, "issued");
    assert_eq!(by_efirma["channel"], "efirma", "{by_efirma}");
    assert_eq!(
        found(&by_efirma),
        found(&by_ciec),
        "{by_efirma} vs {by_ciec}"
    );
    assert_eq!(processed(&by_efirma), processed(&by_ciec));
    assert!(processed(&by_efirma) > 0);
    assert_eq!(
        comparable(&invoices_by_uuid(&efirma, &efirma_entity)),
        comparable(&invoices_by_uuid(&ciec, &ciec_entity))
    );
    // One invoice's XML, byte for byte the same through either channel.
    let one = invoices_by_uuid(&efirma, &efirma_entity);
    let (uuid, invoice) = one.iter().next().expect("an invoice");
    let other = invoices_by_uuid(&ciec, &ciec_entity);
    let xml = |c: &Client, i: &Value| {
        c.get(&format!("/v1/invoices/{}/cfdi?format=xml", id_of(i)))
            .body
    };
    assert_eq!(xml(&efirma, invoice), xml(&ciec, &other[uuid]));

    // The webhooks keep their meaning: running, then finished, naming the entity.
    let statuses: Vec<String> = receiver
        .wait_for(2, DEADLINE)
        .iter()
        .map(|r| r.json())
        .filter(|b| b["object"]["id"] == by_efirma["id"])
        .map(|b| {
            assert_eq!(b["object"]["entity"]["tax_id"], FIEL_RFC, "{b}");
            b["object"]["status"].as_str().unwrap_or("").to_string()
        })
        .collect();
    assert_eq!(statuses, ["running", "finished"]);
}

#[test]
fn a_waiting_efirma_extraction_survives_kill_9_without_asking_the_sat_again() {
    // Slow checks, so the run is caught waiting on the SAT.
    let mut app = TestApp::spawn_with(&["--sat-ws-poll", "1500ms"]);
    let client = app.client();
    let entity = efirma_entity(&client);
    let created = create_extraction(
        &client,
        &entity,
        date("2026-02-02"),
        date("2026-02-04"),
        "received",
    );
    let path = format!("/v1/extractions/{}", id_of(&created));
    let waiting = eventually(DEADLINE, "the run to wait on the SAT", || {
        let e = client.get(&path).expect(200);
        e["waiting"]["sat_request_id"].is_string().then_some(e)
    });
    assert_eq!(waiting["status"], "running", "{waiting}");
    assert_eq!(waiting["waiting"]["kind"], "metadata", "{waiting}");
    assert!(waiting["waiting"]["next_check_at"].is_string(), "{waiting}");
    let asked = waiting["waiting"]["sat_request_id"].clone();

    app.restart(); // SIGKILL, then a new process on the same data directory
    let client = app.client();
    let done = wait_extraction_done(&client, &id_of(&created));
    assert_eq!(done["status"], "finished", "{done}");
    assert!(found(&done) > 0, "{done}");

    // The SAT was asked once for the metadata and once for the XML: the restart
    // resumed the request it had (the sandbox keeps every request it was asked, in
    // its own store).
    let db = rusqlite::Connection::open(app.data_dir().join("sandbox.db")).expect("db");
    let ids: Vec<String> = db
        .prepare("SELECT id FROM requests ORDER BY created_at")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert_eq!(asked, ids[0].as_str());
}

/// Runs an e.firma extraction of `from..to` and returns it when it ends.
fn efirma_run(client: &Client, entity: &str, from: &str, to: &str) -> Value {
    let created = create_extraction(client, entity, date(from), date(to), "issued");
    wait_extraction_done(client, &id_of(&created))
}

#[test]
fn the_sats_answers_by_window_year_end_as_documented() {
    let app = TestApp::spawn_with(FAST_POLL);
    let client = app.client();
    let entity = efirma_entity(&client);

    let limit = efirma_run(&client, &entity, "2019-03-04", "2019-03-05");
    assert_eq!(limit["status"], "failed", "{limit}");
    assert_eq!(limit["failed_reason"], "sat_request_limit", "{limit}");

    let rejected = efirma_run(&client, &entity, "2018-03-05", "2018-03-06");
    assert_eq!(
        rejected["failed_reason"], "sat_request_rejected",
        "{rejected}"
    );

    // Expired once, asked again, then served.
    let expired = efirma_run(&client, &entity, "2017-03-06", "2017-03-07");
    assert_eq!(expired["status"], "finished", "{expired}");
    assert!(processed(&expired) > 0, "{expired}");

    // A duplicate: the live request is adopted and served.
    let duplicate = efirma_run(&client, &entity, "2016-03-07", "2016-03-08");
    assert_eq!(duplicate["status"], "finished", "{duplicate}");
    assert!(processed(&duplicate) > 0, "{duplicate}");

    // Over the maximum (more than 500 CFDI in a window): split until each half fits,
    // and every invoice arrives once.
    let big = efirma_run(&client, &entity, "2025-01-01", "2025-04-30");
    assert_eq!(big["status"], "finished", "{big}");
    assert!(found(&big) > 500, "{big}");
    let stored = crate::common::invoices::invoices(
        &client,
        &format!("entity_id={entity}&issued_from=2025-01-01&issued_to=2025-04-30"),
    );
    assert_eq!(stored.len() as u64, processed(&big), "{big}");
}
