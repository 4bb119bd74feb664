//! The test harness: the real binary on a fresh data directory, an HTTP client, and
//! polling helpers. Nothing is shared between tests.

use super::engine;
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_cfdi-extract");

/// How long the server may take to print its `listening on` line.
const STARTUP_DEADLINE: Duration = Duration::from_secs(30);

/// The serve flags every test starts with; `spawn_with` arguments override them.
const DEFAULT_SERVE_ARGS: &[&str] = &[
    "--address",
    "127.0.0.1",
    "--port",
    "0",
    "--sim-latency",
    "0ms",
    "--webhook-timeout",
    "2s",
    "--webhook-retry-schedule",
    "0s,100ms,100ms",
    // The SAT status checks change invoices (and send events) on their own: the tests
    // of status checks turn them on (`flows::sat_status`).
    "--sat-status-rate",
    "0",
    // Likewise the 69-B list's refresh (the sandbox's built-in list otherwise loads at
    // start): the tests of the list turn it on (`flows::list_69b`).
    "--list-69b-every",
    "0",
];

/// The default deadline of `eventually` in tests.
pub const DEADLINE: Duration = Duration::from_secs(15);

// ---------------------------------------------------------------------------------------
// Polling

/// A client's short pause before it retries an answer that asked for it (a 503), as a
/// real client backs off: not a wait for a condition, which `eventually` is for.
pub fn retry_pause() {
    std::thread::sleep(Duration::from_millis(100));
}

