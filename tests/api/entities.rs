//! `/v1/entities`: validation, uniqueness, lists, updates, credential validation, and
//! the CIEC password's secrecy.

use crate::common::app::{files_under, quiet, tax_id, TestApp};
use crate::common::engine::database_holds;
use serde_json::{json, Value};
use std::collections::HashSet;
use std::time::Duration;

const ENTITY_FIELDS: [&str; 6] = [
    "id",
    "tax_id",
    "name",
    "credential_status",
    "created_at",
    "updated_at",
];

/// The entity object has exactly its documented fields (so never `ciec_password`).
#[track_caller]
fn assert_entity_shape(e: &Value) {
    let obj = e
        .as_object()
        .unwrap_or_else(|| panic!("an entity is an object: {e}"));
    let mut keys: Vec<&str> = obj.keys().map(String::as_str).collect();
    keys.sort_unstable();
    let mut expected = ENTITY_FIELDS.to_vec();
    expected.sort_unstable();
    assert_eq!(keys, expected, "entity fields: {e}");
    assert!(
        uuid::Uuid::parse_str(e["id"].as_str().unwrap_or("")).is_ok(),
        "id is a UUID: {e}"
    );
    for ts in ["created_at", "updated_at"] {
        assert_timestamp(&e[ts]);
    }
}

/// `2026-11-21T10:15:30.123456Z`.
#[track_caller]
pub fn assert_timestamp(v: &Value) {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("timestamp is a string: {v}"));
    let b = s.as_bytes();
    let ok = b.len() == 27
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[26] == b'Z'
        && chrono::DateTime::parse_from_rfc3339(s).is_ok();
    assert!(ok, "timestamp format YYYY-MM-DDTHH:MM:SS.ffffffZ: {s:?}");
}

fn entity_body(tax_id: &str) -> Value {
    json!({ "tax_id": tax_id, "name": "Comercializadora SA", "ciec_password": "12345678" })
}

#[test]
fn create_entity_returns_201_pending_without_password() {
    let app = TestApp::spawn();
    let t = tax_id("CRE");
    let res = app.post_json("/v1/entities", &entity_body(&t));
    let e = res.expect(201);
    assert_entity_shape(&e);
    assert_eq!(e["tax_id"], t.as_str(), "{e}");
    assert_eq!(e["name"], "Comercializadora SA", "{e}");
    assert_eq!(e["credential_status"], "pending", "{e}");
    assert!(!res.text().contains("12345678"), "{}", res.text());
}

#[test]
fn create_entity_returns_422_on_the_field_when_a_rule_is_broken() {
    let app = TestApp::spawn();
    let ok = || entity_body(&tax_id("VAL"));
    let with = |field: &str, v: Value| {
        let mut b = ok();
        b[field] = v;
        b
    };
    let without = |field: &str| {
        let mut b = ok();
        b.as_object_mut().expect("object").remove(field);
        b
    };
    let cases: Vec<(Value, &str)> = vec![
        (with("tax_id", json!("ABC01010112")), "tax_id"), // 11
        (with("tax_id", json!("ABCD0101011234")), "tax_id"), // 14
        (with("tax_id", json!("")), "tax_id"),
        (with("tax_id", json!("   ")), "tax_id"),
        (with("tax_id", Value::Null), "tax_id"),
        (without("tax_id"), "tax_id"),
        (with("tax_id", json!(123456789012u64)), "tax_id"),
        (with("tax_id", json!(["ABC010101ABC"])), "tax_id"),
        (with("name", json!("x".repeat(256))), "name"),
        (with("name", json!("")), "name"),
        (with("name", json!(" \t ")), "name"),
        (without("name"), "name"),
        (with("name", json!(42)), "name"),
        (with("ciec_password", json!("1234567")), "ciec_password"), // 7
        (with("ciec_password", json!("123456789")), "ciec_password"), // 9
        (with("ciec_password", json!("")), "ciec_password"),
        (without("ciec_password"), "ciec_password"),
        (with("ciec_password", json!(12345678)), "ciec_password"),
    ];
    for (body, field) in cases {
        let res = app.post_json("/v1/entities", &body);
        assert_eq!(
            res.status,
            422,
            "{body} should fail on {field}: {}",
            res.text()
        );
        res.expect_field_error(field);
    }
    // Every broken rule is reported at once.
    let res = app.post_json("/v1/entities", &json!({}));
    for field in ["tax_id", "name", "ciec_password"] {
        res.expect_field_error(field);
    }
    // Nothing was created.
    let list = app.get("/v1/entities").expect(200);
    assert_eq!(list["data"], json!([]), "{list}");
}

