//! What a job handler decided, and how the queue records it (with the retries of a
//! busy database) and logs it.

use crate::app::Context;
use crate::db::{self, jobs::Job, jobs::Kind};
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
    /// The handler already recorded its outcome with `settle`, in the transaction of its
    /// final writes: one commit instead of two, and no window between them.
    Settled,
}

/// Records a job's outcome in `tx`: a finished job is deleted, a retry rescheduled.
pub fn settle(tx: &db::Conn, job: &Job, outcome: &Outcome) -> anyhow::Result<()> {
    match outcome {
        Outcome::Done => db::jobs::complete(tx, job.id),
        Outcome::Retry { after, error } => {
            db::jobs::reschedule(tx, job.id, &crate::time::after(*after), error)
        }
        Outcome::Wait { after } => db::jobs::wait(tx, job.id, &crate::time::after(*after)),
        Outcome::Settled => Ok(()),
    }
}

/// Exponential backoff: 1 s, 2 s, 4 s ... capped at 5 minutes.
pub fn backoff(attempts: u32) -> Duration {
    let secs = 1u64 << attempts.saturating_sub(1).min(9);
    Duration::from_secs(secs.min(300))
}

/// A handler's error, logged: a database that stayed locked past the busy timeout is
/// load, not a fault.
pub(super) fn log_failure<T>(job: &Job, result: &anyhow::Result<T>) {
    if let Err(e) = result {
        if db::is_busy(e) {
            log::warn!("job {} ({}) postponed: {e:#}", job.id, job.kind.as_str());
        } else {
            log::error!("job {} ({}) failed: {e:#}", job.id, job.kind.as_str());
        }
    }
}

/// Records a handler's error in `tx`: after a busy database the job runs again soon
/// without spending one of its attempts; anything else (a handler bug or a database
/// failure) is retried later with backoff rather than lose the work.
pub(super) fn record_failure(tx: &db::Conn, job: &Job, e: &anyhow::Error) -> anyhow::Result<()> {
    if db::is_busy(e) {
        db::jobs::reschedule_uncounted(
            tx,
            job.id,
            &crate::time::after(BUSY_RETRY),
            &format!("{e:#}"),
        )
    } else {
        db::jobs::reschedule(
            tx,
            job.id,
            &crate::time::after(backoff(job.attempts)),
            &format!("{e:#}"),
        )
    }
}

/// Runs `write` (the record of jobs `ids`) until it commits. An unrecorded outcome would
/// leave the jobs `running` until the next start: a database that is only busy is
/// waited out (the work itself is done or durable).
pub(super) fn record<T: Default>(
    ctx: &Context,
    ids: &[i64],
    write: impl Fn() -> anyhow::Result<T>,
) -> T {
    loop {
        match write() {
            Ok(next) => return next,
            Err(e) if db::is_busy(&e) && !ctx.stopping() => {
                log::warn!("recording the outcome of job(s) {ids:?} waits: {e:#}");
                std::thread::sleep(BUSY_RETRY);
            }
            Err(e) if db::lease::is_lost(&e) => {
                log::warn!("the outcome of job(s) {ids:?} is not recorded: {e:#}");
                return T::default();
            }
            Err(e) => {
                log::error!("cannot record the outcome of job(s) {ids:?}: {e:#}");
                return T::default();
            }
        }
    }
}

/// One line per job run: at `info` for validations and extractions; at `debug` for
/// deliveries, which can run thousands a second and have their own log in the API.
pub(super) fn log_end(job: &Job, result: Result<&Outcome, &anyhow::Error>, took: Duration) {
    let outcome = match result {
        Ok(Outcome::Done | Outcome::Settled) => "done",
        Ok(Outcome::Retry { .. }) | Err(_) => "retry",
        Ok(Outcome::Wait { .. }) => "wait",
    };
    let level = match job.kind {
        Kind::DeliverWebhook => log::Level::Debug,
        _ => log::Level::Info,
    };
    // The queue's lines keep the `jobs` target wherever they are written from.
    log::log!(
        target: "cfdi_extract::jobs",
        level,
        job_id = job.id,
        kind = job.kind.as_str(),
        target_id = job.target_id.as_str(),
        attempt = job.attempts,
        outcome = outcome,
        duration_ms = took.as_millis() as u64;
        "job {} {} {}: {outcome}",
        job.id,
        job.kind.as_str(),
        job.target_id
    );
}

/// When a job the busy database stopped runs again.
const BUSY_RETRY: Duration = Duration::from_secs(1);

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
