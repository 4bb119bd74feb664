//! Events are kept `--event-retention-days`, then purged with their finished
//! deliveries by a thread of its own (`--event-purge-every`). An event with a pending
//! delivery is kept until that delivery ends, whatever its age. The same thread purges
//! the `Idempotency-Key`s past their 24 hours (`db::idempotency::KEEP`).

use crate::db::{self, Db};
use crate::periodic::Periodic;
use chrono::{DateTime, Utc};
use std::time::Duration;

/// Events deleted per transaction, so a purge never holds the write lock for long.
const BATCH: i64 = 1000;

/// Purges what is older than `keep` at `now`; returns how many events went.
pub fn purge(db: &Db, keep: Duration, now: DateTime<Utc>) -> anyhow::Result<usize> {
    let keep = chrono::Duration::from_std(keep).unwrap_or(chrono::Duration::MAX);
    let Some(cutoff) = now.checked_sub_signed(keep) else {
        return Ok(0);
    };
    let cutoff = crate::time::format(cutoff);
    let mut total = 0;
    loop {
        let deleted = db.tx(|tx| db::events::purge_before(tx, &cutoff, BATCH))?;
        total += deleted;
        if deleted < BATCH as usize {
            return Ok(total);
        }
    }
}

/// Deletes the `Idempotency-Key`s taken before `now` less their keep; how many.
pub fn purge_idempotency_keys(db: &Db, now: DateTime<Utc>) -> anyhow::Result<usize> {
    let keep = chrono::Duration::from_std(db::idempotency::KEEP)?;
    let cutoff = crate::time::format(now - keep);
    let mut total = 0;
    loop {
        let deleted = db.tx(|tx| db::idempotency::purge_before(tx, &cutoff, BATCH))?;
        total += deleted;
        if deleted < BATCH as usize {
            return Ok(total);
        }
    }
}

/// The purge thread: once at start, then every `every`.
pub fn start(db: Db, keep: Duration, every: Duration) -> anyhow::Result<Periodic> {
    Periodic::spawn("event-retention", Duration::ZERO, move || {
        match purge(&db, keep, Utc::now()) {
            Ok(0) => {}
            Ok(n) => log::info!("purged {n} event(s) past their retention"),
            Err(e) => log::error!("purging old events failed: {e:#}"),
        }
        if let Err(e) = purge_idempotency_keys(&db, Utc::now()) {
            log::error!("purging expired idempotency keys failed: {e:#}");
        }
        every
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::testing;

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn old_events_go_with_their_finished_deliveries_but_pending_ones_stay() {
        let dir = tempfile::tempdir().expect("dir");
        let db = Db::open(dir.path(), 2).expect("db");
        db.tx(|tx| {
            testing::events_to_purge(tx);
            Ok(())
        })
        .expect("seed");
        let now = crate::time::parse("2026-02-01T00:00:00Z").expect("time");
        assert_eq!(purge(&db, 30 * DAY, now).expect("purge"), 1);
        let conn = db.conn().expect("conn");
        let ids = |table, column| testing::column(&conn, table, column);
        assert_eq!(ids("events", "id"), ["old-pending", "recent"]);
        assert_eq!(ids("deliveries", "id"), ["d2", "d3"]);
        assert!(ids("delivery_attempts", "delivery_id").is_empty());
        // Once its last delivery ends, the old event goes too; a recent one stays.
        testing::set_delivery_status(&conn, "d2", "failed");
        assert_eq!(purge(&db, 30 * DAY, now).expect("purge"), 1);
        assert_eq!(ids("events", "id"), ["recent"]);
        assert_eq!(purge(&db, Duration::MAX, now).expect("no overflow"), 0);
    }
}