#[test]
fn create_entity_returns_422_when_a_tax_id_only_looks_like_an_rfc() {
    let app = TestApp::spawn();
    let real = tax_id("LOK");
    app.client().create_entity(&real, "12345678");
    let zero_width = format!("{}\u{200B}", &real);
    let rtl_override = format!("\u{202E}{}", &real[1..]);
    let cyrillic = real.replacen('O', "О", 1);
    for t in [zero_width, rtl_override, cyrillic, "ßßßßßßßßßßßß".into()] {
        let messages = app
            .post_json("/v1/entities", &entity_body(&t))
            .expect_field_error("tax_id");
        assert!(
            messages.iter().any(|m| m.starts_with("must be")),
            "{t:?}: {messages:?}"
        );
    }
    let list = app.get("/v1/entities").expect(200);
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "{list}");
    // Normalized first: lower case and blanks around are the same RFC.
    app.post_json(
        "/v1/entities",
        &entity_body(&format!(" {} ", real.to_lowercase())),
    )
    .expect_field_error("tax_id"); // "has already been taken"
}

#[test]
fn create_entity_returns_201_when_values_are_at_the_boundaries() {
    let app = TestApp::spawn();
    let t12 = tax_id("BND"); // 12 characters
    let t13 = format!("P{}", tax_id("BND")); // 13 characters: a person's RFC
    assert_eq!((t12.len(), t13.len()), (12, 13));
    for t in [&t12, &t13] {
        app.post_json(
            "/v1/entities",
            &json!({ "tax_id": t, "name": "x".repeat(255), "ciec_password": "abcdefgh" }),
        )
        .expect(201);
    }
    // Characters, not bytes: multi-byte names and passwords.
    let e = app
        .post_json(
            "/v1/entities",
            &json!({ "tax_id": format!("ÑAB{}", &tax_id("XXX")[3..]), "name": "ñ".repeat(255), "ciec_password": "ññññññññ" }),
        )
        .expect(201);
    assert_eq!(
        e["name"].as_str().map(|s| s.chars().count()),
        Some(255),
        "{e}"
    );
}

#[test]
fn create_entity_returns_422_taken_when_tax_id_exists_in_the_organization() {
    let app = TestApp::spawn();
    let t = tax_id("DUP");
    app.post_json("/v1/entities", &entity_body(&t)).expect(201);
    let messages = app
        .post_json("/v1/entities", &entity_body(&t))
        .expect_field_error("tax_id");
    assert_eq!(messages, ["has already been taken"]);
    // Another organization may use the same tax id.
    let other = app.create_user_in_new_org();
    app.client_as(&other)
        .post_json("/v1/entities", &entity_body(&t))
        .expect(201);
}

