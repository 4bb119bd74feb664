//! The NUL character (issue 42): SQLite's text holds it, PostgreSQL's refuses it, and no
//! field means it. In a JSON string or a query parameter it is the contract's 422 on
//! that field, on both engines, before anything is written or streamed.

use crate::common::app::{basic, request, tax_id, TestApp, INVALID};
use serde_json::json;

const NUL: &str = "must not contain the NUL character";

#[test]
fn a_nul_in_a_body_field_is_a_422_on_that_field_and_writes_nothing() {
    let app = TestApp::spawn();
    let client = app.client();
    let rfc = tax_id("NUL");
    let body = json!({ "tax_id": rfc, "name": "Acme\u{0}SA", "ciec_password": "12345678" });
    let errors = client
        .post_json("/v1/entities", &body)
        .expect_field_error("name");
    assert!(errors[0].contains(NUL), "{errors:?}");
    let entities = client.get("/v1/entities").expect(200);
    assert_eq!(entities["data"].as_array().expect("data").len(), 0);

    let entity = client.create_entity(&rfc, "12345678");
    let id = entity["id"].as_str().expect("id");
    let patch = json!({ "name": "\u{0}" });
    client
        .patch_json(&format!("/v1/entities/{id}"), &patch)
        .expect_field_error("name");
    let unchanged = client.get(&format!("/v1/entities/{id}")).expect(200);
    assert_eq!(unchanged["name"], entity["name"]);

    // Nested and array fields are named as the other errors name them.
    let run = json!({
        "entity_id": id,
        "options": { "period": { "from": "2026-01-01\u{0}", "to": "2026-01-31" }, "download_type": "issued" }
    });
    client
        .post_json("/v1/extractions", &run)
        .expect_field_error("options.period.from");
    let hook = json!({ "url": "https://example.com/h", "events": ["entity.update", "x\u{0}"] });
    client
        .post_json("/v1/webhooks", &hook)
        .expect_field_error("events");
    assert_eq!(
        client.get("/v1/extractions").expect(200)["data"],
        json!([]),
        "nothing queued"
    );
}

#[test]
fn a_nul_in_a_query_parameter_is_a_422_on_it_before_any_row_is_read_or_streamed() {
    let app = TestApp::spawn();
    let client = app.client();
    for (path, field) in [
        ("/v1/invoices?issuer_tax_id=AAA%00", "issuer_tax_id"),
        ("/v1/invoices?uuid=%00", "uuid"),
        (
            "/v1/retentions?counterpart_tax_id=%00",
            "counterpart_tax_id",
        ),
        (
            "/v1/invoices/export?format=csv&issuer_tax_id=%00",
            "issuer_tax_id",
        ),
        ("/v1/events?type=entity.update%00", "type"),
    ] {
        let res = client.get(path);
        let errors = res.expect_field_error(field);
        assert!(errors[0].contains(NUL), "{path}: {errors:?}");
    }
    // Authentication still comes first.
    app.anonymous()
        .get("/v1/invoices?uuid=%00")
        .expect_unauthorized("Missing Authorization header");
}

#[test]
fn a_nul_in_the_login_email_is_invalid_credentials() {
    let app = TestApp::spawn();
    let header = basic(&format!("{}\u{0}", app.creds.email), &app.creds.password);
    let res = request(
        &crate::common::app::agent(),
        &app.base_url,
        "GET",
        "/v1/entities",
        None,
        None,
        &[("Authorization", &header)],
    );
    res.expect_unauthorized(INVALID);
}
