//! WAL checkpoints on a thread of their own. SQLite's automatic checkpoint runs inside
//! the commit that crosses 1,000 WAL pages, so whichever writer crosses it (most often
//! an extraction storing documents) first copies pages into the database file: 17% of
//! an extraction's time in the profile. The server opens its connections with automatic
//! checkpoints off (`Checkpoints::Background`) and runs a passive checkpoint here a few
//! times a second, on whichever core is free. The CLI keeps SQLite's automatic ones.

use super::Db;
use crate::periodic::Periodic;
use std::time::Duration;

const INTERVAL: Duration = Duration::from_millis(250);

pub struct Checkpointer(Periodic);

impl Checkpointer {
    pub fn start(db: &Db) -> anyhow::Result<Checkpointer> {
        let conn = db.conn()?;
        let thread = Periodic::spawn("checkpoint", INTERVAL, move || {
            // PASSIVE never waits for readers or writers: it copies what it can now.
            let done = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            if let Err(e) = done {
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
}
