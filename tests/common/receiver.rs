//! A webhook receiver in the test process: a tiny HTTP/1.1 server on 127.0.0.1 that
//! records every request and answers as programmed. It can be stopped (connections are
//! then refused) and started again on the same port.

use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the receiver answers one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    Status(u16),
    /// Reads the request, then never answers (holds the connection for this long).
    Hang(Duration),
}

/// One recorded request.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    /// Lower-cased names.
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
    pub at: Instant,
    /// Wall-clock time of arrival, to compare with the service's timestamps.
    pub received: std::time::SystemTime,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .get(&name.to_ascii_lowercase())
            .map(String::as_str)
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "webhook body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).to_string()
    }
}

#[derive(Default)]
struct Shared {
    requests: Mutex<Vec<Recorded>>,
    plan: Mutex<VecDeque<Reply>>,
    default: Mutex<Option<Reply>>,
    /// False once the receiver is dropped: hanging connections let go.
    alive: AtomicBool,
}

impl Shared {
    fn next_reply(&self) -> Reply {
        if let Some(r) = self.plan.lock().expect("plan lock").pop_front() {
            return r;
        }
        self.default
            .lock()
            .expect("default lock")
            .unwrap_or(Reply::Status(200))
    }
}

pub struct Receiver {
    pub port: u16,
    shared: Arc<Shared>,
    listening: Option<(Arc<AtomicBool>, JoinHandle<()>)>,
}

impl Receiver {
    /// Listens on a free port; answers 200 until told otherwise.
    pub fn start() -> Receiver {
        Receiver::start_on(0)
    }

    /// Listens on `port` (0: a free one).
    pub fn start_on(port: u16) -> Receiver {
        let shared = Arc::new(Shared::default());
        shared.alive.store(true, Ordering::SeqCst);
        let mut r = Receiver {
            port,
            shared,
            listening: None,
        };
        r.listen();
        r
    }

    /// A receiver that is not listening: its URL refuses connections until `resume`.
    pub fn down() -> Receiver {
        let mut r = Receiver::start();
        r.stop();
        r
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/hook", self.port)
    }

    /// Answers the next requests with `replies`, in order, then with the default.
    pub fn reply_with(&self, replies: &[Reply]) {
        self.shared
            .plan
            .lock()
            .expect("plan lock")
            .extend(replies.iter().copied());
    }

    /// How every request without a planned reply is answered (initially 200).
    pub fn set_default(&self, reply: Reply) {
        *self.shared.default.lock().expect("default lock") = Some(reply);
    }

    /// Stops listening: new connections are refused.
    pub fn stop(&mut self) {
        if let Some((running, handle)) = self.listening.take() {
            running.store(false, Ordering::SeqCst);
            let _ = handle.join();
        }
    }

    /// Listens again on the same port.
    pub fn resume(&mut self) {
        assert!(self.listening.is_none(), "already listening");
        self.listen();
    }

    fn listen(&mut self) {
        let listener = bind(self.port);
        listener.set_nonblocking(true).expect("nonblocking");
        self.port = listener.local_addr().expect("local addr").port();
        let running = Arc::new(AtomicBool::new(true));
        let (flag, shared) = (running.clone(), self.shared.clone());
        let handle = std::thread::spawn(move || {
            while flag.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((stream, _)) => {
                        let shared = shared.clone();
                        std::thread::spawn(move || serve(stream, &shared));
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
            // Dropping the listener closes the port.
        });
        self.listening = Some((running, handle));
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.shared.requests.lock().expect("requests lock").clone()
    }

    pub fn count(&self) -> usize {
        self.shared.requests.lock().expect("requests lock").len()
    }

    /// Waits until at least `n` requests arrived; returns all of them.
    pub fn wait_for(&self, n: usize, deadline: Duration) -> Vec<Recorded> {
        crate::common::app::eventually(deadline, &format!("{n} webhook request(s)"), || {
            let all = self.requests();
            (all.len() >= n).then_some(all)
        })
    }

    /// Waits for a request whose JSON body satisfies `pred`; returns it.
    pub fn wait_for_body(
        &self,
        what: &str,
        deadline: Duration,
        pred: impl Fn(&Value) -> bool,
    ) -> Recorded {
        crate::common::app::eventually(deadline, what, || {
            self.requests().into_iter().find(|r| {
                serde_json::from_slice::<Value>(&r.body)
                    .map(|v| pred(&v))
                    .unwrap_or(false)
            })
        })
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.shared.alive.store(false, Ordering::SeqCst);
        self.stop();
    }
}

fn bind(port: u16) -> TcpListener {
    // The port may still be held for a moment after a stop; retry briefly.
    let start = Instant::now();
    loop {
        match TcpListener::bind(("127.0.0.1", port)) {
            Ok(l) => return l,
            Err(e) if start.elapsed() < Duration::from_secs(5) && port != 0 => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("receiver cannot bind 127.0.0.1:{port}: {e}"),
        }
    }
}

/// Reads one request, records it, answers as planned, and closes the connection.
fn serve(mut stream: TcpStream, shared: &Shared) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let Some(recorded) = read_request(&mut stream) else {
        return;
    };
    let reply = shared.next_reply();
    shared
        .requests
        .lock()
        .expect("requests lock")
        .push(recorded);
    match reply {
        Reply::Status(code) => {
            let body = "ok";
            let head = format!(
                "HTTP/1.1 {code} {}\r\ncontent-type: text/plain\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                reason(code),
                body.len()
            );
            let _ = stream.write_all(head.as_bytes());
            let _ = stream.write_all(body.as_bytes());
            let _ = stream.flush();
        }
        Reply::Hang(d) => {
            let start = Instant::now();
            while start.elapsed() < d && shared.alive.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

fn read_request(stream: &mut TcpStream) -> Option<Recorded> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        let n = stream.read(&mut chunk).ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let request_line = lines.next()?;
    let mut parts = request_line.split(' ');
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let headers: HashMap<String, String> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let mut body = buf[head_end + 4..].to_vec();
    if headers
        .get("transfer-encoding")
        .is_some_and(|t| t.eq_ignore_ascii_case("chunked"))
    {
        // Read to the terminating chunk, then decode.
        while find(&body, b"0\r\n\r\n").is_none() {
            let n = stream.read(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        body = dechunk(&body);
    } else {
        let len: usize = headers
            .get("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while body.len() < len {
            let n = stream.read(&mut chunk).ok()?;
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
    }
    Some(Recorded {
        method,
        path,
        headers,
        body,
        at: Instant::now(),
        received: std::time::SystemTime::now(),
    })
}

fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = vec![];
    while let Some(i) = find(data, b"\r\n") {
        let size_line = String::from_utf8_lossy(&data[..i]).to_string();
        let size = usize::from_str_radix(size_line.split(';').next().unwrap_or("0").trim(), 16)
            .unwrap_or(0);
        data = &data[i + 2..];
        if size == 0 || data.len() < size {
            break;
        }
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or(&[]);
    }
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn reason(code: u16) -> &'static str {
    match code {
        200 => "OK",
        201 => "Created",
        204 => "No Content",
        301 => "Moved Permanently",
        302 => "Found",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}
