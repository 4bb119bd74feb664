//! `downloads`: how many times each package of the sandbox's web-service
//! simulation was downloaded, so the SAT's two-download limit holds across restarts.

use crate::db::sql::params;
use crate::db::Conn;

/// Counts a download of `package_id` unless it already had `max`; returns whether it
/// was allowed.
pub fn take(tx: &Conn, package_id: &str, request_id: &str, max: i64) -> anyhow::Result<bool> {
    let done: i64 = tx
        .opt(
            "SELECT downloads FROM downloads WHERE package_id = ?1",
            params![package_id],
            |r| r.get(0),
        )?
        .unwrap_or(0);
    if done >= max {
        return Ok(false);
    }
    tx.exec(
        "INSERT INTO downloads (package_id, request_id, downloads) VALUES (?1, ?2, 1)
         ON CONFLICT (package_id) DO UPDATE SET downloads = downloads + 1",
        params![package_id, request_id],
    )?;
    Ok(true)
}
