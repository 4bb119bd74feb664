//! One connection to PostgreSQL and what runs on it: the `Driver` the seam speaks to
//! (statements prepared once per connection, translated from SQLite's text), write
//! transactions under the writers' advisory lock, the pool's manager, and one
//! connection outside the pool (`Single`, what `check` reads).

use super::tls::{Target, CANNOT_CONNECT};
use super::value::{self, Arg};
use crate::db::sql::{Conn, Driver, Engine, Param, Row};
use anyhow::Context;
use postgres::error::SqlState;
use postgres::types::{Kind, Type};
use postgres::{Client, Statement};
use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The advisory lock every write transaction takes (`pg_advisory_xact_lock`).
pub const WRITERS: i64 = 0x6366_6469_0001;
/// How long a statement waits for a lock (the writers' turn included) before it fails
/// as busy: SQLite's busy timeout.
const LOCK_TIMEOUT: &str = "10s";

/// One connection to the server.
pub struct Connection {
    client: RefCell<Client>,
    /// The server process of this session (`pg_backend_pid`): ended when a lost
    /// COMMIT's transaction is still open on it (`outcome`).
    pid: Cell<i32>,
    /// How to connect again when the server dropped the connection (`revived`).
    target: Arc<Target>,
    /// Prepared statements by their SQL text as the seam wrote it.
    statements: RefCell<HashMap<String, Statement>>,
    /// Inside `BEGIN`, whether a statement failed: PostgreSQL then ignores the rest and
    /// answers COMMIT with a rollback, which must not pass for a commit.
    in_tx: Cell<bool>,
    failed: Cell<bool>,
    /// Cursors open for `stream` (nested reads).
    cursors: Cell<usize>,
}

/// Rows fetched at a time by a streaming read.
const CURSOR_BATCH: usize = 256;

