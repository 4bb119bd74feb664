//! `users.stamp` in the data directory: the CLI appends a byte to it after it changes a
//! password (from another process), and the server's login cache compares the file's
//! metadata on every request. A cached login is then good until the stamp moves, with
//! one `stat` per request instead of a database round trip on the blocking pool (the
//! round trip was a fifth of a trivial authenticated request's cost).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

const FILE: &str = "users.stamp";

/// What the file looked like: any change of it means "users changed".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
    inode: u64,
}

pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE)
}

/// The stamp now (`None` while no password was ever changed). One `stat` of a local
/// file, which is why it is done on the request's own thread.
pub fn read(path: &Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    Some(Stamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        inode: inode(&meta),
    })
}

/// Moves the stamp: called after the change has committed. The file only grows (one
/// byte per change, appended atomically even by concurrent CLIs), so two changes within
/// the file system's timestamp granularity still differ.
pub fn bump(data_dir: &Path) -> anyhow::Result<()> {
    use std::io::Write;
    let path = path(data_dir);
    crate::data_dir::open_options()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| f.write_all(b"."))
        .map_err(|e| anyhow::anyhow!("cannot update {}: {e}", path.display()))
}

#[cfg(unix)]
fn inode(meta: &std::fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
fn inode(_meta: &std::fs::Metadata) -> u64 {
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bump_moves_the_stamp_and_nothing_else_does() {
        let dir = tempfile::tempdir().expect("dir");
        let p = path(dir.path());
        assert_eq!(read(&p), None);
        bump(dir.path()).expect("bump");
        let first = read(&p).expect("stamp");
        assert_eq!(read(&p), Some(first), "reading does not move it");
        bump(dir.path()).expect("bump");
        assert_ne!(read(&p), Some(first), "a second bump at once still differs");
    }
}
