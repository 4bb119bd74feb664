//! A running job's lease. Several instances may share one PostgreSQL database: a claim
//! records which instance holds the job (`owner`, one per process) and until when; the
//! instance renews the leases of the jobs its workers are running (`held`:
//! `jobs::renew_leases`), and any instance requeues a job whose lease ran out. So the
//! work of an instance that died (kill -9, a lost machine), and a job whose worker gave
//! up on it (its outcome could not be recorded while the database was away), is picked
//! up after the lease. On SQLite one process holds the database and recovers every
//! running job when it starts.

use std::collections::HashSet;
use std::sync::{LazyLock, Mutex, OnceLock};
use std::time::Duration;

/// How long a claim holds a job unless renewed (`--job-lease`).
pub const DEFAULT: Duration = Duration::from_secs(30);

static LENGTH: OnceLock<Duration> = OnceLock::new();
static OWNER: LazyLock<String> = LazyLock::new(|| uuid::Uuid::now_v7().to_string());
static HELD: LazyLock<Mutex<HashSet<i64>>> = LazyLock::new(Mutex::default);

/// Sets the lease's length for this process (once, at start; later calls are ignored).
pub fn set_length(length: Duration) {
    let _ = LENGTH.set(length);
}

pub fn length() -> Duration {
    LENGTH.get().copied().unwrap_or(DEFAULT)
}

/// This process, as the owner of the jobs it runs.
pub fn owner() -> &'static str {
    &OWNER
}

/// When a lease taken or renewed now runs out.
pub fn until() -> String {
    crate::time::after(length())
}

/// A worker runs these jobs now: their leases are renewed until `let_go`.
pub fn hold(ids: &[i64]) {
    HELD.lock().unwrap_or_else(|p| p.into_inner()).extend(ids);
}

/// The worker is done with these jobs (recorded, or given up).
pub fn let_go(ids: &[i64]) {
    let mut held = HELD.lock().unwrap_or_else(|p| p.into_inner());
    for id in ids {
        held.remove(id);
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