/// Polls `f` every 20 ms until it returns `Some`, or panics after `deadline` with `what`.
pub fn eventually<T>(deadline: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        if start.elapsed() > deadline {
            panic!("timed out after {deadline:?} waiting for: {what}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Polls `f` every 20 ms until its value has stayed the same for `period`, and returns
/// that value: the "nothing more happened" check, which adapts to a busy machine where
/// a fixed sleep is either flaky or slow. Panics when it keeps changing past `DEADLINE`
/// plus `period`.
pub fn quiet<T: PartialEq + std::fmt::Debug>(
    period: Duration,
    what: &str,
    mut f: impl FnMut() -> T,
) -> T {
    let start = Instant::now();
    let mut value = f();
    let mut since = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(20));
        let now = f();
        if now != value {
            value = now;
            since = Instant::now();
        } else if since.elapsed() >= period {
            return value;
        }
        if start.elapsed() > DEADLINE + period {
            panic!(
                "{what} kept changing for {:?}: last {value:?}",
                DEADLINE + period
            );
        }
    }
}

// ---------------------------------------------------------------------------------------
// Unique test values

static COUNTER: AtomicU64 = AtomicU64::new(1);

fn next_number() -> u64 {
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

/// A fresh 12-character tax id starting with `prefix` (3 letters).
pub fn tax_id(prefix: &str) -> String {
    assert_eq!(prefix.len(), 3, "tax id prefixes are 3 letters");
    format!("{prefix}{:09}", next_number() % 1_000_000_000)
}

/// A fresh email address.
pub fn email(local: &str) -> String {
    format!(
        "{local}{}-{}@example.com",
        std::process::id(),
        next_number()
    )
}

// ---------------------------------------------------------------------------------------
// CLI

/// What a CLI command produced.
#[derive(Debug)]
pub struct CliOutput {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl CliOutput {
    /// Panics with both streams unless the command succeeded; returns trimmed stdout.
    pub fn expect_success(&self, what: &str) -> String {
        assert!(
            self.status.success(),
            "{what} failed ({:?})\nstdout: {}\nstderr: {}",
            self.status,
            self.stdout,
            self.stderr
        );
        self.stdout.trim().to_string()
    }
}

/// A command of the binary with a clean environment (no `CFDI_EXTRACT_*`, no `RUST_LOG`).
/// On PostgreSQL, a command run by `run_command` (or given `on_test_database()` before it
/// is spawned) gets its data directory's database (`common::engine`).
pub fn command() -> Command {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().to_string();
        if key.starts_with("CFDI_EXTRACT_") || key == "RUST_LOG" {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Runs the binary with `args`, feeding `stdin` (closed right after).
pub fn run_cli(args: &[&str], stdin: Option<&str>) -> CliOutput {
    run_command(command().args(args), stdin)
}

pub fn run_command(cmd: &mut Command, stdin: Option<&str>) -> CliOutput {
    let mut child = engine::route(cmd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the cfdi-extract binary");
    {
        let mut input = child.stdin.take().expect("piped stdin");
        if let Some(s) = stdin {
            input.write_all(s.as_bytes()).expect("write stdin");
        }
    }
    let out = child.wait_with_output().expect("wait for the CLI");
    CliOutput {
        status: out.status,
        stdout: String::from_utf8_lossy(&out.stdout).to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).to_string(),
    }
}

/// Runs a subcommand on `dir`, `--data-dir` placed after the subcommand words.
pub fn cli_on(dir: &Path, args: &[&str], stdin: Option<&str>) -> CliOutput {
    let dir = dir.to_string_lossy().to_string();
    let split = args
        .iter()
        .position(|a| a.starts_with("--"))
        .unwrap_or(args.len());
    let mut full: Vec<&str> = args[..split].to_vec();
    full.extend(["--data-dir", dir.as_str()]);
    full.extend(&args[split..]);
    run_cli(&full, stdin)
}

/// An API user.
#[derive(Debug, Clone)]
pub struct Creds {
    pub org_id: String,
    pub email: String,
    pub password: String,
}

/// Creates an organization and a user in it through the CLI.
pub fn provision(dir: &Path, org_name: &str) -> Creds {
    let org_id = cli_on(dir, &["org", "create", org_name], None).expect_success("org create");
    assert!(
        uuid::Uuid::parse_str(&org_id).is_ok(),
        "org create should print a UUID, printed {org_id:?}"
    );
    let creds = Creds {
        org_id,
        email: email("user"),
        password: format!("pw-{}-secret", next_number()),
    };
    add_user(dir, &creds);
    creds
}

/// Creates the user `creds` (its org must exist) through the CLI.
pub fn add_user(dir: &Path, creds: &Creds) {
    cli_on(
        dir,
        &[
            "user",
            "create",
            "--org",
            &creds.org_id,
            "--email",
            &creds.email,
            "--password-stdin",
        ],
        Some(&format!("{}\n", creds.password)),
    )
    .expect_success("user create");
}

// ---------------------------------------------------------------------------------------
// HTTP

/// An HTTP answer.
#[derive(Debug, Clone)]
pub struct Resp {
    pub status: u16,
    /// Lower-cased names.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).to_string()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "expected a JSON body ({e}); status {}, body: {}",
                self.status,
                self.text()
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `Content-Type` header, or `""` when there is none.
    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    /// Asserts the status (printing the body otherwise) and returns the JSON body
    /// (`Value::Null` when the body is empty).
    #[track_caller]
    pub fn expect(&self, status: u16) -> Value {
        assert_eq!(
            self.status,
            status,
            "unexpected status; body: {}",
            self.text()
        );
        if self.body.is_empty() {
            Value::Null
        } else {
            self.json()
        }
    }

    /// Asserts a JSON error response: status, `application/json`, and returns the body.
    #[track_caller]
    pub fn expect_error(&self, status: u16) -> Value {
        let body = self.expect(status);
        let ct = self.header("content-type").unwrap_or("");
        assert!(
            ct.starts_with("application/json"),
            "error responses are JSON; content-type {ct:?}, body: {}",
            self.text()
        );
        body
    }

    /// Asserts a 422 with an error on `field` and returns that field's messages.
    #[track_caller]
    pub fn expect_field_error(&self, field: &str) -> Vec<String> {
        let body = self.expect_error(422);
        let messages = body["errors"][field].as_array().unwrap_or_else(|| {
            panic!(
                "expected a 422 on {field:?}; body: {}",
                serde_json::to_string(&body).unwrap_or_default()
            )
        });
        assert!(
            !messages.is_empty(),
            "expected messages on {field:?}; body: {body}"
        );
        messages
            .iter()
            .map(|m| {
                m.as_str()
                    .unwrap_or_else(|| panic!("error messages are strings; body: {body}"))
                    .to_string()
            })
            .collect()
    }

    /// Asserts a JSON 404 `{message}`.
    #[track_caller]
    pub fn expect_not_found(&self) {
        let body = self.expect_error(404);
        assert!(
            body["message"].is_string(),
            "a 404 has a message; body: {body}"
        );
    }

    /// Asserts a 401 with the given message prefix and the `WWW-Authenticate` header.
    #[track_caller]
    pub fn expect_unauthorized(&self, message_prefix: &str) {
        let body = self.expect_error(401);
        let message = body["message"].as_str().unwrap_or("");
        assert!(
            message.starts_with(message_prefix),
            "401 message should start with {message_prefix:?}; body: {body}"
        );
        assert_eq!(
            self.header("www-authenticate"),
            Some("Basic realm=\"cfdi-extract\""),
            "401 sends WWW-Authenticate; body: {body}"
        );
    }
}

pub const MISSING: &str = "Missing Authorization header";
pub const INVALID: &str = "Invalid credentials";

pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(30)))
        .max_redirects(0)
        .build()
        .into()
}

pub fn basic(email: &str, password: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{email}:{password}"))
    )
}

/// A client bound to a base URL and (optionally) a user.
#[derive(Clone)]
pub struct Client {
    pub base_url: String,
    pub auth: Option<(String, String)>,
    agent: ureq::Agent,
}

impl Client {
    pub fn new(base_url: &str, auth: Option<(&str, &str)>) -> Client {
        Client {
            base_url: base_url.to_string(),
            auth: auth.map(|(e, p)| (e.to_string(), p.to_string())),
            agent: agent(),
        }
    }

    /// The same client waiting up to `timeout` for each answer: for heavy requests
    /// whose time on a busy machine is not what the test checks.
    pub fn patient(&self, timeout: Duration) -> Client {
        Client {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(timeout))
                .max_redirects(0)
                .build()
                .into(),
            ..self.clone()
        }
    }

    /// Any request. `headers` come after the `Authorization` header, so they can replace it.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let auth = self.auth.as_ref().map(|(e, p)| (e.as_str(), p.as_str()));
        request(
            &self.agent,
            &self.base_url,
            method,
            path,
            auth,
            body,
            headers,
        )
    }

    pub fn get(&self, path: &str) -> Resp {
        self.request("GET", path, None, &[])
    }

    pub fn delete(&self, path: &str) -> Resp {
        self.request("DELETE", path, None, &[])
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Resp {
        let bytes = serde_json::to_vec(body).expect("serialize");
        self.request(
            "POST",
            path,
            Some(&bytes),
            &[("Content-Type", "application/json")],
        )
    }

    pub fn patch_json(&self, path: &str, body: &Value) -> Resp {
        let bytes = serde_json::to_vec(body).expect("serialize");
        self.request(
            "PATCH",
            path,
            Some(&bytes),
            &[("Content-Type", "application/json")],
        )
    }

    pub fn put_json(&self, path: &str, body: &Value) -> Resp {
        let bytes = serde_json::to_vec(body).expect("serialize");
        self.request(
            "PUT",
            path,
            Some(&bytes),
            &[("Content-Type", "application/json")],
        )
    }

    pub fn post_raw(&self, path: &str, body: &[u8]) -> Resp {
        self.request("POST", path, Some(body), &[])
    }

    // --- Resources

    /// Creates an entity (asserting 201) and returns it.
    pub fn create_entity(&self, tax_id: &str, ciec_password: &str) -> Value {
        self.post_json(
            "/v1/entities",
            &serde_json::json!({
                "tax_id": tax_id, "name": format!("Entity {tax_id}"), "ciec_password": ciec_password
            }),
        )
        .expect(201)
    }

    /// Polls the entity until its `credential_status` is `status`.
    pub fn wait_for_credential(&self, entity_id: &str, status: &str) -> Value {
        let path = format!("/v1/entities/{entity_id}");
        let mut last = Value::Null;
        eventually(
            DEADLINE,
            &format!("entity {entity_id} to become {status}"),
            || {
                last = self.get(&path).expect(200);
                (last["credential_status"] == status).then(|| last.clone())
            },
        )
    }

    /// Creates a webhook (asserting 201) and returns it.
    pub fn create_webhook(&self, url: &str, events: Option<&[&str]>) -> Value {
        let mut body = serde_json::json!({ "url": url });
        if let Some(events) = events {
            body["events"] = serde_json::json!(events);
        }
        self.post_json("/v1/webhooks", &body).expect(201)
    }

    /// The deliveries of a webhook (first page, up to 500).
    pub fn deliveries(&self, webhook_id: &str) -> Vec<Value> {
        let body = self
            .get(&format!("/v1/webhooks/{webhook_id}/deliveries?limit=500"))
            .expect(200);
        body["data"]
            .as_array()
            .unwrap_or_else(|| panic!("a list has data; body: {body}"))
            .clone()
    }

    /// Every item of a list endpoint, following cursors.
    pub fn list_all(&self, path: &str, limit: usize) -> Vec<Value> {
        let sep = if path.contains('?') { '&' } else { '?' };
        let mut items = vec![];
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let url = match &cursor {
                Some(c) => format!("{path}{sep}limit={limit}&cursor={c}"),
                None => format!("{path}{sep}limit={limit}"),
            };
            let page = self.get(&url).expect(200);
            let data = page["data"]
                .as_array()
                .unwrap_or_else(|| panic!("a list has data; body: {page}"));
            assert!(data.len() <= limit, "page over the limit: {page}");
            items.extend(data.iter().cloned());
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => {
                    assert!(page["next_cursor"].is_null(), "next_cursor: {page}");
                    return items;
                }
            }
        }
        panic!("too many pages for {path}");
    }
}

