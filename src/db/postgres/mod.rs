//! The PostgreSQL engine (`--database-url`), for deployments past one VM: several
//! instances share one database. Its sessions (`session`: tokio-postgres driven
//! synchronously, with pipelines), its connections (`Driver`, each with its own
//! statement cache), the pool's manager, write transactions and migrations. There is
//! no writer's turn: transactions of every instance run side by side on READ
//! COMMITTED, and what must not interleave is held by row locks, `SKIP LOCKED`
//! claims, unique constraints with `ON CONFLICT`, or an organization's lock
//! (`/docs/operations#postgresql-writes`).

mod connection;
pub(in crate::db) mod listen;
mod migrate;
mod session;
pub(in crate::db) mod statistics;
mod tls;
mod value;

pub(in crate::db) use connection::{
    is_busy, is_conflict, is_unique_violation, is_unreachable, Manager,
};
pub use connection::{CommitUnknown, Connection, Health, Single, Transaction};

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
    health: Arc<Health>,
}

/// How long a checkout waits for a connection while the server is out of reach: a
/// moment for one being made, not the 10 s a busy pool is given.
const UNREACHABLE_WAIT: Duration = Duration::from_millis(250);

impl Pool {
    /// How to connect outside the pool (the wake listener), as the pool does.
    pub fn target(&self) -> Arc<Target> {
        self.target.clone()
    }

    /// A connection; at once an error while the server is out of reach (the pool keeps
    /// trying to connect behind, so one that comes back is used again at once).
    pub fn get(&self) -> Result<r2d2::PooledConnection<Manager>, r2d2::Error> {
        if self.health.is_down() {
            return self.pool.get_timeout(UNREACHABLE_WAIT);
        }
        self.pool.get()
    }

    pub fn is_down(&self) -> bool {
        self.health.is_down()
    }
}

/// The pool over the database at `url`, migrated.
pub(in crate::db) fn open(url: &str, max_connections: u32) -> anyhow::Result<Pool> {
    // The URL may carry a password: no error quotes it. Its sslmode and sslrootcert
    // make the TLS connector, once, for every connection (db/postgres/tls.rs).
    let target = Arc::new(Target::from_url(url)?);
    let health = Arc::new(Health::default());
    let manager = Manager {
        target: target.clone(),
        health: health.clone(),
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
    Ok(Pool {
        pool,
        target,
        health,
    })
}

/// Logs why a pooled connection could not be made (r2d2's own line drops the cause),
/// at debug: the manager says once when the server becomes unreachable, and the pool
/// retries every moment until it is back.
#[derive(Debug)]
struct LogCause;

impl r2d2::HandleError<connection::ConnectError> for LogCause {
    fn handle_error(&self, error: connection::ConnectError) {
        log::debug!("cannot connect to PostgreSQL: {error}");
    }
}
