//! Error shapes and the order of checks: 401, then 413/422, then 404.

use crate::common::app::{TestApp, MISSING};
use crate::common::engine::TestDb;
use crate::common::sqlite_only;
use serde_json::json;

const MIB: usize = 1024 * 1024;
const MISSING_UUID: &str = "0190b5a4-0000-7000-8000-000000000000";

#[test]
fn unknown_v1_path_returns_401_when_no_credentials() {
    let app = TestApp::spawn();
    let anon = app.anonymous();
    for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
        let res = anon.request(method, "/v1/x", Some(b"{}"), &[]);
        assert_eq!(res.status, 401, "{method}: {}", res.text());
        res.expect_unauthorized(MISSING);
    }
    anon.get("/v1/does/not/exist").expect_unauthorized(MISSING);
}

#[test]
fn unknown_v1_path_returns_json_404_when_authenticated() {
    let app = TestApp::spawn();
    let client = app.client();
    for method in ["GET", "POST", "PUT", "PATCH", "DELETE"] {
        let res = client.request(method, "/v1/x", Some(b"{}"), &[]);
        assert_eq!(res.status, 404, "{method}: {}", res.text());
        res.expect_not_found();
    }
    client.get("/v1/entities/x/y/z").expect_not_found();
}

#[test]
fn unknown_path_outside_v1_returns_json_404() {
    let app = TestApp::spawn();
    for path in ["/nope", "/v2/entities", "/up/extra", "/docsx"] {
        let res = app.anonymous().get(path);
        assert_eq!(res.status, 404, "{path}: {}", res.text());
        res.expect_not_found();
    }
}

#[test]
fn up_returns_200_ok_without_authentication() {
    let app = TestApp::spawn();
    let res = app.anonymous().get("/up");
    let body = res.expect(200);
    assert_eq!(body, json!({ "status": "ok" }), "body: {body}");
    assert!(
        res.header("content-type")
            .unwrap_or("")
            .starts_with("application/json"),
        "{:?}",
        res.headers
    );
}

#[test]
fn create_entity_returns_422_on_body_when_body_is_not_json() {
    let app = TestApp::spawn();
    for body in [&b"not json"[..], b"{\"tax_id\": ", b"<xml/>", b"\xff\xfe"] {
        let res = app.client().post_raw("/v1/entities", body);
        res.expect_field_error("body");
    }
}

#[test]
fn create_entity_returns_422_on_body_when_body_is_not_an_object() {
    let app = TestApp::spawn();
    for body in [
        "[]",
        "[{\"tax_id\": \"AAA010101AAA\"}]",
        "\"text\"",
        "42",
        "null",
    ] {
        let res = app.client().post_raw("/v1/entities", body.as_bytes());
        assert_eq!(res.status, 422, "{body}: {}", res.text());
        res.expect_field_error("body");
    }
}

#[test]
fn create_entity_returns_422_on_body_when_body_is_empty() {
    let app = TestApp::spawn();
    for body in ["", "   \n\t "] {
        let res = app.client().post_raw("/v1/entities", body.as_bytes());
        assert_eq!(res.status, 422, "{body:?}: {}", res.text());
        res.expect_field_error("body");
    }
}

#[test]
fn create_entity_parses_json_when_content_type_says_otherwise() {
    let app = TestApp::spawn();
    let body = json!({ "tax_id": "CTY010101AAA", "name": "Any type", "ciec_password": "12345678", "extra": [1, 2] });
    let bytes = serde_json::to_vec(&body).expect("json");
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        let tax_id = crate::common::app::tax_id("CTY");
        let mut body = body.clone();
        body["tax_id"] = json!(tax_id);
        let bytes = serde_json::to_vec(&body).expect("json");
        app.client()
            .request(
                "POST",
                "/v1/entities",
                Some(&bytes),
                &[("Content-Type", ct)],
            )
            .expect(201);
    }
    // No Content-Type at all.
    app.client()
        .request("POST", "/v1/entities", Some(&bytes), &[])
        .expect(201);
}

#[test]
fn create_entity_returns_413_when_body_is_over_1_mib() {
    let app = TestApp::spawn();
    let mut body = b"{}".to_vec();
    body.resize(MIB + 1, b' ');
    let res = app.client().post_raw("/v1/entities", &body);
    let json = res.expect_error(413);
    assert!(json["message"].is_string(), "body: {json}");
}

