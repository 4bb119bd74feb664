//! A named thread that runs a task, waits, and runs it again until stopped: the WAL
//! checkpointer, the scheduled backups and the extraction scheduler. Stopping wakes
//! the wait at once.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Periodic {
    stop: Arc<(Mutex<bool>, Condvar)>,
    thread: JoinHandle<()>,
}

impl Periodic {
    /// Waits `first`, then calls `task`, which returns how long to wait before the next
    /// call.
    pub fn spawn(
        name: &str,
        first: Duration,
        mut task: impl FnMut() -> Duration + Send + 'static,
    ) -> anyhow::Result<Periodic> {
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut wait = first;
                loop {
                    let (lock, cond) = &*signal;
                    let stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
                    let (stopped, _) = cond
                        .wait_timeout_while(stopped, wait, |s| !*s)
                        .unwrap_or_else(|p| p.into_inner());
                    if *stopped {
                        break;
                    }
                    drop(stopped);
                    wait = task();
                }
            })?;
        Ok(Periodic { stop, thread })
    }

    /// Stops the thread, letting a running task finish.
    pub fn stop(self) {
        let (lock, cond) = &*self.stop;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cond.notify_all();
        let _ = self.thread.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn runs_repeatedly_and_stops_without_waiting_out_the_delay() {
        let runs = Arc::new(AtomicUsize::new(0));
        let counted = runs.clone();
        let p = Periodic::spawn("test", Duration::ZERO, move || {
            counted.fetch_add(1, Ordering::SeqCst);
            Duration::from_millis(5)
        })
        .expect("spawn");
        while runs.load(Ordering::SeqCst) < 3 {
            std::thread::sleep(Duration::from_millis(5));
        }
        p.stop();

        let idle =
            Periodic::spawn("idle", Duration::from_secs(3600), || Duration::ZERO).expect("spawn");
        let start = std::time::Instant::now();
        idle.stop();
        assert!(start.elapsed() < Duration::from_secs(5));
    }
}
