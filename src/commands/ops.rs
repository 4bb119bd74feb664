//! `cfdi-extract backup|restore|check|healthcheck`.

use crate::cli::KeyArg;
use crate::cli::Secret;
use crate::db::Store;
use crate::ops;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::path::Path;
use std::time::Duration;

/// `backup` and `restore` copy SQLite's file; PostgreSQL has its own tools.
fn sqlite_only(store: &Store, what: &str) -> anyhow::Result<()> {
    match store {
        Store::Sqlite(_) => Ok(()),
        Store::Postgres { .. } => anyhow::bail!(
            "{what} copies the SQLite database of the data directory; this one is PostgreSQL \
             (--database-url): use pg_dump (e.g. `pg_dump --format=custom --file=cfdi.dump`) \
             and pg_restore, and keep the encryption key (secret.key or --encryption-key) with the dump"
        ),
    }
}

pub fn backup(
    store: &Store,
    data_dir: &Path,
    to: &Path,
    with_key: bool,
    key: &KeyArg,
) -> anyhow::Result<()> {
    sqlite_only(store, "backup")?;
    let configured = key.encryption_key.as_ref().map(Secret::expose);
    let key_text = if with_key {
        Some(ops::backup::current_key(data_dir, configured)?)
    } else {
        None
    };
    let bytes = ops::backup::to_file(data_dir, to, key_text.as_deref())?;
    println!("backup written to {} ({bytes} bytes)", to.display());
    if key_text.is_some() {
        println!("key written to {}", ops::key_beside(to).display());
    } else {
        println!("keep the encryption key (secret.key or --encryption-key) with it: the backup's credentials cannot be opened without it");
    }
    Ok(())
}

pub fn restore(store: &Store, data_dir: &Path, from: &Path, force: bool) -> anyhow::Result<()> {
    sqlite_only(store, "restore")?;
    ops::restore::from_file(data_dir, from, force)?;
    println!("restored {} into {}", from.display(), data_dir.display());
    // The key may come later (--encryption-key at serve), so its problems only warn here.
    let report = ops::check::run(store, data_dir, None);
    for problem in &report.problems {
        println!("warning: {problem}");
    }
    Ok(())
}

pub fn check(store: &Store, data_dir: &Path, key: &KeyArg) -> anyhow::Result<()> {
    let report = ops::check::run(
        store,
        data_dir,
        key.encryption_key.as_ref().map(Secret::expose),
    );
    for note in &report.notes {
        println!("ok: {note}");
    }
    for problem in &report.problems {
        println!("problem: {problem}");
    }
    if !report.problems.is_empty() {
        anyhow::bail!(
            "{} problem(s) found in {}",
            report.problems.len(),
            data_dir.display()
        );
    }
    Ok(())
}

pub fn healthcheck(address: IpAddr, port: u16, timeout: Duration) -> anyhow::Result<()> {
    let host = match address {
        IpAddr::V4(a) if a.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(a) if a.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        a => a,
    };
    let url = format!("http://{}/up", std::net::SocketAddr::new(host, port));
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(timeout))
        .http_status_as_error(false)
        .proxy(None)
        .build()
        .into();
    let mut response = agent
        .get(&url)
        .call()
        .map_err(|e| anyhow::anyhow!("{url}: {e}"))?;
    let status = response.status();
    if status != 200 {
        // The server's word for why (`{"database": "unreachable"}`), when it gives one.
        let body: serde_json::Value = response.body_mut().read_json().unwrap_or_default();
        match body["database"].as_str() {
            Some(database) => anyhow::bail!("{url} answered {status}: the database is {database}"),
            None => anyhow::bail!("{url} answered {status}"),
        }
    }
    println!("{url}: ok");
    Ok(())
}
