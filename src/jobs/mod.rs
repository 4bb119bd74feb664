//! Background workers running the durable job queue.
//!
//! Each job goes: claim (a short write transaction) -> run (no transaction held, so the
//! provider's latency or a webhook call never holds SQLite's write lock) -> record the
//! outcome (a second short transaction). Workers sleep on a condition variable that
//! writers signal after they commit, so new work starts at once; the sleep is bounded by
//! the next scheduled job. At start, jobs left `running` by a crash go back to the queue.

pub mod credential;
pub mod delivery;
pub mod extraction;

use crate::config::Config;
use crate::crypto::Cipher;
use crate::db::{self, jobs::Job, jobs::Kind, Db};
use crate::sat::TaxAuthority;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The longest a worker sleeps without being woken.
const IDLE_POLL: Duration = Duration::from_secs(1);

/// What a job handler decided; the queue alone turns it into rows.
#[derive(Debug)]
pub enum Outcome {
    Done,
    Retry {
        after: Duration,
        error: String,
    },
    /// The handler already recorded its outcome with `settle`, in the transaction of
    /// its final writes: one commit instead of two, and no window between them.
    Settled,
}

/// Records a job's outcome in `tx`: a finished job is deleted, a retry rescheduled.
pub fn settle(tx: &rusqlite::Connection, job: &Job, outcome: &Outcome) -> anyhow::Result<()> {
    match outcome {
        Outcome::Done => db::jobs::complete(tx, job.id),
        Outcome::Retry { after, error } => {
            db::jobs::reschedule(tx, job.id, &crate::time::after(*after), error)
        }
        Outcome::Settled => Ok(()),
    }
}

/// Wakes sleeping workers after a commit that queued work.
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

    fn current(&self) -> u64 {
        *self.generation.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Sleeps until woken after `seen` or until `timeout`.
    fn wait(&self, seen: u64, timeout: Duration) {
        let g = self.generation.lock().unwrap_or_else(|p| p.into_inner());
        let _ = self
            .cond
            .wait_timeout_while(g, timeout, |g| *g == seen)
            .map_err(|p| p.into_inner());
    }
}

/// Everything job handlers need, shared by all workers.
pub struct Context {
    pub db: Db,
    pub cipher: Cipher,
    pub provider: Arc<dyn TaxAuthority>,
    pub config: Config,
    pub waker: Arc<Waker>,
    pub agent: ureq::Agent,
    pub stopping: AtomicBool,
}

impl Context {
    /// When a new event's first delivery attempt is due.
    pub fn first_attempt_at(&self) -> String {
        let schedule = &self.config.webhook_retry_schedule.0;
        crate::time::after(schedule.first().copied().unwrap_or_default())
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }
}

pub struct Workers {
    ctx: Arc<Context>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Requeues interrupted jobs, then starts `n` worker threads.
    pub fn start(ctx: Arc<Context>, n: usize) -> anyhow::Result<Workers> {
        let recovered = db::jobs::recover(&*ctx.db.conn()?)?;
        if recovered > 0 {
            log::info!("requeued {recovered} interrupted job(s)");
        }
        let threads = (0..n)
            .map(|i| {
                let ctx = ctx.clone();
                std::thread::Builder::new()
                    .name(format!("worker-{i}"))
                    .spawn(move || worker_loop(&ctx, n))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Workers { ctx, threads })
    }

    /// Asks the workers to stop and waits for them. A job cut short stays resumable.
    pub fn stop(self) {
        self.ctx.stopping.store(true, Ordering::Relaxed);
        self.ctx.waker.wake();
        for t in self.threads {
            let _ = t.join();
        }
    }
}

/// How many workers may talk to the tax authority at once. One worker is always kept
/// for webhook deliveries, and (from three workers on) extractions leave one more free
/// for credential validations, so neither waits behind long extractions. A single
/// worker does everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lanes {
    provider: usize,
    extractions: usize,
}

impl Lanes {
    fn for_workers(workers: usize) -> Lanes {
        let provider = workers.saturating_sub(1).max(1);
        Lanes {
            provider,
            extractions: if workers >= 3 { provider - 1 } else { provider },
        }
    }

