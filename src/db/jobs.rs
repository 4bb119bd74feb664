//! SQL for the durable job queue. A job row exists while the work is pending or running;
//! finishing deletes it (the outcome lives on the resource it worked on).

use super::sql::{params, Row};
use super::{Conn, Tx, Work};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ValidateCredential,
    RunExtraction,
    DeliverWebhook,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::ValidateCredential => "validate_credential",
            Kind::RunExtraction => "run_extraction",
            Kind::DeliverWebhook => "deliver_webhook",
        }
    }

    fn parse(s: &str) -> anyhow::Result<Kind> {
        match s {
            "validate_credential" => Ok(Kind::ValidateCredential),
            "run_extraction" => Ok(Kind::RunExtraction),
            "deliver_webhook" => Ok(Kind::DeliverWebhook),
            other => anyhow::bail!("unknown job kind {other}"),
        }
    }
}

#[derive(Debug, Clone)]
pub struct Job {
    pub id: i64,
    pub kind: Kind,
    pub target_id: String,
    /// Attempts including the one being run.
    pub attempts: u32,
    /// The API request that caused it, if any (`crate::origin`).
    pub request_id: Option<String>,
    /// When this claim took it (`locked_at`): with the instance, what names the claim,
    /// so a worker whose claim another took over is told apart (`lease::fence`).
    pub claimed_at: String,
}

pub fn enqueue(
    tx: &Tx,
    kind: Kind,
    target_id: &str,
    serial_key: Option<&str>,
    run_at: &str,
) -> anyhow::Result<()> {
    enqueue_for_org(tx, kind, target_id, serial_key, None, run_at)
}

/// `enqueue` with the organization the job works for; deliveries need it, so that one
/// organization's deliveries cannot take every delivery worker. The job remembers the
/// request it is queued on behalf of (`crate::origin`), if any. The workers are woken
/// when `tx` commits.
pub fn enqueue_for_org(
    tx: &Tx,
    kind: Kind,
    target_id: &str,
    serial_key: Option<&str>,
    org_id: Option<&str>,
    run_at: &str,
) -> anyhow::Result<()> {
    enqueue_all_for_org(tx, kind, &[(target_id, serial_key)], org_id, run_at)
}

/// `enqueue_for_org` for each (target, serial key) of `jobs`, many rows to a statement.
pub fn enqueue_all_for_org(
    tx: &Tx,
    kind: Kind,
    jobs: &[(&str, Option<&str>)],
    org_id: Option<&str>,
    run_at: &str,
) -> anyhow::Result<()> {
    if jobs.is_empty() {
        return Ok(());
    }
    tx.queued_work(work_of(kind));
    let now = crate::time::now();
    crate::origin::with(|request_id| {
        super::rows::insert(
            tx,
            "jobs (kind, org_id, status, run_at, created_at, request_id, target_id, serial_key)",
            &[
                &kind.as_str(),
                &org_id,
                &"queued",
                &run_at,
                &now,
                &request_id,
            ],
            jobs,
            |(target_id, serial_key)| vec![target_id, serial_key],
        )
    })
}

/// Which kinds a worker may take now, given what the others are running.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowed {
    pub validations: bool,
    pub extractions: bool,
}

/// Claims the oldest due validation or extraction that heads its serial key and is of
/// an allowed kind, and marks it running. Deliveries have their own workers
/// (`claim_delivery`).
pub fn claim(conn: &Conn, now: &str, allowed: Allowed) -> anyhow::Result<Option<Job>> {
    let mut job = conn.opt(
        &format!(
            "SELECT id, kind, target_id, attempts, request_id FROM jobs j INDEXED BY jobs_sat_due
             WHERE status = 'queued' AND kind <> 'deliver_webhook' AND run_at <= ?1
               AND ((kind = 'validate_credential' AND ?2 = 1) OR (kind = 'run_extraction' AND ?3 = 1))
               AND {HEADS_ITS_SERIAL_KEY}
             ORDER BY run_at, id LIMIT 1"
        ),
        params![now, allowed.validations, allowed.extractions],
        job_from_row,
    )?;
    if let Some(job) = &mut job {
        mark_running(conn, job, now)?;
    }
    Ok(job)
}

/// What a delivery claim found behind the oldest claimable delivery it takes: how many
/// batches its organization runs, and how many of its deliveries to the same webhook
/// are claimable with it (itself included, as far as `BATCH_WINDOW` looks).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Backlog {
    pub org_running: usize,
    pub due: usize,
}

