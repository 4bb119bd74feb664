//! Heavy requests share the service fairly: one organization's exports (downloaded by
//! clients that never read them), summaries and e.firma checks leave another
//! organization's list and `/up` answering, and past its share the organization is told
//! 429 with `Retry-After`.

use crate::common::app::{basic, eventually, Client, TestApp};
use crate::common::efirma_files::{efirma_password, key_with_rounds, own, upload, FIEL_RFC};
use crate::common::invoices::{create_extraction, date, id_of, valid_entity};
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Each of B's requests answers within this (the bad case never answers).
const PROMPT: Duration = Duration::from_secs(10);

/// A request whose answer is never read: once the socket buffers fill, the server
/// cannot send more.
fn never_read(app: &TestApp, path: &str) -> TcpStream {
    let mut socket = TcpStream::connect(("127.0.0.1", app.port)).expect("connect");
    let auth = basic(&app.creds.email, &app.creds.password);
    write!(
        socket,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {auth}\r\n\r\n"
    )
    .expect("send");
    socket
}

/// What `socket` sends within a short wait, added to `buf` (nothing when it is silent).
fn read_more(socket: &mut TcpStream, buf: &mut Vec<u8>) {
    socket
        .set_read_timeout(Some(Duration::from_millis(200)))
        .expect("timeout");
    let mut chunk = [0; 1024];
    if let Ok(n) = socket.read(&mut chunk) {
        buf.extend_from_slice(&chunk[..n]);
    }
}

/// The start of each response on `sockets`, read until one export has started (an
/// admitted export answers once its turn comes and it has written its first bytes,
/// which a busy machine may take a while to reach) and the others have said what they
/// have so far.
fn heads(sockets: &mut [TcpStream]) -> Vec<String> {
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut heads = vec![Vec::new(); sockets.len()];
    loop {
        for (socket, head) in sockets.iter_mut().zip(&mut heads) {
            if head.len() < 1024 && !answered(head) {
                read_more(socket, head);
            }
        }
        let started = heads.iter().any(|h| h.starts_with(b"HTTP/1.1 200"));
        if started || Instant::now() > deadline {
            return heads
                .iter()
                .map(|h| String::from_utf8_lossy(h).into_owned())
                .collect();
        }
    }
}

/// Whether `buf` holds a response's headers and its `content-length` body (a streamed
/// export has none: its headers are enough).
fn answered(buf: &[u8]) -> bool {
    let text = String::from_utf8_lossy(buf);
    let Some((headers, body)) = text.split_once("\r\n\r\n") else {
        return false;
    };
    let length = headers.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse::<usize>().ok())?
    });
    length.is_none_or(|n| body.len() >= n)
}

fn within(what: &str, f: impl FnOnce() -> u16) {
    let started = Instant::now();
    assert_eq!(f(), 200, "{what}");
    assert!(
        started.elapsed() < PROMPT,
        "{what} took {:?}",
        started.elapsed()
    );
}

#[test]
fn unread_exports_and_heavy_requests_of_one_org_leave_another_org_and_up_answering() {
    let app = TestApp::spawn();
    let a = app.client();
    let big = id_of(&valid_entity(&a, "BIG900101AAA", "sandbox1"));
    // ~9,600 invoices: each concept export is ~4.6 MB, more than the socket buffers hold.
    let run = id_of(&create_extraction(
        &a,
        &big,
        date("2026-03-02"),
        date("2026-03-15"),
        "issued",
    ));
    eventually(Duration::from_secs(600), "the BIG extraction", || {
        let e = a.get(&format!("/v1/extractions/{run}")).expect(200);
        assert_ne!(e["status"], "failed", "{e}");
        (e["status"] == "finished").then_some(())
    });
    let b = app.client_as(&app.create_user_in_new_org());
    b.create_entity(&crate::common::app::tax_id("FAR"), "12345678");
    let anonymous = app.anonymous();
    let efirma = a.create_entity(FIEL_RFC, "12345678");

    let mut unread: Vec<TcpStream> = (0..20)
        .map(|_| never_read(&app, "/v1/invoices/export/items"))
        .collect();
    // More heavy work of A's at once: year summaries and e.firma checks at the cap.
    let heavy: Vec<_> = (0..6)
        .map(|n| {
            // Their time on a busy machine is not what this test checks.
            let a: Client = a.patient(Duration::from_secs(600));
            let (big, efirma) = (big.clone(), id_of(&efirma));
            std::thread::spawn(move || {
                if n % 2 == 0 {
                    a.get(&format!(
                        "/v1/entities/{big}/summary?from=2026-01-01&to=2026-12-31&direction=issued"
                    ))
                    .status
                } else {
                    let body = upload(
                        &own("EKU9003173C9.cer"),
                        &key_with_rounds(100_000),
                        &efirma_password(),
                    );
                    a.request(
                        "PUT",
                        &format!("/v1/entities/{efirma}/efirma"),
                        Some(body.to_string().as_bytes()),
                        &[],
                    )
                    .status
                }
            })
        })
        .collect();

    // B and /up are served promptly all the while A's heavy work runs.
    let mut rounds = 0;
    while rounds < 5 || !heavy.iter().all(|h| h.is_finished()) {
        within("B's list", || b.get("/v1/invoices?limit=50").status);
        within("B's entities", || b.get("/v1/entities").status);
        within("/up", || anonymous.get("/up").status);
        rounds += 1;
    }

    // A's own share: some downloads started, the ones past its queue were refused at once.
    let heads = heads(&mut unread);
    let started = heads
        .iter()
        .filter(|h| h.starts_with("HTTP/1.1 200"))
        .count();
    let refused: Vec<&String> = heads
        .iter()
        .filter(|h| h.starts_with("HTTP/1.1 429"))
        .collect();
    assert!(started >= 1, "{heads:?}");
    // Each keeps its spool file while unread: at most 16 open at once (`OPEN_DOWNLOADS`).
    assert!(started <= 16, "{heads:?}");
    assert!(!refused.is_empty(), "{heads:?}");
    for r in refused {
        let lower = r.to_ascii_lowercase();
        assert!(lower.contains("retry-after: 5"), "{r}");
        assert!(lower.contains("content-type: application/json"), "{r}");
        // The documented shape: one `message` string, nothing else.
        let body: serde_json::Value =
            serde_json::from_str(r.split("\r\n\r\n").nth(1).unwrap_or_default())
                .unwrap_or_else(|e| panic!("{e}: {r}"));
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("Too many exports"), "{r}");
        assert_eq!(body.as_object().map(|o| o.len()), Some(1), "{r}");
    }
    drop(unread);
    for h in heavy {
        let status = h.join().expect("thread");
        assert!(matches!(status, 200 | 429), "{status}");
    }
    within("B's list after", || b.get("/v1/invoices?limit=50").status);
}
