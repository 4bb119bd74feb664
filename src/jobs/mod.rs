//! Background workers running the durable job queue.
//!
//! Each job goes: claim (a short write transaction) -> run (no transaction held, so the
//! SAT's latency or a webhook call never holds SQLite's write lock) -> record the
//! outcome (a second short transaction). A delivery worker claims its next delivery in
//! that second transaction (`lanes::settle_and_claim`), so a busy one commits once per
//! delivery. Workers sleep on the database's waker, which a transaction that queued
//! work signals once it commits (`db::Tx`), so new work starts at once; the sleep is bounded by the next scheduled job.
//! At start, jobs left `running` by a crash (claimed next deliveries included) go back
//! to the queue.

pub mod credential;
pub mod delivery;
pub mod delivery_target;
pub mod extraction;
mod lanes;
mod outcome;
pub mod sat_status;
pub mod scheduler;

use crate::app::Context;
use crate::db::{self, jobs::Job, jobs::Kind};
use lanes::{settle_and_claim, ClaimNext, DeliveryShare, Lane, Lanes};
pub use outcome::{backoff, settle, Outcome};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The longest a worker sleeps without being woken.
const IDLE_POLL: Duration = Duration::from_secs(1);

pub struct Workers {
    ctx: Arc<Context>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Requeues interrupted jobs, then starts `workers` threads for validations and
    /// extractions, `delivery_workers` threads for webhook deliveries and, unless it is
    /// off, the SAT status checker's thread.
    pub fn start(
        ctx: Arc<Context>,
        workers: usize,
        delivery_workers: usize,
    ) -> anyhow::Result<Workers> {
        let recovered = db::jobs::recover(&*ctx.db.conn()?)?;
        if recovered > 0 {
            log::info!("requeued {recovered} interrupted job(s)");
        }
        let sat = Lane::Sat(Lanes::for_workers(workers));
        let deliveries = Lane::Deliveries(DeliveryShare::for_workers(delivery_workers));
        let lanes = (0..workers)
            .map(|i| (format!("worker-{i}"), sat))
            .chain((0..delivery_workers).map(|i| (format!("delivery-{i}"), deliveries)));
        let mut threads = lanes
            .map(|(name, lane)| {
                let ctx = ctx.clone();
                std::thread::Builder::new()
                    .name(name)
                    .spawn(move || worker_loop(&ctx, lane))
            })
            .collect::<Result<Vec<_>, _>>()?;
        // The SAT status checks: a thread of their own (`sat_status`).
        if let Some(checker) = ctx.sat_status.clone() {
            let ctx = ctx.clone();
            threads.push(
                std::thread::Builder::new()
                    .name("sat-status".into())
                    .spawn(move || sat_status::run_loop(&ctx, &checker))?,
            );
        }
        Ok(Workers { ctx, threads })
    }

    /// Asks the workers to stop and waits for them. A job cut short stays resumable.
    pub fn stop(self) {
        self.ctx.stopping.store(true, Ordering::Relaxed);
        self.ctx.db.waker().wake_all();
        for t in self.threads {
            let _ = t.join();
        }
    }
}

fn worker_loop(ctx: &Context, lane: Lane) {
    let work = lane.work();
    let waker = ctx.db.waker();
    // A delivery worker's next job, claimed when its last one was recorded.
    let mut next = None;
    while !ctx.stopping() {
        let seen = waker.current(work);
        let claimed = match next.take() {
            Some(job) => Ok(Some(job)),
            None => claim(ctx, lane),
        };
        match claimed {
            Ok(Some(job)) => {
                // There may be more: pass the wake on to one sleeping worker (`db::Waker`).
                waker.wake_one(work);
                next = run(ctx, job, lane);
            }
            Ok(None) => waker.wait(work, seen, sleep_budget(ctx, lane)),
            Err(e) => {
                log::error!("job claim failed: {e:#}");
                waker.wait(work, seen, IDLE_POLL);
            }
        }
    }
}

fn claim(ctx: &Context, lane: Lane) -> anyhow::Result<Option<Job>> {
    let now = crate::time::now();
    ctx.db.tx(|tx| lanes::claim(tx, lane, &now))
}

