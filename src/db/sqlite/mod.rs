//! The SQLite engine: an r2d2 pool, the connection and transaction types the rest of
//! the crate sees (`Conn`, `Tx`), the writer turn, checkpoints and migrations. Every
//! connection gets the same pragmas (a 4 MiB page cache each, so the pool's memory
//! stays bounded). Async callers go through `read` / `write`, which run on tokio's
//! blocking pool so the executor never waits on SQLite; worker threads and the CLI use
//! the synchronous `conn` / `tx`.

pub mod checkpoint;
pub mod files;
pub mod migrate;
mod writer;

use super::waker::{Waker, Work};
use anyhow::Context;
use r2d2_sqlite::SqliteConnectionManager;
use ref_cast::RefCast;
use rusqlite::{Connection, TransactionBehavior};
use std::cell::{Cell, OnceCell};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

type Pool = r2d2::Pool<SqliteConnectionManager>;

/// A connection, in a transaction or not: what the table modules read and write
/// through. Outside `db` it is only passed along.
#[derive(RefCast)]
#[repr(transparent)]
pub struct Conn(Connection);

impl std::ops::Deref for Conn {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.0
    }
}

/// A connection checked out of the pool; back to the pool when dropped.
pub struct Pooled(r2d2::PooledConnection<SqliteConnectionManager>);

impl std::ops::Deref for Pooled {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        Conn::ref_cast(&self.0)
    }
}

/// A write transaction. It remembers which kinds of work it queued (`queued_work`), and
/// `Db::tx` wakes a worker of each once it commits, never before and never after a rollback;
/// it carries when a new event's first delivery is due (`first_delivery_at`).
pub struct Tx<'c> {
    tx: rusqlite::Transaction<'c>,
    queued: Cell<Queued>,
    first_delivery: Duration,
    /// `first_delivery` from the first event on: one clock read and one string per
    /// transaction, however many events it writes.
    first_delivery_at: OnceCell<String>,
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        Conn::ref_cast(&self.tx)
    }
}

impl<'c> Tx<'c> {
    fn begin(conn: &'c mut Connection, first_delivery: Duration) -> rusqlite::Result<Tx<'c>> {
        Ok(Tx {
            tx: conn.transaction_with_behavior(TransactionBehavior::Immediate)?,
            queued: Cell::new(Queued::default()),
            first_delivery,
            first_delivery_at: OnceCell::new(),
        })
    }

    /// Commits; returns the kinds of work the transaction queued.
    fn commit(self) -> rusqlite::Result<Queued> {
        let queued = self.queued.get();
        self.tx.commit()?;
        Ok(queued)
    }

    /// Called by every insert into a work queue (jobs, status checks).
    pub(in crate::db) fn queued_work(&self, work: Work) {
        let mut queued = self.queued.get();
        queued.0[work.index()] = true;
        self.queued.set(queued);
    }

    /// When an event written now makes its first delivery attempt (the first step of
    /// `--webhook-retry-schedule`).
    pub fn first_delivery_at(&self) -> &str {
        self.first_delivery_at
            .get_or_init(|| crate::time::after(self.first_delivery))
    }
}

/// Which kinds of work a transaction queued (indexed by `Work`).
#[derive(Clone, Copy, Default)]
struct Queued([bool; 3]);

impl Queued {
    fn wake(self, waker: &Waker) {
        for work in Work::ALL {
            if self.0[work.index()] {
                waker.wake_one(work);
            }
        }
    }
}

#[derive(Clone)]
pub struct Db {
    pool: Pool,
    writers: writer::Writers,
    waker: Arc<Waker>,
    first_delivery: Duration,
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
            waker: Arc::default(),
            first_delivery: Duration::ZERO,
        };
        migrate::apply(&mut *db.pooled()?).context("cannot apply the schema")?;
        Ok(db)
    }

    /// How long after it is written a new event's first delivery is due (the server's
    /// `--webhook-retry-schedule`; at once otherwise).
    pub fn with_first_delivery(self, after: Duration) -> Db {
        Db {
            first_delivery: after,
            ..self
        }
    }

    /// What the workers sleep on; a commit that queued work wakes it.
    pub fn waker(&self) -> &Waker {
        &self.waker
    }

    fn pooled(&self) -> anyhow::Result<r2d2::PooledConnection<SqliteConnectionManager>> {
        self.pool.get().context("no database connection available")
    }

    pub fn conn(&self) -> anyhow::Result<Pooled> {
        self.pooled().map(Pooled)
    }

    /// Runs `f` in an IMMEDIATE transaction (takes the write lock up front, so two
    /// writers never deadlock upgrading a read lock) and commits when it returns Ok.
    /// The process's writers take turns first (`writer`, starvation-free); the turn is taken
    /// before the pooled connection so a queued writer holds no connection.
    /// A worker of each kind of work `f` queued is woken after the commit (and after the
    /// turn is given back).
    pub fn tx<T>(&self, f: impl FnOnce(&Tx) -> anyhow::Result<T>) -> anyhow::Result<T> {
        let (value, queued) = {
            let _turn = self.writers.turn()?;
            let mut conn = self.pooled()?;
            let tx = Tx::begin(&mut conn, self.first_delivery)?;
            let value = f(&tx)?;
            (value, tx.commit()?)
        };
        queued.wake(&self.waker);
        Ok(value)
    }

    /// A read on the blocking pool.
    pub async fn read<T, F>(&self, f: F) -> anyhow::Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Conn) -> anyhow::Result<T> + Send + 'static,
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
        F: FnOnce(&Tx) -> anyhow::Result<T> + Send + 'static,
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
        F: FnOnce(&Tx) -> anyhow::Result<T> + Send + 'static,
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