#[test]
fn create_entity_creates_exactly_one_when_10_requests_race_for_a_tax_id() {
    let app = TestApp::spawn();
    let t = tax_id("RAC");
    let client = app.client();
    let handles: Vec<_> = (0..10)
        .map(|_| {
            let (client, body) = (client.clone(), entity_body(&t));
            std::thread::spawn(move || client.post_json("/v1/entities", &body))
        })
        .collect();
    let results: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .collect();
    let created = results.iter().filter(|r| r.status == 201).count();
    assert_eq!(
        created,
        1,
        "statuses: {:?}",
        results
            .iter()
            .map(|r| (r.status, r.text()))
            .collect::<Vec<_>>()
    );
    for r in results.iter().filter(|r| r.status != 201) {
        assert_eq!(r.expect_field_error("tax_id"), ["has already been taken"]);
    }
    let list = app.get("/v1/entities").expect(200);
    assert_eq!(list["data"].as_array().map(Vec::len), Some(1), "{list}");
}

#[test]
fn list_entities_pages_through_all_when_limit_is_2() {
    let app = TestApp::spawn();
    let mut ids = vec![];
    for _ in 0..5 {
        let e = app.client().create_entity(&tax_id("PAG"), "12345678");
        ids.push(e["id"].as_str().expect("id").to_string());
    }
    let first = app.get("/v1/entities?limit=2").expect(200);
    assert_eq!(first["data"].as_array().map(Vec::len), Some(2), "{first}");
    assert!(first["next_cursor"].is_string(), "{first}");

    let all = app.client().list_all("/v1/entities", 2);
    let seen: Vec<String> = all
        .iter()
        .map(|e| {
            assert_entity_shape(e);
            e["id"].as_str().expect("id").to_string()
        })
        .collect();
    let unique: HashSet<&String> = seen.iter().collect();
    assert_eq!(unique.len(), seen.len(), "no duplicates: {seen:?}");
    assert_eq!(unique.len(), 5, "all seen: {seen:?}");
    // Newest first.
    let mut newest_first = ids.clone();
    newest_first.reverse();
    assert_eq!(seen, newest_first, "order");

    // Default page: everything, no next cursor.
    let page = app.get("/v1/entities").expect(200);
    assert_eq!(page["data"].as_array().map(Vec::len), Some(5), "{page}");
    assert!(page["next_cursor"].is_null(), "{page}");
    // A page exactly as long as the rest has no next cursor.
    let page = app.get("/v1/entities?limit=5").expect(200);
    assert!(page["next_cursor"].is_null(), "{page}");
}

#[test]
fn list_entities_returns_422_on_the_parameter_when_limit_or_cursor_is_bad() {
    let app = TestApp::spawn();
    for limit in ["0", "501", "x", ""] {
        let res = app.get(&format!("/v1/entities?limit={limit}"));
        if limit.is_empty() && res.status == 200 {
            continue; // an empty value may count as absent
        }
        assert_eq!(res.status, 422, "limit={limit:?}: {}", res.text());
        res.expect_field_error("limit");
    }
    for cursor in ["garbage!!", "bm90LWpzb24", "e30", "WyJhIiwiYiJd"] {
        let res = app.get(&format!("/v1/entities?cursor={cursor}"));
        assert_eq!(res.status, 422, "cursor={cursor}: {}", res.text());
        res.expect_field_error("cursor");
    }
    let res = app.get("/v1/entities?limit=0&cursor=garbage!!");
    res.expect_field_error("limit");
    res.expect_field_error("cursor");
}

#[test]
fn get_entity_returns_the_entity_when_it_exists() {
    let app = TestApp::spawn();
    let created = app.client().create_entity(&tax_id("GET"), "12345678");
    let id = created["id"].as_str().expect("id");
    let got = app.get(&format!("/v1/entities/{id}")).expect(200);
    assert_entity_shape(&got);
    assert_eq!(got["id"], created["id"]);
    assert_eq!(got["tax_id"], created["tax_id"]);
    // Upper-case UUID in the path names the same entity.
    app.get(&format!("/v1/entities/{}", id.to_uppercase()))
        .expect(200);
}

