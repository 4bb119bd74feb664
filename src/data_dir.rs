//! The data directory holds password hashes, webhook secrets, sealed credentials and
//! every invoice, so it is private to the service's user: the directory 0700, its files
//! 0600. SQLite creates `-wal` and `-shm` with the database file's mode, so creating the
//! database file private first is enough for those; files left wider by older releases
//! are narrowed at every open.

use anyhow::Context;
use std::path::Path;

/// The files the service keeps in the directory.
const FILES: [&str; 8] = [
    "cfdi-extract.db",
    "cfdi-extract.db-wal",
    "cfdi-extract.db-shm",
    "secret.key",
    LOCK_FILE,
    "sandbox.db",
    "sandbox.db-wal",
    "sandbox.db-shm",
];

/// Locked by `serve` for as long as it runs (see `lock`).
const LOCK_FILE: &str = "cfdi-extract.lock";

/// Creates the directory (0700) and the empty database file (0600) if missing, and
/// narrows the permissions of what is already there.
pub fn prepare(dir: &Path) -> anyhow::Result<()> {
    create_dir(dir)?;
    let db = crate::config::db_path(dir);
    if !db.exists() {
        create_private(&db, b"")?;
    }
    for name in FILES {
        let path = dir.join(name);
        if path.exists() {
            restrict(&path, 0o600)?;
        }
    }
    Ok(())
}

/// Takes the directory's lock: `serve` holds it while it runs, `restore` while it
/// replaces the database, so neither happens under the other. It is an OS file lock,
/// released when the process ends however it ends (SIGKILL included); the file itself
/// stays and means nothing on its own.
pub fn lock(dir: &Path) -> anyhow::Result<std::fs::File> {
    let path = dir.join(LOCK_FILE);
    let file = open_options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    match try_lock(&file) {
        Ok(true) => Ok(file),
        Ok(false) => anyhow::bail!(
            "a cfdi-extract server is running on {} (it holds {LOCK_FILE}): stop it first",
            dir.display()
        ),
        Err(e) => Err(e).with_context(|| format!("cannot lock {}", path.display())),
    }
}

/// An exclusive lock without waiting: false when another open file holds it.
#[cfg(unix)]
fn try_lock(file: &std::fs::File) -> std::io::Result<bool> {
    use rustix::fs::{flock, FlockOperation};
    match flock(file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(true),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

#[cfg(not(unix))]
fn try_lock(_file: &std::fs::File) -> std::io::Result<bool> {
    Ok(true)
}

/// Creates `dir` and its missing parents with mode 0700.
pub fn create_dir(dir: &Path) -> anyhow::Result<()> {
    create_private_dir(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    restrict(dir, 0o700)
}

/// Writes a new file readable by its owner only, durably: the data, then the directory
/// entry (so a key created just before a crash is not lost while data sealed with it
/// survives). Fails if the file exists.
pub fn create_private(path: &Path, contents: &[u8]) -> anyhow::Result<()> {
    use std::io::Write;
    let mut f = open_options()
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(contents)?;
    f.sync_all()?;
    sync_dir(path)
}

/// Options whose `create` makes a file readable by its owner only.
#[cfg(unix)]
pub fn open_options() -> std::fs::OpenOptions {
    use std::os::unix::fs::OpenOptionsExt;
    let mut o = std::fs::OpenOptions::new();
    o.mode(0o600);
    o
}

#[cfg(not(unix))]
pub fn open_options() -> std::fs::OpenOptions {
    std::fs::OpenOptions::new()
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

/// Removes group and other permissions (never widens: `mode` is the most allowed).
#[cfg(unix)]
fn restrict(path: &Path, mode: u32) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let current = std::fs::metadata(path)?.permissions().mode() & 0o777;
    if current & !mode != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(current & mode))
            .with_context(|| format!("cannot restrict the permissions of {}", path.display()))?;
    }
    Ok(())
}

#[cfg(not(unix))]
fn restrict(_path: &Path, _mode: u32) -> anyhow::Result<()> {
    Ok(())
}

#[cfg(unix)]
pub fn sync_dir(path: &Path) -> anyhow::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::File::open(parent)?.sync_all()?;
    }
    Ok(())
}

#[cfg(not(unix))]
pub fn sync_dir(_path: &Path) -> anyhow::Result<()> {
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("meta").permissions().mode() & 0o777
    }

    #[test]
    fn prepare_creates_private_and_narrows_what_was_wider() {
        let tmp = tempfile::tempdir().expect("tmp");
        let dir = tmp.path().join("data");
        prepare(&dir).expect("prepare");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&crate::config::db_path(&dir)), 0o600);

        let key = dir.join("secret.key");
        std::fs::write(&key, "x").expect("write");
        std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        prepare(&dir).expect("again");
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&key), 0o600);
    }

    #[test]
    fn the_lock_is_held_once_and_released_with_its_file() {
        let tmp = tempfile::tempdir().expect("tmp");
        let held = lock(tmp.path()).expect("first");
        let err = lock(tmp.path()).expect_err("second refused");
        assert!(err.to_string().contains("stop it first"), "{err}");
        assert_eq!(mode(&tmp.path().join(LOCK_FILE)), 0o600);
        drop(held);
        lock(tmp.path()).expect("free again");
    }
}