/// An in-memory database with the current schema, for unit tests. Its transactions
/// carry no delivery delay and wake no one.
#[cfg(test)]
pub struct Memory(Connection);

#[cfg(test)]
impl Memory {
    pub fn new() -> Memory {
        let mut conn = Connection::open_in_memory().expect("memory db");
        migrate::apply(&mut conn).expect("schema");
        Memory(conn)
    }

    /// Runs `f` in a transaction, committed when it returns Ok.
    pub fn tx<T>(&self, f: impl FnOnce(&Tx) -> anyhow::Result<T>) -> anyhow::Result<T> {
        let tx = Tx {
            tx: self.0.unchecked_transaction()?,
            queued: Cell::new(Queued::default()),
            first_delivery: Duration::ZERO,
            first_delivery_at: OnceCell::new(),
        };
        let value = f(&tx)?;
        tx.commit()?;
        Ok(value)
    }
}

#[cfg(test)]
impl Default for Memory {
    fn default() -> Memory {
        Memory::new()
    }
}

#[cfg(test)]
impl std::ops::Deref for Memory {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        Conn::ref_cast(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::jobs::{self, Kind};

    fn queue_one(tx: &Tx) -> anyhow::Result<()> {
        jobs::enqueue(tx, Kind::RunExtraction, "x", None, &crate::time::now())
    }

    #[test]
    fn a_transaction_that_queued_work_wakes_the_workers_once_it_commits() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Db::open(dir.path(), 2).expect("db");
        let seen = db.waker().current(Work::Sat);
        let deliveries = db.waker().current(Work::Deliveries);
        db.tx(|tx| {
            queue_one(tx)?;
            assert_eq!(db.waker().current(Work::Sat), seen, "not before the commit");
            Ok(())
        })
        .expect("tx");
        assert_eq!(
            db.waker().current(Work::Sat),
            seen + 1,
            "woken after the commit"
        );
        assert_eq!(
            db.waker().current(Work::Deliveries),
            deliveries,
            "only its kind"
        );
    }

    #[test]
    fn a_rolled_back_transaction_or_one_that_queued_nothing_wakes_no_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Db::open(dir.path(), 2).expect("db");
        let seen = db.waker().current(Work::Sat);
        let failed: anyhow::Result<()> = db.tx(|tx| {
            queue_one(tx)?;
            anyhow::bail!("the route's later step failed")
        });
        assert!(failed.is_err());
        let jobs: i64 = db
            .conn()
            .expect("conn")
            .query_row("SELECT COUNT(*) FROM jobs", [], |r| r.get(0))
            .expect("count");
        assert_eq!(jobs, 0, "rolled back");
        db.tx(|tx| crate::db::orgs::insert(tx, "Org").map(drop))
            .expect("tx");
        assert_eq!(db.waker().current(Work::Sat), seen);
    }

    #[test]
    fn an_event_is_first_delivered_after_the_configured_delay() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Db::open(dir.path(), 2)
            .expect("db")
            .with_first_delivery(Duration::from_secs(3600));
        let before = crate::time::after(Duration::from_secs(3599));
        let at = db
            .tx(|tx| Ok(tx.first_delivery_at().to_string()))
            .expect("tx");
        let after = crate::time::after(Duration::from_secs(3601));
        assert!(before <= at && at <= after, "{before} <= {at} <= {after}");
    }
}