impl Connection {
    fn client(&self) -> anyhow::Result<RefMut<'_, Client>> {
        self.client.try_borrow_mut().map_err(|_| {
            anyhow::anyhow!("a statement ran on a PostgreSQL connection while another used it")
        })
    }

    /// Runs `run` once more on a new connection when it failed because the server had
    /// closed this one (a restart, a failover, an idle timeout), and only outside a
    /// transaction block: there the statement is a read or a `BEGIN`, so running it
    /// again is safe, and nothing the caller did before is lost with the old session.
    /// A write inside a transaction fails as before and its caller decides.
    fn revived<T>(&self, mut run: impl FnMut() -> anyhow::Result<T>) -> anyhow::Result<T> {
        match run() {
            Err(e) if !self.in_block() && closed(&e) => {
                log::warn!("the PostgreSQL connection was closed; connecting again");
                let (client, pid) =
                    connect(&self.target).context("cannot connect to PostgreSQL again")?;
                *self.client()? = client;
                self.pid.set(pid);
                // Prepared statements and cursors belonged to the old session.
                self.statements.borrow_mut().clear();
                run()
            }
            other => other,
        }
    }

    fn prepared(
        &self,
        client: &mut Client,
        sql: &str,
        params: &[&dyn Param],
    ) -> anyhow::Result<Statement> {
        if let Some(statement) = self.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let statement = prepare(client, sql, params, self.in_block())
            .with_context(|| format!("cannot prepare: {sql}"))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Reads a result through a cursor, `CURSOR_BATCH` rows at a time, handing each to
    /// `f` with the connection free: the caller may run statements on it meanwhile (as
    /// SQLite allows), and the rows are never all in memory. A cursor lives in a
    /// transaction: outside one, a read-only one is begun for it.
    fn stream(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: &mut dyn FnMut(&Row) -> anyhow::Result<bool>,
    ) -> anyhow::Result<()> {
        // Nested reads each get a cursor of their own, and each statement its own name:
        // a FETCH is prepared once per name, with the columns of that name's query.
        let depth = self.cursors.get();
        let cursor = {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            sql.hash(&mut h);
            format!("seam_each_{depth}_{:x}", h.finish())
        };
        let own = !self.in_tx.get() && depth == 0;
        if own {
            self.batch("BEGIN READ ONLY")?;
        }
        self.cursors.set(depth + 1);
        let read = (|| -> anyhow::Result<()> {
            {
                let mut client = self.client()?;
                let declare = self.noting(self.declared(&mut client, &cursor, sql, params))?;
                let args: Vec<Arg> = params.iter().map(|p| Arg(*p)).collect();
                let args: Vec<&(dyn postgres::types::ToSql + Sync)> =
                    args.iter().map(|a| a as _).collect();
                self.noting(client.execute(&declare, &args).map_err(Into::into))?;
            }
            let fetch = format!("FETCH {CURSOR_BATCH} FROM {cursor}");
            loop {
                let rows = {
                    let mut client = self.client()?;
                    let statement = self.noting(self.prepared(&mut client, &fetch, &[]))?;
                    self.noting(client.query(&statement, &[]).map_err(Into::into))?
                };
                for row in &rows {
                    if !f(&Row::new(row))? {
                        return Ok(());
                    }
                }
                if rows.len() < CURSOR_BATCH {
                    return Ok(());
                }
            }
        })();
        self.cursors.set(depth);
        let close = self.noting(self.end(&format!("CLOSE {cursor}")));
        if own {
            let end = if read.is_ok() && close.is_ok() {
                "COMMIT"
            } else {
                "ROLLBACK"
            };
            self.end(end)?;
        }
        read.and(close)
    }

    /// `DECLARE cursor ... FOR sql`, prepared with the parameter types of `sql` itself:
    /// PostgreSQL leaves a cursor's parameters it cannot type as unknown instead of
    /// failing, and a bound value then does not match them.
    fn declared(
        &self,
        client: &mut Client,
        cursor: &str,
        sql: &str,
        params: &[&dyn Param],
    ) -> anyhow::Result<Statement> {
        let declare = format!("DECLARE {cursor} NO SCROLL CURSOR FOR {sql}");
        if let Some(statement) = self.statements.borrow().get(&declare) {
            return Ok(statement.clone());
        }
        let query = self.prepared(client, sql, params)?;
        let statement = prepare_typed(
            client,
            &value::translate(&declare),
            query.params(),
            self.in_block(),
        )
        .with_context(|| format!("cannot prepare: {declare}"))?;
        self.statements
            .borrow_mut()
            .insert(declare, statement.clone());
        Ok(statement)
    }

    /// Ends a transaction block: on this session only, never `revived` (a COMMIT on a
    /// new session would succeed with nothing to commit).
    fn end(&self, sql: &str) -> anyhow::Result<()> {
        Ok(self.client()?.batch_execute(sql)?)
    }

    /// The open transaction's id, `None` when it has written nothing (no id assigned).
    fn xid(&self) -> anyhow::Result<Option<i64>> {
        let mut xid = None;
        self.query(
            "SELECT txid_current_if_assigned()",
            &[],
            false,
            &mut |row| {
                xid = row.get(0)?;
                Ok(false)
            },
        )?;
        Ok(xid)
    }

    /// Inside a transaction block: a write transaction, or a streaming read's.
    fn in_block(&self) -> bool {
        self.in_tx.get() || self.cursors.get() > 0
    }

    /// Remembers a failure inside a transaction (see `failed`).
    fn noting<T>(&self, result: anyhow::Result<T>) -> anyhow::Result<T> {
        if result.is_err() && self.in_tx.get() {
            self.failed.set(true);
        }
        result
    }
}

impl Driver for Connection {
    fn engine(&self) -> Engine {
        Engine::Postgres
    }

    fn exec(&self, sql: &str, params: &[&dyn Param]) -> anyhow::Result<usize> {
        let run = || -> anyhow::Result<usize> {
            let mut client = self.client()?;
            let statement = self.prepared(&mut client, sql, params)?;
            let args: Vec<Arg> = params.iter().map(|p| Arg(*p)).collect();
            let args: Vec<&(dyn postgres::types::ToSql + Sync)> =
                args.iter().map(|a| a as _).collect();
            Ok(usize::try_from(client.execute(&statement, &args)?)?)
        };
        self.noting(run())
    }

    fn batch(&self, sql: &str) -> anyhow::Result<()> {
        let run = || Ok(self.client()?.batch_execute(sql)?);
        self.noting(self.revived(run))
    }

    fn query(
        &self,
        sql: &str,
        params: &[&dyn Param],
        stream: bool,
        f: &mut dyn FnMut(&Row) -> anyhow::Result<bool>,
    ) -> anyhow::Result<()> {
        if stream {
            return self.stream(sql, params, f);
        }
        let rows = self.revived(|| {
            let mut client = self.client()?;
            let statement = self.noting(self.prepared(&mut client, sql, params))?;
            let args: Vec<Arg> = params.iter().map(|p| Arg(*p)).collect();
            let mut read = self.noting(
                client
                    .query_raw(&statement, args.iter())
                    .map_err(Into::into),
            )?;
            let mut rows: Vec<postgres::Row> = Vec::new();
            while let Some(row) = self.noting(
                postgres::fallible_iterator::FallibleIterator::next(&mut read).map_err(Into::into),
            )? {
                rows.push(row);
            }
            Ok(rows)
        })?;
        for row in &rows {
            if !f(&Row::new(row))? {
                break;
            }
        }
        Ok(())
    }
}

