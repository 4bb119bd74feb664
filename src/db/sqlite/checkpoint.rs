//! WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside
//! the commit that crosses 1,000 WAL pages, so whichever writer crosses it (most often
//! an extraction storing documents) first copies pages into the database file: 17% of
//! an extraction's time in the profile. The server opens its connections with automatic
//! checkpoints off (`Checkpoints::Background`) and runs a passive checkpoint here a few
//! times a second, on whichever core is free. The CLI keeps SQLite's automatic ones.
//!
//! A passive checkpoint copies pages but never restarts the WAL, and while extractions
//! write without pause some reader always holds a snapshot in it, so the file only
//! grows: seeding a million invoices left a 35 GB WAL beside a 15 GB database. Once the
//! WAL passes `TRUNCATE_AFTER_FRAMES`, a TRUNCATE checkpoint restarts it from empty.
//! TRUNCATE holds the write lock while it copies what is left and waits for readers, so
//! it runs only when little is left to copy: copying a 480 MB backlog under the lock
//! once stalled writers past their 10 s busy timeout. "Little left" used to be waited
//! for, but four extractions writing without pause append more than that between two
//! passive checkpoints, so the moment never came and the WAL reached 3.7 GB while they
//! seeded. Now the thread takes the process's write turn (`writer`), so nothing is
//! appended while it copies the last frames and restarts the file; writers wait for
//! that in the turn's queue, for as long as copying a quarter-second's writes takes.

use super::writer::Writers;
use super::Db;
use crate::periodic::Periodic;
use std::time::Duration;

const INTERVAL: Duration = Duration::from_millis(250);
/// 8,192 pages of 8 KiB (a new database's page size since schema 8): a 64 MiB WAL; an
/// older database's 4 KiB pages make it 32 MiB.
pub const TRUNCATE_AFTER_FRAMES: i64 = 8_192;
const TRUNCATE_WAIT: Duration = Duration::from_millis(100);
/// The pool's usual busy timeout, restored after a truncation attempt.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

pub struct Checkpointer(Periodic);

impl Checkpointer {
    pub fn start(db: &Db) -> anyhow::Result<Checkpointer> {
        Self::start_with(db, TRUNCATE_AFTER_FRAMES)
    }

    /// `start` with another WAL size (in frames) past which the WAL is restarted.
    pub fn start_with(db: &Db, truncate_after: i64) -> anyhow::Result<Checkpointer> {
        let conn = db.conn()?;
        let writers = db.writers.clone();
        let thread = Periodic::spawn("checkpoint", INTERVAL, move || {
            if let Err(e) = checkpoint(&conn, &writers, truncate_after) {
                log::warn!("WAL checkpoint failed: {e}");
            }
            INTERVAL
        })?;
        Ok(Checkpointer(thread))
    }

    /// Stops the thread; closing the last connection checkpoints what is left.
    pub fn stop(self) {
        self.0.stop();
    }
}

/// A passive checkpoint; then, when the WAL is large, a truncating one in the write turn.
fn checkpoint(
    conn: &rusqlite::Connection,
    writers: &Writers,
    truncate_after: i64,
) -> anyhow::Result<()> {
    if passive(conn)? < truncate_after {
        return Ok(());
    }
    let started = std::time::Instant::now();
    let turn = writers.turn()?;
    // What was appended since the passive checkpoint above: copied with no writer
    // adding more, so the TRUNCATE below finds nothing left to copy under its lock.
    passive(conn)?;
    conn.busy_timeout(TRUNCATE_WAIT)?;
    // Busy (a reader stayed longer than the wait, or another process writes) is fine:
    // next time.
    let truncated = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    conn.busy_timeout(BUSY_TIMEOUT)?;
    drop(turn);
    if started.elapsed() > Duration::from_secs(1) {
        log::warn!(
            "restarting the WAL held writers back for {:?}",
            started.elapsed()
        );
    }
    match truncated {
        Err(rusqlite::Error::SqliteFailure(e, _))
            if e.code == rusqlite::ErrorCode::DatabaseBusy =>
        {
            Ok(())
        }
        other => Ok(other?),
    }
}