    fn allowed(self, (validations, extractions): (usize, usize)) -> db::jobs::Allowed {
        let provider_free = validations + extractions < self.provider;
        db::jobs::Allowed {
            validations: provider_free,
            extractions: provider_free && extractions < self.extractions,
        }
    }
}

fn worker_loop(ctx: &Context, workers: usize) {
    let lanes = Lanes::for_workers(workers);
    while !ctx.stopping() {
        let seen = ctx.waker.current();
        match claim(ctx, lanes) {
            Ok(Some(job)) => run(ctx, job),
            Ok(None) => ctx.waker.wait(seen, sleep_budget(ctx)),
            Err(e) => {
                log::error!("job claim failed: {e:#}");
                ctx.waker.wait(seen, IDLE_POLL);
            }
        }
    }
}

fn claim(ctx: &Context, lanes: Lanes) -> anyhow::Result<Option<Job>> {
    ctx.db.tx(|tx| {
        let allowed = lanes.allowed(db::jobs::running_provider_jobs(tx)?);
        db::jobs::claim(tx, &crate::time::now(), allowed)
    })
}

/// How long to sleep: until the next scheduled job, at most `IDLE_POLL`. A job that is
/// already due but was not claimable waits behind a running job (same serial key, or
/// every provider slot busy), and that job's completion wakes us.
fn sleep_budget(ctx: &Context) -> Duration {
    let next = ctx
        .db
        .conn()
        .ok()
        .and_then(|c| db::jobs::next_run_at(&c).ok().flatten());
    let Some(next) = next.and_then(|n| chrono::DateTime::parse_from_rfc3339(&n).ok()) else {
        return IDLE_POLL;
    };
    let wait = next.with_timezone(&chrono::Utc) - chrono::Utc::now();
    match wait.to_std() {
        Ok(d) => d.clamp(Duration::from_millis(1), IDLE_POLL),
        Err(_) => IDLE_POLL,
    }
}

fn run(ctx: &Context, job: Job) {
    let result = match job.kind {
        Kind::ValidateCredential => credential::run(ctx, &job),
        Kind::RunExtraction => extraction::run(ctx, &job),
        Kind::DeliverWebhook => delivery::run(ctx, &job),
    };
    let recorded = match &result {
        Ok(Outcome::Settled) => Ok(()),
        Ok(outcome) => ctx.db.tx(|tx| settle(tx, &job, outcome)),
        Err(e) => ctx.db.tx(|tx| {
            // A handler bug or a database failure: retry later rather than lose the work.
            log::error!("job {} ({}) failed: {e:#}", job.id, job.kind.as_str());
            db::jobs::reschedule(
                tx,
                job.id,
                &crate::time::after(backoff(job.attempts)),
                &format!("{e:#}"),
            )
        }),
    };
    if let Err(e) = recorded {
        log::error!("cannot record the outcome of job {}: {e:#}", job.id);
    }
    // Finishing a job may unblock the next one of its serial key.
    ctx.waker.wake();
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
    fn lanes_keep_a_worker_for_deliveries_and_one_for_validations() {
        let four = Lanes::for_workers(4);
        assert_eq!(
            four,
            Lanes {
                provider: 3,
                extractions: 2
            }
        );
        let busy = four.allowed((0, 2));
        assert!(busy.validations && !busy.extractions);
        assert!(!four.allowed((1, 2)).validations);
        let one = Lanes::for_workers(1);
        assert!(one.allowed((0, 0)).extractions);
        assert!(!one.allowed((0, 1)).validations);
        assert_eq!(
            Lanes::for_workers(2),
            Lanes {
                provider: 1,
                extractions: 1
            }
        );
    }

    #[test]
    fn backoff_doubles_and_caps() {
        assert_eq!(backoff(1), Duration::from_secs(1));
        assert_eq!(backoff(2), Duration::from_secs(2));
        assert_eq!(backoff(5), Duration::from_secs(16));
        assert_eq!(backoff(40), Duration::from_secs(300));
    }
}
