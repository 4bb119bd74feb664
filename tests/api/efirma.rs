//! `PUT/DELETE /v1/entities/{id}/efirma`: uploading the e.firma (FIEL), every refusal
//! with its field, and its secrets kept out of responses, events, logs and the disk.

use crate::common::app::{files_under, TestApp, DEADLINE};
use crate::common::efirma_files::{
    csd_password, efirma_password, efirma_upload, key_with_rounds, own, sat, upload, FIEL_RFC,
    FIEL_SERIAL,
};
use crate::common::receiver::Receiver;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

fn path(entity: &Value) -> String {
    format!("/v1/entities/{}/efirma", entity["id"].as_str().expect("id"))
}

#[test]
fn put_efirma_stores_a_summary_and_never_shows_the_key_or_password() {
    let app = TestApp::spawn();
    let receiver = Receiver::start();
    let client = app.client();
    client.create_webhook(&receiver.url(), Some(&["entity.update"]));
    let entity = client.create_entity(FIEL_RFC, "12345678");
    assert!(entity.get("efirma").is_none(), "no e.firma yet: {entity}");

    let res = client.request(
        "PUT",
        &path(&entity),
        Some(efirma_upload().to_string().as_bytes()),
        &[],
    );
    let body = res.expect(200);
    let efirma = &body["efirma"];
    assert_eq!(efirma["rfc"], FIEL_RFC, "{body}");
    assert_eq!(efirma["serial_number"], FIEL_SERIAL, "{body}");
    assert!(efirma["valid_from"].is_string(), "{body}");
    assert!(
        efirma["valid_to"]
            .as_str()
            .is_some_and(|v| v.starts_with("2100-")),
        "{body}"
    );
    assert!(
        matches!(efirma["status"].as_str(), Some("pending" | "valid")),
        "{body}"
    );
    let got = client
        .get(&format!(
            "/v1/entities/{}",
            entity["id"].as_str().expect("id")
        ))
        .expect(200);
    assert_eq!(got["efirma"]["serial_number"], efirma["serial_number"]);

    let event = receiver.wait_for_body("entity.update with the e.firma", DEADLINE, |b| {
        b["object"]["efirma"]["rfc"] == FIEL_RFC
    });
    let secret = efirma_password();
    let key_b64 = STANDARD.encode(own("EKU9003173C9.key"));
    for text in [res.text(), got.to_string(), event.text(), app.output()] {
        assert!(!text.contains(&secret), "the password leaked: {text}");
        assert!(!text.contains(&key_b64[..40]), "the key leaked: {text}");
        assert!(!text.contains("private_key"), "{text}");
    }
    let key = own("EKU9003173C9.key");
    for file in files_under(app.data_dir()) {
        let bytes = std::fs::read(&file).unwrap_or_default();
        assert!(
            !bytes.windows(secret.len()).any(|w| w == secret.as_bytes()),
            "password in {}",
            file.display()
        );
        assert!(
            !bytes.windows(64).any(|w| w == &key[100..164]),
            "key in {}",
            file.display()
        );
    }
}