/// One request through `agent`.
pub fn request(
    agent: &ureq::Agent,
    base_url: &str,
    method: &str,
    path: &str,
    auth: Option<(&str, &str)>,
    body: Option<&[u8]>,
    headers: &[(&str, &str)],
) -> Resp {
    let mut builder = ureq::http::Request::builder()
        .method(method)
        .uri(format!("{base_url}{path}"));
    let mut all: Vec<(String, String)> = vec![];
    if let Some((e, p)) = auth {
        all.push(("authorization".into(), basic(e, p)));
    }
    for (k, v) in headers {
        let k = k.to_ascii_lowercase();
        all.retain(|(name, _)| *name != k);
        all.push((k, v.to_string()));
    }
    for (k, v) in &all {
        builder = builder.header(k.as_str(), v.as_str());
    }
    let result = match body {
        Some(b) => agent.run(builder.body(b.to_vec()).expect("request")),
        None => agent.run(builder.body(()).expect("request")),
    };
    let mut res = result.unwrap_or_else(|e| panic!("{method} {path}: transport error: {e}"));
    let headers = res
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_ascii_lowercase(),
                String::from_utf8_lossy(v.as_bytes()).to_string(),
            )
        })
        .collect();
    let body = res
        .body_mut()
        .with_config()
        .limit(64 * 1024 * 1024)
        .read_to_vec()
        .unwrap_or_else(|e| panic!("{method} {path}: cannot read the body: {e}"));
    Resp {
        status: res.status().as_u16(),
        headers,
        body,
    }
}

