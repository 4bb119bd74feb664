//! A fake of the SAT's certificate repository (`rdc.sat.gob.mx/rccf`): serves the
//! certificates it holds at the SAT's paths, `404` for any other, and `503` for all
//! while it is down. It counts the certificates it served, per path.

use crate::common::fake_http::{Response, Server};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct FakeRepository {
    pub server: Server,
    down: Arc<AtomicBool>,
    served: Arc<Mutex<HashMap<String, usize>>>,
    requests: Arc<Mutex<usize>>,
}

/// The SAT's path of certificate `n`.
pub fn path(n: &str) -> String {
    format!(
        "/rccf/{}/{}/{}/{}/{}/{n}.cer",
        &n[0..6],
        &n[6..12],
        &n[12..14],
        &n[14..16],
        &n[16..18]
    )
}

impl FakeRepository {
    /// Holds `certificates` (number, DER); starts up unless `down`.
    pub fn start(certificates: &[(&str, Vec<u8>)], down: bool) -> FakeRepository {
        let held: HashMap<String, Vec<u8>> = certificates
            .iter()
            .map(|(n, der)| (path(n), der.clone()))
            .collect();
        let down = Arc::new(AtomicBool::new(down));
        let served = Arc::new(Mutex::new(HashMap::new()));
        let requests = Arc::new(Mutex::new(0));
        let (is_down, count, all) = (down.clone(), served.clone(), requests.clone());
        let server = Server::start(Arc::new(move |req| {
            *all.lock().expect("lock") += 1;
            if is_down.load(Ordering::SeqCst) {
                return Response::new(503, "text/html", "<h1>Service Unavailable</h1>");
            }
            match held.get(req.path()) {
                Some(der) => {
                    *count
                        .lock()
                        .expect("lock")
                        .entry(req.path().to_string())
                        .or_insert(0) += 1;
                    Response::new(200, "application/pkix-cert", der.clone())
                }
                None => Response::new(404, "text/html", "<h1>Not Found</h1>"),
            }
        }));
        FakeRepository {
            server,
            down,
            served,
            requests,
        }
    }

    /// The base to give `--sat-certificates-url`.
    pub fn base(&self) -> String {
        self.server.url("/rccf")
    }

    pub fn set_down(&self, down: bool) {
        self.down.store(down, Ordering::SeqCst);
    }

    /// How many times certificate `n` was served.
    pub fn served(&self, n: &str) -> usize {
        self.served
            .lock()
            .expect("lock")
            .get(&path(n))
            .copied()
            .unwrap_or(0)
    }

    /// Requests of any kind, answered or refused.
    pub fn requests(&self) -> usize {
        *self.requests.lock().expect("lock")
    }
}
