//! Solving the login captcha. The connector only sees `CaptchaResolver`; the two
//! implementations run a local program (e.g. a wrapper around the BoxFactura ONNX model
//! or tesseract) or call the anti-captcha.com service. Answers are never logged.

use base64::Engine as _;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub trait CaptchaResolver: Send + Sync {
    /// The text in the captcha image (the bytes of the page's inline image).
    fn resolve(&self, image_png: &[u8]) -> Result<String, CaptchaError>;
}

#[derive(Debug, thiserror::Error)]
pub enum CaptchaError {
    #[error("the captcha resolver failed: {0}")]
    Failed(String),
    #[error("the captcha resolver gave no answer within {0:?}")]
    Timeout(Duration),
    #[error("the captcha resolver gave an empty answer")]
    Empty,
}

/// Runs `program args...`, writes the image to its standard input and takes the last
/// non-empty line of its standard output as the answer.
#[derive(Debug, Clone)]
pub struct CommandResolver {
    pub program: String,
    pub args: Vec<String>,
    pub timeout: Duration,
}

/// How long a resolver program may run unless told otherwise.
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

impl CommandResolver {
    pub fn new(program: impl Into<String>, args: Vec<String>) -> Self {
        Self {
            program: program.into(),
            args,
            timeout: DEFAULT_COMMAND_TIMEOUT,
        }
    }
}

impl CaptchaResolver for CommandResolver {
    fn resolve(&self, image_png: &[u8]) -> Result<String, CaptchaError> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| CaptchaError::Failed(format!("cannot run {}: {e}", self.program)))?;
        // Feed stdin and drain stdout on threads so a program that reads or writes in
        // another order (or not at all) cannot deadlock us; the deadline stays ours.
        if let Some(mut stdin) = child.stdin.take() {
            let image = image_png.to_vec();
            std::thread::spawn(move || {
                // A program that ignores its input closes the pipe early: not our error.
                let _ = stdin.write_all(&image);
            });
        }
        let (tx, rx) = mpsc::channel();
        if let Some(mut stdout) = child.stdout.take() {
            std::thread::spawn(move || {
                let mut out = Vec::new();
                let read = stdout.read_to_end(&mut out).map(|_| out);
                let _ = tx.send(read);
            });
        }
        let deadline = Instant::now() + self.timeout;
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) if Instant::now() >= deadline => {
                    // Only the child we started, by its handle.
                    let _ = child.kill();
                    let _ = child.wait();
                    return Err(CaptchaError::Timeout(self.timeout));
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(10)),
                Err(e) => return Err(CaptchaError::Failed(format!("waiting: {e}"))),
            }
        };
        if !status.success() {
            return Err(CaptchaError::Failed(format!(
                "{} exited with {status}",
                self.program
            )));
        }
        // The program has exited; a grandchild still holding stdout must not hang us.
        let left = deadline.saturating_duration_since(Instant::now());
        let out = match rx.recv_timeout(left.max(Duration::from_millis(100))) {
            Ok(Ok(out)) => out,
            Ok(Err(e)) => return Err(CaptchaError::Failed(format!("reading output: {e}"))),
            Err(_) => return Err(CaptchaError::Timeout(self.timeout)),
        };
        last_line(&String::from_utf8_lossy(&out)).ok_or(CaptchaError::Empty)
    }
}

fn last_line(out: &str) -> Option<String> {
    out.lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .map(str::to_string)
}

/// The anti-captcha.com API (`createTask` with an `ImageToTextTask`, then `getTaskResult`
/// until ready). Timings default to the facts' scraper: first look after 5 s, then every
/// 500 ms, give up after 60 s.
pub struct AntiCaptchaResolver {
    base_url: String,
    client_key: String,
    pub initial_wait: Duration,
    pub poll_interval: Duration,
    pub timeout: Duration,
    agent: ureq::Agent,
}

impl std::fmt::Debug for AntiCaptchaResolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AntiCaptchaResolver")
            .field("base_url", &self.base_url)
            .field("initial_wait", &self.initial_wait)
            .field("poll_interval", &self.poll_interval)
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// One HTTP call to the service may take this long.
const ANTICAPTCHA_CALL_TIMEOUT: Duration = Duration::from_secs(30);

