//! `POST /v1/seals/verify` through the binary: the sandbox's documents verify (its
//! authority is trusted with `--sat sandbox`), the SAT's certificate a stamp names is
//! fetched once from the repository (a local fake of the SAT's), the stamp waits while
//! the repository is down, and certificates load from files for offline deployments.

use crate::common::app::{eventually, TestApp, DEADLINE};
use crate::common::fake_sat_certificates::FakeRepository;
use cfdi_extract::sandbox::docs::{
    invoices_for_day, render_retention_xml, render_xml, retentions_for_period, sat_certificate,
    Direction, SAT_CERTIFICATE_NUMBER,
};
use chrono::NaiveDate;
use serde_json::{json, Value};

const TAX_ID: &str = "AAA010101AAA";

fn day() -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 3, 3).expect("a date")
}

/// A sandbox invoice's XML, sealed and stamped.
fn sandbox_invoice() -> String {
    let invoice = invoices_for_day(TAX_ID, Direction::Issued, day())
        .into_iter()
        .next()
        .expect("an invoice that day");
    String::from_utf8(render_xml(TAX_ID, Direction::Issued, &invoice).expect("xml")).expect("utf-8")
}

fn verify(app: &TestApp, xml: &str) -> Value {
    app.post_json("/v1/seals/verify", &json!({ "xml": xml }))
        .expect(200)
}

fn with_repository(fake: &FakeRepository) -> TestApp {
    let base = fake.base();
    TestApp::spawn_with(&[
        "--sat-certificates-url",
        &base,
        "--sat-certificates-rate",
        "50",
    ])
}

#[test]
fn a_stamp_waits_while_the_repository_is_down_and_verifies_with_one_fetch_once_it_is_up() {
    let fake = FakeRepository::start(
        &[(SAT_CERTIFICATE_NUMBER, sat_certificate().der().to_vec())],
        true,
    );
    let app = with_repository(&fake);
    let xml = sandbox_invoice();

    let seal = verify(&app, &xml);
    assert_eq!(seal["status"], json!("unverified"), "{seal}");
    assert_eq!(seal["checks"]["issuer_seal"]["status"], json!("valid"));
    assert_eq!(
        seal["checks"]["certificate_issuer"]["status"],
        json!("valid")
    );
    assert_eq!(seal["checks"]["stamp_seal_cfd"]["status"], json!("valid"));
    assert_eq!(seal["checks"]["sat_seal"]["status"], json!("unverified"));
    let reason = seal["checks"]["sat_seal"]["reason"]
        .as_str()
        .expect("a reason");
    assert!(reason.contains("HTTP 503"), "{reason}");
    assert_eq!(
        seal["sat_certificate_number"],
        json!(SAT_CERTIFICATE_NUMBER)
    );
    assert!(fake.requests() >= 1);

    fake.set_down(false);
    let seal = eventually(DEADLINE, "the stamp verified", || {
        let seal = verify(&app, &xml);
        (seal["status"] == json!("valid")).then_some(seal)
    });
    assert_eq!(
        seal["checks"]["sat_seal"],
        json!({"status": "valid", "reason": null})
    );
    assert_eq!(seal["algorithm"], json!("SHA-256"));
    assert_eq!(seal["certificate"]["rfc"], json!(TAX_ID));

    // Asked again, together and for a retention stamped with the same certificate:
    // the stored certificate answers, nothing is fetched again.
    let retention = retentions_for_period(
        TAX_ID,
        Direction::Received,
        day(),
        day() + chrono::Days::new(60),
    )
    .into_iter()
    .next()
    .expect("a retention");
    let retention =
        String::from_utf8(render_retention_xml(&retention).expect("xml")).expect("utf-8");
    std::thread::scope(|s| {
        let asks: Vec<_> = (0..4)
            .map(|i| {
                let (app, xml) = (&app, if i % 2 == 0 { &xml } else { &retention });
                s.spawn(move || verify(app, xml)["status"].clone())
            })
            .collect();
        for ask in asks {
            assert_eq!(ask.join().expect("ask"), json!("valid"));
        }
    });
    assert_eq!(
        fake.served(SAT_CERTIFICATE_NUMBER),
        1,
        "one fetch per certificate"
    );

    // A cent more on the total: the issuer's seal no longer matches.
    let edited = xml.replacen(" Total=\"", " Total=\"1", 1);
    let seal = verify(&app, &edited);
    assert_eq!(seal["status"], json!("invalid"));
    assert_eq!(seal["checks"]["issuer_seal"]["status"], json!("invalid"));
    assert_eq!(seal["checks"]["certificate_rfc"]["status"], json!("valid"));
}

