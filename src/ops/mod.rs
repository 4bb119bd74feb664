//! Operating the service: online backups (and their schedule), restores, and the
//! health check of a data directory.

pub mod backup;
pub mod check;
pub mod restore;
pub mod schedule;

use anyhow::Context;
use rusqlite::backup::{Backup, StepResult};
use rusqlite::{Connection, OpenFlags};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a copy waits for a lock before giving up.
const LOCK_WAIT: Duration = Duration::from_secs(60);

/// `FILE.key`: where a backup's key goes beside it.
pub fn key_beside(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// Opens an existing database without creating it.
fn open_existing(path: &Path, flags: OpenFlags) -> anyhow::Result<Connection> {
    let conn = Connection::open_with_flags(path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .with_context(|| format!("cannot open {}", path.display()))?;
    conn.busy_timeout(Duration::from_secs(10))?;
    Ok(conn)
}

/// Copies `src` into the empty file `dst` with SQLite's backup API, as one self-contained
/// file (rollback journal, no `-wal` beside it), and syncs it.
fn copy_database(src: &Connection, dst: &Path) -> anyhow::Result<()> {
    let mut out =
        Connection::open(dst).with_context(|| format!("cannot open {}", dst.display()))?;
    {
        let backup = Backup::new(src, &mut out)?;
        let deadline = Instant::now() + LOCK_WAIT;
        // Every page in one step: one read transaction, a consistent copy. Writers go on
        // (a reader never blocks them under WAL); in small steps each of their commits
        // would restart the copy from the first page.
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

/// Copies `src` into `dest` through `dest.partial` (0600), so `dest` only ever appears
/// complete.
fn copy_to_new_file(src: &Connection, dest: &Path) -> anyhow::Result<()> {
    let mut name = dest.as_os_str().to_owned();
    name.push(".partial");
    let partial = PathBuf::from(name);
    // Left by an interrupted run of our own.
    let _ = std::fs::remove_file(&partial);
    crate::data_dir::create_private(&partial, b"")?;
    if let Err(e) = copy_database(src, &partial) {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, dest)
        .with_context(|| format!("cannot move the copy to {}", dest.display()))?;
    crate::data_dir::sync_dir(dest)
}