/// Prepares `sql` translated. Where PostgreSQL cannot type a parameter (one first met in
/// a null test), the types come from the statement without its null tests, and failing
/// that from the values given.
fn prepare(
    client: &mut Client,
    sql: &str,
    params: &[&dyn Param],
    in_block: bool,
) -> Result<Statement, postgres::Error> {
    let text = value::translate(sql);
    match prepare_typed(client, &text, &[], in_block) {
        Err(e) if untyped(&e) => {
            let probe = value::without_null_tests(&text);
            let unspecified = Type::new(String::new(), 0, Kind::Pseudo, String::new());
            let mut types = vec![unspecified; params.len()];
            for _ in 0..=params.len() {
                match prepare_typed(client, &probe, &types, in_block) {
                    Ok(statement) => {
                        types = statement.params().to_vec();
                        break;
                    }
                    Err(e) if untyped(&e) => {
                        // "... of parameter $N": that one from its value.
                        let n = e
                            .as_db_error()
                            .and_then(|d| d.message().rsplit('$').next()?.parse::<usize>().ok())
                            .filter(|n| (1..=params.len()).contains(n));
                        let Some(n) = n else { return Err(e) };
                        types[n - 1] = value::type_of(params[n - 1]);
                    }
                    Err(e) => return Err(e),
                }
            }
            prepare_typed(client, &text, &types, in_block)
        }
        other => other,
    }
}

/// A statement that fails to prepare inside a transaction aborts it: there each attempt
/// is made under a savepoint (once per statement and connection: it is cached).
fn prepare_typed(
    client: &mut Client,
    text: &str,
    types: &[Type],
    in_block: bool,
) -> Result<Statement, postgres::Error> {
    if !in_block {
        return client.prepare_typed(text, types);
    }
    client.batch_execute("SAVEPOINT seam_prepare")?;
    let prepared = client.prepare_typed(text, types);
    client.batch_execute(match prepared {
        Ok(_) => "RELEASE SAVEPOINT seam_prepare",
        Err(_) => "ROLLBACK TO SAVEPOINT seam_prepare",
    })?;
    prepared
}

/// "could not determine data type of parameter $N" (psql says 42P18; a Parse message
/// gets 42P08).
fn untyped(e: &postgres::Error) -> bool {
    e.code() == Some(&SqlState::INDETERMINATE_DATATYPE)
        || e.code() == Some(&SqlState::AMBIGUOUS_PARAMETER)
}

/// A write transaction on one connection: BEGIN and the writers' lock, then COMMIT, or
/// ROLLBACK when dropped uncommitted.
pub struct Transaction<'c> {
    conn: &'c Connection,
    open: bool,
}

