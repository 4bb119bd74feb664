//! Operating the service: online backups (and their schedule), restores, the health
//! check of a data directory, the one-off backfill of invoices' relations, and the
//! seal verifier of stored documents (`seals`).

pub mod backup;
pub mod check;
pub mod relations_backfill;
pub mod restore;
pub mod scheduled_backups;
pub mod seals;

use crate::db;
use anyhow::Context;
use std::path::{Path, PathBuf};

/// `FILE.key`: where a backup's key goes beside it.
pub fn key_beside(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// Copies `src` into `dest` through `dest.partial` (0600), so `dest` only ever appears
/// complete.
fn copy_to_new_file(src: &db::File, dest: &Path) -> anyhow::Result<()> {
    let mut name = dest.as_os_str().to_owned();
    name.push(".partial");
    let partial = PathBuf::from(name);
    // Left by an interrupted run of our own.
    let _ = std::fs::remove_file(&partial);
    crate::data_dir::create_private(&partial, b"")?;
    if let Err(e) = src.copy_into(&partial) {
        let _ = std::fs::remove_file(&partial);
        return Err(e);
    }
    std::fs::rename(&partial, dest)
        .with_context(|| format!("cannot move the copy to {}", dest.display()))?;
    crate::data_dir::sync_dir(dest)
}