#[test]
fn update_entity_changes_the_name_when_name_is_given() {
    let app = TestApp::spawn();
    let e = app.client().create_entity(&tax_id("UPD"), "12345678");
    let id = e["id"].as_str().expect("id");
    let valid = app.client().wait_for_credential(id, "valid");
    let updated = app
        .patch_json(
            &format!("/v1/entities/{id}"),
            &json!({ "name": "New Name" }),
        )
        .expect(200);
    assert_entity_shape(&updated);
    assert_eq!(updated["name"], "New Name");
    assert_eq!(
        updated["credential_status"], "valid",
        "a name change keeps the status"
    );
    assert_eq!(updated["tax_id"], e["tax_id"]);
    assert_eq!(updated["created_at"], e["created_at"]);
    assert!(
        updated["updated_at"].as_str() >= valid["updated_at"].as_str(),
        "{updated}"
    );
    let got = app.get(&format!("/v1/entities/{id}")).expect(200);
    assert_eq!(got["name"], "New Name");
    // An empty patch changes nothing and succeeds.
    let same = app
        .patch_json(&format!("/v1/entities/{id}"), &json!({}))
        .expect(200);
    assert_eq!(same["name"], "New Name");
}

#[test]
fn update_entity_returns_422_when_patch_is_invalid() {
    let app = TestApp::spawn();
    let e = app.client().create_entity(&tax_id("BAD"), "12345678");
    let path = format!("/v1/entities/{}", e["id"].as_str().expect("id"));
    let cases = [
        (json!({ "tax_id": tax_id("NEW") }), "tax_id"),
        (json!({ "tax_id": e["tax_id"] }), "tax_id"),
        (json!({ "name": "x".repeat(256) }), "name"),
        (json!({ "name": "  " }), "name"),
        (json!({ "ciec_password": "1234567" }), "ciec_password"),
        (json!({ "ciec_password": "123456789" }), "ciec_password"),
    ];
    for (body, field) in cases {
        let res = app.patch_json(&path, &body);
        assert_eq!(res.status, 422, "{body}: {}", res.text());
        res.expect_field_error(field);
    }
    let got = app.get(&path).expect(200);
    assert_eq!(got["tax_id"], e["tax_id"]);
    assert_eq!(got["name"], e["name"]);
}

#[test]
fn update_entity_sets_pending_then_valid_when_ciec_password_changes() {
    let app = TestApp::spawn();
    let e = app.client().create_entity(&tax_id("PWC"), "12345678");
    let id = e["id"].as_str().expect("id");
    app.client().wait_for_credential(id, "valid");
    let res = app.patch_json(
        &format!("/v1/entities/{id}"),
        &json!({ "ciec_password": "87654321" }),
    );
    let updated = res.expect(200);
    assert_eq!(updated["credential_status"], "pending", "{updated}");
    assert!(!res.text().contains("87654321"), "{}", res.text());
    app.client().wait_for_credential(id, "valid");

    // A bad password ends `invalid`, and a good one brings it back to `valid`.
    app.patch_json(
        &format!("/v1/entities/{id}"),
        &json!({ "ciec_password": "badpass9" }),
    )
    .expect(200);
    app.client().wait_for_credential(id, "invalid");
    let res = app
        .patch_json(
            &format!("/v1/entities/{id}"),
            &json!({ "ciec_password": "goodpass" }),
        )
        .expect(200);
    assert_eq!(res["credential_status"], "pending", "{res}");
    app.client().wait_for_credential(id, "valid");
}

#[test]
fn delete_entity_returns_204_then_404_when_entity_exists() {
    let app = TestApp::spawn();
    let e = app.client().create_entity(&tax_id("DEL"), "12345678");
    let path = format!("/v1/entities/{}", e["id"].as_str().expect("id"));
    let res = app.delete(&path);
    assert_eq!(res.status, 204, "{}", res.text());
    assert!(res.body.is_empty(), "204 has no body: {}", res.text());
    app.get(&path).expect_not_found();
    app.delete(&path).expect_not_found();
    app.patch_json(&path, &json!({ "name": "x" }))
        .expect_not_found();
    let list = app.get("/v1/entities").expect(200);
    assert_eq!(list["data"], json!([]), "{list}");
    // The tax id is free again.
    app.post_json(
        "/v1/entities",
        &entity_body(e["tax_id"].as_str().expect("tax_id")),
    )
    .expect(201);
}

