//! A whole extraction through the service binary against the fake portal:
//! `serve --sat portal --sat-login-url ... --sat-portal-url ... --captcha-command ...`.

use crate::common::app::eventually;
use crate::common::engine::OnTestDatabase;
use crate::common::fake_sat_portal::{FakePortal, Setup};
use crate::portal::support::*;
use base64::Engine as _;
use serde_json::{json, Value};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_cfdi-extract");
const EMAIL: &str = "portal-test@example.com";
const PASSWORD: &str = "portal-test-password";

/// The server process, killed (by its handle) when the test ends.
struct Served(Child);

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn cli(data: &Path, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new(BIN)
        .args(args)
        .arg("--data-dir")
        .arg(data)
        .env_remove("RUST_LOG")
        .on_test_database()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the binary");
    if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
        std::io::Write::write_all(&mut input, text.as_bytes()).expect("stdin");
    }
    let out = child.wait_with_output().expect("cli");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn serve(data: &Path, extra: &[&str]) -> (Served, String) {
    let mut child = Command::new(BIN)
        .arg("serve")
        .arg("--data-dir")
        .arg(data)
        .args(["--address", "127.0.0.1", "--port", "0", "--workers", "2"])
        // The invoices it stores would otherwise be checked at the SAT's own status service.
        .args(["--sat-status-rate", "0"])
        .args(extra)
        .env_remove("RUST_LOG")
        .on_test_database()
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn serve");
    let stdout = child.stdout.take().expect("stdout");
    let served = Served(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(url) = line.strip_prefix("listening on ") {
                let _ = tx.send(url.trim().to_string());
            }
        }
    });
    let base = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the server starts");
    (served, base)
}

struct Api {
    base: String,
    agent: ureq::Agent,
    auth: String,
}

impl Api {
    fn new(base: String) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build();
        let token = base64::engine::general_purpose::STANDARD.encode(format!("{EMAIL}:{PASSWORD}"));
        Self {
            base,
            agent: ureq::Agent::new_with_config(config),
            auth: format!("Basic {token}"),
        }
    }

    fn get(&self, path: &str) -> Value {
        let mut r = self
            .agent
            .get(format!("{}{path}", self.base))
            .header("Authorization", &self.auth)
            .call()
            .expect("GET");
        assert_eq!(r.status().as_u16(), 200, "GET {path}");
        r.body_mut().read_json().expect("json")
    }

    fn post(&self, path: &str, body: Value) -> Value {
        let mut r = self
            .agent
            .post(format!("{}{path}", self.base))
            .header("Authorization", &self.auth)
            .send_json(&body)
            .expect("POST");
        assert_eq!(r.status().as_u16(), 201, "POST {path}");
        r.body_mut().read_json().expect("json")
    }

    fn wait_for(&self, path: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
        eventually(Duration::from_secs(60), what, || {
            Some(self.get(path)).filter(|v| done(v))
        })
    }
}

/// The service on a data directory under `tmp`, with an organization and its user,
/// speaking to `fake` as the SAT's portal.
fn portal_service(fake: &FakePortal, tmp: &Path) -> (Served, Api) {
    let data = tmp.join("data");
    let script = solver_script(tmp, 0, 1); // the first answer is wrong
    let org = cli(&data, &["org", "create", "Portal Org"], None);
    cli(
        &data,
        &[
            "user",
            "create",
            "--org",
            &org,
            "--email",
            EMAIL,
            "--password-stdin",
        ],
        Some(&format!("{PASSWORD}\n")),
    );
    let script = script.display().to_string();
    let (login_url, portal_url) = (fake.login_url(), fake.portal_url());
    let (served, base) = serve(
        &data,
        &[
            "--sat",
            "portal",
            "--sat-login-url",
            &login_url,
            "--sat-portal-url",
            &portal_url,
            "--sat-timeout",
            "5s",
            "--captcha-command",
            &script,
        ],
    );
    (served, Api::new(base))
}

/// The fake portal holding a PPD invoice (with its PDF), a PUE one and the PPD's payment.
fn three_samples_portal() -> FakePortal {
    let mut setup = Setup::new(RFC, CIEC);
    setup.invoices = vec![
        sample_invoice("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml", true),
        sample_invoice("cfdi40-ingreso-pue-tfd-ampersand-rfc.xml", false),
        sample_invoice("cfdi40-pago20-tfd-full-payment-of-ppd.xml", false),
    ];
    FakePortal::start(setup)
}

