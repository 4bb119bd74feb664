//! Wakes sleeping workers. A write transaction that queued work wakes one worker of that
//! kind once it commits (`Tx`), so new work starts at once instead of at the next poll.
//!
//! One worker, not all: a worker that claims a job passes the wake on to the next
//! sleeping one (`jobs`), so a burst of 10,000 deliveries brings the delivery workers in
//! one claim at a time, and a single new job costs a single claim. Waking every worker
//! on every commit made each finished delivery start a claim on each of 20 threads, all
//! queueing for the one writer (BENCHMARKS.md, the fan-out's profile).

use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// Which workers a wake is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Work {
    /// Credential validations and extractions (the SAT workers).
    Sat,
    /// Webhook deliveries.
    Deliveries,
    /// The SAT status checker (its queue is the invoices' next check times).
    StatusChecks,
}

impl Work {
    pub const ALL: [Work; 3] = [Work::Sat, Work::Deliveries, Work::StatusChecks];

    pub fn index(self) -> usize {
        self as usize
    }
}

#[derive(Default)]
struct Signal {
    generation: Mutex<u64>,
    cond: Condvar,
}

#[derive(Default)]
pub struct Waker {
    signals: [Signal; 3],
}

impl Waker {
    fn signal(&self, work: Work) -> &Signal {
        &self.signals[work.index()]
    }

    /// Wakes one sleeping worker of `work` (none is lost: a worker between `current`
    /// and `wait` sees the new generation and does not sleep).
    pub fn wake_one(&self, work: Work) {
        let s = self.signal(work);
        let mut g = s.generation.lock().unwrap_or_else(|p| p.into_inner());
        *g = g.wrapping_add(1);
        s.cond.notify_one();
    }

    /// Wakes every worker of every kind: for stopping, and after wakes may have been
    /// missed (`db::postgres::listen`).
    pub fn wake_all(&self) {
        for work in Work::ALL {
            let s = self.signal(work);
            let mut g = s.generation.lock().unwrap_or_else(|p| p.into_inner());
            *g = g.wrapping_add(1);
            s.cond.notify_all();
        }
    }

    /// How many wakes of `work` there have been: pass it to `wait`.
    pub fn current(&self, work: Work) -> u64 {
        *self
            .signal(work)
            .generation
            .lock()
            .unwrap_or_else(|p| p.into_inner())
    }

    /// Sleeps until a wake of `work` after `seen`, or until `timeout`.
    pub fn wait(&self, work: Work, seen: u64, timeout: Duration) {
        let s = self.signal(work);
        let g = s.generation.lock().unwrap_or_else(|p| p.into_inner());
        let _ = s
            .cond
            .wait_timeout_while(g, timeout, |g| *g == seen)
            .map_err(|p| p.into_inner());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::time::Instant;

    /// Starts `n` threads sleeping on `work` for up to a minute; each counts itself in
    /// `woken` when it returns before that.
    fn sleepers(
        waker: &Arc<Waker>,
        work: Work,
        n: usize,
        woken: &Arc<AtomicUsize>,
    ) -> Vec<std::thread::JoinHandle<()>> {
        let ready = Arc::new(std::sync::Barrier::new(n + 1));
        let threads = (0..n)
            .map(|_| {
                let (waker, woken, ready) = (waker.clone(), woken.clone(), ready.clone());
                std::thread::spawn(move || {
                    let seen = waker.current(work);
                    ready.wait();
                    let start = Instant::now();
                    waker.wait(work, seen, Duration::from_secs(60));
                    if start.elapsed() < Duration::from_secs(60) {
                        woken.fetch_add(1, Ordering::SeqCst);
                    }
                })
            })
            .collect();
        ready.wait();
        threads
    }

    fn settle_until(woken: &AtomicUsize, n: usize) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while woken.load(Ordering::SeqCst) < n && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn a_wake_reaches_only_workers_of_its_kind_and_stopping_wakes_all() {
        let waker = Arc::new(Waker::default());
        let deliveries = Arc::new(AtomicUsize::new(0));
        let sat = Arc::new(AtomicUsize::new(0));
        let mut threads = sleepers(&waker, Work::Deliveries, 3, &deliveries);
        threads.extend(sleepers(&waker, Work::Sat, 2, &sat));
        // At least one returns (exactly one when all are inside `wait`; one that was about
        // to sleep sees the new generation and returns too, which is the point).
        waker.wake_one(Work::Deliveries);
        settle_until(&deliveries, 1);
        assert!(deliveries.load(Ordering::SeqCst) >= 1, "a delivery worker");
        std::thread::sleep(Duration::from_millis(100));
        assert_eq!(sat.load(Ordering::SeqCst), 0, "no SAT worker");
        waker.wake_all();
        for t in threads {
            t.join().expect("thread");
        }
        assert_eq!(
            deliveries.load(Ordering::SeqCst) + sat.load(Ordering::SeqCst),
            5
        );
    }
}
