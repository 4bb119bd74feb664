//! `cfdi-extract backup`: an online copy of the database, safe while `serve` runs.

use super::{copy_to_new_file, key_beside};
use crate::config;
use crate::crypto::Cipher;
use crate::db::{Access, File};
use anyhow::bail;
use std::path::Path;

/// Copies the database of `data_dir` into the new file `dest` (0600), consistent as of
/// one moment, and with `key` writes it to `dest.key` (0600). Refuses to overwrite
/// either. Returns the backup's size in bytes.
pub fn to_file(data_dir: &Path, dest: &Path, key: Option<&str>) -> anyhow::Result<u64> {
    let db = config::db_path(data_dir);
    if !db.is_file() {
        bail!("no database at {}", db.display());
    }
    let key_file = key_beside(dest);
    if dest.exists() || (key.is_some() && key_file.exists()) {
        bail!(
            "{} (or its .key) already exists: a backup never overwrites",
            dest.display()
        );
    }
    let src = File::open_existing(&db, Access::ReadWrite)?;
    copy_to_new_file(&src, dest)?;
    if let Some(key) = key {
        crate::data_dir::create_private(&key_file, key.as_bytes())?;
    }
    Ok(std::fs::metadata(dest)?.len())
}

/// The key `serve` would use on `data_dir` (as `secret.key` holds it), for `--with-key`:
/// refused when it is missing or not the database's.
pub fn current_key(data_dir: &Path, configured: Option<&str>) -> anyhow::Result<String> {
    let conn = File::open_existing(&config::db_path(data_dir), Access::ReadWrite)?;
    match Cipher::verify(&conn, configured, &config::key_path(data_dir))? {
        Some(cipher) => Ok(cipher.key_text()),
        None => bail!("there is no encryption key yet (the first `serve` creates it)"),
    }
}
