//! Failed logins counted across instances, for the login throttle (`auth`) when several
//! instances share a PostgreSQL database. Each count is one statement in its own
//! autocommit, outside the writers' turn, so a flood of wrong passwords never queues
//! behind (or holds up) other tenants' writes. One SQLite process counts in memory.

use super::sql::params;
use super::Conn;

/// Adds a failure to `key`'s count, starting a new count when the last began before
/// `window_start`. The count now.
pub fn record(conn: &Conn, key: &str, now: &str, window_start: &str) -> anyhow::Result<i64> {
    conn.one(
        "INSERT INTO login_failures (key, failures, since) VALUES (?1, 1, ?2)
         ON CONFLICT (key) DO UPDATE SET
            failures = CASE WHEN login_failures.since < ?3 THEN 1
                            ELSE login_failures.failures + 1 END,
            since = CASE WHEN login_failures.since < ?3 THEN ?2 ELSE login_failures.since END
         RETURNING failures",
        params![key, now, window_start],
        |r| r.get(0),
    )
}

/// `key`'s failures in the count begun since `window_start`.
pub fn count(conn: &Conn, key: &str, window_start: &str) -> anyhow::Result<i64> {
    Ok(conn
        .opt(
            "SELECT failures FROM login_failures WHERE key = ?1 AND since >= ?2",
            params![key, window_start],
            |r| r.get(0),
        )?
        .unwrap_or(0))
}

/// Forgets counts begun before `window_start`; how many.
pub fn purge(conn: &Conn, window_start: &str) -> anyhow::Result<usize> {
    conn.exec(
        "DELETE FROM login_failures WHERE since < ?1",
        params![window_start],
    )
}

#[cfg(test)]
mod tests {
    use crate::db::Memory;

    #[test]
    fn a_count_grows_within_its_window_and_starts_again_after_it() {
        let db = Memory::new();
        let n = |now: &str, start: &str| {
            db.tx(|tx| super::record(tx, "a:192.0.2.1", now, start))
                .expect("record")
        };
        assert_eq!(n("2026-01-01T00:00:00Z", "2025-12-31T23:59:00Z"), 1);
        assert_eq!(n("2026-01-01T00:00:30Z", "2025-12-31T23:59:30Z"), 2);
        // The count began at 00:00:00, before this window: a new one.
        assert_eq!(n("2026-01-01T00:01:10Z", "2026-01-01T00:00:10Z"), 1);
        let seen = db
            .tx(|tx| super::count(tx, "a:192.0.2.1", "2026-01-01T00:00:20Z"))
            .expect("count");
        assert_eq!(seen, 1);
        let purged = db
            .tx(|tx| super::purge(tx, "2026-01-01T00:02:00Z"))
            .expect("purge");
        assert_eq!(purged, 1);
    }
}
