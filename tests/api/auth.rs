//! HTTP Basic authentication on `/v1`.

use crate::common::app::{basic, TestApp, INVALID, MISSING};

const ENTITIES: &str = "/v1/entities";

#[test]
fn list_entities_returns_401_missing_when_no_authorization_header() {
    let app = TestApp::spawn();
    app.anonymous().get(ENTITIES).expect_unauthorized(MISSING);
}

#[test]
fn list_entities_returns_401_missing_when_scheme_is_not_basic() {
    let app = TestApp::spawn();
    let anon = app.anonymous();
    for value in ["Bearer abcdef", "Digest username=\"x\"", "Token", ""] {
        let res = anon.request("GET", ENTITIES, None, &[("Authorization", value)]);
        assert_eq!(res.status, 401, "{value:?}: {}", res.text());
        res.expect_unauthorized(MISSING);
    }
}

#[test]
fn list_entities_returns_401_invalid_when_basic_value_cannot_be_decoded() {
    let app = TestApp::spawn();
    let anon = app.anonymous();
    for value in [
        "Basic !!!not-base64!!!".to_string(),
        "Basic".to_string(),
        // Decodes, but has no `:` separating email and password.
        format!("Basic {}", b64("no-colon-here")),
        // Decodes to bytes that are not UTF-8.
        format!("Basic {}", b64_bytes(&[0xff, 0xfe, b':', 0xfd])),
    ] {
        let res = anon.request("GET", ENTITIES, None, &[("Authorization", &value)]);
        assert_eq!(res.status, 401, "{value:?}: {}", res.text());
        res.expect_unauthorized(INVALID);
    }
}

#[test]
fn list_entities_returns_401_invalid_when_email_is_unknown() {
    let app = TestApp::spawn();
    let res = app.request(
        "GET",
        ENTITIES,
        Some(("nobody@example.com", &app.creds.password)),
        None,
        &[],
    );
    res.expect_unauthorized(INVALID);
    assert_eq!(
        res.json()["message"],
        INVALID,
        "exact message; body: {}",
        res.text()
    );
}

#[test]
fn list_entities_returns_401_invalid_when_password_is_wrong() {
    let app = TestApp::spawn();
    let wrong = format!("{}x", app.creds.password);
    let res = app.request("GET", ENTITIES, Some((&app.creds.email, &wrong)), None, &[]);
    res.expect_unauthorized(INVALID);
    assert_eq!(res.json()["message"], INVALID, "body: {}", res.text());
    // Right after a success, a wrong password is still refused (no cache by email).
    app.get(ENTITIES).expect(200);
    app.request("GET", ENTITIES, Some((&app.creds.email, &wrong)), None, &[])
        .expect_unauthorized(INVALID);
}

#[test]
fn list_entities_returns_200_when_credentials_are_right() {
    let app = TestApp::spawn();
    let body = app.get(ENTITIES).expect(200);
    assert!(body["data"].is_array(), "body: {body}");
    // The scheme name is case-insensitive.
    let value = basic(&app.creds.email, &app.creds.password).replacen("Basic", "basic", 1);
    app.anonymous()
        .request("GET", ENTITIES, None, &[("Authorization", &value)])
        .expect(200);
}

#[test]
fn list_entities_returns_200_when_email_case_differs() {
    let app = TestApp::spawn();
    let upper = app.creds.email.to_uppercase();
    app.request(
        "GET",
        ENTITIES,
        Some((&upper, &app.creds.password)),
        None,
        &[],
    )
    .expect(200);
}

#[test]
fn password_change_takes_effect_on_next_request_when_set_with_cli_while_serving() {
    let app = TestApp::spawn();
    // Warm the verification cache with the old password.
    app.get(ENTITIES).expect(200);
    app.get(ENTITIES).expect(200);

    let new_password = "a brand new password";
    app.cli(
        &[
            "user",
            "set-password",
            "--email",
            &app.creds.email,
            "--password-stdin",
        ],
        Some(&format!("{new_password}\n")),
    )
    .expect_success("user set-password");

    app.request(
        "GET",
        ENTITIES,
        Some((&app.creds.email, &app.creds.password)),
        None,
        &[],
    )
    .expect_unauthorized(INVALID);
    app.request(
        "GET",
        ENTITIES,
        Some((&app.creds.email, new_password)),
        None,
        &[],
    )
    .expect(200);
    // And the old one stays refused.
    app.request(
        "GET",
        ENTITIES,
        Some((&app.creds.email, &app.creds.password)),
        None,
        &[],
    )
    .expect_unauthorized(INVALID);
}

