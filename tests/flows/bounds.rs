//! The edges of what input the service takes, through the binary: dates at the ends of
//! what stored text can hold, extraction periods the SAT can have, a `Fecha` that is
//! no date, schedule intervals read back exactly, and CSV text split on semicolons.

use crate::common::app::TestApp;
use crate::common::invoices::*;
use crate::flows::import::{edited_sample, import_refused, REAL_40, REAL_40_ISSUER, REAL_40_UUID};
use serde_json::json;
use tempfile::TempDir;

fn rows(csv: &str) -> usize {
    csv.lines().count().saturating_sub(1)
}

#[test]
fn the_last_date_is_no_end_and_dates_past_it_are_refused() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    import_samples(&app, &entity, "issued", &[REAL_40]);

    for query in [
        "issued_to=9999-12-31",
        "issued_from=2025-01-24&issued_to=9999-12-31",
        "issued_from=0001-01-01&issued_to=9999-12-31",
    ] {
        let found = invoices(&client, &format!("entity_id={entity}&{query}"));
        assert_eq!(found.len(), 1, "{query}");
        let csv = client
            .get(&format!("/v1/invoices/export?entity_id={entity}&{query}"))
            .text();
        assert_eq!(rows(&csv), 1, "{query}: {csv}");
    }
    for (query, field) in [
        ("issued_to=%2B10000-01-01", "issued_to"),
        ("issued_from=0000-12-31", "issued_from"),
        ("issued_from=-0001-01-01", "issued_from"),
    ] {
        let body = client.get(&format!("/v1/invoices?{query}")).expect(422);
        assert!(body["errors"][field].is_array(), "{query}: {body}");
    }

    let dir = TempDir::new().expect("tempdir");
    let out = dir.path().join("all.csv");
    let out_text = out.to_string_lossy().to_string();
    app.cli(
        &[
            "invoices",
            "export",
            "--entity",
            &entity,
            "--from",
            "2025-01-01",
            "--to",
            "9999-12-31",
            "--out",
            &out_text,
        ],
        None,
    )
    .expect_success("export to the last date");
    let csv = std::fs::read_to_string(&out).expect("the file");
    assert!(csv.contains(REAL_40_UUID), "{csv}");

    let summary = client
        .get(&format!(
            "/v1/entities/{entity}/summary?from=9999-01-01&to=9999-12-31&direction=issued"
        ))
        .expect(200);
    assert_eq!(summary["to"], "9999-12-31", "{summary}");
}

#[test]
fn extraction_periods_outside_the_years_of_cfdi_are_refused() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&valid_entity(&client, "AAA010101AAA", "sandbox1"));
    for (from, to, field) in [
        ("0001-01-01", "0001-01-31", "options.period.from"),
        ("2003-12-01", "2004-01-31", "options.period.from"),
        ("9999-12-01", "9999-12-31", "options.period.from"),
        ("2026-01-01", "9999-12-31", "options.period.to"),
    ] {
        let body = json!({"entity_id": entity, "options": {
            "period": {"from": from, "to": to}, "download_type": "issued"}});
        let errors = client.post_json("/v1/extractions", &body).expect(422);
        assert!(errors["errors"][field].is_array(), "{from}..{to}: {errors}");
    }
}

#[test]
fn a_fecha_that_is_not_a_date_is_refused_on_import() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let dir = TempDir::new().expect("tempdir");
    let file = edited_sample(
        &dir,
        "nodate.xml",
        REAL_40,
        &[("Fecha=\"2025-01-24T10:10:41\"", "Fecha=\"ayer\"")],
    );
    let reason = import_refused(&app, &entity, "issued", &file);
    assert!(reason.contains("Fecha"), "{reason}");
    assert!(invoices(&client, &format!("entity_id={entity}")).is_empty());
}

#[test]
fn a_schedules_every_reads_back_as_written() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&valid_entity(&client, "AAA010101AAA", "sandbox1"));
    let s = client
        .post_json(
            "/v1/schedules",
            &json!({"entity_id": entity, "every": "31d"}),
        )
        .expect(201);
    assert_eq!(s["every"], "31d", "{s}");
    let id = s["id"].as_str().expect("id");
    let s = client
        .patch_json(&format!("/v1/schedules/{id}"), &json!({"every": "36h"}))
        .expect(200);
    assert_eq!(s["every"], "1d 12h", "{s}");
    let s = client.get(&format!("/v1/schedules/{id}")).expect(200);
    assert_eq!(s["every"], "1d 12h", "{s}");
}

#[test]
fn csv_text_split_on_semicolons_never_starts_a_formula() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let dir = TempDir::new().expect("tempdir");
    let file = edited_sample(
        &dir,
        "semicolon.xml",
        REAL_40,
        &[(
            "Nombre=\"CARLOS CORTES SOTO\"",
            "Nombre=\"CARLOS;=HYPERLINK(1);-2\"",
        )],
    );
    import(&app, &entity, "issued", &[file]);
    let csv = client
        .get(&format!("/v1/invoices/export?entity_id={entity}"))
        .text();
    assert!(csv.contains(",CARLOS;'=HYPERLINK(1);'-2,"), "{csv}");
    // The JSON keeps the name as the document has it.
    let found = invoices(&client, &format!("entity_id={entity}"));
    assert_eq!(found[0]["receiver"]["name"], "CARLOS;=HYPERLINK(1);-2");
}
