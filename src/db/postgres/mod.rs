//! The PostgreSQL engine (`--database-url`), for deployments past one VM: several
//! instances share one database. Its connections (`Driver` for the `postgres` client,
//! each with its own statement cache), the pool's manager, write transactions and
//! migrations. Writers take turns across instances under one transaction-scoped
//! advisory lock, so every statement written for SQLite's single writer (read, then
//! write what was read) keeps its meaning on READ COMMITTED.

mod connection;
pub(in crate::db) mod listen;
mod migrate;
mod tls;
mod value;

pub(in crate::db) use connection::{is_busy, is_unique_violation, Manager};
pub use connection::{CommitUnknown, Connection, Single, Transaction};

use anyhow::Context;
use std::sync::Arc;
use std::time::Duration;
use tls::{Target, CANNOT_CONNECT};

/// The pool, and how to connect outside it (the wake listener's connection).
#[derive(Clone)]
pub struct Pool {
    pool: r2d2::Pool<Manager>,
    /// Shared: a `Db` is cloned for every request.
    target: Arc<Target>,
}

impl Pool {
    /// How to connect outside the pool (the wake listener), as the pool does.
    pub fn target(&self) -> Arc<Target> {
        self.target.clone()
    }

    pub fn get(&self) -> Result<r2d2::PooledConnection<Manager>, r2d2::Error> {
        self.pool.get()
    }
}

/// The pool over the database at `url`, migrated.
pub(in crate::db) fn open(url: &str, max_connections: u32) -> anyhow::Result<Pool> {
    // The URL may carry a password: no error quotes it. Its sslmode and sslrootcert
    // make the TLS connector, once, for every connection (db/postgres/tls.rs).
    let target = Arc::new(Target::from_url(url)?);
    let manager = Manager {
        target: target.clone(),
    };
    // The first connection made here, so an unreachable server is one clear error at
    // once (with its cause), not the pool's retries until its timeout.
    let first = r2d2::ManageConnection::connect(&manager).context(CANNOT_CONNECT)?;
    migrate::apply(&first).context("cannot apply the schema")?;
    drop(first);
    let pool = r2d2::Pool::builder()
        .max_size(max_connections)
        .min_idle(Some(1))
        .connection_timeout(Duration::from_secs(10))
        // A server restart breaks every connection; `has_broken` drops each after its
        // failed statement, rather than a round trip on every checkout.
        .test_on_check_out(false)
        .error_handler(Box::new(LogCause))
        .build(manager)
        .context(CANNOT_CONNECT)?;
    Ok(Pool { pool, target })
}

/// Logs why a pooled connection could not be made (r2d2's own line drops the cause).
#[derive(Debug)]
struct LogCause;

impl r2d2::HandleError<postgres::Error> for LogCause {
    fn handle_error(&self, error: postgres::Error) {
        log::warn!(
            "cannot connect to PostgreSQL: {:#}",
            anyhow::Error::from(error)
        );
    }
}
