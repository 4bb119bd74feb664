//! The API request a piece of work comes from, for the jobs and log lines it causes.
//! A route that queues jobs hands its request id to its database write
//! (`Db::write_for`); a worker runs each job under the id its row carries. For that
//! span the id is the thread's: jobs queued meanwhile store it (`db::jobs`), so a job's
//! own follow-ups (the deliveries of the events it emits) carry it too, and every log
//! line written meanwhile has it (`logging`). Outside such a span there is none:
//! scheduled runs, and jobs queued before the column existed.

use std::cell::RefCell;

thread_local! {
    static CURRENT: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Restores the thread's previous id when dropped (also when the work panics).
#[must_use]
pub struct Scope {
    previous: Option<String>,
}

/// Makes `request_id` the thread's until the returned scope is dropped.
pub fn enter(request_id: Option<String>) -> Scope {
    Scope {
        previous: CURRENT.with(|c| c.replace(request_id)),
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        let previous = self.previous.take();
        CURRENT.with(|c| *c.borrow_mut() = previous);
    }
}

/// Calls `f` with the thread's request id, without copying it.
pub fn with<T>(f: impl FnOnce(Option<&str>) -> T) -> T {
    CURRENT.with(|c| f(c.borrow().as_deref()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_nest_and_restore() {
        assert_eq!(with(|id| id.map(str::to_string)), None);
        {
            let _outer = enter(Some("a".into()));
            {
                let _inner = enter(None);
                assert_eq!(with(|id| id.map(str::to_string)), None);
            }
            assert_eq!(with(|id| id.map(str::to_string)).as_deref(), Some("a"));
        }
        assert_eq!(with(|id| id.map(str::to_string)), None);
        std::thread::spawn(|| assert!(with(|id| id.is_none())))
            .join()
            .expect("another thread has none");
    }
}