#[test]
fn put_efirma_refuses_each_bad_upload_on_its_field() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = client.create_entity(FIEL_RFC, "12345678");
    let other = client.create_entity("AAA010101AAA", "12345678");
    let put = |target: &Value, body: &Value| {
        client.request("PUT", &path(target), Some(body.to_string().as_bytes()), &[])
    };

    let (cer, key) = (own("EKU9003173C9.cer"), own("EKU9003173C9.key"));
    let wrong_password = upload(&cer, &key, "not-the-password");
    put(&entity, &wrong_password).expect_field_error("password");
    let csd = upload(
        &sat("fake-csd/EKU9003173C9.cer"),
        &sat("fake-csd/EKU9003173C9.key"),
        &csd_password(),
    );
    let messages = put(&entity, &csd).expect_field_error("certificate");
    assert!(messages.iter().any(|m| m.contains("CSD")), "{messages:?}");
    let mismatch = put(&other, &efirma_upload()).expect_field_error("certificate");
    assert!(
        mismatch.iter().any(|m| m.contains("AAA010101AAA")),
        "{mismatch:?}"
    );
    let foreign_key = upload(&cer, &sat("fake-csd/EKU9003173C9.key"), &csd_password());
    let expired = upload(&own("EKU9003173C9-expired.cer"), &key, &efirma_password());
    let messages = put(&entity, &expired).expect_field_error("certificate");
    assert!(
        messages.iter().any(|m| m.contains("expired on 2021-01-01")),
        "{messages:?}"
    );
    put(&entity, &foreign_key).expect_field_error("private_key");
    // PBKDF2 rounds past the cap are refused before any is computed; the cap itself
    // passes (the SAT's keys use 2,048).
    let costly = upload(&cer, &key_with_rounds(100_001), &efirma_password());
    let messages = put(&entity, &costly).expect_field_error("private_key");
    assert!(
        messages
            .iter()
            .any(|m| m.contains("100001 PBKDF2 rounds") && m.contains("at most 100000")),
        "{messages:?}"
    );
    let garbage = json!({ "certificate": "%%%", "private_key": "AAAA", "password": "x" });
    put(&entity, &garbage).expect_field_error("certificate");
    let not_der = json!({ "certificate": "AAAA", "private_key": "AAAA", "password": "x" });
    put(&entity, &not_der).expect_field_error("certificate");
    for field in ["certificate", "private_key", "password"] {
        let mut body = efirma_upload();
        body.as_object_mut().expect("object").remove(field);
        put(&entity, &body).expect_field_error(field);
    }
    put(
        &entity,
        &json!({ "certificate": 1, "private_key": [], "password": true }),
    )
    .expect_field_error("private_key");
    client
        .request("PUT", &path(&entity), Some(b"not json"), &[])
        .expect_field_error("body");
    let huge =
        json!({ "certificate": "A".repeat(1024 * 1024), "private_key": "A", "password": "x" });
    client
        .request(
            "PUT",
            &path(&entity),
            Some(huge.to_string().as_bytes()),
            &[],
        )
        .expect_error(413);
    // Nothing was stored by any refusal.
    let got = client
        .get(&format!(
            "/v1/entities/{}",
            entity["id"].as_str().expect("id")
        ))
        .expect(200);
    assert!(got.get("efirma").is_none(), "{got}");
    let at_the_cap = upload(&cer, &key_with_rounds(100_000), &efirma_password());
    put(&entity, &at_the_cap).expect(200);
}

#[test]
fn efirma_routes_answer_404_for_other_organizations_and_unknown_ids() {
    let app = TestApp::spawn();
    let owner = app.client();
    let stranger = app.client_as(&app.create_user_in_new_org());
    let entity = owner.create_entity(FIEL_RFC, "12345678");
    let body = efirma_upload().to_string();
    stranger
        .request("PUT", &path(&entity), Some(body.as_bytes()), &[])
        .expect_not_found();
    for id in ["not-a-uuid", "0190b5a4-0000-7000-8000-000000000000"] {
        let p = format!("/v1/entities/{id}/efirma");
        owner
            .request("PUT", &p, Some(body.as_bytes()), &[])
            .expect_not_found();
        owner.delete(&p).expect_not_found();
    }
    owner
        .request("PUT", &path(&entity), Some(body.as_bytes()), &[])
        .expect(200);
    stranger.delete(&path(&entity)).expect_not_found();
    let still = owner
        .get(&format!(
            "/v1/entities/{}",
            entity["id"].as_str().expect("id")
        ))
        .expect(200);
    assert!(still.get("efirma").is_some(), "{still}");
    // Without credentials: 401 first.
    app.anonymous()
        .delete(&path(&entity))
        .expect_unauthorized(crate::common::app::MISSING);
}

#[test]
fn delete_efirma_removes_it_and_a_second_delete_is_404() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = client.create_entity(FIEL_RFC, "12345678");
    client
        .request(
            "PUT",
            &path(&entity),
            Some(efirma_upload().to_string().as_bytes()),
            &[],
        )
        .expect(200);
    assert_eq!(client.delete(&path(&entity)).status, 204);
    let got = client
        .get(&format!(
            "/v1/entities/{}",
            entity["id"].as_str().expect("id")
        ))
        .expect(200);
    assert!(got.get("efirma").is_none(), "{got}");
    client.delete(&path(&entity)).expect_not_found();
}
