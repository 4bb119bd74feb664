//! The in-process writer turn. SQLite lets one writer in at a time and makes the others
//! poll with growing sleeps (up to 100 ms each), so under sustained load a thread that
//! commits and begins again at once keeps winning: while four extractions seeded a
//! million invoices, API writes and job bookkeeping waited past the 10 s busy timeout.
//! Taking this lock before `BEGIN IMMEDIATE` queues the process's writers in order
//! (parking_lot queues waiters and a fair unlock hands the lock to the oldest), and
//! SQLite's own busy handling is left only for other processes (the CLI).

use parking_lot::{Mutex, MutexGuard};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

/// As long as SQLite's busy timeout: a writer waits no longer for its turn than it
/// would have waited for the lock itself.
const WAIT: Duration = Duration::from_secs(10);

thread_local! {
    /// Whether this thread holds the turn: a nested transaction (a bug, but one SQLite
    /// would report as busy) must not deadlock on it.
    static HELD: Cell<bool> = const { Cell::new(false) };
}

/// The turn stayed taken past the wait: load, retried like SQLite's busy error.
#[derive(Debug, thiserror::Error)]
#[error("database is busy: no write turn within {}s", WAIT.as_secs())]
pub struct Busy;

#[derive(Clone, Default)]
pub struct Writers(Arc<Mutex<()>>);

/// A held turn; dropping it hands the lock to the longest waiter.
pub struct Turn<'a>(Option<MutexGuard<'a, ()>>);

impl Writers {
    pub fn turn(&self) -> Result<Turn<'_>, Busy> {
        if HELD.get() {
            return Ok(Turn(None));
        }
        let guard = self.0.try_lock_for(WAIT).ok_or(Busy)?;
        HELD.set(true);
        Ok(Turn(Some(guard)))
    }
}

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        if let Some(guard) = self.0.take() {
            HELD.set(false);
            MutexGuard::unlock_fair(guard);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_nested_turn_on_the_same_thread_does_not_deadlock() {
        let writers = Writers::default();
        let outer = writers.turn().expect("turn");
        let inner = writers.turn().expect("nested turn");
        drop(inner);
        assert!(HELD.get(), "the outer turn is still held");
        drop(outer);
        assert!(!HELD.get());
    }

    #[test]
    fn waiters_are_served_in_arrival_order() {
        let writers = Writers::default();
        let order = Arc::new(Mutex::new(vec![]));
        let first = writers.turn().expect("turn");
        let handles: Vec<_> = (0..4)
            .map(|i| {
                let (writers, order) = (writers.clone(), order.clone());
                let handle = std::thread::spawn(move || {
                    let _turn = writers.turn().expect("turn");
                    order.lock().push(i);
                });
                // Let thread i queue before thread i + 1 starts.
                std::thread::sleep(Duration::from_millis(50));
                handle
            })
            .collect();
        drop(first);
        for h in handles {
            h.join().expect("join");
        }
        assert_eq!(*order.lock(), vec![0, 1, 2, 3]);
    }
}