impl<'c> Transaction<'c> {
    pub fn begin(conn: &'c Connection) -> anyhow::Result<Transaction<'c>> {
        Transaction::with_lock(conn, WRITERS)
    }

    pub fn with_lock(conn: &'c Connection, lock: i64) -> anyhow::Result<Transaction<'c>> {
        conn.batch(&format!("BEGIN; SELECT pg_advisory_xact_lock({lock})"))?;
        conn.in_tx.set(true);
        conn.failed.set(false);
        Ok(Transaction { conn, open: true })
    }

    pub fn conn(&self) -> &'c Connection {
        self.conn
    }

    /// Commits. When the connection is lost with the COMMIT in flight, the server may
    /// have committed or not: the transaction's id, read just before, is asked about on
    /// new connections (`outcome`), so a committed transaction is a success, one that
    /// did not commit the error it was, and one whose fate stays unknown a
    /// `CommitUnknown`, never an error that claims nothing happened.
    pub fn commit(mut self) -> anyhow::Result<()> {
        self.open = false;
        let failed = self.conn.failed.get();
        if failed {
            self.conn.in_tx.set(false);
            let _ = self.conn.end("ROLLBACK");
            anyhow::bail!("the transaction was rolled back: one of its statements failed");
        }
        // NULL when it wrote nothing: then no outcome matters. A connection lost here
        // never sent the COMMIT.
        let xid = self.conn.xid();
        self.conn.in_tx.set(false);
        let xid = match xid {
            Ok(xid) => xid,
            Err(e) => {
                let _ = self.conn.end("ROLLBACK");
                return Err(e);
            }
        };
        match (self.conn.end("COMMIT"), xid) {
            (Err(e), Some(xid)) if closed(&e) => {
                match outcome(&self.conn.target, xid, self.conn.pid.get()) {
                    Outcome::Committed => {
                        log::warn!(
                            "the PostgreSQL connection was lost during COMMIT; transaction {xid} committed"
                        );
                        Ok(())
                    }
                    Outcome::NotCommitted => Err(e),
                    Outcome::Unknown => Err(CommitUnknown {
                        xid,
                        cause: format!("{e:#}"),
                    }
                    .into()),
                }
            }
            (result, _) => result,
        }
    }
}

/// A COMMIT whose answer was lost, and whose outcome could not be learnt within
/// `OUTCOME_WAIT`: the transaction may have committed or not.
#[derive(Debug, thiserror::Error)]
#[error("the connection to PostgreSQL was lost during COMMIT ({cause}), and whether transaction {xid} committed could not be learnt")]
pub struct CommitUnknown {
    xid: i64,
    cause: String,
}

/// How long a lost COMMIT's outcome is sought (the server may be restarting).
const OUTCOME_WAIT: Duration = Duration::from_secs(10);
/// How often it is asked meanwhile.
const OUTCOME_POLL: Duration = Duration::from_millis(200);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Committed,
    NotCommitted,
    Unknown,
}

/// Whether transaction `xid` (of the lost session `pid`) committed, asked on new
/// connections until the server answers or `OUTCOME_WAIT` passes. A transaction still
/// in progress has its session ended first (the COMMIT never reached it, or it is
/// being committed now: ending the session waits for neither to be undone).
fn outcome(target: &Target, xid: i64, pid: i32) -> Outcome {
    let deadline = Instant::now() + OUTCOME_WAIT;
    loop {
        match ask(target, xid, pid) {
            Ok(Some(known)) => return known,
            Ok(None) => {}
            Err(e) => log::debug!("asking about transaction {xid}: {e}"),
        }
        if Instant::now() + OUTCOME_POLL > deadline {
            return Outcome::Unknown;
        }
        std::thread::sleep(OUTCOME_POLL);
    }
}

/// One question about `xid`; `None` while it is in progress.
fn ask(target: &Target, xid: i64, pid: i32) -> Result<Option<Outcome>, postgres::Error> {
    let (mut client, _) = connect(target)?;
    let status = match client.query_one("SELECT txid_status($1)", &[&xid]) {
        Ok(row) => row.get::<_, Option<String>>(0),
        // An id past the server's newest: it never reached the server's log (one
        // restored from before it), so nothing of it is in the database.
        Err(e) if e.code() == Some(&SqlState::INVALID_PARAMETER_VALUE) => {
            return Ok(Some(Outcome::NotCommitted))
        }
        Err(e) => return Err(e),
    };
    Ok(match status.as_deref() {
        Some("committed") => Some(Outcome::Committed),
        Some("aborted") => Some(Outcome::NotCommitted),
        Some(_) => {
            // Its own session only (the id is the one the transaction has now).
            client.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE pid = $1 AND backend_xid::text = ($2 % 4294967296)::text",
                &[&pid, &xid],
            )?;
            None
        }
        // Too old to be remembered: not a transaction of a moment ago.
        None => Some(Outcome::Unknown),
    })
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.open {
            self.conn.in_tx.set(false);
            // On a closed connection the server has rolled back already.
            match self.conn.end("ROLLBACK") {
                Err(e) if !closed(&e) => log::warn!("PostgreSQL rollback failed: {e}"),
                _ => {}
            }
        }
    }
}

/// The pool's manager: r2d2_postgres's hands out a bare `Client`; ours wraps each in a
/// `Connection` (the statement cache, and interior mutability for `&Conn`).
pub struct Manager {
    pub target: Arc<Target>,
}

/// A new session with the settings every connection has, and its server process id.
fn connect(target: &Target) -> Result<(Client, i32), postgres::Error> {
    let mut client = target.connect()?;
    // Notices ("already exists, skipping") are not the log's business.
    let answers = client.simple_query(&format!(
        "SET lock_timeout = '{LOCK_TIMEOUT}'; SET client_min_messages = warning; SELECT pg_backend_pid()"
    ))?;
    let pid = answers
        .iter()
        .find_map(|m| match m {
            postgres::SimpleQueryMessage::Row(row) => row.get(0)?.parse().ok(),
            _ => None,
        })
        .unwrap_or_default();
    Ok((client, pid))
}

