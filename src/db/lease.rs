//! A running job's lease. Several instances may share one PostgreSQL database: a claim
//! records which instance holds the job (`owner`, one per process) and until when; the
//! instance renews the leases of the jobs its workers are running (`held`:
//! `jobs::renew_leases`), and any instance requeues a job whose lease ran out. So the
//! work of an instance that died (kill -9, a lost machine), and a job whose worker gave
//! up on it (its outcome could not be recorded while the database was away), is picked
//! up after the lease. On SQLite one process holds the database and recovers every
//! running job when it starts.

use std::collections::HashSet;
use std::path::Path;
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::Duration;

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
