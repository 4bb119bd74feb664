//! The database a process works on, whichever engine holds it: `Db` (the pool), the
//! connection and transaction types the rest of the crate sees (`Pooled`, `Tx`), and
//! the wakes a commit sends. Async callers go through `read` / `write`, which run on
//! tokio's blocking pool so the executor never waits on the database; worker threads
//! and the CLI use the synchronous `conn` / `tx`.

use super::postgres;
use super::sql::{Conn, Engine};
use super::sqlite::{self, writer, Checkpoints};
use super::waker::{Waker, Work};
use crate::cli::Secret;
use anyhow::Context;
use ref_cast::RefCast;
use std::cell::{Cell, OnceCell, RefCell};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// Where the database lives: SQLite in the data directory (the default), or a
/// PostgreSQL server (`--database-url`); the data directory holds the key either way.
#[derive(Debug, Clone)]
pub enum Store {
    Sqlite(PathBuf),
    Postgres { url: Secret, data_dir: PathBuf },
}

impl Store {
    /// `url` when given, else the data directory's SQLite file.
    pub fn new(data_dir: &Path, url: Option<&Secret>) -> Store {
        match url {
            Some(url) => Store::Postgres {
                url: url.clone(),
                data_dir: data_dir.to_path_buf(),
            },
            None => Store::Sqlite(data_dir.to_path_buf()),
        }
    }
}

#[derive(Clone)]
enum Pool {
    Sqlite(sqlite::Pool),
    Postgres(postgres::Pool),
}

/// A connection checked out of the pool; back to the pool when dropped.
pub struct Pooled(PooledOf);

enum PooledOf {
    Sqlite(r2d2::PooledConnection<r2d2_sqlite::SqliteConnectionManager>),
    // Boxed: a client is large, and a checkout is a network round trip anyway.
    Postgres(Box<r2d2::PooledConnection<postgres::Manager>>),
}

impl std::ops::Deref for Pooled {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        match &self.0 {
            PooledOf::Sqlite(c) => Conn::ref_cast(&**c as &rusqlite::Connection),
            PooledOf::Postgres(c) => Conn::ref_cast(&***c as &postgres::Connection),
        }
    }
}

/// A write transaction. It remembers which kinds of work it queued (`queued_work`), and
/// `Db::tx` wakes a worker of each once it commits, never before and never after a rollback;
/// it carries when a new event's first delivery is due (`first_delivery_at`).
pub struct Tx<'c> {
    tx: TxOf<'c>,
    queued: Cell<Queued>,
    first_delivery: Duration,
    /// `first_delivery` from the first event on: one clock read and one string per
    /// transaction, however many events it writes.
    first_delivery_at: OnceCell<String>,
    /// The locks taken (`lock`), so each costs one statement per transaction.
    locks: RefCell<HashSet<String>>,
}

/// What one organization's (or the whole service's) writes must not do side by side on
/// PostgreSQL, where transactions run concurrently; each is a transaction-scoped lock
/// (SQLite's single writer already keeps them apart). `/docs/operations` says why each
/// exists.
#[derive(Debug, Clone, Copy)]
pub enum Lock<'a> {
    /// An organization's events: their ids (the feed's order, each webhook's order
    /// per resource) follow the order their transactions commit in, and a change that
    /// reads before it writes (a PATCH, a verdict, the webhook limit) sees the last.
    Org(&'a str),
    /// An entity's documents: payment balances and relations are recomputed from
    /// everything stored, so two batches of one entity take turns.
    Entity(&'a str),
    /// Claiming jobs of one kind of work: the workers' split and each organization's
    /// share of the delivery workers are counted across instances.
    Claims(Work),
    /// Loading the 69-B list: one version at a time.
    List69b,
    /// The scheduler's pass: a schedule's slot fires once, whichever instance looks.
    Scheduler,
}

impl Lock<'_> {
    fn key(self) -> String {
        match self {
            Lock::Org(id) => format!("org:{id}"),
            Lock::Entity(id) => format!("entity:{id}"),
            Lock::Claims(work) => format!("claims:{}", work.index()),
            Lock::List69b => "list-69b".to_string(),
            Lock::Scheduler => "scheduler".to_string(),
        }
    }
}