#[test]
fn concurrent_requests_all_succeed_when_credentials_are_fresh() {
    let app = TestApp::spawn();
    // A user the server has never verified.
    let fresh = app.create_user_in_new_org();
    let client = app.client_as(&fresh);
    let handles: Vec<_> = (0..64)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || client.get(ENTITIES))
        })
        .collect();
    for h in handles {
        let res = h.join().expect("request thread");
        res.expect(200);
    }
}

#[test]
fn concurrent_requests_with_a_wrong_password_are_all_refused() {
    let app = TestApp::spawn();
    let wrong = crate::common::app::Creds {
        password: "not the password".into(),
        ..app.creds.clone()
    };
    let client = app.client_as(&wrong);
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let client = client.clone();
            std::thread::spawn(move || client.get(ENTITIES))
        })
        .collect();
    for h in handles {
        h.join()
            .expect("request thread")
            .expect_unauthorized(INVALID);
    }
}

fn b64(s: &str) -> String {
    b64_bytes(s.as_bytes())
}

fn b64_bytes(b: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(b)
}

#[test]
fn list_entities_returns_200_when_password_contains_colons() {
    let app = TestApp::spawn();
    let creds = crate::common::app::Creds {
        org_id: app.creds.org_id.clone(),
        email: crate::common::app::email("colon"),
        password: "pa:ss:wörd".into(),
    };
    crate::common::app::add_user(app.data_dir(), &creds);
    app.client_as(&creds).get(ENTITIES).expect(200);
    app.request("GET", ENTITIES, Some((&creds.email, "pa:ss")), None, &[])
        .expect_unauthorized(INVALID);
}

/// Sends `password` for `creds.email` with extra headers; returns the status.
fn login_status(
    app: &TestApp,
    creds: &crate::common::app::Creds,
    password: &str,
    headers: &[(&str, &str)],
) -> u16 {
    let auth = basic(&creds.email, password);
    let mut all = vec![("Authorization", auth.as_str())];
    all.extend_from_slice(headers);
    app.anonymous().request("GET", ENTITIES, None, &all).status
}

/// Enough wrong passwords to throttle one email from one address (20 per minute).
const FAILURES: usize = 20;

#[test]
fn throttle_ignores_forwarded_headers_and_spares_other_emails_without_a_trusted_proxy() {
    let app = TestApp::spawn();
    let victim = app.create_user_in_new_org();
    let bystander = app.create_user_in_new_org();
    // Varying X-Real-IP / X-Forwarded-For used to give each attempt a fresh address.
    for i in 0..FAILURES {
        let spoofed = format!("203.0.113.{i}");
        let headers = [
            ("X-Real-IP", spoofed.as_str()),
            ("X-Forwarded-For", spoofed.as_str()),
        ];
        assert_eq!(login_status(&app, &victim, "wrong-password", &headers), 401);
    }
    // The address is throttled for that email: even the right password is not checked.
    assert_eq!(
        login_status(
            &app,
            &victim,
            &victim.password,
            &[("X-Real-IP", "198.51.100.7")]
        ),
        401
    );
    // Another user at the same address is not locked out.
    assert_eq!(
        login_status(&app, &bystander, &bystander.password, &[]),
        200
    );
}

#[test]
fn throttle_keys_on_the_forwarded_client_behind_a_trusted_proxy() {
    let app = TestApp::spawn_with(&["--trusted-proxy", "127.0.0.1"]);
    let user = app.create_user_in_new_org();
    let attacker = [("X-Forwarded-For", "198.51.100.66, 203.0.113.1")];
    for _ in 0..FAILURES {
        assert_eq!(login_status(&app, &user, "wrong-password", &attacker), 401);
    }
    assert_eq!(login_status(&app, &user, &user.password, &attacker), 401);
    // The same user from another client behind the proxy still gets in.
    assert_eq!(
        login_status(&app, &user, &user.password, &[("X-Real-IP", "203.0.113.2")]),
        200
    );
}