#[test]
fn credential_becomes_valid_when_password_is_accepted() {
    let app = TestApp::spawn();
    let e = app.client().create_entity(&tax_id("VLD"), "12345678");
    let valid = app
        .client()
        .wait_for_credential(e["id"].as_str().expect("id"), "valid");
    assert_entity_shape(&valid);
}

#[test]
fn credential_becomes_invalid_when_password_starts_with_bad() {
    let app = TestApp::spawn();
    let e = app.client().create_entity(&tax_id("INV"), "badpass1");
    let id = e["id"].as_str().expect("id");
    app.client().wait_for_credential(id, "invalid");
}

#[test]
fn credential_stays_pending_when_tax_authority_is_unreachable() {
    let app = TestApp::spawn();
    let off = app.client().create_entity(&tax_id("OFF"), "12345678");
    let off_id = off["id"].as_str().expect("id");
    // Others validate meanwhile, and after them the unreachable one is still pending.
    for _ in 0..3 {
        let e = app.client().create_entity(&tax_id("ONL"), "12345678");
        app.client()
            .wait_for_credential(e["id"].as_str().expect("id"), "valid");
    }
    let bad = app.client().create_entity(&tax_id("ONL"), "badpass2");
    app.client()
        .wait_for_credential(bad["id"].as_str().expect("id"), "invalid");
    let still = app.get(&format!("/v1/entities/{off_id}")).expect(200);
    assert_eq!(still["credential_status"], "pending", "{still}");
    // The validation is retried with backoff (1 s, 2 s, ...); it never leaves pending.
    let status = quiet(Duration::from_millis(1200), "the credential status", || {
        app.get(&format!("/v1/entities/{off_id}")).expect(200)["credential_status"].clone()
    });
    assert_eq!(status, "pending");
    assert!(!app.output().contains("12345678"), "{}", app.output());
}

#[test]
fn ciec_password_is_never_stored_in_plaintext_when_entity_is_created() {
    let app = TestApp::spawn();
    let secret = "Zq9!xY7w";
    let e = app.client().create_entity(&tax_id("SEC"), secret);
    let id = e["id"].as_str().expect("id");
    app.client().wait_for_credential(id, "valid");
    let patched = "Pw8#kL2m";
    app.patch_json(
        &format!("/v1/entities/{id}"),
        &json!({ "ciec_password": patched }),
    )
    .expect(200);
    app.client().wait_for_credential(id, "valid");

    let files = files_under(app.data_dir());
    assert!(
        files.iter().any(|f| f.to_string_lossy().ends_with(".db")),
        "the database is in the data dir: {files:?}"
    );
    for file in &files {
        let bytes = std::fs::read(file).unwrap_or_default();
        for pw in [secret, patched] {
            assert!(
                !bytes.windows(pw.len()).any(|w| w == pw.as_bytes()),
                "{pw:?} appears in plaintext in {}",
                file.display()
            );
        }
    }
    for pw in [secret, patched] {
        assert!(
            !database_holds(app.data_dir(), pw),
            "{pw:?} appears in plaintext in the database"
        );
    }
    let output = app.output();
    for pw in [secret, patched] {
        assert!(!output.contains(pw), "{pw:?} appears in the log:\n{output}");
    }
    // And never in a response.
    for body in [
        app.get(&format!("/v1/entities/{id}")).text(),
        app.get("/v1/entities").text(),
    ] {
        assert!(!body.contains(secret) && !body.contains(patched), "{body}");
        assert!(!body.contains("ciec_password"), "{body}");
    }
}