#[test]
fn create_entity_is_not_413_when_body_is_exactly_1_mib() {
    let app = TestApp::spawn();
    let tax_id = crate::common::app::tax_id("MIB");
    let mut body = serde_json::to_vec(
        &json!({ "tax_id": tax_id, "name": "Padded", "ciec_password": "12345678" }),
    )
    .expect("json");
    body.resize(MIB, b' ');
    assert_eq!(body.len(), MIB);
    let res = app.client().post_raw("/v1/entities", &body);
    let created = res.expect(201);
    assert_eq!(created["tax_id"], tax_id.as_str(), "body: {created}");

    // And exactly 1 MiB that fails validation is a 422 on the field, not a 413.
    let mut body = b"{}".to_vec();
    body.resize(MIB, b' ');
    app.client()
        .post_raw("/v1/entities", &body)
        .expect_field_error("tax_id");
}

#[test]
fn update_entity_returns_422_when_body_is_invalid_and_id_is_not_a_uuid() {
    let app = TestApp::spawn();
    let client = app.client();
    client
        .request("PATCH", "/v1/entities/not-a-uuid", Some(b"nope"), &[])
        .expect_field_error("body");
    client
        .patch_json(
            "/v1/entities/not-a-uuid",
            &json!({ "ciec_password": "short" }),
        )
        .expect_field_error("ciec_password");
    client
        .patch_json(
            &format!("/v1/entities/{MISSING_UUID}"),
            &json!({ "tax_id": "AAA010101AAA" }),
        )
        .expect_field_error("tax_id");
}

#[test]
fn update_entity_returns_404_when_body_is_valid_and_id_is_not_a_uuid() {
    let app = TestApp::spawn();
    app.patch_json("/v1/entities/not-a-uuid", &json!({ "name": "Fine" }))
        .expect_not_found();
    app.patch_json(
        &format!("/v1/entities/{MISSING_UUID}"),
        &json!({ "name": "Fine" }),
    )
    .expect_not_found();
}

#[test]
fn create_entity_returns_401_when_no_credentials_and_body_is_invalid() {
    let app = TestApp::spawn();
    let anon = app.anonymous();
    anon.post_raw("/v1/entities", b"not json")
        .expect_unauthorized(MISSING);
    anon.request("PATCH", "/v1/entities/not-a-uuid", Some(b"[]"), &[])
        .expect_unauthorized(MISSING);
    anon.post_raw("/v1/webhooks", b"{}")
        .expect_unauthorized(MISSING);
}

#[test]
fn resource_paths_return_404_when_id_is_not_a_uuid_or_missing() {
    let app = TestApp::spawn();
    let client = app.client();
    for id in [
        "not-a-uuid",
        "123",
        "0190b5a4-0000-7000-8000-00000000000Z",
        MISSING_UUID,
    ] {
        for (method, path) in [
            ("GET", format!("/v1/entities/{id}")),
            ("DELETE", format!("/v1/entities/{id}")),
            ("GET", format!("/v1/webhooks/{id}")),
            ("DELETE", format!("/v1/webhooks/{id}")),
            ("GET", format!("/v1/webhooks/{id}/deliveries")),
        ] {
            let res = client.request(method, &path, None, &[]);
            assert_eq!(res.status, 404, "{method} {path}: {}", res.text());
            res.expect_not_found();
        }
    }
}

#[test]
fn list_endpoints_return_422_on_limit_when_limit_is_malformed() {
    let app = TestApp::spawn();
    for path in ["/v1/entities", "/v1/webhooks"] {
        for limit in ["0", "501", "x", "-1", "1.5"] {
            let res = app.get(&format!("{path}?limit={limit}"));
            assert_eq!(res.status, 422, "{path} limit={limit}: {}", res.text());
            res.expect_field_error("limit");
        }
        for limit in ["1", "500"] {
            app.get(&format!("{path}?limit={limit}")).expect(200);
        }
        // Unknown parameters are ignored.
        app.get(&format!("{path}?whatever=1")).expect(200);
    }
}

