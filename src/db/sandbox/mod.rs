//! The sandbox's own store: `sandbox.db` beside the service's database, opened only
//! with `--sat sandbox`, with its own embedded schema (`schema.sql`). It keeps what the
//! simulated SAT remembers (which run first listed an invoice, its web service's
//! requests and downloads) so the simulation answers the same across restarts; the
//! service's database never holds sandbox state.

pub mod downloads;
pub mod listings;
pub mod requests;

use crate::db::Conn;
use anyhow::Context as _;
use ref_cast::RefCast;
use rusqlite::{Connection, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

const SCHEMA: &str = include_str!("schema.sql");

/// The store's file in the data directory.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("sandbox.db")
}

/// One connection shared by the workers: the sandbox's writes are a few rows per call,
/// and its rendering runs outside the lock.
#[derive(Clone)]
pub struct SandboxStore {
    conn: Arc<Mutex<Connection>>,
}

impl SandboxStore {
    pub fn open(data_dir: &Path) -> anyhow::Result<SandboxStore> {
        let path = path(data_dir);
        // Private like the service's database (SQLite gives `-wal` and `-shm` its mode).
        if !path.exists() {
            crate::data_dir::create_private(&path, b"")?;
        }
        let conn = Connection::open(&path)
            .with_context(|| format!("cannot open the sandbox's store {}", path.display()))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             PRAGMA synchronous = NORMAL;
             PRAGMA foreign_keys = ON;",
        )?;
        conn.execute_batch(SCHEMA)
            .context("cannot apply the sandbox's schema")?;
        Ok(SandboxStore {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` in one transaction; the tables' modules speak the statement API (`Conn`).
    pub fn tx<T>(&self, f: impl FnOnce(&Conn) -> anyhow::Result<T>) -> anyhow::Result<T> {
        let mut conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(Conn::ref_cast(&*tx as &rusqlite::Connection))?;
        tx.commit()?;
        Ok(out)
    }
}
