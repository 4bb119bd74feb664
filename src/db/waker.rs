//! Wakes sleeping workers. A write transaction that queued a job wakes them once it
//! commits (`Tx`), so new work starts at once instead of at the next poll.

use std::sync::{Condvar, Mutex};
use std::time::Duration;

#[derive(Default)]
pub struct Waker {
    generation: Mutex<u64>,
    cond: Condvar,
}

impl Waker {
    pub fn wake(&self) {
        let mut g = self.generation.lock().unwrap_or_else(|p| p.into_inner());
        *g = g.wrapping_add(1);
        self.cond.notify_all();
    }

    /// How many wakes there have been: pass it to `wait`.
    pub fn current(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sleeps until woken after `seen` or until `timeout`.
    pub fn wait(&self, seen: u64, timeout: Duration) {
        let g = self.generation.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self
            .cond
            .wait_timeout_while(g, timeout, |g| *g == seen)
            .map_err(|p| p.into_inner());
    }
}
