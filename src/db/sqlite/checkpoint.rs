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
//! WAL file passes `TRUNCATE_AFTER`, the thread takes the process's write turn
//! (`writer`), copies what passive checkpoints have not yet copied and restarts the
//! file from empty with a TRUNCATE checkpoint; writers wait in the turn's queue
//! meanwhile. While passive checkpoints keep up that is a quarter-second's writes. When
//! writers append faster than pages are copied (a slow disk), it is the backlog, and
//! the wait is the back-pressure that bounds the WAL: copying the backlog outside the
//! turn first, as an earlier release did, let the WAL grow by what writers appended
//! meanwhile (3.7 GB while four extractions seeded, and half of what a test wrote on a
//! slow CI disk).

use super::writer::Writers;
use crate::db::store::Db;
use crate::periodic::Periodic;
use std::time::Duration;

const INTERVAL: Duration = Duration::from_millis(250);
/// The WAL file's size past which it is restarted.
pub const TRUNCATE_AFTER: u64 = 64 << 20;
const TRUNCATE_WAIT: Duration = Duration::from_millis(100);
/// The pool's usual busy timeout, restored after a truncation attempt.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// No thread on PostgreSQL: the server checkpoints its own log (`Upkeep`).
pub struct Checkpointer(Option<Periodic>);

impl Checkpointer {
    pub fn start(db: &Db) -> anyhow::Result<Checkpointer> {
        Self::start_with(db, TRUNCATE_AFTER)
    }

    /// `start` with another WAL size (in bytes) past which the WAL is restarted.
    pub fn start_with(db: &Db, truncate_after: u64) -> anyhow::Result<Checkpointer> {
        let conn = db.conn()?;
        if conn.sqlite().is_none() {
            return Ok(Checkpointer(None));
        }
        let writers = db.writers.clone();
        let thread = Periodic::spawn("checkpoint", INTERVAL, move || {
            let sqlite = conn.sqlite().expect("a SQLite connection");
            if let Err(e) = checkpoint(sqlite, &writers, truncate_after) {
                log::warn!("WAL checkpoint failed: {e}");
            }
            INTERVAL
        })?;
        Ok(Checkpointer(Some(thread)))
    }

    /// Stops the thread; closing the last connection checkpoints what is left.
    pub fn stop(self) {
        if let Some(thread) = self.0 {
            thread.stop();
        }
    }
}

/// A passive checkpoint; when the WAL is large, a truncating one in the write turn.
fn checkpoint(
    conn: &rusqlite::Connection,
    writers: &Writers,
    truncate_after: u64,
) -> anyhow::Result<()> {
    if wal_len(conn) < truncate_after {
        passive(conn)?;
        return Ok(());
    }
    let started = std::time::Instant::now();
    let turn = writers.turn()?;
    // With no writer adding more, the TRUNCATE below finds nothing left to copy under
    // SQLite's lock, so it waits only for readers.
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

/// The WAL file's length: what it holds at most (a WAL that SQLite wrapped to its start
/// keeps its length until a TRUNCATE), read without touching the database.
fn wal_len(conn: &rusqlite::Connection) -> u64 {
    conn.path()
        .and_then(|db| std::fs::metadata(format!("{db}-wal")).ok())
        .map_or(0, |m| m.len())
}

/// PASSIVE never waits for readers or writers: it copies what it can now.
fn passive(conn: &rusqlite::Connection) -> rusqlite::Result<()> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()))
}
#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::sql::params;
    use crate::db::sqlite::Checkpoints;

    fn main_file_len(dir: &std::path::Path) -> u64 {
        std::fs::metadata(crate::config::db_path(dir)).map_or(0, |m| m.len())
    }

    #[test]
    fn the_thread_copies_the_wal_into_the_database_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Db::open_with(dir.path(), 3, Checkpoints::Background).expect("db");
        db.tx(|tx| {
            tx.batch("CREATE TABLE blobs (b BLOB)")?;
            for _ in 0..64 {
                tx.exec("INSERT INTO blobs VALUES (zeroblob(32768))", params![])?;
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
        db.tx(|tx| tx.batch("CREATE TABLE blobs (b BLOB)"))
            .expect("table");
        (dir, db)
    }

    #[test]
    fn a_large_wal_is_truncated_while_writers_and_readers_never_pause() {
        let (dir, db) = blobs(4);
        let wal = dir.path().join("cfdi-extract.db-wal");
        let checkpointer = Checkpointer::start_with(&db, 64 * 8192).expect("start");
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        // A reader that always holds a snapshot of the WAL, as a busy server's do.
        let reader = {
            let (db, stop) = (db.clone(), stop.clone());
            std::thread::spawn(move || {
                let conn = db.conn().expect("conn");
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    conn.batch("BEGIN").expect("begin");
                    let _: i64 = conn
                        .one("SELECT count(*) FROM blobs", params![], |r| r.get(0))
                        .expect("read");
                    std::thread::sleep(Duration::from_millis(5));
                    conn.batch("COMMIT").expect("end");
                }
            })
        };
        let (mut previous, mut restarts) = (0, 0);
        for _ in 0..600 {
            db.tx(|tx| tx.exec("INSERT INTO blobs VALUES (zeroblob(16384))", params![]))
                .expect("write");
            let len = std::fs::metadata(&wal).map_or(0, |m| m.len());
            restarts += usize::from(len < previous);
            previous = len;
            std::thread::sleep(Duration::from_millis(3));
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        reader.join().expect("reader");
        checkpointer.stop();
        // 600 x 16 KiB = 9.8 MB went through the WAL, 19 times the 512 KiB limit: it
        // was restarted along the way (how often depends on the machine's load, so the
        // test asks only that it was, which a passive checkpoint alone never does).
        assert!(restarts > 0, "the WAL was never restarted");
    }

    #[test]
    fn the_wal_stays_bounded_while_four_writers_commit_large_batches_without_pause() {
        let (dir, db) = blobs(6);
        let wal = dir.path().join("cfdi-extract.db-wal");
        // A 2 MiB WAL is restarted.
        let checkpointer = Checkpointer::start_with(&db, 2 << 20).expect("start");
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
                                .one("SELECT max(rowid) FROM blobs", params![], |r| r.get(0))
                                .expect("read");
                            std::thread::sleep(Duration::from_millis(2));
                        } else {
                            // An extraction's batch: about 10 MB in one transaction.
                            db.tx(|tx| {
                                for _ in 0..600 {
                                    tx.exec(
                                        "INSERT INTO blobs VALUES (zeroblob(16384))",
                                        params![],
                                    )?;
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
        // Until the WAL was restarted a few times, however slow the disk and busy the
        // cores: each restart waits for the backlog's copy.
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        while restarts < 6 && std::time::Instant::now() < deadline {
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
            .one("SELECT count(*) * 16384 FROM blobs", params![], |r| {
                r.get(0)
            })
            .map(|n: i64| written = n)
            .expect("count");
        // The WAL held a checkpoint interval's writes at most, never most of what was
        // written.
        assert!(
            restarts >= 6 && largest < written as u64 / 2,
            "the WAL was restarted {restarts} times and reached {largest} bytes for {written} written"
        );
    }
}
