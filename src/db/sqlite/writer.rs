//! The in-process writer turn. SQLite lets one writer in at a time and makes the others
//! poll with growing sleeps (up to 100 ms each), so under sustained load a thread that
//! commits and begins again at once keeps winning: while four extractions seeded a
//! million invoices, API writes and job bookkeeping waited past the 10 s busy timeout,
//! and another organization's webhook deliveries waited seconds behind a fan-out.
//! Taking this lock before `BEGIN IMMEDIATE` parks the process's writers in a queue
//! that the lock's release wakes at once; parking_lot's eventual fairness hands it to
//! the longest waiter whenever that one has waited about half a millisecond, so no
//! writer starves, without paying a thread switch on every commit as a strictly fair
//! lock does (that cost the fan-out 10%). SQLite's own busy handling is left only for
//! other processes (the CLI).

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

/// A held turn; dropping it wakes a waiter.
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
            drop(guard);
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
    fn a_waiter_gets_its_turn_while_another_thread_writes_back_to_back() {
        let writers = Writers::default();
        let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let busy = {
            let (writers, done) = (writers.clone(), done.clone());
            std::thread::spawn(move || {
                let mut turns = 0u64;
                // Gives up after a while so a starving waiter fails the test, not hangs it.
                while !done.load(std::sync::atomic::Ordering::SeqCst) && turns < 50_000_000 {
                    drop(writers.turn().expect("turn"));
                    turns += 1;
                }
                turns
            })
        };
        std::thread::sleep(Duration::from_millis(20));
        let mine = writers.turn().expect("the waiter's turn");
        done.store(true, std::sync::atomic::Ordering::SeqCst);
        drop(mine);
        assert!(
            busy.join().expect("join") < 50_000_000,
            "the waiter starved"
        );
    }
}
