//! A database file opened on its own, outside the pool: what `backup`, `restore` and
//! `check` work on (a live server's database, a backup file), and the online copy.

use crate::db::sql::Conn;
use anyhow::Context;
use ref_cast::RefCast;
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long a copy waits for a lock before giving up.
const LOCK_WAIT: Duration = Duration::from_secs(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    ReadOnly,
    ReadWrite,
}

/// An existing database file, never created by opening it.
pub struct File(Connection);

impl std::ops::Deref for File {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        Conn::ref_cast(&self.0)
    }
}

impl File {
    pub fn open_existing(path: &Path, access: Access) -> anyhow::Result<File> {
        let flags = match access {
            Access::ReadOnly => OpenFlags::SQLITE_OPEN_READ_ONLY,
            Access::ReadWrite => OpenFlags::SQLITE_OPEN_READ_WRITE,
        };
        let conn = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_context(|| format!("cannot open {}", path.display()))?;
        conn.busy_timeout(Duration::from_secs(10))?;
        Ok(File(conn))
    }

    /// Up to `limit` problems SQLite's integrity check finds; `["ok"]` when none.
    pub fn integrity_check(&self, limit: u32) -> anyhow::Result<Vec<String>> {
        let mut stmt = self
            .0
            .prepare(&format!("PRAGMA integrity_check({limit})"))?;
        let verdicts = stmt
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<Result<Vec<_>, _>>()?;
        Ok(verdicts)
    }

    /// Whether the file holds a cfdi-extract database (it has the job queue).
    pub fn is_ours(&self) -> anyhow::Result<bool> {
        Ok(self.0.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'jobs')",
            [],
            |r| r.get(0),
        )?)
    }

    /// The schema version the file was last written with (`migrate::VERSION`).
    pub fn schema_version(&self) -> anyhow::Result<i64> {
        Ok(self.0.query_row("PRAGMA user_version", [], |r| r.get(0))?)
    }

    /// Copies the database into the empty file `dst` with SQLite's backup API, as one
    /// self-contained file (rollback journal, no `-wal` beside it), and syncs it.
    pub fn copy_into(&self, dst: &Path) -> anyhow::Result<()> {
        let mut out =
            Connection::open(dst).with_context(|| format!("cannot open {}", dst.display()))?;
        {
            let backup = Backup::new(&self.0, &mut out)?;
            let deadline = Instant::now() + LOCK_WAIT;
            // Every page in one step: one read transaction, a consistent copy. Writers go
            // on (a reader never blocks them under WAL); in small steps each of their
            // commits would restart the copy from the first page.
            loop {
                match backup.step(-1)? {
                    StepResult::Done => break,
                    StepResult::More => {}
                    _ if Instant::now() > deadline => {
                        anyhow::bail!("the database stayed locked for {LOCK_WAIT:?}")
                    }
                    _ => std::thread::sleep(Duration::from_millis(50)),
                }
            }
        }
        out.execute_batch("PRAGMA journal_mode = DELETE")?;
        let verdict: String = out.query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        if verdict != "ok" {
            anyhow::bail!("the copy does not pass quick_check: {verdict}");
        }
        out.close().map_err(|(_, e)| e)?;
        std::fs::File::open(dst)?.sync_all()?;
        Ok(())
    }
}