/// Claims the oldest due delivery that heads its serial key and whose organization has
/// fewer than `org_limit` batches running, and with it more claimable deliveries to the
/// same webhook, in the same order, up to `size(backlog)` in all and never more than
/// `most`; marks them running as one batch (one `locked_at`: claims are serialized by
/// the write lock, so no two share a microsecond). One worker sends a batch in turn and
/// records it in one transaction, so a fan-out's deliveries commit several at a time; a
/// batch is one webhook's, so a receiver that hangs holds back only its own deliveries.
///
/// It visits the organizations with queued deliveries (a loose scan of
/// `jobs_deliveries_org`, one index seek each) and takes each one's oldest claimable
/// delivery, so an organization at its limit costs one seek, not a scan of its backlog:
/// a 10,000-delivery backlog otherwise made every claim that found it at its limit read
/// all of it inside the write transaction. The rest of a batch is looked for among the
/// organization's next `BATCH_WINDOW` deliveries only, for the same reason.
pub fn claim_deliveries(
    conn: &Conn,
    now: &str,
    org_limit: usize,
    most: usize,
    size: impl Fn(Backlog) -> usize,
) -> anyhow::Result<Vec<Job>> {
    let webhook_of_serial_key = webhook_of_serial_key(conn);
    let head = conn.opt(&heads_of_orgs(conn), params![now, org_limit as i64], |r| {
        Ok((
            job_from_row(r)?,
            r.get::<String>(5)?,
            r.get::<String>(6)?,
            r.get::<i64>(7)?,
        ))
    })?;
    let Some((head, org, webhook, org_running)) = head else {
        return Ok(Vec::new());
    };
    let mut jobs = vec![head];
    if most > 1 && !webhook.is_empty() {
        let more = conn.all(
            &format!(
                "SELECT id, kind, target_id, attempts, request_id FROM (
               SELECT id, kind, target_id, attempts, request_id, serial_key, run_at
                 FROM jobs j INDEXED BY jobs_deliveries_org
                WHERE status = 'queued' AND kind = 'deliver_webhook'
                  AND COALESCE(j.org_id, '') = ?1 AND run_at <= ?2 AND j.id <> ?3
                  AND {HEADS_ITS_SERIAL_KEY}
                ORDER BY run_at, id LIMIT {BATCH_WINDOW}) w
              WHERE {webhook_of_serial_key} = ?4
              ORDER BY run_at, id"
            ),
            params![org, now, jobs[0].id, webhook],
            job_from_row,
        )?;
        let backlog = Backlog {
            org_running: org_running as usize,
            due: 1 + more.len(),
        };
        let take = size(backlog).clamp(1, most);
        jobs.extend(more.into_iter().take(take - 1));
    }
    for job in &mut jobs {
        mark_running(conn, job, now)?;
    }
    Ok(jobs)
}