impl AntiCaptchaResolver {
    pub fn new(base_url: &str, client_key: &str) -> Self {
        let config = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(ANTICAPTCHA_CALL_TIMEOUT))
            .build();
        Self {
            base_url: base_url.trim_end_matches('/').to_string(),
            client_key: client_key.to_string(),
            initial_wait: Duration::from_secs(5),
            poll_interval: Duration::from_millis(500),
            timeout: Duration::from_secs(60),
            agent: ureq::Agent::new_with_config(config),
        }
    }

    /// Overrides the timings (tests use milliseconds).
    pub fn with_timings(
        mut self,
        initial_wait: Duration,
        poll_interval: Duration,
        timeout: Duration,
    ) -> Self {
        self.initial_wait = initial_wait;
        self.poll_interval = poll_interval;
        self.timeout = timeout;
        self
    }

    fn call(&self, method: &str, body: Value) -> Result<Value, CaptchaError> {
        let url = format!("{}/{method}", self.base_url);
        let failed =
            |detail: String| CaptchaError::Failed(format!("anti-captcha {method}: {detail}"));
        let mut response = self
            .agent
            .post(&url)
            .send_json(&body)
            .map_err(|e| failed(e.to_string()))?;
        let status = response.status().as_u16();
        if status != 200 {
            return Err(failed(format!("HTTP {status}")));
        }
        let answer: Value = response
            .body_mut()
            .read_json()
            .map_err(|e| failed(format!("not JSON: {e}")))?;
        // errorId 0 means success; anything else comes with errorCode/errorDescription.
        match answer.get("errorId").and_then(Value::as_i64) {
            Some(0) => Ok(answer),
            _ => Err(failed(format!(
                "{} {}",
                answer["errorCode"].as_str().unwrap_or("error"),
                answer["errorDescription"].as_str().unwrap_or("")
            ))),
        }
    }
}

impl CaptchaResolver for AntiCaptchaResolver {
    fn resolve(&self, image_png: &[u8]) -> Result<String, CaptchaError> {
        let started = Instant::now();
        let body = base64::engine::general_purpose::STANDARD.encode(image_png);
        let created = self.call(
            "createTask",
            json!({
                "clientKey": self.client_key,
                "task": { "type": "ImageToTextTask", "body": body },
            }),
        )?;
        let task_id = created
            .get("taskId")
            .cloned()
            .filter(|id| id.is_number() || id.is_string())
            .ok_or_else(|| CaptchaError::Failed("anti-captcha createTask: no taskId".into()))?;
        let mut wait = self.initial_wait;
        loop {
            if started.elapsed() + wait > self.timeout {
                return Err(CaptchaError::Timeout(self.timeout));
            }
            std::thread::sleep(wait);
            wait = self.poll_interval;
            let result = self.call(
                "getTaskResult",
                json!({ "clientKey": self.client_key, "taskId": task_id }),
            )?;
            match result.get("status").and_then(Value::as_str) {
                Some("ready") => {
                    let text = result["solution"]["text"].as_str().unwrap_or("").trim();
                    return if text.is_empty() {
                        Err(CaptchaError::Empty)
                    } else {
                        Ok(text.to_string())
                    };
                }
                Some("processing") => {}
                other => {
                    return Err(CaptchaError::Failed(format!(
                        "anti-captcha getTaskResult: unexpected status {other:?}"
                    )))
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_the_last_non_empty_line() {
        assert_eq!(
            last_line("loading model\nABC123\n\n  \n").as_deref(),
            Some("ABC123")
        );
        assert_eq!(last_line("  X9  ").as_deref(), Some("X9"));
        assert_eq!(last_line("\n \n"), None);
    }

    #[test]
    fn a_command_gets_the_image_on_stdin() {
        // `tr` upper-cases what it reads: the answer proves the image reached stdin.
        let r = CommandResolver::new("sh", vec!["-c".into(), "echo noise; tr a-z A-Z".into()]);
        assert_eq!(r.resolve(b"abc12x\n").expect("answer"), "ABC12X");
    }

    #[test]
    fn a_failing_silent_or_slow_command_is_an_error() {
        let fails = CommandResolver::new("sh", vec!["-c".into(), "echo ABC; exit 3".into()]);
        assert!(matches!(fails.resolve(b""), Err(CaptchaError::Failed(_))));
        let silent = CommandResolver::new("sh", vec!["-c".into(), "cat >/dev/null".into()]);
        assert!(matches!(silent.resolve(b"img"), Err(CaptchaError::Empty)));
        let mut slow = CommandResolver::new("sleep", vec!["60".into()]);
        slow.timeout = Duration::from_millis(200);
        let started = Instant::now();
        assert!(matches!(slow.resolve(b""), Err(CaptchaError::Timeout(_))));
        // Well before the command would end, however busy the machine.
        assert!(started.elapsed() < Duration::from_secs(30));
        let missing = CommandResolver::new("/nonexistent/solver", vec![]);
        assert!(matches!(missing.resolve(b""), Err(CaptchaError::Failed(_))));
    }

    #[test]
    fn debug_output_hides_the_client_key() {
        let r = AntiCaptchaResolver::new("https://api.anti-captcha.com/", "sekrit-key");
        assert!(!format!("{r:?}").contains("sekrit"));
        assert_eq!(r.base_url, "https://api.anti-captcha.com");
    }
}