#[test]
fn bad_input_is_a_422_on_xml() {
    let fake = FakeRepository::start(&[], false);
    let app = with_repository(&fake);
    for (body, message) in [
        (json!({}), "can't be blank"),
        (
            json!({ "xml": 12 }),
            "must be the document's XML as a string",
        ),
        (json!({ "xml": "<a" }), "is not a readable document"),
        (json!({ "xml": "<a/>" }), "is not a CFDI"),
    ] {
        let errors = app
            .post_json("/v1/seals/verify", &body)
            .expect_field_error("xml");
        assert!(errors[0].starts_with(message), "{body}: {errors:?}");
    }
    assert_eq!(fake.requests(), 0);
}

#[test]
fn certificates_load_from_files_and_then_need_no_repository() {
    let fake = FakeRepository::start(&[], true);
    let app = with_repository(&fake);
    let dir = tempfile::TempDir::new().expect("temp dir");
    let cer = dir.path().join("sat.cer");
    std::fs::write(&cer, sat_certificate().der()).expect("write");
    let cer = cer.to_string_lossy().to_string();
    let out = app
        .cli(&["sat-certificates", "load", &cer], None)
        .expect_success("load");
    assert_eq!(out, format!("loaded\t{SAT_CERTIFICATE_NUMBER}\t{cer}"));
    let again = app
        .cli(&["sat-certificates", "load", &cer], None)
        .expect_success("load again");
    assert!(again.starts_with("already stored\t"), "{again}");

    // Not the SAT's: the e.firma imitation is self-signed.
    let stranger = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/efirma/EKU9003173C9.cer"
    );
    let refused = app.cli(&["sat-certificates", "load", stranger], None);
    assert!(!refused.status.success());
    assert!(
        refused.stderr.contains("not by the SAT"),
        "{}",
        refused.stderr
    );

    let seal = verify(&app, &sandbox_invoice());
    assert_eq!(seal["status"], json!("valid"), "{seal}");
    assert_eq!(fake.requests(), 0, "nothing fetched");
}

/// A real invoice (`cfdi40-ingreso-pue-real-tfd.xml`, issued by ISD950921HE5) with its
/// total edited after it was sealed, written to a file.
fn edited_real(dir: &std::path::Path) -> std::path::PathBuf {
    let xml = String::from_utf8(crate::common::invoices::sample_bytes(
        "cfdi40-ingreso-pue-real-tfd.xml",
    ))
    .expect("utf-8");
    let file = dir.join("edited.xml");
    std::fs::write(&file, xml.replacen(" Total=\"", " Total=\"1", 1)).expect("write");
    file
}

fn seal_of(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/invoices/{id}")).expect(200)["seal"].clone()
}

fn ids(app: &TestApp, query: &str) -> Vec<String> {
    let mut ids: Vec<String> = app
        .client()
        .list_all(&format!("/v1/invoices?{query}"), 50)
        .iter()
        .map(|i| i["id"].as_str().expect("id").to_string())
        .collect();
    ids.sort();
    ids
}

