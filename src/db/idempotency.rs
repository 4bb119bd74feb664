//! The `Idempotency-Key`s of POST requests (`http::idempotency`): per organization and
//! key, the fingerprint of the first request and its answer, sealed by the caller. A
//! key is taken in the request's own write transaction, before its work, and answered
//! in it, so the key and the work commit together or not at all. A second request with
//! the key waits on the first's row (PostgreSQL's unique index, SQLite's single
//! writer) and then reads what it answered: the work never runs twice.

use super::sql::params;
use super::Tx;
use std::time::Duration;

/// How long a key and its answer are kept.
pub const KEEP: Duration = Duration::from_secs(24 * 3600);

/// What taking a key found.
#[derive(Debug, PartialEq, Eq)]
pub enum Claim {
    /// The key is this request's now: do the work, then `answer`.
    Fresh,
    /// The same request was answered before: its status and sealed body.
    Answered { status: u16, sealed: Vec<u8> },
    /// The key was used with another request.
    Mismatch,
}

/// Takes `key` for `hash` (the request's fingerprint) at `now`; a key used before
/// `expired_before` counts as new.
pub fn claim(
    tx: &Tx,
    org_id: &str,
    key: &str,
    hash: &[u8],
    now: &str,
    expired_before: &str,
) -> anyhow::Result<Claim> {
    let inserted = tx.exec(
        "INSERT INTO idempotency_keys (org_id, key, request_hash, created_at)
         VALUES (?1, ?2, ?3, ?4) ON CONFLICT (org_id, key) DO NOTHING",
        params![org_id, key, hash, now],
    )?;
    if inserted == 1 {
        return Ok(Claim::Fresh);
    }
    let (stored_hash, status, sealed, created_at) = tx.one(
        "SELECT request_hash, status, response, created_at FROM idempotency_keys
          WHERE org_id = ?1 AND key = ?2",
        params![org_id, key],
        |r| {
            Ok((
                r.get::<Vec<u8>>(0)?,
                r.get::<Option<i64>>(1)?,
                r.get::<Option<Vec<u8>>>(2)?,
                r.get::<String>(3)?,
            ))
        },
    )?;
    match (status, sealed) {
        (Some(status), Some(sealed)) if created_at.as_str() >= expired_before => {
            if stored_hash != hash {
                return Ok(Claim::Mismatch);
            }
            Ok(Claim::Answered {
                status: u16::try_from(status)?,
                sealed,
            })
        }
        // Expired (and not yet purged): the key starts afresh.
        _ => {
            tx.exec(
                "UPDATE idempotency_keys SET request_hash = ?3, status = NULL, response = NULL,
                        created_at = ?4
                  WHERE org_id = ?1 AND key = ?2",
                params![org_id, key, hash, now],
            )?;
            Ok(Claim::Fresh)
        }
    }
}

/// Records the answer of the request that took `key`.
pub fn answer(tx: &Tx, org_id: &str, key: &str, status: u16, sealed: &[u8]) -> anyhow::Result<()> {
    tx.exec(
        "UPDATE idempotency_keys SET status = ?3, response = ?4 WHERE org_id = ?1 AND key = ?2",
        params![org_id, key, i64::from(status), sealed],
    )?;
    Ok(())
}

/// Gives `key` back: the request was refused (a 4xx), which is not kept, so a
/// corrected retry with the same key runs.
pub fn release(tx: &Tx, org_id: &str, key: &str) -> anyhow::Result<()> {
    tx.exec(
        "DELETE FROM idempotency_keys WHERE org_id = ?1 AND key = ?2",
        params![org_id, key],
    )?;
    Ok(())
}

/// Deletes up to `limit` keys taken before `cutoff`; how many.
pub fn purge_before(tx: &Tx, cutoff: &str, limit: i64) -> anyhow::Result<usize> {
    tx.exec(
        "DELETE FROM idempotency_keys WHERE (org_id, key) IN
            (SELECT org_id, key FROM idempotency_keys WHERE created_at < ?1 LIMIT ?2)",
        params![cutoff, limit],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::store::Memory;

    const NOW: &str = "2026-03-02T10:00:00.000000Z";
    const DAY_AGO: &str = "2026-03-01T10:00:00.000000Z";

    fn org(db: &Memory) -> String {
        db.tx(|tx| crate::db::orgs::insert(tx, "Org"))
            .expect("org")
            .id
    }

    #[test]
    fn a_key_is_fresh_once_then_answers_the_same_request_and_refuses_another() {
        let db = Memory::new();
        let org = org(&db);
        let first = db.tx(|tx| {
            let claim = claim(tx, &org, "k1", b"hash-a", NOW, DAY_AGO)?;
            answer(tx, &org, "k1", 201, b"sealed")?;
            Ok(claim)
        });
        assert_eq!(first.expect("first"), Claim::Fresh);
        let again = db.tx(|tx| claim(tx, &org, "k1", b"hash-a", NOW, DAY_AGO));
        assert_eq!(
            again.expect("again"),
            Claim::Answered {
                status: 201,
                sealed: b"sealed".to_vec()
            }
        );
        let other = db.tx(|tx| claim(tx, &org, "k1", b"hash-b", NOW, DAY_AGO));
        assert_eq!(other.expect("other"), Claim::Mismatch);
        // Another organization's key space is its own.
        let org_b = db.tx(|tx| crate::db::orgs::insert(tx, "B")).expect("b").id;
        let theirs = db.tx(|tx| claim(tx, &org_b, "k1", b"hash-b", NOW, DAY_AGO));
        assert_eq!(theirs.expect("theirs"), Claim::Fresh);
    }

    #[test]
    fn a_released_or_expired_key_is_fresh_again_and_the_purge_takes_old_ones() {
        let db = Memory::new();
        let org = org(&db);
        db.tx(|tx| {
            assert_eq!(claim(tx, &org, "k", b"a", DAY_AGO, DAY_AGO)?, Claim::Fresh);
            release(tx, &org, "k")?;
            assert_eq!(claim(tx, &org, "k", b"a", DAY_AGO, DAY_AGO)?, Claim::Fresh);
            answer(tx, &org, "k", 201, b"x")
        })
        .expect("first day");
        let later = "2026-03-03T10:00:00.000000Z";
        let fresh = db.tx(|tx| claim(tx, &org, "k", b"b", later, NOW));
        assert_eq!(fresh.expect("expired"), Claim::Fresh);
        let purged = db.tx(|tx| purge_before(tx, "2026-03-04T00:00:00Z", 10));
        assert_eq!(purged.expect("purge"), 1);
    }
}