/// A JSON number as u64 (serde_json runs with `arbitrary_precision` here).
pub fn as_u64(v: &Value) -> u64 {
    v.as_u64()
        .unwrap_or_else(|| panic!("expected an unsigned integer, got {v}"))
}

// ---------------------------------------------------------------------------------------
// The server

/// A running `cfdi-extract serve` on its own data directory.
pub struct TestApp {
    pub dir: TempDir,
    pub creds: Creds,
    pub port: u16,
    pub base_url: String,
    /// The merged serve flags (without `--data-dir`).
    args: Vec<String>,
    /// Environment variables of the server process (e.g. `RUST_LOG`).
    pub env: Vec<(String, String)>,
    child: Option<Child>,
    /// stdout lines of the current run.
    stdout: Arc<Mutex<Vec<String>>>,
    /// stderr lines of every run.
    stderr: Arc<Mutex<Vec<String>>>,
}

impl TestApp {
    /// A server with an org and a user, and the default test flags.
    pub fn spawn() -> TestApp {
        TestApp::spawn_with(&[])
    }

    /// A server on SQLite whatever engine the suite runs on (to compare the engines).
    pub fn spawn_on_sqlite(args: &[&str]) -> TestApp {
        let dir = TempDir::new().expect("temp dir");
        engine::keep_on_sqlite(dir.path());
        let creds = provision(dir.path(), "Acme SA de CV");
        TestApp::start_in(dir, creds, args)
    }