/// How long to sleep: until the lane's next scheduled job, at most `IDLE_POLL`. A job
/// that is already due but was not claimable waits behind a running job (same serial
/// key, every slot busy, or its organization's share used), and that job's completion
/// wakes us.
fn sleep_budget(ctx: &Context, lane: Lane) -> Duration {
    let deliveries = matches!(lane, Lane::Deliveries(_));
    let next = ctx
        .db
        .conn()
        .ok()
        .and_then(|c| db::jobs::next_run_at(&c, deliveries).ok().flatten());
    let Some(next) = next.and_then(|n| chrono::DateTime::parse_from_rfc3339(&n).ok()) else {
        return IDLE_POLL;
    };
    let wait = next.with_timezone(&chrono::Utc) - chrono::Utc::now();
    match wait.to_std() {
        Ok(d) => d.clamp(Duration::from_millis(1), IDLE_POLL),
        Err(_) => IDLE_POLL,
    }
}

/// Runs `job` and records its outcome; returns the worker's next job when the record
/// claimed one (`settle_and_claim`).
fn run(ctx: &Context, job: Job, lane: Lane) -> Option<Job> {
    // The job's log lines, and the jobs it queues, carry the request that caused it.
    let _origin = crate::origin::enter(job.request_id.clone());
    let started = std::time::Instant::now();
    let result = match job.kind {
        Kind::ValidateCredential => credential::run(ctx, &job),
        Kind::RunExtraction => extraction::run(ctx, &job),
        Kind::DeliverWebhook => delivery::run(ctx, &job, lane),
    };
    // A database that stayed locked past the busy timeout is load, not a fault: the job
    // runs again soon without spending one of its attempts. Anything else is a handler
    // bug or a database failure: retried later with backoff rather than lose the work.
    if let Err(e) = &result {
        if db::is_busy(e) {
            log::warn!("job {} ({}) postponed: {e:#}", job.id, job.kind.as_str());
        } else {
            log::error!("job {} ({}) failed: {e:#}", job.id, job.kind.as_str());
        }
    }
    let record = || match &result {
        Ok(Outcome::Settled(next)) => Ok(next.clone()),
        Ok(outcome) => ctx
            .db
            .tx(|tx| settle_and_claim(tx, &job, outcome, ClaimNext::new(ctx, lane))),
        Err(e) if db::is_busy(e) => ctx.db.tx(|tx| {
            let run_at = crate::time::after(BUSY_RETRY);
            db::jobs::reschedule_uncounted(tx, job.id, &run_at, &format!("{e:#}"))?;
            Ok(None)
        }),
        Err(e) => ctx.db.tx(|tx| {
            let run_at = crate::time::after(backoff(job.attempts));
            db::jobs::reschedule(tx, job.id, &run_at, &format!("{e:#}"))?;
            Ok(None)
        }),
    };
    // An unrecorded outcome would leave the job `running` until the next start: a
    // database that is only busy is waited out (the work itself is done or durable).
    let next = loop {
        match record() {
            Ok(next) => break next,
            Err(e) if db::is_busy(&e) && !ctx.stopping() => {
                log::warn!("recording the outcome of job {} waits: {e:#}", job.id);
                std::thread::sleep(BUSY_RETRY);
            }
            Err(e) => {
                log::error!("cannot record the outcome of job {}: {e:#}", job.id);
                break None;
            }
        }
    };
    log_end(&job, &result, started.elapsed());
    // Finishing a job may unblock the next one of its serial key or organization: this
    // worker claims again before it sleeps, and passes the wake on if it finds one.
    next
}

/// One line per job run: at `info` for validations and extractions; at `debug` for
/// deliveries, which can run thousands a second and have their own log in the API.
fn log_end(job: &Job, result: &anyhow::Result<Outcome>, took: Duration) {
    let outcome = match result {
        Ok(Outcome::Done | Outcome::Settled(_)) => "done",
        Ok(Outcome::Retry { .. }) | Err(_) => "retry",
        Ok(Outcome::Wait { .. }) => "wait",
    };
    let level = match job.kind {
        Kind::DeliverWebhook => log::Level::Debug,
        _ => log::Level::Info,
    };
    log::log!(
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
