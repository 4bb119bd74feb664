//! What a job handler decided, and how the queue records it.

use crate::db::{self, jobs::Job};
use std::time::Duration;

/// What a job handler decided; the queue alone turns it into rows.
#[derive(Debug)]
pub enum Outcome {
    Done,
    Retry {
        after: Duration,
        error: String,
    },
    /// Not an error: the job waits on something outside (the SAT preparing a request)
    /// and runs again after `after`, with its failure count cleared.
    Wait {
        after: Duration,
    },
    /// The handler already recorded its outcome with `settle` (or `settle_and_claim`,
    /// whose claimed job it carries), in the transaction of its final writes: one commit
    /// instead of two, and no window between them.
    Settled(Option<Job>),
}

/// Records a job's outcome in `tx`: a finished job is deleted, a retry rescheduled.
pub fn settle(tx: &db::Conn, job: &Job, outcome: &Outcome) -> anyhow::Result<()> {
    match outcome {
        Outcome::Done => db::jobs::complete(tx, job.id),
        Outcome::Retry { after, error } => {
            db::jobs::reschedule(tx, job.id, &crate::time::after(*after), error)
        }
        Outcome::Wait { after } => db::jobs::wait(tx, job.id, &crate::time::after(*after)),
        Outcome::Settled(_) => Ok(()),
    }
}

/// Exponential backoff: 1 s, 2 s, 4 s ... capped at 5 minutes.
pub fn backoff(attempts: u32) -> Duration {
    let secs = 1u64 << attempts.saturating_sub(1).min(9);
    Duration::from_secs(secs.min(300))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(2), Duration::from_secs(2));
        assert_eq!(backoff(5), Duration::from_secs(16));
        assert_eq!(backoff(40), Duration::from_secs(300));
    }
}