/// Each organization's oldest claimable delivery, below its share (`?2`) of running
/// batches, with its webhook and its organization's running batches last. The
/// organizations are found by a loose scan of `jobs_deliveries_org` (one index seek
/// each). SQLite reads the heads by rowid from a list; PostgreSQL takes the first entry
/// by ORDER BY ... LIMIT 1 (its MIN over the index read every queued entry) and joins
/// each organization's one row LATERALly (SQLite has no LATERAL): its planner otherwise
/// hashed the whole jobs table on every claim, and with statistics from a shorter queue
/// chose plans that ran for tens of seconds while every delivery worker waited on the
/// claim (`bench/run engines`).
fn heads_of_orgs(conn: &Conn) -> String {
    let queued = "status = 'queued' AND kind = 'deliver_webhook'";
    let org = "COALESCE(org_id, '')";
    let running = "running(org, n) AS (
        SELECT org_id, COUNT(DISTINCT locked_at) FROM jobs
         WHERE status = 'running' AND kind = 'deliver_webhook' AND org_id IS NOT NULL
         GROUP BY org_id)";
    let org_running =
        "COALESCE((SELECT n FROM running WHERE running.org = COALESCE(org_id, '')), 0)";
    let head = format!(
        "SELECT {{}} FROM jobs j INDEXED BY jobs_deliveries_org
          WHERE {queued} AND COALESCE(j.org_id, '') = orgs.org AND run_at <= ?1
            AND {HEADS_ITS_SERIAL_KEY}
          ORDER BY run_at, id LIMIT 1"
    );
    let listed = "orgs.org IS NOT NULL
        AND COALESCE((SELECT n FROM running WHERE running.org = orgs.org), 0) < ?2";
    let columns = format!(
        "id, kind, target_id, attempts, request_id, COALESCE(org_id, ''), {}, {org_running}",
        webhook_of_serial_key(conn)
    );
    let sqlite = format!(
        "WITH RECURSIVE
           orgs(org) AS (
             SELECT MIN({org}) FROM jobs INDEXED BY jobs_deliveries_org WHERE {queued}
             UNION ALL
             SELECT (SELECT MIN({org}) FROM jobs INDEXED BY jobs_deliveries_org
                      WHERE {queued} AND {org} > orgs.org)
               FROM orgs WHERE orgs.org IS NOT NULL),
           {running}
         SELECT {columns} FROM jobs
          WHERE id IN (SELECT ({}) FROM orgs WHERE {listed})
          ORDER BY run_at, id LIMIT 1",
        head.replace("{}", "id")
    );
    let postgres = format!(
        "WITH RECURSIVE
           orgs(org) AS (
             (SELECT {org} FROM jobs WHERE {queued} ORDER BY {org} LIMIT 1)
             UNION ALL
             SELECT (SELECT {org} FROM jobs WHERE {queued} AND {org} > orgs.org
                      ORDER BY {org} LIMIT 1)
               FROM orgs WHERE orgs.org IS NOT NULL),
           {running}
         SELECT {columns} FROM orgs CROSS JOIN LATERAL ({}) h
          WHERE {listed}
          ORDER BY run_at, id LIMIT 1",
        head.replace("{}", "*")
    );
    conn.pick(&sqlite, &postgres).to_string()
}

/// How far past a batch's first delivery the rest are looked for.
const BATCH_WINDOW: usize = 64;

/// A delivery's serial key is `webhook id|resource` (`events::record`): its webhook.
fn webhook_of_serial_key(conn: &Conn) -> &'static str {
    conn.pick(
        "COALESCE(substr(serial_key, 1, instr(serial_key, '|') - 1), '')",
        "COALESCE(CASE WHEN strpos(serial_key, '|') > 0
                       THEN substr(serial_key, 1, strpos(serial_key, '|') - 1) ELSE '' END, '')",
    )
}

/// Which workers run a kind of job.
fn work_of(kind: Kind) -> Work {
    match kind {
        Kind::DeliverWebhook => Work::Deliveries,
        Kind::ValidateCredential | Kind::RunExtraction => Work::Sat,
    }
}

/// A job waits while an older job of its serial key exists (queued or running).
const HEADS_ITS_SERIAL_KEY: &str = "(serial_key IS NULL OR NOT EXISTS (
    SELECT 1 FROM jobs r WHERE r.serial_key = j.serial_key AND r.id < j.id))";

fn job_from_row(r: &Row) -> anyhow::Result<Job> {
    Ok(Job {
        id: r.get(0)?,
        kind: Kind::parse(r.text(1)?.unwrap_or_default())?,
        target_id: r.get(2)?,
        attempts: u32::try_from(r.get::<i64>(3)?)? + 1,
        request_id: r.get(4)?,
        claimed_at: String::new(),
    })
}

fn mark_running(conn: &Conn, job: &mut Job, now: &str) -> anyhow::Result<()> {
    conn.defer(
        "UPDATE jobs SET status = 'running', attempts = attempts + 1, locked_at = ?2,
                lease_owner = ?3, lease_until = ?4
          WHERE id = ?1",
        params![job.id, now, super::lease::owner(), super::lease::until()],
    )?;
    job.claimed_at = now.to_string();
    Ok(())
}

/// Renews the leases of the jobs this instance's workers are running, and requeues the
/// jobs whose lease ran out (their instance died, or their worker gave up), waking the
/// workers of each kind requeued. How many were requeued.
pub fn renew_leases(tx: &Tx, now: &str) -> anyhow::Result<usize> {
    let until = super::lease::until();
    for id in super::lease::held() {
        tx.defer(
            "UPDATE jobs SET lease_until = ?3
              WHERE id = ?1 AND status = 'running' AND lease_owner = ?2",
            params![id, super::lease::owner(), until],
        )?;
    }
    let kinds = tx.all(
        "UPDATE jobs SET status = 'queued', locked_at = NULL, lease_owner = NULL, lease_until = NULL
          WHERE status = 'running' AND lease_until < ?1
          RETURNING kind",
        params![now],
        |r| Kind::parse(r.text(0)?.unwrap_or_default()),
    )?;
    for kind in &kinds {
        tx.queued_work(work_of(*kind));
    }
    Ok(kinds.len())
}

