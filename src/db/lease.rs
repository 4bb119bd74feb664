//! A running job's lease. Several instances may share one PostgreSQL database: a claim
//! records which instance holds the job (`owner`, one per process) and until when; the
//! instance renews the leases of the jobs its workers are running (`held`:
//! `jobs::renew_leases`), and any instance requeues a job whose lease ran out. So the
//! work of an instance that died (kill -9, a lost machine), and a job whose worker gave
//! up on it (its outcome could not be recorded while the database was away), is picked
//! up after the lease. On SQLite one process holds the database and recovers every
//! running job when it starts.
//!
//! A lease can run out under a worker that is still running (a machine too loaded to
//! renew in time, a database away for longer than the lease): another instance then
//! runs the job too. So a worker running a validation or an extraction is fenced
//! (`fence`): every write transaction of its thread first renews its claim, and fails
//! with `LeaseLost`, writing nothing, once the claim is another's. The stale worker
//! stops at its next write and records nothing; the new owner resumes from what was
//! committed.

use super::sql::{params, Conn};
use std::cell::RefCell;
use std::collections::HashSet;
use std::path::Path;
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::Duration;

thread_local! {
    /// The claim of the job this thread runs, while it is fenced: its id and `locked_at`.
    static FENCED: RefCell<Option<(i64, String)>> = const { RefCell::new(None) };
}

/// While the guard lives, this thread's write transactions check and renew the claim
/// of job `id` made at `claimed_at` first (`check`).
#[must_use = "the fence is lifted when the guard drops"]
pub struct Fenced(());

pub fn fence(id: i64, claimed_at: &str) -> Fenced {
    FENCED.with(|f| *f.borrow_mut() = Some((id, claimed_at.to_string())));
    Fenced(())
}

impl Drop for Fenced {
    fn drop(&mut self) {
        FENCED.with(|f| *f.borrow_mut() = None);
    }
}

/// The fence of a write transaction just begun (PostgreSQL: on SQLite no other process
/// takes a job). The renewal locks the job's row until the transaction ends, so no
/// instance requeues the job under it.
pub(in crate::db) fn check(conn: &Conn) -> anyhow::Result<()> {
    let Some((id, claimed_at)) = FENCED.with(|f| f.borrow().clone()) else {
        return Ok(());
    };
    let kept = conn.exec(
        "UPDATE jobs SET lease_until = ?4
          WHERE id = ?1 AND status = 'running' AND lease_owner = ?2 AND locked_at = ?3",
        params![id, owner(), claimed_at, until()],
    )?;
    if kept == 0 {
        return Err(LeaseLost { id }.into());
    }
    Ok(())
}

/// A fenced worker's job is no longer its own.
#[derive(Debug, thiserror::Error)]
#[error("job {id} is no longer this instance's: its lease ran out and it was requeued")]
pub struct LeaseLost {
    id: i64,
}

/// True when `err` is a fenced worker's write refused because its claim is lost.
pub fn is_lost(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| cause.is::<LeaseLost>())
}

/// How long a claim holds a job unless renewed (`--job-lease`).
pub const DEFAULT: Duration = Duration::from_secs(30);

static LENGTH: OnceLock<Duration> = OnceLock::new();
static OWNER: OnceLock<String> = OnceLock::new();
static HELD: LazyLock<Mutex<HashSet<i64>>> = LazyLock::new(Mutex::default);

/// Sets the lease's length for this process (once, at start; later calls are ignored).
pub fn set_length(length: Duration) {
    let _ = LENGTH.set(length);
}

pub fn length() -> Duration {
    LENGTH.get().copied().unwrap_or(DEFAULT)
}

/// This process, as the owner of the jobs it runs: its data directory's instance
/// (`adopt`), else an id of its own.
pub fn owner() -> &'static str {
    OWNER.get_or_init(|| uuid::Uuid::now_v7().to_string())
}

/// A server owns its jobs as its data directory's instance: the id in `instance.id`,
/// made at the first `serve`. One server runs on a data directory at a time (its lock),
/// so a server started again after a kill -9 takes its predecessor's jobs back at once
/// instead of waiting out their leases.
pub fn adopt(data_dir: &Path) -> anyhow::Result<()> {
    let path = data_dir.join("instance.id");
    let id = match std::fs::read_to_string(&path) {
        Ok(id) if !id.trim().is_empty() => id.trim().to_string(),
        Ok(_) => anyhow::bail!("{} is empty: delete it", path.display()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let id = uuid::Uuid::now_v7().to_string();
            crate::data_dir::create_private(&path, id.as_bytes())?;
            id
        }
        Err(e) => return Err(e.into()),
    };
    if OWNER.set(id).is_err() {
        anyhow::bail!("the jobs' owner was taken before the data directory's instance");
    }
    Ok(())
}

/// When a lease taken or renewed now runs out.
pub fn until() -> String {
    crate::time::after(length())
}

/// A worker runs these jobs now: their leases are renewed while the guard lives. Its
/// drop lets them go, also when the worker unwinds from a panic, so a job nobody runs
/// is never renewed forever.
#[must_use = "the jobs are let go when the guard drops"]
pub struct Held(Vec<i64>);

pub fn hold(ids: Vec<i64>) -> Held {
    HELD.lock().unwrap_or_else(|p| p.into_inner()).extend(&ids);
    Held(ids)
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
        for id in &self.0 {
            held.remove(id);
        }
    }
}

/// The jobs this process's workers are running.
pub fn held() -> Vec<i64> {
    HELD.lock()
        .unwrap_or_else(|p| p.into_inner())
        .iter()
        .copied()
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::db::jobs::{self, Allowed, Kind};
    use crate::db::sql::params;
    use crate::db::store::Memory;

    #[test]
    fn a_fenced_write_passes_while_the_claim_is_ours_and_fails_once_it_was_taken_over() {
        let db = Memory::new();
        let all = Allowed {
            validations: true,
            extractions: true,
        };
        let now = crate::time::now();
        let job = db
            .tx(|tx| {
                jobs::enqueue(tx, Kind::RunExtraction, "x", None, &now)?;
                jobs::claim(tx, &now, all)
            })
            .expect("claim")
            .expect("a job");
        let fenced = super::fence(job.id, &job.claimed_at);
        db.tx(|tx| super::check(tx)).expect("ours");
        // Its lease ran out: requeued, and claimed again (by another worker or instance).
        db.tx(|tx| {
            tx.exec(
                "UPDATE jobs SET status = 'queued', lease_owner = NULL, locked_at = NULL",
                params![],
            )?;
            let later = crate::time::after(std::time::Duration::from_millis(1));
            jobs::claim(tx, &later, all)
        })
        .expect("reclaim")
        .expect("the job again");
        let lost = db.tx(|tx| super::check(tx)).expect_err("no longer ours");
        assert!(super::is_lost(&lost), "{lost:#}");
        drop(fenced);
        db.tx(|tx| super::check(tx)).expect("no fence, no check");
    }

    #[test]
    fn a_worker_that_panics_lets_its_jobs_go() {
        let ran = std::panic::catch_unwind(|| {
            let _held = super::hold(vec![-7]);
            assert!(super::held().contains(&-7));
            panic!("the job's code failed");
        });
        assert!(ran.is_err());
        assert!(!super::held().contains(&-7));
    }
}
