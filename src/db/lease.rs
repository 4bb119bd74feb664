//! A running job's lease. Several instances may share one PostgreSQL database: a claim
//! records which instance holds the job (`owner`, one per process) and until when; the
//! instance renews its leases while it lives (`jobs::renew_leases`), and any instance
//! requeues a job whose lease ran out, so the work of one that died (kill -9, a lost
//! machine) is picked up after the lease. On SQLite one process holds the database and
//! recovers every running job when it starts.

use std::sync::{LazyLock, OnceLock};
use std::time::Duration;

/// How long a claim holds a job unless renewed (`--job-lease`).
pub const DEFAULT: Duration = Duration::from_secs(30);

static LENGTH: OnceLock<Duration> = OnceLock::new();
static OWNER: LazyLock<String> = LazyLock::new(|| uuid::Uuid::now_v7().to_string());

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
