//! `serve --backup-every`: backups on a thread of their own (one connection outside the
//! pool, so requests never wait for it), named by time, the oldest beyond
//! `--backup-keep` removed. The first one is due one interval after the newest backup
//! already in the directory, so restarts neither skip nor repeat backups.

use crate::periodic::Periodic;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const PREFIX: &str = "cfdi-extract-";
const SUFFIX: &str = ".db";

#[derive(Debug, Clone)]
pub struct Schedule {
    pub every: Duration,
    pub dir: PathBuf,
    pub keep: usize,
    /// The key to write beside each backup (`--backup-with-key`).
    pub key: Option<crate::cli::Secret>,
}

pub fn start(data_dir: &Path, schedule: Schedule) -> anyhow::Result<Periodic> {
    crate::data_dir::create_dir(&schedule.dir)?;
    let first = schedule
        .every
        .saturating_sub(newest_age(&schedule.dir).unwrap_or(schedule.every));
    let data_dir = data_dir.to_path_buf();
    Periodic::spawn("backup", first, move || {
        match run_once(&data_dir, &schedule) {
            Ok(path) => log::info!("backup written to {}", path.display()),
            Err(e) => log::error!("scheduled backup failed: {e:#}"),
        }
        schedule.every
    })
}

fn run_once(data_dir: &Path, schedule: &Schedule) -> anyhow::Result<PathBuf> {
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%S%.3fZ");
    let path = schedule.dir.join(format!("{PREFIX}{stamp}{SUFFIX}"));
    let key = schedule.key.as_ref().map(crate::cli::Secret::expose);
    super::backup::to_file(data_dir, &path, key)?;
    prune(&schedule.dir, schedule.keep)?;
    Ok(path)
}

/// Our backups in `dir`, oldest first (the names sort by time).
fn backups(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX))
        })
        .collect();
    found.sort();
    Ok(found)
}

/// Removes the oldest backups (and their keys) beyond `keep`.
fn prune(dir: &Path, keep: usize) -> anyhow::Result<()> {
    let all = backups(dir)?;
    for old in &all[..all.len().saturating_sub(keep)] {
        std::fs::remove_file(old)?;
        let _ = std::fs::remove_file(super::key_beside(old));
    }
    Ok(())
}

fn newest_age(dir: &Path) -> Option<Duration> {
    let newest = backups(dir).ok()?.pop()?;
    let modified = std::fs::metadata(newest).ok()?.modified().ok()?;
    Some(
        SystemTime::now()
            .duration_since(modified)
            .unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prune_keeps_the_newest_and_ignores_other_files() {
        let tmp = tempfile::tempdir().expect("tmp");
        for name in [
            "cfdi-extract-20260101T000000.000Z.db",
            "cfdi-extract-20260101T000000.000Z.db.key",
            "cfdi-extract-20260102T000000.000Z.db",
            "cfdi-extract-20260103T000000.000Z.db",
            "notes.txt",
        ] {
            std::fs::write(tmp.path().join(name), "x").expect("write");
        }
        prune(tmp.path(), 2).expect("prune");
        let mut left: Vec<String> = std::fs::read_dir(tmp.path())
            .expect("dir")
            .map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "cfdi-extract-20260102T000000.000Z.db",
                "cfdi-extract-20260103T000000.000Z.db",
                "notes.txt"
            ]
        );
        assert!(newest_age(tmp.path()).expect("age") < Duration::from_secs(60));
    }
}
