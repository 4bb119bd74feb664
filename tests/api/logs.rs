//! Logs through the binary: `--log-format json` writes one object per line, every
//! response carries `X-Request-Id` (the client's when sane), the request's access line
//! carries the same id, and no secret reaches the log even at `trace`.

use crate::common::app::{eventually, tax_id, TestApp, DEADLINE};
use crate::common::receiver::Receiver;
use serde_json::Value;

fn json_lines(app: &TestApp) -> Vec<Value> {
    app.stderr_lines()
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l:?}")))
        .collect()
}

fn access_line(app: &TestApp, request_id: &str) -> Value {
    eventually(DEADLINE, "the request's access line", || {
        json_lines(app)
            .into_iter()
            .find(|l| l["target"] == "cfdi_extract::access" && l["request_id"] == request_id)
    })
}

#[test]
fn json_logs_carry_the_request_id_route_status_and_duration() {
    let app = TestApp::spawn_with(&["--log-format", "json"]);
    let client = app.client();
    let echoed = client.request(
        "GET",
        "/v1/entities?limit=5",
        None,
        &[("X-Request-Id", "trace-42.a:b")],
    );
    assert_eq!(echoed.status, 200);
    assert_eq!(echoed.header("x-request-id"), Some("trace-42.a:b"));
    let line = access_line(&app, "trace-42.a:b");
    assert_eq!(line["level"], "INFO", "{line}");
    assert_eq!(line["method"], "GET", "{line}");
    assert_eq!(line["route"], "/v1/entities", "{line}");
    assert_eq!(line["path"], "/v1/entities", "no query string: {line}");
    assert_eq!(line["status"], 200, "{line}");
    assert!(
        line["duration_ms"].as_f64().is_some_and(|d| d >= 0.0),
        "{line}"
    );
    assert!(
        line["time"].as_str().is_some_and(|t| t.ends_with('Z')),
        "{line}"
    );
    assert!(line["message"]
        .as_str()
        .is_some_and(|m| m.contains("GET /v1/entities 200")));

    // No id, or one that could break a log line: a new UUID, on error answers too.
    for given in [None, Some("has space\"and quote"), Some(&*"x".repeat(129))] {
        let headers: Vec<(&str, &str)> = given.iter().map(|g| ("X-Request-Id", *g)).collect();
        let r = app
            .anonymous()
            .request("GET", "/no/such/path", None, &headers);
        assert_eq!(r.status, 404);
        let id = r
            .header("x-request-id")
            .expect("an id on every answer")
            .to_string();
        assert!(uuid::Uuid::parse_str(&id).is_ok(), "{given:?} -> {id}");
        let line = access_line(&app, &id);
        assert_eq!(line["route"], "unmatched", "{line}");
        assert_eq!(line["status"], 404, "{line}");
    }
    let unauthorized = app.anonymous().get("/v1/entities");
    assert_eq!(unauthorized.status, 401);
    assert!(unauthorized.header("x-request-id").is_some());
}

#[test]
fn no_secret_reaches_the_log_even_at_trace() {
    let mut app = TestApp::spawn_with(&["--log-format", "json"]);
    app.kill();
    app.env.push(("RUST_LOG".into(), "trace".into()));
    app.start();
    let client = app.client();
    let rx = Receiver::start();
    let hook = client.create_webhook(&rx.url(), None);
    let token = hook["token"].as_str().expect("token").to_string();
    let ciec = "Zq7ciec9";
    let entity = client.create_entity(&tax_id("LOG"), ciec);
    client.wait_for_credential(entity["id"].as_str().expect("id"), "valid");
    rx.wait_for_body("the entity event", DEADLINE, |_| true);
    let lines = json_lines(&app);
    assert!(
        lines
            .iter()
            .any(|l| l["route"] == "/v1/entities" && l["status"] == 201),
        "the requests are logged"
    );
    let all = app.stderr_lines().join("\n");
    let token_body = token.trim_start_matches("whsec_");
    for secret in [ciec, token_body, app.creds.password.as_str()] {
        assert!(!all.contains(secret), "{secret} was logged");
    }
    assert!(
        !all.to_ascii_lowercase().contains("authorization: basic"),
        "a header was logged"
    );
}