/// True when `err` came from a connection the server (or the network) had closed.
fn closed(err: &anyhow::Error) -> bool {
    err.chain().any(lost)
}

/// True when `cause` says the server is out of reach: the client saw the connection
/// closed, the socket failed (refused, reset), or the server said it was shutting down.
fn lost(cause: &(dyn std::error::Error + 'static)) -> bool {
    let Some(e) = cause.downcast_ref::<postgres::Error>() else {
        return false;
    };
    e.is_closed()
        || std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
        || [
            SqlState::ADMIN_SHUTDOWN,
            SqlState::CRASH_SHUTDOWN,
            SqlState::CANNOT_CONNECT_NOW,
        ]
        .iter()
        .any(|code| e.code() == Some(code))
}

impl r2d2::ManageConnection for Manager {
    type Connection = Connection;
    type Error = postgres::Error;

    fn connect(&self) -> Result<Connection, postgres::Error> {
        let (client, pid) = connect(&self.target)?;
        Ok(Connection {
            client: RefCell::new(client),
            pid: Cell::new(pid),
            target: self.target.clone(),
            statements: RefCell::default(),
            in_tx: Cell::new(false),
            failed: Cell::new(false),
            cursors: Cell::new(0),
        })
    }

    fn is_valid(&self, conn: &mut Connection) -> Result<(), postgres::Error> {
        conn.client.get_mut().simple_query("").map(drop)
    }

    fn has_broken(&self, conn: &mut Connection) -> bool {
        conn.client.get_mut().is_closed()
    }
}

fn sql_state<'a>(cause: &'a (dyn std::error::Error + 'static)) -> Option<&'a SqlState> {
    cause.downcast_ref::<postgres::Error>()?.code()
}

/// True when `err` is a UNIQUE or PRIMARY KEY constraint violation.
pub(in crate::db) fn is_unique_violation(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|cause| sql_state(cause) == Some(&SqlState::UNIQUE_VIOLATION))
}

/// True when `cause` is a lock that stayed taken past `LOCK_TIMEOUT`, a conflict the
/// server resolved by failing one side, or a server out of reach: retryable (a 503).
pub(in crate::db) fn is_busy(cause: &(dyn std::error::Error + 'static)) -> bool {
    lost(cause)
        || matches!(
            sql_state(cause),
            Some(s) if *s == SqlState::LOCK_NOT_AVAILABLE
                || *s == SqlState::T_R_DEADLOCK_DETECTED
                || *s == SqlState::T_R_SERIALIZATION_FAILURE
        )
}

/// One connection outside any pool, that never migrates: what `check` reads.
pub struct Single(Connection);

impl std::ops::Deref for Single {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        <Conn as ref_cast::RefCast>::ref_cast(&self.0 as &dyn Driver)
    }
}

impl Single {
    pub fn connect(url: &str) -> anyhow::Result<Single> {
        let target = Target::from_url(url)?;
        let conn = r2d2::ManageConnection::connect(&Manager {
            target: target.into(),
        })
        .context(CANNOT_CONNECT)?;
        Ok(Single(conn))
    }

    /// The schema version the database records; `None` before the first `serve`.
    pub fn schema_version(&self) -> anyhow::Result<Option<i64>> {
        Single::version(self)
    }

    pub fn version(conn: &Conn) -> anyhow::Result<Option<i64>> {
        let exists: bool = conn.one(
            "SELECT to_regclass('cfdi_extract_schema') IS NOT NULL",
            crate::db::sql::params![],
            |r| r.get(0),
        )?;
        if !exists {
            return Ok(None);
        }
        conn.opt(
            "SELECT version FROM cfdi_extract_schema",
            crate::db::sql::params![],
            |r| r.get(0),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use postgres::{Config, NoTls};

    #[test]
    fn a_server_out_of_reach_is_lost_so_busy_and_a_503() {
        // Nothing listens on port 1: the connection is refused.
        let config: Config = "postgres://cfdi@127.0.0.1:1/none".parse().expect("url");
        let Err(err) = config.connect(NoTls) else {
            panic!("connected to port 1")
        };
        let err = anyhow::Error::from(err);
        assert!(closed(&err));
        assert!(err.chain().any(is_busy));
        let other = anyhow::anyhow!("a constraint failed");
        assert!(!closed(&other) && !other.chain().any(is_busy));
    }
}