    /// Like `spawn`, with flags overriding the defaults (`--webhook-timeout 300ms`).
    pub fn spawn_with(args: &[&str]) -> TestApp {
        let dir = TempDir::new().expect("temp dir");
        let creds = provision(dir.path(), "Acme SA de CV");
        TestApp::start_in(dir, creds, args)
    }

    /// Starts a server on `dir` as it is (no provisioning); `creds` is who requests act as.
    pub fn start_in(dir: TempDir, creds: Creds, args: &[&str]) -> TestApp {
        let mut app = TestApp {
            dir,
            creds,
            port: 0,
            base_url: String::new(),
            args: merge_args(DEFAULT_SERVE_ARGS, args),
            env: Vec::new(),
            child: None,
            stdout: Arc::default(),
            stderr: Arc::default(),
        };
        app.start();
        app
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// Another instance on this one's PostgreSQL database, as an operator runs a second
    /// machine: a data directory of its own holding a copy of this one's encryption key
    /// (every instance needs the same), the same users. Not started.
    pub fn beside(&self, args: &[&str]) -> TestApp {
        use std::os::unix::fs::PermissionsExt;
        let url = crate::common::engine::database_url(self.data_dir())
            .expect("a second instance shares a PostgreSQL database");
        let dir = TempDir::new().expect("temp dir");
        let key = dir.path().join("secret.key");
        std::fs::copy(self.data_dir().join("secret.key"), &key).expect("copy the key");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).expect("0600");
        TestApp {
            dir,
            creds: self.creds.clone(),
            port: 0,
            base_url: String::new(),
            args: merge_args(DEFAULT_SERVE_ARGS, args),
            env: vec![(crate::common::engine::DATABASE_URL.to_string(), url)],
            child: None,
            stdout: Arc::default(),
            stderr: Arc::default(),
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server running").id()
    }

    /// Starts the server on the data dir and waits for `listening on http://ADDR:PORT`.
    pub fn start(&mut self) {
        assert!(self.child.is_none(), "the server is already running");
        let dir = self.data_dir().to_string_lossy().to_string();
        let mut cmd = command();
        cmd.arg("serve").args(["--data-dir", &dir]).args(&self.args);
        engine::route(&mut cmd);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn cfdi-extract serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let stderr = child.stderr.take().expect("piped stderr");
        self.stdout = Arc::default();
        let lines = drain_stdout(stdout, self.stdout.clone());
        drain_lines(stderr, self.stderr.clone());
        self.child = Some(child);

        let start = Instant::now();
        loop {
            let left = STARTUP_DEADLINE.saturating_sub(start.elapsed());
            match lines.recv_timeout(left) {
                Ok(line) => {
                    if let Some(addr) = line.trim().strip_prefix("listening on http://") {
                        let port = addr
                            .rsplit(':')
                            .next()
                            .and_then(|p| p.parse::<u16>().ok())
                            .unwrap_or_else(|| panic!("cannot read the port of {line:?}"));
                        assert_ne!(port, 0, "the server printed port 0: {line:?}");
                        self.port = port;
                        self.base_url = format!("http://127.0.0.1:{port}");
                        return;
                    }
                }
                Err(_) => {
                    let status = self
                        .child
                        .as_mut()
                        .and_then(|c| c.try_wait().ok().flatten());
                    panic!(
                        "the server did not print `listening on` within {STARTUP_DEADLINE:?} \
                         (exit status {status:?})\nstdout: {:?}\nstderr: {:?}",
                        self.stdout_lines(),
                        self.stderr_lines()
                    );
                }
            }
        }
    }

    /// Kills the server (SIGKILL) and starts it again on the same data directory.
    pub fn restart(&mut self) {
        self.kill();
        self.start();
    }

    /// SIGKILL, and reap the process.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Sends SIGTERM (the process keeps running until it exits on its own).
    pub fn sigterm(&self) {
        self.signal("TERM");
    }

    /// Sends a signal by name (`TERM`, `INT`) with the `kill` command.
    pub fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.pid().to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -{name} failed: {status:?}");
    }

    /// Waits up to `timeout` for the server to exit; its status, or None if still running.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            let child = self.child.as_mut()?;
            if let Some(status) = child.try_wait().expect("try_wait") {
                self.child = None;
                return Some(status);
            }
            if start.elapsed() > timeout {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn stdout_lines(&self) -> Vec<String> {
        self.stdout.lock().expect("stdout lock").clone()
    }

    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr.lock().expect("stderr lock").clone()
    }