#[test]
fn requests_return_413_before_404_when_body_is_too_large() {
    let app = TestApp::spawn();
    let mut body = b"{}".to_vec();
    body.resize(MIB + 1, b' ');
    let client = app.client();
    client
        .request("PATCH", "/v1/entities/not-a-uuid", Some(&body), &[])
        .expect_error(413);
    client
        .request(
            "PATCH",
            &format!("/v1/entities/{MISSING_UUID}"),
            Some(&body),
            &[],
        )
        .expect_error(413);
    client.post_raw("/v1/webhooks", &body).expect_error(413);
}

#[test]
fn create_entity_returns_401_when_no_credentials_and_body_is_too_large() {
    // The server may answer before it has read the body (as it should) and close the
    // connection, so write the request by hand and read the early answer, like curl.
    use std::io::{Read, Write};
    let app = TestApp::spawn();
    let addr = app
        .anonymous()
        .base_url
        .trim_start_matches("http://")
        .to_string();
    let mut stream = std::net::TcpStream::connect(&addr).expect("connect");
    let head = format!(
        "POST /v1/entities HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        MIB + 1
    );
    stream.write_all(head.as_bytes()).expect("head");
    let _ = stream.write_all(&vec![b' '; MIB + 1]);
    let mut answer = String::new();
    let _ = stream.read_to_string(&mut answer);
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    assert!(answer.contains(MISSING), "{answer}");
}

#[test]
fn list_deliveries_returns_422_before_404_when_limit_is_bad_and_id_is_not_a_uuid() {
    let app = TestApp::spawn();
    app.get("/v1/webhooks/not-a-uuid/deliveries?limit=0")
        .expect_field_error("limit");
    app.get(&format!(
        "/v1/webhooks/{MISSING_UUID}/deliveries?cursor=garbage!!"
    ))
    .expect_field_error("cursor");
}

#[test]
fn requests_return_500_with_a_generic_message_when_the_database_is_broken() {
    let app = TestApp::spawn();
    app.get("/v1/webhooks").expect(200);
    let mut db = TestDb::open(app.data_dir());
    let drop_tables = db.pick(
        "PRAGMA busy_timeout = 5000; DROP TABLE deliveries; DROP TABLE webhooks;",
        // PostgreSQL drops no table another refers to (delivery_attempts) without CASCADE.
        "DROP TABLE deliveries, webhooks CASCADE",
    );
    db.batch(drop_tables);
    drop(db);
    let res = app.get("/v1/webhooks");
    let body = res.expect_error(500);
    assert_eq!(
        body,
        json!({ "message": "Internal server error" }),
        "{}",
        res.text()
    );
    // Authentication and other tables still work.
    app.get("/v1/entities").expect(200);
}

#[test]
fn v1_path_returns_401_when_no_credentials_and_method_is_unrouted() {
    let app = TestApp::spawn();
    let anon = app.anonymous();
    for method in ["OPTIONS", "TRACE"] {
        for path in ["/v1/entities", "/v1/x"] {
            let res = anon.request(method, path, None, &[]);
            assert_eq!(res.status, 401, "{method} {path}: {}", res.text());
            res.expect_unauthorized(MISSING);
        }
    }
}

#[test]
fn a_write_answers_503_with_retry_after_when_the_database_stays_locked() {
    sqlite_only!("SQLite's write lock held by another process past the busy timeout");
    let app = TestApp::spawn();
    let client = app.client();
    client.get("/v1/entities").expect(200); // credentials cached, as a live client's are
                                            // Another process (an import, an operator's sqlite3 shell) holds the write lock
                                            // longer than the service's 10 s busy timeout.
    let db = rusqlite::Connection::open(app.data_dir().join("cfdi-extract.db")).expect("open");
    db.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let res = client.post_json(
        "/v1/entities",
        &json!({ "tax_id": crate::common::app::tax_id("LCK"), "name": "Locked", "ciec_password": "12345678" }),
    );
    db.execute_batch("ROLLBACK").expect("unlock");
    let body = res.expect_error(503);
    assert!(
        body["message"].as_str().is_some_and(|m| m.contains("busy")),
        "{body}"
    );
    assert_eq!(res.header("retry-after"), Some("1"));
    // Nothing was half-done: the same request now succeeds.
    assert_eq!(client.get("/v1/entities").expect(200)["data"], json!([]));
}