#[test]
fn stored_documents_carry_their_seal_filter_on_it_and_a_late_sat_certificate_updates_it_once() {
    let fake = FakeRepository::start(
        &[(SAT_CERTIFICATE_NUMBER, sat_certificate().der().to_vec())],
        true,
    );
    let base = fake.base();
    let app = TestApp::spawn_with(&[
        "--sat-certificates-url",
        &base,
        "--sat-certificates-rate",
        "50",
        "--seal-recheck-every",
        "100ms",
    ]);
    let client = app.client();
    // Validated first: an extraction of a pending credential fails
    // (`credentials_not_validated`), and a busy machine may claim it first.
    let entity = crate::common::invoices::id_of(&crate::common::invoices::valid_entity(
        &client, TAX_ID, "sandbox1",
    ));
    // The sandbox's documents, verified as the extraction stores them: the repository
    // is down, so their stamps wait for the SAT's certificate.
    crate::common::invoices::extract(&client, &entity, day(), day(), "issued");
    let extracted = ids(&app, "");
    assert!(!extracted.is_empty());
    let good = extracted[0].clone();
    // A real invoice edited after it was sealed, imported.
    let other = client.create_entity("ISD950921HE5", "sandbox1")["id"]
        .as_str()
        .expect("id")
        .to_string();
    let dir = tempfile::TempDir::new().expect("temp dir");
    let imported =
        crate::common::invoices::import(&app, &other, "issued", &[edited_real(dir.path())]);
    let edited = imported[0].1.clone();

    let seal = seal_of(&app, &good);
    assert_eq!(seal["status"], json!("unverified"), "{seal}");
    assert_eq!(seal["checks"]["issuer_seal"]["status"], json!("valid"));
    assert_eq!(seal["checks"]["sat_seal"]["status"], json!("unverified"));
    let seal = seal_of(&app, &edited);
    assert_eq!(seal["status"], json!("invalid"), "{seal}");
    assert_eq!(seal["checks"]["issuer_seal"]["status"], json!("invalid"));
    let listed = app.client().list_all("/v1/invoices", 50);
    assert!(listed.iter().all(|i| i["seal"]["status"].is_string()));

    // The filter, on the list and the export alike.
    assert_eq!(ids(&app, "seal=invalid"), vec![edited.clone()]);
    assert_eq!(ids(&app, "seal=unverified"), extracted);
    assert!(ids(&app, "seal=valid").is_empty());
    let csv = app.get("/v1/invoices/export?format=csv&seal=invalid");
    assert_eq!(csv.status, 200, "{}", csv.text());
    let csv = csv.text();
    assert_eq!(csv.lines().count(), 2, "the header and one row: {csv}");
    assert!(csv.contains(&edited));
    let errors = app
        .get("/v1/invoices?seal=maybe")
        .expect_field_error("seal");
    assert!(!errors.is_empty());

    // The summary warns of it when asked, and keeps its shape otherwise.
    let summary = |extra: &str| {
        app.get(&format!(
            "/v1/entities/{other}/summary?from=2025-01-01&to=2025-01-31&direction=issued{extra}"
        ))
        .expect(200)
    };
    assert!(summary("").get("invalid_seals").is_none());
    let warning = &summary("&invalid_seals=true")["invalid_seals"];
    assert_eq!(warning["count"], json!(1), "{warning}");
    let listed = &warning["documents"][0];
    assert_eq!(listed["id"], json!(edited));
    assert_eq!(listed["class"], json!("invoice"));
    let reason = listed["reasons"][0].as_str().expect("a reason");
    assert!(reason.contains("does not match the document"), "{reason}");
    let none = &app
        .get(&format!(
            "/v1/entities/{entity}/summary?from=2025-03-01&to=2025-03-31&direction=issued&invalid_seals=true"
        ))
        .expect(200)["invalid_seals"];
    assert_eq!(none, &json!({"count": 0, "documents": []}));
    app.get(&format!(
        "/v1/entities/{other}/summary?from=2025-01-01&to=2025-01-31&direction=issued&invalid_seals=maybe"
    ))
    .expect_field_error("invalid_seals");

    // The repository comes back: the stamp verifies, the invoice is updated once.
    fake.set_down(false);
    let seal = eventually(DEADLINE, "the stamp verified", || {
        let seal = seal_of(&app, &good);
        (seal["status"] == json!("valid")).then_some(seal)
    });
    assert_eq!(seal["checks"]["sat_seal"]["status"], json!("valid"));
    eventually(DEADLINE, "every extracted stamp verified", || {
        (ids(&app, "seal=valid") == extracted).then_some(())
    });
    assert_eq!(
        ids(&app, "seal=invalid"),
        vec![edited.clone()],
        "still invalid"
    );
    let updates = |id: &str| {
        app.client().list_all(
            &format!("/v1/events?resource_id={id}&event=invoice.updated"),
            50,
        )
    };
    let events = crate::common::app::quiet(
        std::time::Duration::from_millis(500),
        "the invoice's updates",
        || updates(&good).len(),
    );
    assert_eq!(events, 1, "exactly one invoice.updated");
    let event = &updates(&good)[0];
    let change = &event["changes"]["seal"];
    assert_eq!(
        change["from"]["checks"]["sat_seal"]["status"],
        json!("unverified")
    );
    assert_eq!(change["to"]["status"], json!("valid"), "{event}");
    assert_eq!(event["object"]["seal"]["status"], json!("valid"));
    assert_eq!(fake.served(SAT_CERTIFICATE_NUMBER), 1, "one fetch");
}
