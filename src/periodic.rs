//! A named thread that runs a task, waits, and runs it again until stopped: the WAL
//! checkpointer, the scheduled backups and the extraction scheduler. Stopping wakes
//! the wait at once; a long task can watch for it (`Stopping`) and give up early.

use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub struct Periodic {
    stop: Stopping,
    thread: JoinHandle<()>,
}

/// Whether the thread is asked to stop, for a task that can give up early.
#[derive(Clone, Default)]
pub struct Stopping(Arc<(Mutex<bool>, Condvar)>);

impl Stopping {
    pub fn is_set(&self) -> bool {
        *self.0 .0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits up to `wait`; true when the stop came first.
    pub fn wait(&self, wait: Duration) -> bool {
        let (lock, cond) = &*self.0;
        let stopped = lock.lock().unwrap_or_else(|p| p.into_inner());
        let (stopped, _) = cond
            .wait_timeout_while(stopped, wait, |s| !*s)
            .unwrap_or_else(|p| p.into_inner());
        *stopped
    }

    /// Asks the thread to stop (`Periodic::stop` does).
    pub fn set(&self) {
        let (lock, cond) = &*self.0;
        *lock.lock().unwrap_or_else(|p| p.into_inner()) = true;
        cond.notify_all();
    }
}

impl Periodic {
    /// Waits `first`, then calls `task`, which returns how long to wait before the next
    /// call.
    pub fn spawn(
        name: &str,
        first: Duration,
        mut task: impl FnMut() -> Duration + Send + 'static,
    ) -> anyhow::Result<Periodic> {
        Periodic::spawn_watching(name, first, move |_| task())
    }

    /// `spawn`, handing the task the thread's `Stopping`, so a long one (a download)
    /// can give up when the thread is stopped instead of holding the stop up.
    pub fn spawn_watching(
        name: &str,
        first: Duration,
        mut task: impl FnMut(&Stopping) -> Duration + Send + 'static,
    ) -> anyhow::Result<Periodic> {
        let stop = Stopping::default();
        let signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || {
                let mut wait = first;
                while !signal.wait(wait) {
                    wait = task(&signal);
                }
            })?;
        Ok(Periodic { stop, thread })
    }

    /// Stops the thread, letting a running task finish (or give up, if it watches).
    pub fn stop(self) {
        self.stop.set();
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

    #[test]
    fn a_watching_task_sees_the_stop() {
        let (started, seen) = (Stopping::default(), Arc::new(AtomicUsize::new(0)));
        let (tell, counted) = (started.clone(), seen.clone());
        let p = Periodic::spawn_watching("watching", Duration::ZERO, move |stopping| {
            tell.set();
            // Gives up as soon as the thread is stopped, however long it meant to run.
            if stopping.wait(Duration::from_secs(3600)) {
                counted.fetch_add(1, Ordering::SeqCst);
            }
            Duration::from_secs(3600)
        })
        .expect("spawn");
        assert!(started.wait(Duration::from_secs(60)), "the task ran");
        p.stop();
        assert_eq!(seen.load(Ordering::SeqCst), 1);
    }
}