    /// Every line the server printed so far (stdout of this run, stderr of all runs).
    pub fn output(&self) -> String {
        let mut all = self.stdout_lines();
        all.extend(self.stderr_lines());
        all.join("\n")
    }

    /// Runs a CLI subcommand on this app's data directory.
    pub fn cli(&self, args: &[&str], stdin: Option<&str>) -> CliOutput {
        cli_on(self.data_dir(), args, stdin)
    }

    /// A new organization with one user; returns its credentials.
    pub fn create_user_in_new_org(&self) -> Creds {
        provision(self.data_dir(), &format!("Org {}", next_number()))
    }

    /// A client acting as this app's user.
    pub fn client(&self) -> Client {
        self.client_as(&self.creds)
    }

    pub fn client_as(&self, creds: &Creds) -> Client {
        Client::new(&self.base_url, Some((&creds.email, &creds.password)))
    }

    /// A client without credentials.
    pub fn anonymous(&self) -> Client {
        Client::new(&self.base_url, None)
    }

    // Shorthands acting as this app's user.

    pub fn get(&self, path: &str) -> Resp {
        self.client().get(path)
    }

    pub fn post_json(&self, path: &str, body: &Value) -> Resp {
        self.client().post_json(path, body)
    }

    pub fn patch_json(&self, path: &str, body: &Value) -> Resp {
        self.client().patch_json(path, body)
    }

    pub fn delete(&self, path: &str) -> Resp {
        self.client().delete(path)
    }

    pub fn request(
        &self,
        method: &str,
        path: &str,
        auth: Option<(&str, &str)>,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> Resp {
        request(&agent(), &self.base_url, method, path, auth, body, headers)
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        self.kill();
        // A failing test shows what its server said last (CI keeps only the output).
        if std::thread::panicking() {
            let lines = self.stderr_lines();
            let last = &lines[lines.len().saturating_sub(40)..];
            eprintln!("--- the server's last log lines:\n{}", last.join("\n"));
        }
    }
}

/// Defaults, then `overrides` replacing flags of the same name (or added).
fn merge_args(defaults: &[&str], overrides: &[&str]) -> Vec<String> {
    fn pairs(args: &[&str]) -> Vec<(String, Option<String>)> {
        let mut out = vec![];
        let mut i = 0;
        while i < args.len() {
            let a = args[i];
            if let Some((k, v)) = a.split_once('=').filter(|_| a.starts_with("--")) {
                out.push((k.to_string(), Some(v.to_string())));
                i += 1;
            } else if i + 1 < args.len() && !args[i + 1].starts_with("--") {
                out.push((a.to_string(), Some(args[i + 1].to_string())));
                i += 2;
            } else {
                out.push((a.to_string(), None));
                i += 1;
            }
        }
        out
    }
    let mut merged = pairs(defaults);
    for (k, v) in pairs(overrides) {
        match merged.iter_mut().find(|(name, _)| *name == k) {
            Some(slot) => slot.1 = v,
            None => merged.push((k, v)),
        }
    }
    merged
        .into_iter()
        .flat_map(|(k, v)| std::iter::once(k).chain(v))
        .collect()
}

/// Reads stdout lines into `store` and the returned channel, forever.
fn drain_stdout(stdout: ChildStdout, store: Arc<Mutex<Vec<String>>>) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            store.lock().expect("stdout lock").push(line.clone());
            let _ = tx.send(line);
        }
    });
    rx
}

fn drain_lines(stream: impl Read + Send + 'static, store: Arc<Mutex<Vec<String>>>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            store.lock().expect("stderr lock").push(line);
        }
    });
}

/// Every regular file under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::merge_args;

    #[test]
    fn merge_args_overrides_flags_and_appends_new_ones() {
        let merged = merge_args(
            &["--port", "0", "--sim-latency", "0ms"],
            &["--sim-latency", "5ms", "--dev", "--workers=2"],
        );
        assert_eq!(
            merged,
            [
                "--port",
                "0",
                "--sim-latency",
                "5ms",
                "--dev",
                "--workers",
                "2"
            ]
        );
    }
}
