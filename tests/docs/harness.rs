//! A small harness of its own (independent of tests/api): the real binary on a fresh
//! data directory, provisioned through the CLI, and a blocking HTTP client.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use tempfile::TempDir;

pub const BIN: &str = env!("CARGO_BIN_EXE_cfdi-extract");
pub const EMAIL: &str = "docs-tests@example.com";
pub const PASSWORD: &str = "docs-tests-password";

/// The crate's root (where `static/`, `src/` and `Cargo.toml` are).
pub fn manifest_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A command of the binary without `CFDI_EXTRACT_*` or `RUST_LOG` from the environment.
fn command() -> Command {
    let mut cmd = Command::new(BIN);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().to_string();
        if key.starts_with("CFDI_EXTRACT_") || key == "RUST_LOG" {
            cmd.env_remove(key);
        }
    }
    cmd
}

/// Runs a CLI command; panics with its output unless it succeeds; returns trimmed stdout.
pub fn cli(args: &[&str], stdin: Option<&str>) -> String {
    let mut child = command()
        .args(args)
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
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "cfdi-extract {args:?} failed ({:?})\nstdout: {stdout}\nstderr: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout.trim().to_string()
}

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

    pub fn header(&self, name: &str) -> Option<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or("")
    }

    /// The JSON body; panics (with the body) when it is not JSON.
    #[track_caller]
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "expected a JSON body ({e}); status {}, body: {}",
                self.status,
                self.text()
            )
        })
    }

    /// Asserts the status and returns the JSON body.
    #[track_caller]
    pub fn expect(&self, status: u16) -> Value {
        assert_eq!(
            self.status,
            status,
            "unexpected status; body: {}",
            self.text()
        );
        self.json()
    }
}

/// A running `cfdi-extract serve` on its own data directory, with one org and user.
pub struct Server {
    pub dir: TempDir,
    pub base_url: String,
    child: Child,
    agent: ureq::Agent,
}

impl Server {
    pub fn start() -> Server {
        let dir = TempDir::new().expect("temp dir");
        let data = dir.path().to_string_lossy().to_string();
        let org = cli(
            &["org", "create", "--data-dir", &data, "Docs SA de CV"],
            None,
        );
        cli(
            &[
                "user",
                "create",
                "--data-dir",
                &data,
                "--org",
                &org,
                "--email",
                EMAIL,
                "--password-stdin",
            ],
            Some(&format!("{PASSWORD}\n")),
        );
        let mut child = command()
            .args(["serve", "--data-dir", &data])
            .args([
                "--address",
                "127.0.0.1",
                "--port",
                "0",
                "--sim-latency",
                "0ms",
            ])
            .args([
                "--webhook-timeout",
                "2s",
                "--webhook-retry-schedule",
                "0s,50ms",
            ])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn cfdi-extract serve");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(30);
        let base_url = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx.recv_timeout(left).unwrap_or_else(|_| {
                let _ = child.kill();
                panic!("the server did not print `listening on` within 30 s");
            });
            if let Some(addr) = line.trim().strip_prefix("listening on http://") {
                let port = addr.rsplit(':').next().unwrap_or_default();
                break format!("http://127.0.0.1:{port}");
            }
        };
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(30)))
            .max_redirects(0)
            .build()
            .into();
        Server {
            dir,
            base_url,
            child,
            agent,
        }
    }

    pub fn data_dir(&self) -> &Path {
        self.dir.path()
    }

    /// `host:port` of the server.
    pub fn authority(&self) -> &str {
        self.base_url.trim_start_matches("http://")
    }

    /// One request. `auth`: Basic credentials.
    pub fn request(
        &self,
        method: &str,
        path: &str,
        auth: Option<(&str, &str)>,
        body: Option<&[u8]>,
        headers: &[(&str, &str)],
    ) -> Resp {
        let mut builder = ureq::http::Request::builder()
            .method(method)
            .uri(format!("{}{path}", self.base_url));
        if let Some((user, pass)) = auth {
            builder = builder.header("authorization", basic(user, pass));
        }
        for (k, v) in headers {
            builder = builder.header(*k, *v);
        }
        let result = match body {
            Some(b) => self.agent.run(builder.body(b.to_vec()).expect("request")),
            None => self.agent.run(builder.body(()).expect("request")),
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

    /// An anonymous GET.
    pub fn get_anon(&self, path: &str) -> Resp {
        self.request("GET", path, None, None, &[])
    }

    /// A GET as the provisioned user.
    pub fn get(&self, path: &str) -> Resp {
        self.request("GET", path, Some((EMAIL, PASSWORD)), None, &[])
    }

    /// A JSON POST as the provisioned user.
    pub fn post_json(&self, path: &str, body: &Value) -> Resp {
        let bytes = serde_json::to_vec(body).expect("serialize");
        self.request(
            "POST",
            path,
            Some((EMAIL, PASSWORD)),
            Some(&bytes),
            &[("content-type", "application/json")],
        )
    }

    /// A GET sent byte for byte over a raw socket, so that the path is not normalized
    /// (`/docs/../Cargo.toml`). Returns the status and the body.
    pub fn raw_get(&self, path: &str) -> (u16, String, String) {
        let mut stream = TcpStream::connect(self.authority()).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("timeout");
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
            self.authority()
        )
        .expect("write request");
        let mut raw = vec![];
        stream.read_to_end(&mut raw).expect("read response");
        let raw = String::from_utf8_lossy(&raw).to_string();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
        let status = head
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("no status line in {raw:?}"));
        (status, head.to_ascii_lowercase(), body.to_string())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub fn basic(user: &str, pass: &str) -> String {
    use base64::Engine;
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(format!("{user}:{pass}"))
    )
}

/// Polls `f` every 25 ms until it returns `Some`, or panics after `deadline`.
pub fn eventually<T>(deadline: Duration, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            start.elapsed() < deadline,
            "timed out after {deadline:?} waiting for: {what}"
        );
        std::thread::sleep(Duration::from_millis(25));
    }
}

/// Every regular file under `dir`, recursively, sorted.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = vec![];
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let entries = std::fs::read_dir(&d).unwrap_or_else(|e| panic!("read {d:?}: {e}"));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}