/// Batches of deliveries running now (each worker's one), all organizations together.
pub fn running_deliveries(conn: &Conn) -> anyhow::Result<usize> {
    Ok(conn.one(
        "SELECT COUNT(DISTINCT locked_at) FROM jobs WHERE status = 'running' AND kind = 'deliver_webhook'",
        params![],
        |r| r.get::<i64>(0),
    )? as usize)
}

/// Running (validations, extractions).
pub fn running_sat_jobs(conn: &Conn) -> anyhow::Result<(usize, usize)> {
    conn.one(
        "SELECT COALESCE(SUM(CASE WHEN kind = 'validate_credential' THEN 1 ELSE 0 END), 0),
                COALESCE(SUM(CASE WHEN kind = 'run_extraction' THEN 1 ELSE 0 END), 0)
         FROM jobs WHERE status = 'running'",
        params![],
        |r| Ok((r.get::<i64>(0)? as usize, r.get::<i64>(1)? as usize)),
    )
}

pub fn complete(conn: &Conn, id: i64) -> anyhow::Result<()> {
    conn.defer("DELETE FROM jobs WHERE id = ?1", params![id])?;
    Ok(())
}

pub fn reschedule(conn: &Conn, id: i64, run_at: &str, error: &str) -> anyhow::Result<()> {
    conn.defer(
        "UPDATE jobs SET status = 'queued', run_at = ?2, last_error = ?3, locked_at = NULL WHERE id = ?1",
        params![id, run_at, error],
    )?;
    Ok(())
}

/// Puts claimed jobs a worker did not run back in the queue, due now and without counting
/// an attempt, and wakes the other workers of their kind for them.
pub fn release(tx: &Tx, kind: Kind, ids: &[i64], reason: &str) -> anyhow::Result<()> {
    for &id in ids {
        reschedule_uncounted(tx, id, &crate::time::now(), reason)?;
    }
    if !ids.is_empty() {
        tx.queued_work(work_of(kind));
    }
    Ok(())
}

/// `reschedule` without counting the run as an attempt: it did not fail, the database
/// was only busy for longer than the busy timeout.
pub fn reschedule_uncounted(conn: &Conn, id: i64, run_at: &str, error: &str) -> anyhow::Result<()> {
    conn.defer(
        "UPDATE jobs SET status = 'queued', run_at = ?2, last_error = ?3, locked_at = NULL,
                attempts = CASE WHEN attempts - 1 > 0 THEN attempts - 1 ELSE 0 END
         WHERE id = ?1",
        params![id, run_at, error],
    )?;
    Ok(())
}

/// Puts a job back to sleep until `run_at` without counting a failure.
pub fn wait(conn: &Conn, id: i64, run_at: &str) -> anyhow::Result<()> {
    conn.defer(
        "UPDATE jobs SET status = 'queued', run_at = ?2, attempts = 0, last_error = NULL, locked_at = NULL
         WHERE id = ?1",
        params![id, run_at],
    )?;
    Ok(())
}

/// This instance's running jobs go back to the queue (it is stopping), waking workers.
pub fn release_mine(tx: &Tx) -> anyhow::Result<usize> {
    let kinds = tx.all(
        "UPDATE jobs SET status = 'queued', locked_at = NULL, lease_owner = NULL, lease_until = NULL
          WHERE status = 'running' AND lease_owner = ?1
          RETURNING kind",
        params![super::lease::owner()],
        |r| Kind::parse(r.text(0)?.unwrap_or_default()),
    )?;
    for kind in &kinds {
        tx.queued_work(work_of(*kind));
    }
    Ok(kinds.len())
}

/// A job left `running` by a crash or a stop goes back to the queue: every one when
/// this process holds the database alone (SQLite), else this instance's (its previous
/// process died), and those whose lease ran out or that never had one.
pub fn recover(conn: &Conn, alone: bool) -> anyhow::Result<usize> {
    conn.exec(
        "UPDATE jobs SET status = 'queued', locked_at = NULL, lease_owner = NULL, lease_until = NULL
          WHERE status = 'running'
            AND (?1 = 1 OR lease_owner = ?3 OR lease_until IS NULL OR lease_until < ?2)",
        params![alone, crate::time::now(), super::lease::owner()],
    )
}

