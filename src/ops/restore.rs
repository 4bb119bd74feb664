//! `cfdi-extract restore`: a backup becomes the data directory's database (and its
//! `FILE.key`, when there is one, the directory's `secret.key`). The directory's lock
//! keeps a server from running meanwhile; the next `serve` migrates and uses it.
//! A `FILE.key` that does not open the backup's own credentials is refused before
//! anything changes, and a replaced `secret.key` is kept beside it, never deleted.

use super::{copy_to_new_file, key_beside};
use crate::crypto::Cipher;
use crate::db::{self, Access, File};
use crate::{config, data_dir};
use anyhow::{bail, Context};
use std::path::{Path, PathBuf};

pub fn from_file(dir: &Path, backup: &Path, force: bool) -> anyhow::Result<()> {
    if !backup.is_file() {
        bail!("no backup at {}", backup.display());
    }
    let src = File::open_existing(backup, Access::ReadOnly)?;
    validate(&src).with_context(|| format!("{} cannot be restored", backup.display()))?;
    let key = read_key_beside(backup)?;
    if let Some(key) = &key {
        opens_every_credential(&src, key).with_context(|| {
            format!(
                "{} cannot be restored: {} is not its key",
                backup.display(),
                key_beside(backup).display()
            )
        })?;
    }

    data_dir::create_dir(dir)?;
    let _lock = data_dir::lock(dir)?;
    let db_path = config::db_path(dir);
    let has_db = std::fs::metadata(&db_path).is_ok_and(|m| m.len() > 0);
    if has_db && !force {
        bail!(
            "{} already has a database: pass --force to replace it (back it up first)",
            dir.display()
        );
    }
    let key_path = config::key_path(dir);
    let current_key = std::fs::read_to_string(&key_path).ok();
    let key_differs = matches!((&key, &current_key), (Some(k), Some(c)) if k.trim() != c.trim());
    if key_differs && !force {
        bail!(
            "{} holds a different key than {}: pass --force to replace it",
            key_path.display(),
            key_beside(backup).display()
        );
    }

    let mut name = db_path.as_os_str().to_owned();
    name.push(".restoring");
    let restoring = std::path::PathBuf::from(name);
    copy_to_new_file(&src, &restoring)?;
    // The old database's WAL must not be replayed onto the restored file.
    for suffix in ["-wal", "-shm"] {
        let mut name = db_path.as_os_str().to_owned();
        name.push(suffix);
        match std::fs::remove_file(&name) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    std::fs::rename(&restoring, &db_path)?;
    data_dir::sync_dir(&db_path)?;
    if let Some(key) = key.filter(|_| current_key.is_none() || key_differs) {
        if current_key.is_some() {
            let kept = replaced_key_path(&key_path);
            std::fs::rename(&key_path, &kept)
                .with_context(|| format!("cannot keep the replaced key as {}", kept.display()))?;
            eprintln!("the replaced key is kept as {}", kept.display());
        }
        data_dir::create_private(&key_path, key.as_bytes())?;
    }
    Ok(())
}

/// `secret.key.replaced-<UTC time>`: where a key replaced by a restore is kept (it still
/// opens the credentials of any backup taken before).
fn replaced_key_path(key_path: &Path) -> PathBuf {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.6fZ");
    let mut name = key_path.as_os_str().to_owned();
    name.push(format!(".replaced-{stamp}"));
    PathBuf::from(name)
}

/// `key` decrypts every sealed credential of the backup: with any other key the restored
/// service could open none of them.
fn opens_every_credential(conn: &db::Conn, key: &str) -> anyhow::Result<()> {
    let cipher = Cipher::from_key_text(key).context("it does not hold a valid key")?;
    let sealed = db::sealed::all(conn)?;
    let unreadable = sealed
        .iter()
        .filter(|s| cipher.open_bytes(&s.bytes).is_err())
        .count();
    if unreadable > 0 {
        bail!(
            "it decrypts {} of the backup's {} sealed credentials (nothing was changed)",
            sealed.len() - unreadable,
            sealed.len()
        );
    }
    Ok(())
}

/// A sound cfdi-extract database this binary can run.
fn validate(file: &File) -> anyhow::Result<()> {
    let verdict = file
        .integrity_check(1)
        .context("not a readable SQLite database")?
        .join("; ");
    if verdict != "ok" {
        bail!("it fails the integrity check: {verdict}");
    }
    if !file.is_ours()? {
        bail!("it is not a cfdi-extract database");
    }
    let version = file.schema_version()?;
    if version > db::migrate::VERSION {
        bail!(
            "its schema version {version} is newer than this binary's ({}): upgrade cfdi-extract",
            db::migrate::VERSION
        );
    }
    Ok(())
}

fn read_key_beside(backup: &Path) -> anyhow::Result<Option<String>> {
    let path = key_beside(backup);
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    Ok(Some(text.trim().to_string()))
}
