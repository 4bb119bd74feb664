//! A TCP proxy between the binary and the test's PostgreSQL server that can lose a
//! COMMIT's answer on purpose: the one fault a restart only hits by chance. It reads
//! the protocol (plain: the binary is given `sslmode=disable` through it) far enough to
//! know which statements a transaction ran (`Parse` names each prepared statement's
//! text, `Bind` runs one, `Query` runs a simple one) and when it commits (`COMMIT`,
//! either way), and cuts the next commit of a transaction that ran a statement holding
//! a marker:
//!
//! - `Cut::BeforeCommit`: the COMMIT never reaches the server (it rolls back);
//! - `Cut::AfterCommit`: the server commits, and its answer is dropped with the
//!   connection, as when the network or the server fails at that moment.
//!
//! After a cut the proxy may refuse new connections for a while (the server looks down).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    BeforeCommit,
    AfterCommit,
}

struct Armed {
    marker: String,
    cut: Cut,
    then_refuse: Duration,
}

#[derive(Default)]
struct Shared {
    armed: Mutex<Option<Armed>>,
    refuse_until: Mutex<Option<Instant>>,
    cuts: AtomicUsize,
}

pub struct PgProxy {
    pub port: u16,
    shared: Arc<Shared>,
}

impl PgProxy {
    /// A proxy to the server at `upstream` (`host:port`).
    pub fn start(upstream: &str) -> PgProxy {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the proxy");
        let port = listener.local_addr().expect("addr").port();
        let shared = Arc::new(Shared::default());
        let (upstream, state) = (upstream.to_string(), shared.clone());
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                let refusing = state
                    .refuse_until
                    .lock()
                    .expect("lock")
                    .is_some_and(|until| Instant::now() < until);
                if refusing {
                    drop(client);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                relay(client, server, state.clone());
            }
        });
        PgProxy { port, shared }
    }

    /// `url` (a postgres:// URL) through this proxy, without TLS.
    pub fn url(&self, url: &str) -> String {
        let mut url = url::Url::parse(url).expect("a postgres URL");
        url.set_host(Some("127.0.0.1")).expect("host");
        url.set_port(Some(self.port)).expect("port");
        url.query_pairs_mut().append_pair("sslmode", "disable");
        url.to_string()
    }

    /// Cuts the next COMMIT of a transaction that ran a statement containing `marker`,
    /// then refuses connections for `then_refuse`.
    pub fn cut_next_commit(&self, marker: &str, cut: Cut, then_refuse: Duration) {
        *self.shared.armed.lock().expect("lock") = Some(Armed {
            marker: marker.to_string(),
            cut,
            then_refuse,
        });
    }

    /// How many commits were cut so far.
    pub fn cuts(&self) -> usize {
        self.shared.cuts.load(Ordering::SeqCst)
    }
}

/// One connection's state, seen by both directions.
#[derive(Default)]
struct Session {
    /// The armed marker ran in the open transaction.
    marked: AtomicBool,
    /// A COMMIT went to the server to have its answer dropped.
    drop_answer: Mutex<Option<Duration>>,
}

fn relay(client: TcpStream, server: TcpStream, shared: Arc<Shared>) {
    // One message per write: without NODELAY each waits for the last one's ACK.
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let session = Arc::new(Session::default());
    let (c2, s2) = (
        client.try_clone().expect("clone"),
        server.try_clone().expect("clone"),
    );
    let (sh, se) = (shared.clone(), session.clone());
    std::thread::spawn(move || {
        let _ = from_client(client, server, &sh, &se);
    });
    std::thread::spawn(move || {
        let _ = from_server(s2, c2, &shared, &session);
    });
}

fn cut(a: &TcpStream, b: &TcpStream, shared: &Shared, refuse: Duration) {
    *shared.refuse_until.lock().expect("lock") = Some(Instant::now() + refuse);
    shared.cuts.fetch_add(1, Ordering::SeqCst);
    let _ = a.shutdown(Shutdown::Both);
    let _ = b.shutdown(Shutdown::Both);
}

/// A typed message: its type byte and payload.
fn message(from: &mut TcpStream) -> std::io::Result<(u8, Vec<u8>)> {
    let mut head = [0u8; 5];
    from.read_exact(&mut head)?;
    let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let mut payload = vec![0u8; len.saturating_sub(4)];
    from.read_exact(&mut payload)?;
    Ok((head[0], payload))
}

fn send(to: &mut TcpStream, kind: u8, payload: &[u8]) -> std::io::Result<()> {
    let mut out = Vec::with_capacity(payload.len() + 5);
    out.push(kind);
    out.extend_from_slice(&(payload.len() as u32 + 4).to_be_bytes());
    out.extend_from_slice(payload);
    to.write_all(&out)
}

/// The NUL-terminated strings at the start of `payload`.
fn strings(payload: &[u8], n: usize) -> Vec<String> {
    payload
        .split(|b| *b == 0)
        .take(n)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

fn from_client(
    mut client: TcpStream,
    mut server: TcpStream,
    shared: &Shared,
    session: &Session,
) -> std::io::Result<()> {
    // The startup message has no type byte.
    let mut len = [0u8; 4];
    client.read_exact(&mut len)?;
    let mut startup = vec![0u8; (u32::from_be_bytes(len) as usize).saturating_sub(4)];
    client.read_exact(&mut startup)?;
    server.write_all(&len)?;
    server.write_all(&startup)?;
    let mut statements: HashMap<String, String> = HashMap::new();
    loop {
        let (kind, payload) = message(&mut client)?;
        // What the message runs: a simple query's text, or a prepared statement's.
        let text = match kind {
            b'P' => {
                let parts = strings(&payload, 2);
                statements.insert(parts[0].clone(), parts[1].clone());
                None
            }
            b'B' => statements.get(&strings(&payload, 2)[1]).cloned(),
            b'Q' => Some(strings(&payload, 1)[0].clone()),
            _ => None,
        };
        if let Some(text) = text {
            let upper = text.trim().to_ascii_uppercase();
            let armed = shared
                .armed
                .lock()
                .expect("lock")
                .as_ref()
                .map(|a| a.marker.clone());
            if armed.is_some_and(|marker| text.contains(&marker)) {
                session.marked.store(true, Ordering::SeqCst);
            } else if upper == "COMMIT" && session.marked.swap(false, Ordering::SeqCst) {
                if let Some(armed) = shared.armed.lock().expect("lock").take() {
                    match armed.cut {
                        Cut::BeforeCommit => {
                            cut(&client, &server, shared, armed.then_refuse);
                            return Ok(());
                        }
                        Cut::AfterCommit => {
                            *session.drop_answer.lock().expect("lock") = Some(armed.then_refuse);
                        }
                    }
                }
            } else if upper.starts_with("BEGIN") || upper == "ROLLBACK" {
                session.marked.store(false, Ordering::SeqCst);
            }
        }
        send(&mut server, kind, &payload)?;
    }
}

fn from_server(
    mut server: TcpStream,
    mut client: TcpStream,
    shared: &Shared,
    session: &Session,
) -> std::io::Result<()> {
    loop {
        let (kind, payload) = message(&mut server)?;
        if kind == b'C' && strings(&payload, 1)[0] == "COMMIT" {
            if let Some(refuse) = session.drop_answer.lock().expect("lock").take() {
                cut(&client, &server, shared, refuse);
                return Ok(());
            }
        }
        send(&mut client, kind, &payload)?;
    }
}