#[test]
fn an_extraction_through_the_binary_gets_the_portals_invoices() {
    let fake = three_samples_portal();
    let tmp = tempfile::tempdir().expect("tmp");
    let (_served, api) = portal_service(&fake, tmp.path());
    // The same webhooks as the sandbox path: entity.update on validation, then
    // extraction.update for running and finished, each naming its entity, and one
    // invoice.created per invoice the run made visible.
    let receiver = crate::common::receiver::Receiver::start();
    api.post("/v1/webhooks", json!({"url": receiver.url()}));

    let entity = api.post(
        "/v1/entities",
        json!({"tax_id": RFC, "name": "KIJ", "ciec_password": CIEC}),
    );
    let id = entity["id"].as_str().expect("id").to_string();
    let entity = api.wait_for(&format!("/v1/entities/{id}"), "validation", |e| {
        e["credential_status"] != "pending"
    });
    assert_eq!(entity["credential_status"], "valid", "{entity}");

    let created = api.post(
        "/v1/extractions",
        json!({"entity_id": id, "options": {"period": {"from": "2020-01-01", "to": "2020-01-01"}, "download_type": "received"}}),
    );
    let ext_path = format!("/v1/extractions/{}", created["id"].as_str().expect("id"));
    let done = api.wait_for(&ext_path, "the extraction", |e| {
        matches!(e["status"].as_str(), Some("finished" | "failed"))
    });
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(
        (
            done["invoices_found"].as_u64(),
            done["invoices_processed"].as_u64()
        ),
        (Some(3), Some(3)),
        "{done}"
    );

    let invoices = api.get(&format!("/v1/invoices?entity_id={id}"));
    let mut uuids: Vec<String> = invoices["data"]
        .as_array()
        .expect("list")
        .iter()
        .map(|i| i["uuid"].as_str().unwrap_or("").to_ascii_uppercase())
        .collect();
    uuids.sort();
    assert_eq!(
        uuids,
        [
            "5B64ADA3-AA4C-40B4-A2F5-572CED52BE31",
            "6D7434A6-E3F2-47AD-9E4C-08849946AFA0",
            "6E546729-960A-4505-8E81-2D2952145BD9"
        ]
    );
    fake.seen(|s| assert!(s.refusals.is_empty(), "{:?}", s.refusals));

    let mut all: Vec<Value> = receiver
        .wait_for(6, std::time::Duration::from_secs(20))
        .iter()
        .map(|r| r.json())
        .collect();
    // Events of different resources may arrive in any order; their ids (UUIDv7) sort
    // in the order they were written.
    all.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    let (invoice_events, events): (Vec<Value>, Vec<Value>) = all
        .into_iter()
        .partition(|e| e["event"] == "invoice.created");
    let mut created: Vec<String> = invoice_events
        .iter()
        .map(|e| e["object"]["uuid"].as_str().unwrap_or("").to_string())
        .collect();
    created.sort();
    assert_eq!(created, uuids, "{invoice_events:?}");
    let summary: Vec<(String, String)> = events
        .iter()
        .map(|e| {
            let state = e["object"]["credential_status"]
                .as_str()
                .or(e["object"]["status"].as_str());
            (
                e["event"].as_str().unwrap_or("").to_string(),
                state.unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("entity.update".to_string(), "valid".to_string()),
            ("extraction.update".to_string(), "running".to_string()),
            ("extraction.update".to_string(), "finished".to_string()),
        ],
        "{events:?}"
    );
    for e in &events[1..] {
        assert_eq!(e["object"]["entity"]["id"], json!(id), "{e}");
        assert_eq!(e["object"]["entity"]["tax_id"], json!(RFC), "{e}");
    }
}

#[test]
fn an_extraction_by_uuid_searches_the_portal_by_folio_fiscal() {
    let fake = three_samples_portal();
    let tmp = tempfile::tempdir().expect("tmp");
    let (_served, api) = portal_service(&fake, tmp.path());
    let entity = api.post(
        "/v1/entities",
        json!({"tax_id": RFC, "name": "KIJ", "ciec_password": CIEC}),
    );
    let id = entity["id"].as_str().expect("id").to_string();
    api.wait_for(&format!("/v1/entities/{id}"), "validation", |e| {
        e["credential_status"] == "valid"
    });
    // The PPD invoice (asked in lower case) and a UUID the portal does not list.
    let (ppd, never) = (
        "6D7434A6-E3F2-47AD-9E4C-08849946AFA0",
        "0F000000-0000-4000-8000-000000000000",
    );
    let created = api.post(
        "/v1/extractions",
        json!({"entity_id": id, "options": {"period": {"from": "2020-01-01", "to": "2020-01-31"},
            "download_type": "received", "uuids": [ppd.to_lowercase(), never]}}),
    );
    let ext_path = format!("/v1/extractions/{}", created["id"].as_str().expect("id"));
    let done = api.wait_for(&ext_path, "the extraction", |e| {
        matches!(e["status"].as_str(), Some("finished" | "failed"))
    });
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(done["uuids_not_found"], json!([never]), "{done}");
    assert_eq!(
        (
            done["invoices_found"].as_u64(),
            done["invoices_processed"].as_u64()
        ),
        (Some(1), Some(1)),
        "{done}"
    );
    let invoices = api.get(&format!("/v1/invoices?entity_id={id}"));
    let stored: Vec<&str> = invoices["data"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|i| i["uuid"].as_str())
        .collect();
    assert_eq!(stored.len(), 1, "{invoices}");
    assert!(stored[0].eq_ignore_ascii_case(ppd), "{invoices}");
    fake.seen(|s| {
        assert!(s.refusals.is_empty(), "{:?}", s.refusals);
        assert!(
            s.searches.is_empty(),
            "no search by dates: {:?}",
            s.searches
        );
        let page = "ConsultaReceptor.aspx".to_string();
        assert_eq!(
            s.folio_searches,
            [(page.clone(), ppd.to_string()), (page, never.to_string())]
        );
    });
}
