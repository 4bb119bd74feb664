//! The anti-captcha.com resolver against a local fake of its API, alone and in a login.

use crate::common::fake_http::{Request, Response, Server};
use crate::common::fake_sat_portal::{FakePortal, Setup};
use crate::portal::support::*;
use base64::Engine as _;
use cfdi_extract::sat::ciec::Authority;
use cfdi_extract::sat::ciec::{
    AntiCaptchaResolver, CaptchaConfig, CaptchaError, CaptchaResolver, Portal,
};
use cfdi_extract::sat::SatError;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::Duration;

const KEY: &str = "test-client-key";

#[derive(Default)]
struct Api {
    /// taskId -> (answer, getTaskResult calls so far)
    tasks: Vec<(String, u32)>,
    /// Polls answered "processing" before "ready"; `u32::MAX` never gets ready.
    processing_polls: u32,
    calls: Vec<String>,
}

fn fake_api(processing_polls: u32) -> (Server, Arc<Mutex<Api>>) {
    let api = Arc::new(Mutex::new(Api {
        processing_polls,
        ..Api::default()
    }));
    let shared = api.clone();
    let server = Server::start(Arc::new(move |req: &Request| {
        let mut api = shared.lock().expect("api");
        api.calls.push(req.path().to_string());
        let body: Value = serde_json::from_slice(&req.body).unwrap_or(Value::Null);
        let answer = if body["clientKey"] != KEY {
            json!({"errorId": 1, "errorCode": "ERROR_KEY_DOES_NOT_EXIST", "errorDescription": "bad key"})
        } else if req.path() == "/createTask" {
            assert_eq!(body["task"]["type"], "ImageToTextTask");
            let image = base64::engine::general_purpose::STANDARD
                .decode(body["task"]["body"].as_str().unwrap_or(""))
                .expect("base64 image");
            let text = String::from_utf8_lossy(&image).to_string();
            let answer = text.strip_prefix("captcha:").unwrap_or(&text).to_string();
            api.tasks.push((answer, 0));
            json!({"errorId": 0, "taskId": api.tasks.len()})
        } else if req.path() == "/getTaskResult" {
            let id = body["taskId"].as_u64().unwrap_or(0) as usize;
            let limit = api.processing_polls;
            match api.tasks.get_mut(id.wrapping_sub(1)) {
                Some((answer, polls)) => {
                    *polls += 1;
                    if *polls <= limit {
                        json!({"errorId": 0, "status": "processing"})
                    } else {
                        json!({"errorId": 0, "status": "ready", "solution": {"text": answer.clone()}})
                    }
                }
                None => json!({"errorId": 16, "errorCode": "ERROR_NO_SUCH_CAPCHA_ID"}),
            }
        } else {
            return Response::new(404, "text/plain", "no");
        };
        Response::new(200, "application/json", answer.to_string())
    }));
    (server, api)
}

fn resolver(server: &Server, key: &str, timeout: Duration) -> AntiCaptchaResolver {
    AntiCaptchaResolver::new(&server.url(""), key).with_timings(
        Duration::from_millis(20),
        Duration::from_millis(10),
        timeout,
    )
}

#[test]
fn the_resolver_creates_a_task_and_polls_until_ready() {
    let (server, api) = fake_api(2);
    let r = resolver(&server, KEY, Duration::from_secs(5));
    assert_eq!(r.resolve(b"captcha:XY12Z9").expect("solved"), "XY12Z9");
    let api = api.lock().expect("api");
    assert_eq!(
        api.calls,
        [
            "/createTask",
            "/getTaskResult",
            "/getTaskResult",
            "/getTaskResult"
        ]
    );
}

#[test]
fn api_errors_and_slow_tasks_are_resolver_errors() {
    let (server, _) = fake_api(0);
    let err = resolver(&server, "wrong-key", Duration::from_secs(5))
        .resolve(b"captcha:A")
        .expect_err("bad key");
    assert!(
        matches!(&err, CaptchaError::Failed(d) if d.contains("ERROR_KEY_DOES_NOT_EXIST")),
        "{err:?}"
    );
    assert!(
        !err.to_string().contains("wrong-key"),
        "the key is never in a message"
    );

    let (server, _) = fake_api(u32::MAX);
    let err = resolver(&server, KEY, Duration::from_millis(200))
        .resolve(b"captcha:A")
        .expect_err("slow");
    assert!(matches!(err, CaptchaError::Timeout(_)), "{err:?}");
}

#[test]
fn a_login_solves_its_captcha_through_the_service() {
    let (server, api) = fake_api(1);
    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let captcha =
        CaptchaConfig::AntiCaptcha(Arc::new(resolver(&server, KEY, Duration::from_secs(5))));
    Portal::new(config(&fake, captcha))
        .validate(&credential(RFC, CIEC))
        .expect("validates");
    assert_eq!(api.lock().expect("api").tasks[0].0, "C001X");

    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let captcha = CaptchaConfig::AntiCaptcha(Arc::new(resolver(
        &server,
        "wrong-key",
        Duration::from_secs(5),
    )));
    let err = Portal::new(config(&fake, captcha))
        .validate(&credential(RFC, CIEC))
        .expect_err("no answer");
    assert!(matches!(err, SatError::Unavailable(_)), "{err:?}");
    fake.seen(|s| assert_eq!((s.captchas_served, s.login_posts), (3, 0)));
}