/// The JSON line of the job that ran `target_id`, once it has ended.
fn job_line(app: &TestApp, kind: &str, target_id: &str) -> Value {
    eventually(DEADLINE, &format!("the {kind} job's line"), || {
        json_lines(app).into_iter().find(|l| {
            l["target"] == "cfdi_extract::jobs" && l["kind"] == kind && l["target_id"] == target_id
        })
    })
}

#[test]
fn jobs_log_with_the_id_of_the_request_that_queued_them() {
    let app = TestApp::spawn_with(&["--log-format", "json"]);
    let client = app.client();
    let body = serde_json::json!({
        "tax_id": tax_id("LOG"), "name": "Logged SA", "ciec_password": "sandbox1"
    });
    let created = client.request(
        "POST",
        "/v1/entities",
        Some(body.to_string().as_bytes()),
        &[("X-Request-Id", "entity-req-1")],
    );
    assert_eq!(created.status, 201);
    let entity = created.json()["id"].as_str().expect("id").to_string();
    let validation = job_line(&app, "validate_credential", &entity);
    assert_eq!(validation["request_id"], "entity-req-1", "{validation}");
    client.wait_for_credential(&entity, "valid");

    let body = serde_json::json!({
        "entity_id": entity,
        "options": {"period": {"from": "2026-01-05", "to": "2026-01-06"}, "download_type": "issued"}
    });
    let queued = client.request(
        "POST",
        "/v1/extractions",
        Some(body.to_string().as_bytes()),
        &[("X-Request-Id", "my-id-123")],
    );
    assert_eq!(queued.status, 201);
    assert_eq!(queued.header("x-request-id"), Some("my-id-123"));
    let extraction = queued.json()["id"].as_str().expect("id").to_string();
    let line = job_line(&app, "run_extraction", &extraction);
    assert_eq!(line["request_id"], "my-id-123", "{line}");
    assert_eq!(line["outcome"], "done", "{line}");
    assert_eq!(line["level"], "INFO", "{line}");
    assert!(line["duration_ms"].as_u64().is_some(), "{line}");
    // Only the lines of that request's work carry its id.
    let tagged: Vec<Value> = json_lines(&app)
        .into_iter()
        .filter(|l| l["request_id"] == "my-id-123")
        .collect();
    assert!(
        tagged.iter().all(|l| l["target"] == "cfdi_extract::access"
            || l["target_id"] == extraction.as_str()
            || l["message"]
                .as_str()
                .is_some_and(|m| m.contains(&extraction))),
        "{tagged:?}"
    );
    // A request that queues nothing leaves no id behind on the workers.
    let listed = client.request(
        "GET",
        "/v1/extractions",
        None,
        &[("X-Request-Id", "list-9")],
    );
    assert_eq!(listed.status, 200);
    access_line(&app, "list-9");
    assert_eq!(
        json_lines(&app)
            .iter()
            .filter(|l| l["request_id"] == "list-9")
            .count(),
        1,
        "only its access line"
    );
}

/// A path nobody serves is the client's mistake: with `RUST_LOG=info` (the level an
/// operator sets to see more) it is the access line's 404, not an ERROR from the router.
#[test]
fn unknown_paths_are_not_logged_as_errors() {
    let mut app = TestApp::spawn_with(&["--log-format", "json"]);
    app.kill();
    app.env.push(("RUST_LOG".into(), "info".into()));
    app.start();
    let mut ids = vec![];
    for (method, path) in [
        ("GET", "/random"),
        ("POST", "/wp-login.php"),
        ("GET", "/v1/nope"),
    ] {
        let r = app.anonymous().request(method, path, None, &[]);
        assert!(r.status == 404 || r.status == 401, "{path}: {}", r.status);
        ids.push(r.header("x-request-id").expect("an id").to_string());
    }
    for id in &ids {
        access_line(&app, id);
    }
    let loud: Vec<Value> = json_lines(&app)
        .into_iter()
        .filter(|l| l["level"] == "ERROR" || l["target"] == "rocket::server::_")
        .collect();
    assert!(loud.is_empty(), "{loud:#?}");
}
