//! `Idempotency-Key` on POST requests: the first answer per organization and key is
//! kept and given again to the same request, another request with the key is a 422 on
//! the header, refusals are not kept, and retries sent at once run the work once.

use crate::api::webhook_storage::on_disk;
use crate::common::app::{tax_id, Client, Resp, TestApp};
use serde_json::{json, Value};
use std::collections::HashSet;

fn post_once(client: &Client, path: &str, key: &str, body: &Value) -> Resp {
    let bytes = serde_json::to_vec(body).expect("serialize");
    client.request(
        "POST",
        path,
        Some(&bytes),
        &[
            ("Content-Type", "application/json"),
            ("Idempotency-Key", key),
        ],
    )
}

fn entity_body(tax_id: &str) -> Value {
    json!({ "tax_id": tax_id, "name": "Once SA", "ciec_password": "12345678" })
}

fn entity_ids(client: &Client) -> Vec<String> {
    client
        .list_all("/v1/entities", 100)
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_string())
        .collect()
}

#[test]
fn a_retry_with_the_same_key_and_body_gets_the_first_answer_and_creates_nothing_more() {
    let app = TestApp::spawn();
    let client = app.client();
    let rfc = tax_id("IDM");
    let first = post_once(&client, "/v1/entities", "create-1", &entity_body(&rfc));
    let created = first.expect(201);
    assert_eq!(first.header("idempotent-replayed"), None);
    // The same object, written in another order: the same request.
    let reordered = json!({ "ciec_password": "12345678", "name": "Once SA", "tax_id": rfc });
    let again = post_once(&client, "/v1/entities", "create-1", &reordered);
    assert_eq!(
        again.expect(201),
        created,
        "the first answer, byte for byte"
    );
    assert_eq!(again.body, first.body);
    assert_eq!(again.header("idempotent-replayed"), Some("true"));
    assert_eq!(entity_ids(&client), [created["id"].as_str().expect("id")]);

    // Another body, or another path, with the key: a 422 on the header; nothing made.
    let other = post_once(
        &client,
        "/v1/entities",
        "create-1",
        &entity_body(&tax_id("IDM")),
    );
    let errors = other.expect_field_error("Idempotency-Key");
    assert!(errors[0].contains("another request"), "{errors:?}");
    let hook = json!({ "url": "https://example.com/hook" });
    post_once(&client, "/v1/webhooks", "create-1", &hook).expect_field_error("Idempotency-Key");
    assert_eq!(entity_ids(&client).len(), 1);
    assert!(client.get("/v1/webhooks").expect(200)["data"]
        .as_array()
        .expect("data")
        .is_empty());

    // Without the header, the same body is a new request (and here a taken tax id).
    client
        .post_json("/v1/entities", &entity_body(&rfc))
        .expect_field_error("tax_id");
}

#[test]
fn keys_belong_to_one_organization_and_a_malformed_key_is_a_422_on_the_header() {
    let app = TestApp::spawn();
    let ours = app.client();
    let theirs = app.client_as(&app.create_user_in_new_org());
    let a = post_once(
        &ours,
        "/v1/entities",
        "shared-key",
        &entity_body(&tax_id("IDA")),
    );
    let b = post_once(
        &theirs,
        "/v1/entities",
        "shared-key",
        &entity_body(&tax_id("IDB")),
    );
    assert_ne!(a.expect(201)["id"], b.expect(201)["id"]);
    assert_eq!(b.header("idempotent-replayed"), None);
    for bad in ["", "with space", &"k".repeat(256)] {
        let resp = post_once(&ours, "/v1/entities", bad, &entity_body(&tax_id("IDC")));
        let errors = resp.expect_field_error("Idempotency-Key");
        assert!(errors[0].contains("visible ASCII"), "{bad:?}: {errors:?}");
    }
    assert_eq!(entity_ids(&ours).len(), 1);
    assert_eq!(entity_ids(&theirs).len(), 1);
}

#[test]
fn a_refusal_is_not_kept_so_the_corrected_request_runs_with_the_same_key() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = client.create_entity(&tax_id("IDS"), "12345678");
    let entity_id = entity["id"].as_str().expect("id");
    let body = json!({ "entity_id": entity_id, "every": "24h" });
    let existing = client.post_json("/v1/schedules", &body).expect(201);
    post_once(&client, "/v1/schedules", "sched", &body).expect_field_error("entity_id");
    client
        .delete(&format!(
            "/v1/schedules/{}",
            existing["id"].as_str().expect("id")
        ))
        .expect(204);
    let made = post_once(&client, "/v1/schedules", "sched", &body);
    let schedule = made.expect(201);
    assert_eq!(made.header("idempotent-replayed"), None);
    let replayed = post_once(&client, "/v1/schedules", "sched", &body);
    assert_eq!(replayed.expect(201)["id"], schedule["id"]);
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
}

#[test]
fn retries_sent_at_once_run_the_work_once_and_all_get_its_answer() {
    let app = TestApp::spawn();
    let client = app.client();
    let body = entity_body(&tax_id("IDP"));
    let answers: Vec<Resp> = std::thread::scope(|s| {
        let sent: Vec<_> = (0..8)
            .map(|_| s.spawn(|| post_once(&client, "/v1/entities", "at-once", &body)))
            .collect();
        sent.into_iter()
            .map(|t| t.join().expect("request thread"))
            .collect()
    });
    let ids: HashSet<String> = answers
        .iter()
        .map(|r| r.expect(201)["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(ids.len(), 1, "one entity for all of them");
    let fresh = answers
        .iter()
        .filter(|r| r.header("idempotent-replayed").is_none())
        .count();
    assert_eq!(fresh, 1, "one answer made, the others given again");
    assert_eq!(entity_ids(&client), ids.into_iter().collect::<Vec<_>>());
}

#[test]
fn a_webhook_created_once_answers_its_token_again_and_keeps_it_sealed() {
    let app = TestApp::spawn();
    let client = app.client();
    let body = json!({ "url": "https://example.com/hooks/once" });
    let first = post_once(&client, "/v1/webhooks", "hook-1", &body).expect(201);
    let again = post_once(&client, "/v1/webhooks", "hook-1", &body).expect(201);
    assert_eq!(first, again);
    let token = first["token"].as_str().expect("token");
    assert!(
        !on_disk(app.data_dir(), token),
        "the kept answer holds the token sealed"
    );
    let hooks = client.get("/v1/webhooks").expect(200);
    assert_eq!(hooks["data"].as_array().expect("data").len(), 1);
}
