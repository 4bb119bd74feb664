//! The webhook receiver `bench/run` delivers to: a thread per connection with HTTP/1.1
//! keep-alive, so the service's delivery rate is measured and not a Python server's.
//! Every POST is answered 204 and recorded as (arrival time, the event's `created_at`
//! and `id`, the path). `GET /count` answers how many are recorded; `GET /arrivals`
//! hands them over as JSON lines and forgets them. Prints `receiver listening on
//! http://127.0.0.1:PORT` once bound; runs until killed.

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

type Arrivals = Arc<Mutex<Vec<String>>>;

/// A request's method, path, body, and whether the client keeps the connection.
struct Request {
    method: String,
    path: String,
    body: Vec<u8>,
    keep_alive: bool,
}

/// Reads one request; None when the client closed the connection between requests.
fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<Request>> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or_default().to_string();
    let path = parts.next().unwrap_or_default().to_string();
    let mut keep_alive = parts.next() != Some("HTTP/1.0");
    let mut length = 0usize;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let header = line.trim_end();
        if header.is_empty() {
            break;
        }
        let Some((name, value)) = header.split_once(':') else {
            continue;
        };
        let value = value.trim();
        if name.eq_ignore_ascii_case("content-length") {
            length = value.parse().unwrap_or(0);
        } else if name.eq_ignore_ascii_case("connection") {
            keep_alive = !value.eq_ignore_ascii_case("close");
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    Ok(Some(Request {
        method,
        path,
        body,
        keep_alive,
    }))
}

/// One recorded delivery as a JSON line; a body that is not an event is recorded with
/// null fields, so a wrong payload shows in the figures instead of vanishing.
fn arrival(path: &str, body: &[u8]) -> String {
    let at = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default();
    let event: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    serde_json::json!({
        "at": at,
        "created_at": event.get("created_at"),
        "id": event.get("id"),
        "path": path,
    })
    .to_string()
}

fn respond(stream: &mut TcpStream, status: &str, body: &[u8]) -> std::io::Result<()> {
    let head = if status.starts_with("204") {
        format!("HTTP/1.1 {status}\r\n\r\n")
    } else {
        format!(
            "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
    };
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)
}

fn serve(stream: TcpStream, arrivals: Arrivals) -> std::io::Result<()> {
    stream.set_nodelay(true)?;
    let mut writer = stream.try_clone()?;
    let mut reader = BufReader::new(stream);
    while let Some(req) = read_request(&mut reader)? {
        match (req.method.as_str(), req.path.as_str()) {
            ("GET", "/count") => {
                let n = arrivals.lock().expect("lock").len();
                respond(&mut writer, "200 OK", n.to_string().as_bytes())?;
            }
            ("GET", "/arrivals") => {
                let taken = std::mem::take(&mut *arrivals.lock().expect("lock"));
                respond(&mut writer, "200 OK", taken.join("\n").as_bytes())?;
            }
            ("POST", path) => {
                let line = arrival(path, &req.body);
                arrivals.lock().expect("lock").push(line);
                respond(&mut writer, "204 No Content", b"")?;
            }
            _ => respond(&mut writer, "404 Not Found", b"")?,
        }
        if !req.keep_alive {
            break;
        }
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    println!("receiver listening on http://{}", listener.local_addr()?);
    std::io::stdout().flush()?;
    let arrivals: Arrivals = Arc::default();
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let arrivals = arrivals.clone();
        std::thread::spawn(move || serve(stream, arrivals));
    }
    Ok(())
}
