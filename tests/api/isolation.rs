//! Organizations never see each other's resources: 404, never 403.

use crate::common::app::{tax_id, TestApp, DEADLINE};
use crate::common::receiver::Receiver;
use serde_json::json;

#[test]
fn other_org_gets_404_when_reading_or_changing_an_entity() {
    let app = TestApp::spawn();
    let a = app.client();
    let b = app.client_as(&app.create_user_in_new_org());
    let e = a.create_entity(&tax_id("ISO"), "12345678");
    let path = format!("/v1/entities/{}", e["id"].as_str().expect("id"));

    b.get(&path).expect_not_found();
    b.patch_json(&path, &json!({ "name": "Stolen" }))
        .expect_not_found();
    b.patch_json(&path, &json!({ "ciec_password": "badpass1" }))
        .expect_not_found();
    b.delete(&path).expect_not_found();
    // Validation still comes before scope: an invalid body is a 422 even here.
    b.patch_json(&path, &json!({ "name": "x".repeat(256) }))
        .expect_field_error("name");
    b.request("PATCH", &path, Some(b"[]"), &[])
        .expect_field_error("body");

    let list = b.get("/v1/entities").expect(200);
    assert_eq!(list["data"], json!([]), "{list}");
    // Nothing changed for the owner.
    let got = a.get(&path).expect(200);
    assert_eq!(got["name"], e["name"], "{got}");
    assert_eq!(
        a.get("/v1/entities").expect(200)["data"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
}

#[test]
fn other_org_gets_404_when_reading_or_deleting_a_webhook_or_its_deliveries() {
    let app = TestApp::spawn();
    let a = app.client();
    let b = app.client_as(&app.create_user_in_new_org());
    let hook = a.create_webhook("https://example.com/a", None);
    let path = format!("/v1/webhooks/{}", hook["id"].as_str().expect("id"));

    b.get(&path).expect_not_found();
    b.get(&format!("{path}/deliveries")).expect_not_found();
    b.delete(&path).expect_not_found();
    let list = b.get("/v1/webhooks").expect(200);
    assert_eq!(list["data"], json!([]), "{list}");
    assert!(!list
        .to_string()
        .contains(hook["token"].as_str().expect("token")));

    a.get(&path).expect(200);
    a.get(&format!("{path}/deliveries")).expect(200);
}

#[test]
fn lists_show_only_own_resources_when_two_orgs_have_some() {
    let app = TestApp::spawn();
    let a = app.client();
    let b = app.client_as(&app.create_user_in_new_org());
    let shared_tax_id = tax_id("SHR");
    let ea = a.create_entity(&shared_tax_id, "12345678");
    let eb = b.create_entity(&shared_tax_id, "12345678");
    let ea2 = a.create_entity(&tax_id("OWN"), "12345678");
    let ha = a.create_webhook("https://example.com/a", None);
    let hb = b.create_webhook("https://example.com/b", None);

    let ids = |client: &crate::common::app::Client, path: &str| -> Vec<String> {
        client
            .list_all(path, 1)
            .iter()
            .map(|v| v["id"].as_str().expect("id").to_string())
            .collect()
    };
    let a_entities = ids(&a, "/v1/entities");
    assert_eq!(a_entities.len(), 2, "{a_entities:?}");
    assert!(a_entities.contains(&ea["id"].as_str().expect("id").to_string()));
    assert!(a_entities.contains(&ea2["id"].as_str().expect("id").to_string()));
    assert_eq!(ids(&b, "/v1/entities"), [eb["id"].as_str().expect("id")]);
    assert_eq!(ids(&a, "/v1/webhooks"), [ha["id"].as_str().expect("id")]);
    assert_eq!(ids(&b, "/v1/webhooks"), [hb["id"].as_str().expect("id")]);
}

#[test]
fn other_org_receiver_gets_nothing_when_an_org_emits_events() {
    let app = TestApp::spawn();
    let a = app.client();
    let b = app.client_as(&app.create_user_in_new_org());
    let ra = Receiver::start();
    let rb = Receiver::start();
    a.create_webhook(&ra.url(), None);
    let hb = b.create_webhook(&rb.url(), None);

    let e = a.create_entity(&tax_id("EVT"), "12345678");
    let id = e["id"].as_str().expect("id");
    ra.wait_for_body("org A's entity.update", DEADLINE, |body| {
        body["resource"]["id"] == id
    });
    // Org A's event was written with its deliveries: none for org B's webhook.
    assert!(b.deliveries(hb["id"].as_str().expect("id")).is_empty());
    assert_eq!(rb.count(), 0, "{:?}", rb.requests());

    // And the other way round.
    let eb = b.create_entity(&tax_id("EVT"), "12345678");
    rb.wait_for_body("org B's entity.update", DEADLINE, |body| {
        body["resource"]["id"] == eb["id"]
    });
    assert!(ra
        .requests()
        .iter()
        .all(|r| r.json()["resource"]["id"] == id));
}

#[test]
fn other_org_delete_of_an_entity_leaves_its_queued_validation_alone() {
    // One worker and a slow tax authority: the first entity's validation runs while the
    // second's waits in the queue, where a foreign DELETE used to remove it.
    let app = TestApp::spawn_with(&["--workers", "1", "--sim-latency", "700ms"]);
    let a = app.client();
    let b = app.client_as(&app.create_user_in_new_org());
    let first = a.create_entity(&tax_id("QUA"), "12345678");
    let second = a.create_entity(&tax_id("QUB"), "12345678");
    let victim = second["id"].as_str().expect("id");

    b.delete(&format!("/v1/entities/{victim}"))
        .expect_not_found();

    a.wait_for_credential(first["id"].as_str().expect("id"), "valid");
    a.wait_for_credential(victim, "valid");
}
