//! What the docs tests need beyond the shared harness (`tests/common/app.rs`): a GET
//! that sends its path exactly as written.

use crate::common::app::TestApp;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// A GET sent byte for byte over a raw socket, so that the path is not normalized
/// (`/docs/../Cargo.toml`). Returns the status, the lower-cased head and the body.
pub fn raw_get(app: &TestApp, path: &str) -> (u16, String, String) {
    let authority = format!("127.0.0.1:{}", app.port);
    let mut stream = TcpStream::connect(&authority).expect("connect");
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .expect("timeout");
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
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
