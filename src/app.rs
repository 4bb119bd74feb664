//! The app's state: what the HTTP handlers and the background workers share. Work a
//! handler queues, and the events it emits, need nothing from here after the commit:
//! the write transaction wakes the workers and dates the first delivery (`db::Tx`).

use crate::config::Config;
use crate::crypto::Cipher;
use crate::db::Db;
use crate::sat::Channels;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Context {
    pub db: Db,
    pub cipher: Cipher,
    /// The SAT's channels (CIEC and e.firma).
    pub channels: Channels,
    pub config: Config,
    pub agent: ureq::Agent,
    pub stopping: AtomicBool,
    pub metrics: Arc<crate::metrics::Metrics>,
    /// The SAT status checker (`jobs::sat_status`); None with `--sat-status-rate 0`.
    pub sat_status: Option<crate::sat::status::Checks>,
    /// The SAT's stamping certificates and the authorities seals are checked against.
    pub sat_certificates: Arc<crate::sat::certificates::Store>,
}

impl Context {
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }
}
