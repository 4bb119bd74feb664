//! The SQLite engine: its connections (`Driver` for rusqlite), the pool's pragmas (a
//! 4 MiB page cache each, so the pool's memory stays bounded), the writer turn,
//! checkpoints, migrations and file copies. `db::store` holds the pool.

pub mod checkpoint;
pub mod files;
pub mod migrate;
pub(in crate::db) mod writer;

use super::sql::{Driver, Engine, Param, Row, Values};
use anyhow::Context;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;
use std::path::Path;

pub(in crate::db) type Pool = r2d2::Pool<SqliteConnectionManager>;

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

/// The pool over the database file in `data_dir` (created if needed), migrated.
pub(in crate::db) fn open(
    data_dir: &Path,
    max_connections: u32,
    checkpoints: Checkpoints,
) -> anyhow::Result<Pool> {
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
    let mut conn = pool.get().context("no database connection available")?;
    migrate::apply(&mut conn).context("cannot apply the schema")?;
    Ok(pool)
}

fn bind<'p>(params: &'p [&'p dyn Param]) -> impl rusqlite::Params + 'p {
    rusqlite::params_from_iter(params.iter().map(|p| *p as &dyn rusqlite::ToSql))
}

/// Statements are cached per connection (`prepare_cached`): the same few hundred texts
/// run again and again, and parsing was a visible cost of every request.
impl Driver for Connection {
    fn engine(&self) -> Engine {
        Engine::Sqlite
    }

    fn exec(&self, sql: &str, params: &[&dyn Param]) -> anyhow::Result<usize> {
        record(self, sql);
        Ok(self.prepare_cached(sql)?.execute(bind(params))?)
    }

    fn batch(&self, sql: &str) -> anyhow::Result<()> {
        Ok(self.execute_batch(sql)?)
    }

    fn query(
        &self,
        sql: &str,
        params: &[&dyn Param],
        _stream: bool,
        f: &mut dyn FnMut(&Row) -> anyhow::Result<bool>,
    ) -> anyhow::Result<()> {
        record(self, sql);
        let mut stmt = self.prepare_cached(sql)?;
        let mut rows = stmt.query(bind(params))?;
        while let Some(row) = rows.next()? {
            if !f(&Row::new(row))? {
                break;
            }
        }
        Ok(())
    }

    fn sqlite(&self) -> Option<&Connection> {
        Some(self)
    }
}

/// Records a statement run on the service's database file (`db::statements`; not the
/// sandbox's, nor a test's in memory).
fn record(conn: &Connection, sql: &str) {
    if crate::db::statements::recording()
        && conn.path().is_some_and(|p| {
            Some(std::path::Path::new(p).file_name())
                == Some(crate::config::db_path(std::path::Path::new("")).file_name())
        })
    {
        crate::db::statements::prepared(sql);
    }
}

impl Values for rusqlite::Row<'_> {
    fn value(&self, i: usize) -> anyhow::Result<rusqlite::types::ValueRef<'_>> {
        Ok(self.get_ref(i)?)
    }
}

/// True when `err` is a UNIQUE or PRIMARY KEY constraint violation.
pub(in crate::db) fn is_unique_violation(err: &anyhow::Error) -> bool {
    matches!(
        err.downcast_ref::<rusqlite::Error>(),
        Some(rusqlite::Error::SqliteFailure(e, _))
            if e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                || e.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
    )
}

/// True when `cause` is SQLite's lock staying taken past the busy timeout.
pub(in crate::db) fn is_busy(cause: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        cause.downcast_ref::<rusqlite::Error>(),
        Some(rusqlite::Error::SqliteFailure(e, _))
            if matches!(e.code, rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}
