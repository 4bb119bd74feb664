//! SQLite through an r2d2 pool. Every connection gets the same pragmas (a 4 MiB page
//! cache each, so the pool's memory stays bounded). Async callers go
//! through `read` / `write`, which run on tokio's blocking pool so the executor never
//! waits on SQLite; worker threads and the CLI use the synchronous `conn` / `tx`.

pub mod checkpoint;
pub mod codec;
pub mod deliveries;
pub mod documents;
pub mod efirmas;
pub mod entities;
pub mod events;
pub mod extractions;
pub mod invoice_changes;
pub mod invoices;

pub mod jobs;
pub mod migrate;
pub mod orgs;
pub mod payment_entries;
pub mod sandbox;
pub mod sat_requests;
pub mod schedules;
pub mod sealed;
pub mod settings;
pub mod stats;
pub mod summary;
pub mod users;
pub mod webhooks;
mod writer;

use anyhow::Context;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::path::Path;

/// A connection or an open transaction, as the tables' functions take it.
pub type Conn = Connection;
pub type Pool = r2d2::Pool<SqliteConnectionManager>;
pub type PooledConn = r2d2::PooledConnection<SqliteConnectionManager>;

#[derive(Clone)]
pub struct Db {
    pool: Pool,
    writers: writer::Writers,
}

/// Who checkpoints the WAL: SQLite inside commits, or the server's own thread
/// (`checkpoint::Checkpointer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checkpoints {
    Automatic,
    Background,
}

/// Prepared statements kept per connection (the application caches more than 60).
const STATEMENT_CACHE: usize = 256;

fn configure(conn: &mut Connection, checkpoints: Checkpoints) -> rusqlite::Result<()> {
    // busy_timeout first: the other pragmas may need the lock.
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // Every pooled connection serves every kind of work (requests, ingest, delivery
    // and scheduler polls), well over rusqlite's default 16 cached statements: with
    // LRU eviction the hot request statements were re-parsed again and again.
    conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
    // The bundled SQLite has STAT4, which recompiles a cached statement whenever a new
    // value is bound to a range parameter (`id < ?`, `issued_at >= ?`), in case the plan
    // should change: every list request paid a full SQL parse. The query planner
    // stability guarantee keeps one plan per statement (we never run ANALYZE anyway).
    conn.set_db_config(
        rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG,
        true,
    )?;
    // A new database gets 8 KiB pages (an existing one keeps its own: SQLite changes
    // it only on a VACUUM outside WAL mode). Compressed documents are 1-4 KiB: with
    // 4 KiB pages each overflowed or left most of a page empty (12.2 KB per invoice
    // against 9.5 KB). 16 KiB pages saved 0.5 KB more but doubled the WAL bytes of every
    // small write, and the webhook fan-out fell from 515 to 344 deliveries/s
    // (BENCHMARKS.md, "Fifth run"). The page cache stays 4 MiB (cache_size is in KiB).
    conn.execute_batch(
        "PRAGMA page_size = 8192;
         PRAGMA journal_mode = WAL;
         PRAGMA synchronous = NORMAL;
         PRAGMA foreign_keys = ON;
         PRAGMA cache_size = -4096;
         PRAGMA temp_store = MEMORY;",
    )?;
    if checkpoints == Checkpoints::Background {
        conn.execute_batch("PRAGMA wal_autocheckpoint = 0;")?;
    }
    Ok(())
}

impl Db {
    /// Opens (creating if needed) the database in `data_dir` and migrates it.
    pub fn open(data_dir: &Path, max_connections: u32) -> anyhow::Result<Db> {
        Db::open_with(data_dir, max_connections, Checkpoints::Automatic)
    }

    pub fn open_with(
        data_dir: &Path,
        max_connections: u32,
        checkpoints: Checkpoints,
    ) -> anyhow::Result<Db> {
        crate::data_dir::prepare(data_dir)?;
        let manager = SqliteConnectionManager::file(crate::config::db_path(data_dir))
            .with_init(move |conn| configure(conn, checkpoints));
        let pool = r2d2::Pool::builder()
            .max_size(max_connections)
            .min_idle(Some(1))
            // r2d2 would run a statement on every checkout to see the connection is
            // alive: a local file does not go away, and the check cost a SQL parse per
            // database call (two per authenticated request).
            .test_on_check_out(false)
            .build(manager)
            .context("cannot open the database")?;
        let db = Db {
            pool,
            writers: writer::Writers::default(),
        };
        migrate::apply(&mut *db.conn()?).context("cannot apply the schema")?;
        Ok(db)
    }

    pub fn conn(&self) -> anyhow::Result<PooledConn> {
        self.pool.get().context("no database connection available")
    }

    /// Runs `f` in an IMMEDIATE transaction (takes the write lock up front, so two
    /// writers never deadlock upgrading a read lock) and commits when it returns Ok.
    /// The process's writers take turns first (`writer`, starvation-free); the turn is taken
    /// before the pooled connection so a queued writer holds no connection.
    pub fn tx<T>(&self, f: impl FnOnce(&Transaction) -> anyhow::Result<T>) -> anyhow::Result<T> {
        let _turn = self.writers.turn()?;
        let mut conn = self.conn()?;
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }

    /// A read on the blocking pool.
    pub async fn read<T, F>(&self, f: F) -> anyhow::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> anyhow::Result<T> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || f(&*db.conn()?))
            .await
            .context("database task panicked")?
    }

    /// A write transaction on the blocking pool.
    pub async fn write<T, F>(&self, f: F) -> anyhow::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction) -> anyhow::Result<T> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || db.tx(f))
            .await
            .context("database task panicked")?
    }
}

impl Db {
    /// `write` on behalf of an API request: the jobs it queues remember `request_id`
    /// and its log lines carry it (`crate::origin`).
    pub async fn write_for<T, F>(&self, request_id: String, f: F) -> anyhow::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction) -> anyhow::Result<T> + Send + 'static,
    {
        self.write(move |tx| {
            let _origin = crate::origin::enter(Some(request_id));
            f(tx)
        })
        .await
    }
}

/// True when `err` is a UNIQUE constraint violation (turned into a 422 by callers).
pub fn is_unique_violation(err: &anyhow::Error) -> bool {
    matches!(
        err.downcast_ref::<rusqlite::Error>(),
        Some(rusqlite::Error::SqliteFailure(e, _))
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                || e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
    )
}

/// True when `err` means the database stayed locked (busy timeout reached) or no pooled
/// connection freed up in time: transient, retryable conditions rather than faults.
pub fn is_busy(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        if cause.downcast_ref::<r2d2::Error>().is_some()
            || cause.downcast_ref::<writer::Busy>().is_some()
        {
            return true;
        }
        matches!(
            cause.downcast_ref::<rusqlite::Error>(),
            Some(rusqlite::Error::SqliteFailure(e, _))
                if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
        )
    })
}
