//! `cfdi-extract check`: is this data directory (and its database) fit to serve? The
//! database's integrity (SQLite's; PostgreSQL keeps its own), its schema version
//! against this binary's, and the key: present, the one the database was sealed with,
//! and opening every sealed credential. Reads only.

use crate::config;
use crate::crypto::Cipher;
use crate::db::{self, Access, Conn, File, PostgresConnection, Store};
use std::path::Path;

#[derive(Debug, Default)]
pub struct Report {
    /// One line per problem; any makes `check` exit non-zero.
    pub problems: Vec<String>,
    /// What was checked and found fine.
    pub notes: Vec<String>,
}

pub fn run(store: &Store, dir: &Path, configured_key: Option<&str>) -> Report {
    let mut report = Report::default();
    let checked = match store {
        Store::Sqlite(_) => check(dir, configured_key, &mut report),
        Store::Postgres { url, .. } => {
            check_postgres(url.expose(), dir, configured_key, &mut report)
        }
    };
    if let Err(e) = checked {
        report.problems.push(format!("{e:#}"));
    }
    report
}

fn check(dir: &Path, configured_key: Option<&str>, report: &mut Report) -> anyhow::Result<()> {
    let path = config::db_path(dir);
    if !std::fs::metadata(&path).is_ok_and(|m| m.len() > 0) {
        anyhow::bail!("no database at {}", path.display());
    }
    let conn = File::open_existing(&path, Access::ReadWrite)?;
    let verdicts = conn.integrity_check(10)?;
    if verdicts != ["ok"] {
        for v in verdicts {
            report.problems.push(format!("integrity check: {v}"));
        }
        return Ok(());
    }
    report.notes.push("integrity check: ok".into());
    let version = conn.schema_version()?;
    check_schema_and_key(&conn, version, dir, configured_key, report)
}

fn check_postgres(
    url: &str,
    dir: &Path,
    configured_key: Option<&str>,
    report: &mut Report,
) -> anyhow::Result<()> {
    let conn = PostgresConnection::connect(url)?;
    report
        .notes
        .push("PostgreSQL: connected (its integrity is the server's: pg_amcheck)".into());
    let Some(version) = conn.schema_version()? else {
        anyhow::bail!("no cfdi-extract schema in the database of --database-url: the first `serve` creates it");
    };
    check_schema_and_key(&conn, version, dir, configured_key, report)
}

fn check_schema_and_key(
    conn: &Conn,
    version: i64,
    dir: &Path,
    configured_key: Option<&str>,
    report: &mut Report,
) -> anyhow::Result<()> {
    let ours = db::migrate::VERSION;
    if version > ours {
        anyhow::bail!(
            "schema version {version} is newer than this binary's ({ours}): upgrade cfdi-extract"
        );
    }
    if version < ours {
        // The key's fingerprint lives in a table older schemas lack.
        report.notes.push(format!(
            "schema version {version}: the next `serve` migrates it to {ours}; run check again after it to verify the key"
        ));
        return Ok(());
    }
    report
        .notes
        .push(format!("schema version {version}: current"));

    let Some(cipher) = Cipher::verify(conn, configured_key, &config::key_path(dir))? else {
        report
            .notes
            .push("no encryption key yet: the first `serve` creates secret.key".into());
        return Ok(());
    };
    let sealed = db::sealed::all(conn)?;
    let unreadable: Vec<_> = sealed
        .iter()
        .filter(|s| cipher.open_bytes(&s.bytes).is_err())
        .collect();
    match unreadable.first() {
        Some(first) => report.problems.push(format!(
            "{} of {} sealed credentials cannot be decrypted with the key (first: {})",
            unreadable.len(),
            sealed.len(),
            first.what
        )),
        None => report.notes.push(format!(
            "encryption key: present, decrypts all {} sealed credentials",
            sealed.len()
        )),
    }
    Ok(())
}