enum TxOf<'c> {
    Sqlite(rusqlite::Transaction<'c>),
    Postgres(postgres::Transaction<'c>),
}

impl std::ops::Deref for Tx<'_> {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        match &self.tx {
            TxOf::Sqlite(tx) => Conn::ref_cast(&**tx as &rusqlite::Connection),
            TxOf::Postgres(tx) => Conn::ref_cast(tx.conn() as &postgres::Connection),
        }
    }
}

impl<'c> Tx<'c> {
    #[cfg(test)]
    pub(in crate::db) fn sqlite(tx: rusqlite::Transaction<'c>, first_delivery: Duration) -> Tx<'c> {
        Tx::of(TxOf::Sqlite(tx), first_delivery)
    }

    fn of(tx: TxOf<'c>, first_delivery: Duration) -> Tx<'c> {
        Tx {
            tx,
            queued: Cell::new(Queued::default()),
            first_delivery,
            first_delivery_at: OnceCell::new(),
            locks: RefCell::default(),
        }
    }

    /// Takes `lock` until the transaction ends (PostgreSQL; nothing on SQLite, whose
    /// writer is alone). A transaction that takes several takes them in this order:
    /// List69b or Scheduler, Entity, Org, Claims, so none waits in a circle.
    pub fn lock(&self, lock: Lock<'_>) -> anyhow::Result<()> {
        if self.engine() == Engine::Sqlite {
            return Ok(());
        }
        let key = lock.key();
        if self.locks.borrow().contains(&key) {
            return Ok(());
        }
        self.exec(
            "SELECT pg_advisory_xact_lock(hashtextextended(?1, 0))",
            super::sql::params![key],
        )?;
        self.locks.borrow_mut().insert(key);
        Ok(())
    }

    /// Commits; returns the kinds of work the transaction queued. On PostgreSQL the
    /// other instances hear of it too: a notification, sent with the commit.
    pub(in crate::db) fn commit(self) -> anyhow::Result<Queued> {
        let queued = self.queued.get();
        match self.tx {
            TxOf::Sqlite(tx) => tx.commit()?,
            TxOf::Postgres(tx) => {
                if let Some(works) = queued.payload() {
                    postgres::listen::notify(tx.conn(), &works)?;
                }
                tx.commit()?
            }
        }
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
pub(in crate::db) struct Queued([bool; 3]);

impl Queued {
    /// The indexes of the kinds queued, `0,2`; `None` when none was.
    fn payload(self) -> Option<String> {
        let works: Vec<String> = Work::ALL
            .iter()
            .filter(|w| self.0[w.index()])
            .map(|w| w.index().to_string())
            .collect();
        (!works.is_empty()).then(|| works.join(","))
    }

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
    pub(in crate::db) writers: writer::Writers,
    waker: Arc<Waker>,
    first_delivery: Duration,
}

impl Db {
    /// Opens (creating if needed) the SQLite database in `data_dir` and migrates it.
    pub fn open(data_dir: &Path, max_connections: u32) -> anyhow::Result<Db> {
        Db::open_with(data_dir, max_connections, Checkpoints::Automatic)
    }

    pub fn open_with(
        data_dir: &Path,
        max_connections: u32,
        checkpoints: Checkpoints,
    ) -> anyhow::Result<Db> {
        Db::connect(
            &Store::Sqlite(data_dir.to_path_buf()),
            max_connections,
            checkpoints,
        )
    }

    /// Opens the database of `store` and migrates it (`checkpoints` is SQLite's).
    pub fn connect(
        store: &Store,
        max_connections: u32,
        checkpoints: Checkpoints,
    ) -> anyhow::Result<Db> {
        let pool = match store {
            Store::Sqlite(dir) => Pool::Sqlite(sqlite::open(dir, max_connections, checkpoints)?),
            Store::Postgres { url, data_dir } => {
                crate::data_dir::prepare(data_dir)?;
                Pool::Postgres(postgres::open(url.expose(), max_connections)?)
            }
        };
        Ok(Db {
            pool,
            writers: writer::Writers::default(),
            waker: Arc::default(),
            first_delivery: Duration::ZERO,
        })
    }

    /// Wakes this process's workers when another instance commits work for them
    /// (PostgreSQL's notifications; on SQLite one process holds the database).
    pub fn listen_for_work(&self) -> anyhow::Result<()> {
        if let Pool::Postgres(pool) = &self.pool {
            postgres::listen::start(pool.target(), self.waker.clone())?;
        }
        Ok(())
    }

    pub fn engine(&self) -> Engine {
        match self.pool {
            Pool::Sqlite(_) => Engine::Sqlite,
            Pool::Postgres(_) => Engine::Postgres,
        }
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

    pub fn conn(&self) -> anyhow::Result<Pooled> {
        // Read before the checkout too: a server back during its short wait is still
        // the outage's 503 (unreachable), not a busy pool's.
        let was_down = self.is_unreachable();
        let pooled = match &self.pool {
            Pool::Sqlite(pool) => pool.get().map(PooledOf::Sqlite),
            Pool::Postgres(pool) => pool.get().map(|c| PooledOf::Postgres(Box::new(c))),
        };
        match pooled {
            Ok(pooled) => Ok(Pooled(pooled)),
            Err(e) if was_down || self.is_unreachable() => Err(Unreachable(e).into()),
            Err(e) => Err(anyhow::Error::new(e).context("no database connection available")),
        }
    }

    /// Runs `f` in a write transaction and commits when it returns Ok. SQLite's is
    /// IMMEDIATE (takes the write lock up front, so two writers never deadlock upgrading
    /// a read lock), and the process's writers take turns first (`writer`,
    /// starvation-free; the turn is taken before the pooled connection so a queued
    /// writer holds no connection). PostgreSQL's run side by side, within and across
    /// instances: what must not interleave takes its own lock (`db::postgres`); a
    /// running job's writes are fenced (`lease::check`). A worker of each kind of work
    /// `f` queued is woken after the commit.
    pub fn tx<T>(&self, f: impl FnOnce(&Tx) -> anyhow::Result<T>) -> anyhow::Result<T> {
        let (value, queued) = match &self.pool {
            Pool::Sqlite(_) => {
                let _turn = self.writers.turn()?;
                let mut conn = self.conn()?;
                let PooledOf::Sqlite(c) = &mut conn.0 else {
                    anyhow::bail!("a SQLite pool gave another connection");
                };
                let tx = Tx::of(
                    TxOf::Sqlite(
                        c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?,
                    ),
                    self.first_delivery,
                );
                let value = f(&tx)?;
                (value, tx.commit()?)
            }
            Pool::Postgres(_) => {
                let conn = self.conn()?;
                let PooledOf::Postgres(c) = &conn.0 else {
                    anyhow::bail!("a PostgreSQL pool gave another connection");
                };
                let tx = Tx::of(
                    TxOf::Postgres(postgres::Transaction::begin(c)),
                    self.first_delivery,
                );
                super::lease::check(&tx)?;
                let value = f(&tx)?;
                (value, tx.commit()?)
            }
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
        tokio::task::spawn_blocking(move || f(&db.conn()?))
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

    /// `write` of a transaction that may run again: one PostgreSQL failed to resolve a
    /// deadlock with another (a webhook's deletion against its deliveries' workers,
    /// which lock the same jobs in another order) runs again, up to three times, before
    /// its 503. SQLite's writers take turns, so it never sees one.
    pub async fn write_again<T, F>(&self, f: F) -> anyhow::Result<T>
    where
        T: Send + 'static,
        F: Fn(&Tx) -> anyhow::Result<T> + Send + 'static,
    {
        let db = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut attempt = 1;
            loop {
                match db.tx(&f) {
                    Err(e) if attempt < 3 && e.chain().any(postgres::is_conflict) => attempt += 1,
                    done => return done,
                }
            }
        })
        .await
        .context("database task panicked")?
    }

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
    sqlite::is_unique_violation(err) || postgres::is_unique_violation(err)
}

/// True when `err` means the database stayed locked (busy timeout reached), no pooled
/// connection freed up in time, or the database is out of reach: transient, retryable
/// conditions that did nothing, rather than faults.
pub fn is_busy(err: &anyhow::Error) -> bool {
    is_unreachable(err)
        || err.chain().any(|cause| {
            cause.downcast_ref::<r2d2::Error>().is_some()
                || cause.downcast_ref::<writer::Busy>().is_some()
                || sqlite::is_busy(cause)
                || postgres::is_busy(cause)
        })
}

/// True when `err` means the database server is out of reach (PostgreSQL: refused,
/// reset, shutting down), which the log and the 503 say as such, not as busy.
pub fn is_unreachable(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|cause| cause.is::<Unreachable>() || postgres::is_unreachable(cause))
}

/// No connection while the server is out of reach.
#[derive(Debug, thiserror::Error)]
#[error("the database is unreachable")]
pub struct Unreachable(#[source] r2d2::Error);

impl Db {
    /// Whether the database server has been out of reach since the last attempt to
    /// connect (PostgreSQL; never on SQLite's file).
    pub fn is_unreachable(&self) -> bool {
        match &self.pool {
            Pool::Sqlite(_) => false,
            Pool::Postgres(pool) => pool.is_down(),
        }
    }
}

/// True when `err` is a COMMIT whose answer was lost and whose outcome could not be
/// learnt: it may have taken effect, so it is neither busy (did nothing) nor a fault.
pub fn is_commit_unknown(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|cause| cause.is::<postgres::CommitUnknown>())
}

/// An in-memory database with the current schema, for unit tests. Its transactions
/// carry no delivery delay and wake no one.
#[cfg(test)]
pub struct Memory(rusqlite::Connection);

#[cfg(test)]
impl Memory {
    pub fn new() -> Memory {
        let mut conn = rusqlite::Connection::open_in_memory().expect("memory db");
        sqlite::migrate::apply(&mut conn).expect("schema");
        Memory(conn)
    }

    /// Runs `f` in a transaction, committed when it returns Ok.
    pub fn tx<T>(&self, f: impl FnOnce(&Tx) -> anyhow::Result<T>) -> anyhow::Result<T> {
        let tx = Tx::sqlite(self.0.unchecked_transaction()?, std::time::Duration::ZERO);
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
        Conn::ref_cast(&self.0 as &rusqlite::Connection)
    }
}

/// The engine's own upkeep while the server runs, on a thread: SQLite's WAL checkpoints
/// (`sqlite::checkpoint`), PostgreSQL's planner statistics (`postgres::statistics`;
/// the server checkpoints its own log).
pub enum Upkeep {
    Checkpoints(sqlite::checkpoint::Checkpointer),
    Statistics(crate::periodic::Periodic),
}

impl Upkeep {
    pub fn start(db: &Db) -> anyhow::Result<Upkeep> {
        Ok(match db.engine() {
            Engine::Sqlite => Upkeep::Checkpoints(sqlite::checkpoint::Checkpointer::start(db)?),
            Engine::Postgres => Upkeep::Statistics(postgres::statistics::start(db)?),
        })
    }

    pub fn stop(self) {
        match self {
            Upkeep::Checkpoints(checkpointer) => checkpointer.stop(),
            Upkeep::Statistics(thread) => thread.stop(),
        }
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
            .one(
                "SELECT COUNT(*) FROM jobs",
                crate::db::sql::params![],
                |r| r.get(0),
            )
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
