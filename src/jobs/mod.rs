//! Background workers running the durable job queue.
//!
//! Each job goes: claim (a short write transaction) -> run (no transaction held, so the
//! SAT's latency or a webhook call never holds SQLite's write lock) -> record the
//! outcome (a second short transaction). A delivery worker takes several deliveries to
//! one webhook at a time (`lanes::delivery_batch`), records them together and claims its
//! next ones in that same transaction (`delivery::run`), so a busy one commits once per
//! batch. Workers sleep on the database's waker, which a transaction that queued
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
use crate::periodic::Periodic;
use lanes::{DeliveryShare, Lane, Lanes};
pub use outcome::{backoff, settle, Outcome};
use outcome::{log_end, log_failure, record, record_failure};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// The longest a worker sleeps without being woken.
const IDLE_POLL: Duration = Duration::from_secs(1);

pub struct Workers {
    ctx: Arc<Context>,
    threads: Vec<JoinHandle<()>>,
    leases: Option<Periodic>,
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
        let alone = ctx.db.engine() == db::Engine::Sqlite;
        let recovered = db::jobs::recover(&ctx.db.conn()?, alone)?;
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
        // Several instances may share PostgreSQL: keep this one's leases, and take
        // over the jobs of one that died.
        let leases = (!alone)
            .then(|| {
                let db = ctx.db.clone();
                let every = db::lease::length() / 3;
                Periodic::spawn("leases", every, move || {
                    match db.tx(|tx| db::jobs::renew_leases(tx, &crate::time::now())) {
                        Ok(0) => {}
                        Ok(n) => log::warn!("requeued {n} job(s) whose instance's lease ran out"),
                        Err(e) => log::error!("renewing job leases failed: {e:#}"),
                    }
                    every
                })
            })
            .transpose()?;
        Ok(Workers {
            ctx,
            threads,
            leases,
        })
    }

    /// Asks the workers to stop and waits for them. A job cut short stays resumable.
    pub fn stop(self) {
        self.ctx.stopping.store(true, Ordering::Relaxed);
        self.ctx.db.waker().wake_all();
        for t in self.threads {
            let _ = t.join();
        }
        if let Some(leases) = self.leases {
            leases.stop();
            // Another instance takes them at once, not after the lease.
            match self.ctx.db.tx(db::jobs::release_mine) {
                Ok(0) => {}
                Ok(n) => log::info!("handed back {n} interrupted job(s) to the queue"),
                Err(e) => log::warn!("handing back interrupted jobs failed: {e:#}"),
            }
        }
    }
}

fn worker_loop(ctx: &Context, lane: Lane) {
    let work = lane.work();
    let waker = ctx.db.waker();
    // A delivery worker's next deliveries, claimed when its last ones were recorded.
    let mut next = Vec::new();
    while !ctx.stopping() {
        let seen = waker.current(work);
        let claimed = match next.is_empty() {
            true => claim(ctx, lane),
            false => Ok(std::mem::take(&mut next)),
        };
        match claimed {
            Ok(jobs) if !jobs.is_empty() => {
                // There may be more: pass the wake on to one sleeping worker (`db::Waker`).
                waker.wake_one(work);
                let _held = db::lease::hold(jobs.iter().map(|j| j.id).collect());
                match lane {
                    Lane::Deliveries(_) => next = delivery::run(ctx, jobs, lane),
                    Lane::Sat(_) => jobs.into_iter().for_each(|job| run(ctx, job)),
                }
            }
            Ok(_) => waker.wait(work, seen, sleep_budget(ctx, lane)),
            Err(e) => {
                // A database out of reach for a moment (a restart) is no fault of ours.
                if db::is_busy(&e) {
                    log::warn!("job claim failed: {e:#}");
                } else {
                    log::error!("job claim failed: {e:#}");
                }
                waker.wait(work, seen, IDLE_POLL);
            }
        }
    }
}

fn claim(ctx: &Context, lane: Lane) -> anyhow::Result<Vec<Job>> {
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

/// Runs a validation or an extraction and records its outcome.
fn run(ctx: &Context, job: Job) {
    // The job's log lines, and the jobs it queues, carry the request that caused it.
    let _origin = crate::origin::enter(job.request_id.clone());
    let started = std::time::Instant::now();
    // Its writes stop at once should another instance take it over (`db::lease`).
    let _fenced = db::lease::fence(job.id, &job.claimed_at);
    let result = match job.kind {
        Kind::ValidateCredential => credential::run(ctx, &job),
        Kind::RunExtraction => extraction::run(ctx, &job),
        Kind::DeliverWebhook => Err(anyhow::anyhow!("a delivery on a SAT worker")),
    };
    if let Err(e) = &result {
        if db::lease::is_lost(e) {
            log::warn!("job {} ({}) stopped: {e:#}", job.id, job.kind.as_str());
            return;
        }
    }
    log_failure(&job, &result);
    if !matches!(result, Ok(Outcome::Settled)) {
        record(ctx, &[job.id], || {
            ctx.db.tx(|tx| match &result {
                Ok(outcome) => settle(tx, &job, outcome),
                Err(e) => record_failure(tx, &job, e),
            })
        });
    }
    log_end(&job, result.as_ref(), started.elapsed());
}