/// When the next queued delivery (or, with `deliveries` false, the next other job)
/// becomes due.
pub fn next_run_at(conn: &Conn, deliveries: bool) -> anyhow::Result<Option<String>> {
    // Literal conditions, so that each reads the MIN off its pool's partial index.
    let sql = if deliveries {
        "SELECT MIN(run_at) FROM jobs INDEXED BY jobs_deliveries_due
         WHERE status = 'queued' AND kind = 'deliver_webhook'"
    } else {
        "SELECT MIN(run_at) FROM jobs INDEXED BY jobs_sat_due
         WHERE status = 'queued' AND kind <> 'deliver_webhook'"
    };
    conn.one(sql, params![], |r| r.get(0))
}

/// Drops the queued (not running) jobs of a serial key, e.g. a superseded validation.
pub fn drop_queued(conn: &Conn, serial_key: &str) -> anyhow::Result<()> {
    conn.defer(
        "DELETE FROM jobs WHERE serial_key = ?1 AND status = 'queued'",
        params![serial_key],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_postponement_gives_its_attempt_back_and_a_failure_keeps_it() {
        let conn = crate::db::Memory::new();
        let past = "2000-01-01T00:00:00.000000Z";
        conn.tx(|tx| enqueue(tx, Kind::RunExtraction, "x", None, past))
            .expect("enqueue");
        let attempts = |conn: &Conn| -> i64 {
            conn.one("SELECT attempts FROM jobs", params![], |r| r.get(0))
                .expect("attempts")
        };
        let all = Allowed {
            validations: true,
            extractions: true,
        };
        let job = claim(&conn, past, all).expect("claim").expect("due");
        assert_eq!(attempts(&conn), 1);
        reschedule_uncounted(&conn, job.id, past, "database is locked").expect("postpone");
        assert_eq!(attempts(&conn), 0);
        let job = claim(&conn, past, all).expect("claim").expect("due again");
        reschedule(&conn, job.id, past, "a fault").expect("retry");
        assert_eq!(attempts(&conn), 1);
    }

    #[test]
    fn a_held_job_keeps_its_lease_and_one_whose_lease_ran_out_is_requeued() {
        let conn = crate::db::Memory::new();
        let past = "2000-01-01T00:00:00.000000Z";
        let all = Allowed {
            validations: true,
            extractions: true,
        };
        for target in ["held", "abandoned"] {
            conn.tx(|tx| enqueue(tx, Kind::ValidateCredential, target, None, past))
                .expect("enqueue");
        }
        let held = claim(&conn, past, all).expect("claim").expect("due");
        let abandoned = claim(&conn, past, all).expect("claim").expect("due");
        // Both leases ran out; a worker still runs the first (the second's gave up).
        conn.exec("UPDATE jobs SET lease_until = ?1", params![past])
            .expect("expire");
        let guard = crate::db::lease::hold(vec![held.id]);
        let requeued = conn
            .tx(|tx| renew_leases(tx, &crate::time::now()))
            .expect("renew");
        drop(guard);
        assert!(!crate::db::lease::held().contains(&held.id), "let go");
        assert_eq!(requeued, 1);
        let status = |id: i64| -> String {
            conn.one("SELECT status FROM jobs WHERE id = ?1", params![id], |r| {
                r.get(0)
            })
            .expect("status")
        };
        assert_eq!(status(held.id), "running");
        assert_eq!(status(abandoned.id), "queued");
    }

    #[test]
    fn a_delivery_claim_passes_over_an_organization_at_its_limit_and_its_backlog() {
        let conn = crate::db::Memory::new();
        let at = |s: u32| format!("2000-01-01T00:00:{s:02}.000000Z");
        let deliver = |target: &str, serial: Option<&str>, org: Option<&str>, run_at: &str| {
            conn.tx(|tx| enqueue_for_org(tx, Kind::DeliverWebhook, target, serial, org, run_at))
                .expect("enqueue")
        };
        // Organization A: one running, then a backlog older than anything of B's.
        deliver("a-running", None, Some("A"), &at(0));
        let running = claim_deliveries(&conn, &at(59), 9, 1, |_| 1).expect("claim");
        assert_eq!(running[0].target_id, "a-running");
        for i in 0..300 {
            deliver(&format!("a{i}"), None, Some("A"), &at(1));
        }
        // B's oldest waits on an older job of its serial key: only that key's head runs.
        conn.exec(
            "INSERT INTO jobs (kind, target_id, serial_key, status, run_at, created_at)
             VALUES ('validate_credential', 'x', 'k', 'running', ?1, ?1)",
            params![at(0)],
        )
        .expect("an older job of serial key k");
        deliver("b-blocked", Some("k"), Some("B"), &at(2));
        deliver("b-later", None, Some("B"), &at(3));
        deliver("legacy", None, None, &at(4));
        deliver("b-future", None, Some("B"), "2999-01-01T00:00:00.000000Z");
        let claim = |limit| {
            let jobs = claim_deliveries(&conn, &at(59), limit, 1, |_| 1).expect("claim");
            assert!(jobs.len() <= 1, "a batch of one");
            jobs.into_iter().next().map(|j| j.target_id)
        };
        // A is at a limit of 1: B's oldest claimable delivery, then the legacy one (no
        // organization), whatever A has queued.
        assert_eq!(claim(1).as_deref(), Some("b-later"));
        assert_eq!(
            claim(2).as_deref(),
            Some("a0"),
            "A under its limit: its oldest"
        );
        // B now has one running and A two: at a limit of 1, only the legacy job is left.
        assert_eq!(claim(1).as_deref(), Some("legacy"));
        assert_eq!(
            claim(1),
            None,
            "b-blocked waits on its serial key, b-future is not due"
        );
    }

    #[test]
    fn a_delivery_batch_is_one_webhooks_oldest_claimable_and_counts_once_in_the_share() {
        let conn = crate::db::Memory::new();
        let at = |s: u32| format!("2000-01-01T00:00:{s:02}.000000Z");
        let deliver = |target: &str, serial: &str, org: &str, run_at: &str| {
            conn.tx(|tx| {
                enqueue_for_org(
                    tx,
                    Kind::DeliverWebhook,
                    target,
                    Some(serial),
                    Some(org),
                    run_at,
                )
            })
            .expect("enqueue")
        };
        deliver("h0", "h|inv-1", "A", &at(0));
        deliver("b0", "b|inv-9", "B", &at(1));
        deliver("h1", "h|inv-1", "A", &at(2)); // waits on h0: the same resource
        deliver("g0", "g|inv-2", "A", &at(3)); // another webhook of A
        for i in 2..8 {
            deliver(&format!("h{i}"), &format!("h|inv-{i}"), "A", &at(4));
        }
        deliver("h-future", "h|inv-99", "A", "2999-01-01T00:00:00.000000Z");
        // Each claim at its own time, as the workers' are: a batch is one `locked_at`.
        let clock = std::cell::Cell::new(50);
        let seen = std::cell::Cell::new(None);
        let claim = |limit, batch| -> Vec<String> {
            clock.set(clock.get() + 1);
            let size = |backlog| {
                seen.set(Some(backlog));
                batch
            };
            claim_deliveries(&conn, &at(clock.get()), limit, batch, size)
                .expect("claim")
                .into_iter()
                .map(|j| j.target_id)
                .collect()
        };
        // A's oldest heads the batch, with webhook h's next claimable ones (h1 waits on
        // h0; g0 is another webhook's): seven due to h, of which the batch takes four.
        assert_eq!(claim(2, 4), ["h0", "h2", "h3", "h4"]);
        let backlog = |org_running, due| Some(Backlog { org_running, due });
        assert_eq!(seen.get(), backlog(0, 7));
        // The batch is one of A's two: B's oldest next, then A's second batch.
        assert_eq!(claim(2, 4), ["b0"]);
        assert_eq!(claim(2, 4), ["g0"], "another webhook: a batch of its own");
        assert_eq!(claim(2, 4), Vec::<String>::new(), "A runs its two batches");
        assert_eq!(claim(3, 4), ["h5", "h6", "h7"], "h-future is not due");
        assert_eq!(seen.get(), backlog(2, 3), "A ran two batches");
        // What the size asks for, never more than the most nor less than one.
        let sized = |most, size: usize| {
            clock.set(clock.get() + 1);
            deliver(&format!("m{}", clock.get()), "m|inv-1", "C", &at(5));
            deliver(&format!("n{}", clock.get()), "m|inv-2", "C", &at(5));
            deliver(&format!("o{}", clock.get()), "m|inv-3", "C", &at(5));
            claim_deliveries(&conn, &at(clock.get()), 9, most, |_| size)
                .expect("claim")
                .len()
        };
        assert_eq!(sized(2, 3), 2);
        assert_eq!(sized(9, 0), 1);
    }
}