/// PASSIVE never waits for readers or writers: it copies what it can now. The WAL's
/// length in frames.
fn passive(conn: &rusqlite::Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| r.get(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Checkpoints;

    fn main_file_len(dir: &std::path::Path) -> u64 {
        std::fs::metadata(crate::config::db_path(dir)).map_or(0, |m| m.len())
    }

    #[test]
    fn the_thread_copies_the_wal_into_the_database_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Db::open_with(dir.path(), 3, Checkpoints::Background).expect("db");
        db.tx(|tx| {
            tx.execute_batch("CREATE TABLE blobs (b BLOB)")?;
            for _ in 0..64 {
                tx.execute("INSERT INTO blobs VALUES (zeroblob(32768))", [])?;
            }
            Ok(())
        })
        .expect("write");
        // Automatic checkpoints are off: the 2 MiB sit in the WAL only.
        assert!(main_file_len(dir.path()) < 1 << 20);
        let checkpointer = Checkpointer::start(&db).expect("start");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while main_file_len(dir.path()) < 2 << 20 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(50));
        }
        checkpointer.stop();
        assert!(
            main_file_len(dir.path()) >= 2 << 20,
            "the WAL was not checkpointed"
        );
    }

    /// A database of `connections` with a `blobs` table, its WAL checkpointed only by us.
    fn blobs(connections: u32) -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Db::open_with(dir.path(), connections, Checkpoints::Background).expect("db");
        db.tx(|tx| Ok(tx.execute_batch("CREATE TABLE blobs (b BLOB)")?))
            .expect("table");
        (dir, db)
    }

    #[test]
    fn a_large_wal_is_truncated_while_writers_and_readers_never_pause() {
        let (dir, db) = blobs(4);
        let wal = dir.path().join("cfdi-extract.db-wal");
        let checkpointer = Checkpointer::start_with(&db, 64).expect("start");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // A reader that always holds a snapshot of the WAL, as a busy server's do.
        let reader = {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let conn = db.conn().expect("conn");
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    conn.execute_batch("BEGIN").expect("begin");
                    let _: i64 = conn
                        .query_row("SELECT count(*) FROM blobs", [], |r| r.get(0))
                        .expect("read");
                    std::thread::sleep(Duration::from_millis(5));
                    conn.execute_batch("COMMIT").expect("end");
                }
            })
        };
        let (mut previous, mut restarts) = (0, 0);
        for _ in 0..600 {
            db.tx(|tx| Ok(tx.execute("INSERT INTO blobs VALUES (zeroblob(16384))", [])?))
                .expect("write");
            let len = std::fs::metadata(&wal).map_or(0, |m| m.len());
            restarts += usize::from(len < previous);
            previous = len;
            std::thread::sleep(Duration::from_millis(3));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().expect("reader");
        checkpointer.stop();
        // 600 x 16 KiB = 9.8 MB went through the WAL, 40 times the 64-frame limit: it
        // was restarted along the way (how often depends on the machine's load, so the
        // test asks only that it was, which a passive checkpoint alone never does).
        assert!(restarts > 0, "the WAL was never restarted");
    }

    #[test]
    fn the_wal_stays_bounded_while_four_writers_commit_large_batches_without_pause() {
        let (dir, db) = blobs(6);
        let wal = dir.path().join("cfdi-extract.db-wal");
        // 256 frames of 8 KiB: a 2 MiB WAL is restarted.
        let checkpointer = Checkpointer::start_with(&db, 256).expect("start");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let threads: Vec<_> = (0..5)
            .map(|i| {
                let (db, stop) = (db.clone(), stop.clone());
                std::thread::spawn(move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        if i == 4 {
                            // A reader, as the API's and the workers' are: short
                            // reads, one after another.
                            let _: Option<i64> = db
                                .conn()
                                .expect("conn")
                                .query_row("SELECT max(rowid) FROM blobs", [], |r| r.get(0))
                                .expect("read");
                            std::thread::sleep(Duration::from_millis(2));
                        } else {
                            // An extraction's batch: about 10 MB in one transaction.
                            db.tx(|tx| {
                                for _ in 0..600 {
                                    tx.execute("INSERT INTO blobs VALUES (zeroblob(16384))", [])?;
                                }
                                Ok(())
                            })
                            .expect("write");
                        }
                    }
                })
            })
            .collect();
        let (mut largest, mut written, mut previous, mut restarts) = (0, 0, 0, 0);
        let started = std::time::Instant::now();
        while started.elapsed() < Duration::from_secs(4) {
            let len = std::fs::metadata(&wal).map_or(0, |m| m.len());
            largest = largest.max(len);
            restarts += usize::from(len < previous);
            previous = len;
            std::thread::sleep(Duration::from_millis(10));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in threads {
            t.join().expect("thread");
        }
        checkpointer.stop();
        db.conn()
            .expect("conn")
            .query_row("SELECT count(*) * 16384 FROM blobs", [], |r| r.get(0))
            .map(|n: i64| written = n)
            .expect("count");
        // Whatever the machine's speed, the WAL was restarted again and again and held a
        // few checkpoint intervals' writes at most, never most of what was written.
        assert!(
            restarts >= 2 && largest < written as u64 / 2,
            "the WAL was restarted {restarts} times and reached {largest} bytes for {written} written"
        );
    }
}
