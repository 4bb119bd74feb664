//! One connection to PostgreSQL and what runs on it: the `Driver` the seam speaks to
//! (statements prepared once per connection, translated from SQLite's text), write
//! transactions, the pool's manager, and one connection outside the pool (`Single`,
//! what `check` reads).
//!
//! Round trips are what a write costs here, so a transaction's statements travel
//! together where they can: its BEGIN goes with its first statement, and a write that
//! nobody waits on (`defer`) goes with the next statement that is waited on, or with
//! the COMMIT (`Session::pipeline`).

use super::session::{Answer, Session, Step};
use super::tls::{Target, CANNOT_CONNECT};
use super::value::{self, Arg, Owned, Row as PgRow};
use crate::db::sql::{Conn, Driver, Engine, Param, Remembered, Row};
use anyhow::Context;
use postgres::error::SqlState;
use postgres::types::{Kind, ToSql, Type};
use postgres::Statement;
use std::cell::{Cell, RefCell, RefMut};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a statement waits for a lock (a row another transaction is changing)
/// before it fails as busy: SQLite's busy timeout.
const LOCK_TIMEOUT: &str = "10s";

/// One connection to the server.
pub struct Connection {
    session: RefCell<Session>,
    /// The server process of this session (`pg_backend_pid`): ended when a lost
    /// COMMIT's transaction is still open on it (`outcome`).
    pid: Cell<i32>,
    /// How to connect again when the server dropped the connection (`revived`).
    target: Arc<Target>,
    health: Arc<Health>,
    /// Prepared statements by their SQL text as the seam wrote it.
    statements: RefCell<HashMap<String, Statement>>,
    /// A write transaction is open.
    in_tx: Cell<bool>,
    /// Its BEGIN reached the server (it travels with the transaction's first
    /// statements, so a transaction that ran none costs nothing).
    begun: Cell<bool>,
    /// Inside the transaction, whether a statement failed: PostgreSQL then ignores the
    /// rest and answers COMMIT with a rollback, which must not pass for a commit.
    failed: Cell<bool>,
    /// The transaction's id once it has written something (read with the statements
    /// that may write): what a lost COMMIT's outcome is asked by.
    xid: Cell<Option<i64>>,
    /// Writes whose answer nobody waits on, sent with the next statement that is.
    deferred: RefCell<Vec<Deferred>>,
    /// What the open transaction remembers (`Conn::remember`).
    remembered: RefCell<Remembered>,
    /// Cursors open for `stream` (nested reads).
    cursors: Cell<usize>,
}

/// A deferred write: its text and its parameters, kept.
struct Deferred {
    sql: String,
    params: Vec<Owned>,
}

/// Rows fetched at a time by a streaming read.
const CURSOR_BATCH: usize = 256;

/// What a pipeline ends with: the statement the caller waits on, if any.
enum Last<'a> {
    Nothing,
    Execute(&'a str, &'a [&'a dyn Param]),
    Query(&'a str, &'a [&'a dyn Param]),
    Commit,
}

/// What `Last` answered.
enum Answered {
    Nothing,
    Changed(u64),
    Rows(Vec<postgres::Row>),
}

/// The transaction's id, when it wrote something.
const XID: &str = "SELECT txid_current_if_assigned()";

impl Connection {
    fn session(&self) -> anyhow::Result<RefMut<'_, Session>> {
        self.session.try_borrow_mut().map_err(|_| {
            anyhow::anyhow!("a statement ran on a PostgreSQL connection while another used it")
        })
    }

    /// Inside a transaction block on the server: a write transaction's (once begun),
    /// or a streaming read's.
    fn in_block(&self) -> bool {
        (self.in_tx.get() && self.begun.get()) || self.cursors.get() > 0
    }

    /// Connects again after the server closed this session (a restart, a failover, an
    /// idle timeout). Prepared statements belonged to the old session.
    fn reconnect(&self) -> anyhow::Result<()> {
        log::warn!("the PostgreSQL connection was closed; connecting again");
        let (session, pid) =
            connect(&self.target, &self.health).context("cannot connect to PostgreSQL again")?;
        *self.session()? = session;
        self.pid.set(pid);
        self.statements.borrow_mut().clear();
        Ok(())
    }

    fn statement(&self, sql: &str, params: &[&dyn Param]) -> anyhow::Result<Statement> {
        if let Some(statement) = self.statements.borrow().get(sql) {
            return Ok(statement.clone());
        }
        let in_block = self.in_block();
        let statement = prepare(&mut *self.session()?, sql, params, in_block)
            .with_context(|| format!("cannot prepare: {sql}"))?;
        self.statements
            .borrow_mut()
            .insert(sql.to_string(), statement.clone());
        Ok(statement)
    }

    /// Runs the transaction's BEGIN (when it has not reached the server), its deferred
    /// writes, and `last`, in one pipeline. In a write transaction whose id is not yet
    /// known, the id is asked for after them: from its first write on, a lost COMMIT
    /// can be asked about. When the connection turns out closed before anything of the
    /// transaction reached the server (or outside a transaction, for a read), it is
    /// made again and the pipeline runs once more: nothing was done on the old one.
    fn run(&self, last: Last<'_>) -> anyhow::Result<Answered> {
        let revivable = match last {
            _ if self.cursors.get() > 0 => false,
            _ if self.in_tx.get() => !self.begun.get(),
            Last::Query(..) | Last::Nothing => true,
            Last::Execute(..) | Last::Commit => false,
        };
        match self.pipeline(&last) {
            Err(e) if revivable && closed(&e) => {
                self.reconnect()?;
                self.pipeline(&last)
            }
            other => other,
        }
    }

    fn pipeline(&self, last: &Last<'_>) -> anyhow::Result<Answered> {
        let in_tx = self.in_tx.get();
        let begin = in_tx && !self.begun.get();
        let deferred = self.deferred.borrow();
        let writes = !deferred.is_empty() || matches!(last, Last::Execute(..) | Last::Query(..));
        let ask_xid = in_tx && self.xid.get().is_none() && writes;
        // The statements, prepared (each once per connection).
        let begin_statement = begin.then(|| self.statement("BEGIN", &[])).transpose()?;
        let mut prepared = Vec::with_capacity(deferred.len());
        for d in deferred.iter() {
            let params: Vec<&dyn Param> = d.params.iter().map(|p| &p.0 as &dyn Param).collect();
            prepared.push(self.statement(&d.sql, &params)?);
        }
        let last_statement = match last {
            Last::Execute(sql, params) | Last::Query(sql, params) => {
                Some(self.statement(sql, params)?)
            }
            Last::Commit => Some(self.statement("COMMIT", &[])?),
            Last::Nothing => None,
        };
        let xid_statement = ask_xid.then(|| self.statement(XID, &[])).transpose()?;
        // Their parameters as the client takes them.
        let last_args: Vec<Arg> = match last {
            Last::Execute(_, params) | Last::Query(_, params) => {
                params.iter().map(|p| Arg(*p)).collect()
            }
            _ => Vec::new(),
        };
        let mut steps: Vec<Step> = Vec::with_capacity(deferred.len() + 3);
        if let Some(s) = &begin_statement {
            steps.push(Step::Execute(s, Vec::new()));
        }
        for (d, s) in deferred.iter().zip(&prepared) {
            steps.push(Step::Execute(
                s,
                d.params.iter().map(|p| p as &(dyn ToSql + Sync)).collect(),
            ));
        }
        // The id is asked before a COMMIT (it must be known should the COMMIT's
        // answer be lost), after anything else.
        let commit = matches!(last, Last::Commit);
        if let (true, Some(s)) = (commit, &xid_statement) {
            steps.push(Step::Query(s, Vec::new()));
        }
        let last_index = last_statement.as_ref().map(|s| {
            let args = last_args.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
            steps.push(match last {
                Last::Query(..) => Step::Query(s, args),
                _ => Step::Execute(s, args),
            });
            steps.len() - 1
        });
        if let (false, Some(s)) = (commit, &xid_statement) {
            steps.push(Step::Query(s, Vec::new()));
        }
        let answers = self.session()?.pipeline(&steps);
        drop(steps);
        // Read the answers in order; the first failure is the pipeline's.
        let mut failure: Option<anyhow::Error> = None;
        let mut answered = Answered::Nothing;
        let mut answers = answers.into_iter();
        let mut next = |what: &str| -> Option<Result<Answer, anyhow::Error>> {
            answers.next().map(|a| {
                a.map_err(anyhow::Error::from)
                    .with_context(|| format!("cannot run: {what}"))
            })
        };
        if begin {
            match next("BEGIN") {
                Some(Ok(_)) => self.begun.set(true),
                Some(Err(e)) => failure = failure.or(Some(e)),
                None => {}
            }
        }
        for d in deferred.iter() {
            if let Some(Err(e)) = next(&d.sql) {
                failure = failure.or(Some(e));
            }
        }
        let read_xid = |answer: Option<Result<Answer, anyhow::Error>>,
                        failure: &mut Option<anyhow::Error>| {
            match answer {
                Some(Ok(Answer::Rows(rows))) => {
                    let xid = rows.first().and_then(|r| r.get::<_, Option<i64>>(0));
                    self.xid.set(xid);
                }
                Some(Ok(Answer::Changed(_))) | None => {}
                Some(Err(e)) => *failure = failure.take().or(Some(e)),
            }
        };
        if xid_statement.is_some() && matches!(last, Last::Commit) {
            read_xid(next(XID), &mut failure);
        }
        if last_index.is_some() {
            let what = match last {
                Last::Execute(sql, _) | Last::Query(sql, _) => sql,
                _ => "COMMIT",
            };
            match next(what) {
                Some(Ok(Answer::Changed(n))) => answered = Answered::Changed(n),
                Some(Ok(Answer::Rows(rows))) => answered = Answered::Rows(rows),
                Some(Err(e)) => failure = failure.or(Some(e)),
                None => {}
            }
        }
        if xid_statement.is_some() && !matches!(last, Last::Commit) {
            read_xid(next(XID), &mut failure);
        }
        drop(deferred);
        self.deferred.borrow_mut().clear();
        match failure {
            Some(e) => {
                if in_tx {
                    self.failed.set(true);
                }
                Err(e)
            }
            None => Ok(answered),
        }
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
        } else if self.in_tx.get() && !self.begun.get() {
            // The cursor needs the transaction's block on the server.
            self.run(Last::Nothing)?;
        }
        self.cursors.set(depth + 1);
        let read = (|| -> anyhow::Result<()> {
            let declare = self.declared(&cursor, sql, params)?;
            self.run(Last::Execute(&declare, params))?;
            let fetch = format!("FETCH {CURSOR_BATCH} FROM {cursor}");
            loop {
                let rows = match self.run(Last::Query(&fetch, &[]))? {
                    Answered::Rows(rows) => rows,
                    _ => Vec::new(),
                };
                let fetched = rows.len();
                for row in rows {
                    if !f(&Row::new(&PgRow::from(row)))? {
                        return Ok(());
                    }
                }
                if fetched < CURSOR_BATCH {
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

    /// The text of `DECLARE cursor ... FOR sql`, prepared (and cached under that text)
    /// with the parameter types of `sql` itself: PostgreSQL leaves a cursor's parameters
    /// it cannot type as unknown instead of failing, and a bound value then does not
    /// match them.
    fn declared(&self, cursor: &str, sql: &str, params: &[&dyn Param]) -> anyhow::Result<String> {
        let declare = format!("DECLARE {cursor} NO SCROLL CURSOR FOR {sql}");
        if self.statements.borrow().contains_key(&declare) {
            return Ok(declare);
        }
        let query = self.statement(sql, params)?;
        let in_block = self.in_block();
        let statement = prepare_typed(
            &mut *self.session()?,
            &value::translate(&declare),
            query.params(),
            in_block,
        )
        .with_context(|| format!("cannot prepare: {declare}"))?;
        self.statements
            .borrow_mut()
            .insert(declare.clone(), statement);
        Ok(declare)
    }

    /// Ends a transaction block with a simple statement, on this session only, never
    /// made again (a COMMIT on a new session would succeed with nothing to commit).
    fn end(&self, sql: &str) -> anyhow::Result<()> {
        Ok(self.session()?.batch_execute(sql)?)
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
        match self.run(Last::Execute(sql, params))? {
            Answered::Changed(n) => Ok(usize::try_from(n)?),
            _ => Ok(0),
        }
    }

    fn defer(&self, sql: &str, params: &[&dyn Param]) -> anyhow::Result<()> {
        if !self.in_tx.get() || self.cursors.get() > 0 {
            return self.exec(sql, params).map(drop);
        }
        let params = params
            .iter()
            .map(|p| Owned::of(*p))
            .collect::<anyhow::Result<_>>()?;
        self.deferred.borrow_mut().push(Deferred {
            sql: sql.to_string(),
            params,
        });
        Ok(())
    }

    fn remembered(&self) -> Option<&RefCell<Remembered>> {
        // Only inside a write transaction: it is emptied when one begins.
        self.in_tx.get().then_some(&self.remembered)
    }

    fn batch(&self, sql: &str) -> anyhow::Result<()> {
        if self.in_tx.get() && (!self.begun.get() || !self.deferred.borrow().is_empty()) {
            self.run(Last::Nothing)?;
        }
        let revivable = !self.in_block();
        let result = match self.session()?.batch_execute(sql) {
            Err(e) if revivable && e.is_closed() => {
                self.reconnect()?;
                self.session()?.batch_execute(sql)
            }
            other => other,
        };
        self.noting(result.map_err(Into::into))
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
        let rows = match self.run(Last::Query(sql, params))? {
            Answered::Rows(rows) => rows,
            _ => Vec::new(),
        };
        for row in rows {
            if !f(&Row::new(&PgRow::from(row)))? {
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
    session: &mut Session,
    sql: &str,
    params: &[&dyn Param],
    in_block: bool,
) -> Result<Statement, postgres::Error> {
    let text = value::translate(sql);
    match prepare_typed(session, &text, &[], in_block) {
        Err(e) if untyped(&e) => {
            let probe = value::without_null_tests(&text);
            let unspecified = Type::new(String::new(), 0, Kind::Pseudo, String::new());
            let mut types = vec![unspecified; params.len()];
            for _ in 0..=params.len() {
                match prepare_typed(session, &probe, &types, in_block) {
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
            prepare_typed(session, &text, &types, in_block)
        }
        other => other,
    }
}

/// A statement that fails to prepare inside a transaction aborts it: there each attempt
/// is made under a savepoint (once per statement and connection: it is cached).
fn prepare_typed(
    session: &mut Session,
    text: &str,
    types: &[Type],
    in_block: bool,
) -> Result<Statement, postgres::Error> {
    if !in_block {
        return session.prepare_typed(text, types);
    }
    session.batch_execute("SAVEPOINT seam_prepare")?;
    let prepared = session.prepare_typed(text, types);
    session.batch_execute(match prepared {
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

/// A write transaction on one connection: BEGIN (sent with its first statements),
/// then COMMIT, or ROLLBACK when dropped uncommitted. Transactions of different
/// organizations, and of one organization, run side by side: what must not interleave
/// takes a row lock, a unique constraint or `Conn::lock` (see `/docs/operations`).
pub struct Transaction<'c> {
    conn: &'c Connection,
    open: bool,
}

impl<'c> Transaction<'c> {
    pub fn begin(conn: &'c Connection) -> Transaction<'c> {
        conn.in_tx.set(true);
        conn.begun.set(false);
        conn.failed.set(false);
        conn.xid.set(None);
        conn.deferred.borrow_mut().clear();
        conn.remembered.borrow_mut().clear();
        Transaction { conn, open: true }
    }

    /// A transaction that takes the advisory lock `lock` at once (migrations).
    pub fn with_lock(conn: &'c Connection, lock: i64) -> anyhow::Result<Transaction<'c>> {
        let tx = Transaction::begin(conn);
        conn.exec(
            "SELECT pg_advisory_xact_lock(?1)",
            crate::db::sql::params![lock],
        )?;
        Ok(tx)
    }

    pub fn conn(&self) -> &'c Connection {
        self.conn
    }

    /// Commits: what is deferred and the COMMIT travel together. When the connection
    /// is lost with the COMMIT in flight, the server may have committed or not: the
    /// transaction's id, known from its first write, is asked about on new connections
    /// (`outcome`), so a committed transaction is a success, one that did not commit
    /// the error it was, and one whose fate stays unknown a `CommitUnknown`, never an
    /// error that claims nothing happened.
    pub fn commit(mut self) -> anyhow::Result<()> {
        self.open = false;
        let conn = self.conn;
        if conn.failed.get() {
            self.abort();
            anyhow::bail!("the transaction was rolled back: one of its statements failed");
        }
        if !conn.begun.get() && conn.deferred.borrow().is_empty() {
            // Nothing reached the server: nothing to commit.
            conn.in_tx.set(false);
            return Ok(());
        }
        let wrote_before = conn.xid.get();
        // With the id unknown and writes waiting, they go first with the question, so
        // the COMMIT is only sent once the id is known.
        if wrote_before.is_none() && !conn.deferred.borrow().is_empty() {
            if let Err(e) = conn.run(Last::Nothing) {
                self.abort();
                return Err(e);
            }
        }
        let committed = conn.run(Last::Commit);
        conn.in_tx.set(false);
        conn.begun.set(false);
        match (committed, conn.xid.get()) {
            (Ok(_), _) => Ok(()),
            (Err(e), Some(xid)) if closed(&e) => match outcome(&conn.target, xid, conn.pid.get()) {
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
            },
            (Err(e), _) => {
                if !closed(&e) {
                    let _ = conn.end("ROLLBACK");
                }
                Err(e)
            }
        }
    }

    /// Rolls back what reached the server; forgets what did not.
    fn abort(&mut self) {
        self.open = false;
        let conn = self.conn;
        conn.in_tx.set(false);
        conn.deferred.borrow_mut().clear();
        if conn.begun.replace(false) {
            // On a closed connection the server has rolled back already.
            match conn.end("ROLLBACK") {
                Err(e) if !closed(&e) => log::warn!("PostgreSQL rollback failed: {e}"),
                _ => {}
            }
        }
    }
}

impl Drop for Transaction<'_> {
    fn drop(&mut self) {
        if self.open {
            self.abort();
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
            Err(e) => log::debug!("asking about transaction {xid}: {e:#}"),
        }
        if Instant::now() + OUTCOME_POLL > deadline {
            return Outcome::Unknown;
        }
        std::thread::sleep(OUTCOME_POLL);
    }
}

/// One question about `xid`; `None` while it is in progress.
fn ask(target: &Target, xid: i64, pid: i32) -> anyhow::Result<Option<Outcome>> {
    let mut session = target.session()?;
    let status = session.prepare_typed("SELECT txid_status($1)", &[Type::INT8])?;
    let status = match session.query(&status, &[&xid]) {
        Ok(rows) => rows.first().and_then(|r| r.get::<_, Option<String>>(0)),
        // An id past the server's newest: it never reached the server's log (one
        // restored from before it), so nothing of it is in the database.
        Err(e) if e.code() == Some(&SqlState::INVALID_PARAMETER_VALUE) => {
            return Ok(Some(Outcome::NotCommitted))
        }
        Err(e) => return Err(e.into()),
    };
    Ok(match status.as_deref() {
        Some("committed") => Some(Outcome::Committed),
        Some("aborted") => Some(Outcome::NotCommitted),
        Some(_) => {
            // Its own session only (the id is the one the transaction has now).
            let end = session.prepare_typed(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                  WHERE pid = $1 AND backend_xid::text = ($2 % 4294967296)::text",
                &[Type::INT4, Type::INT8],
            )?;
            session.execute(&end, &[&pid, &xid])?;
            None
        }
        // Too old to be remembered: not a transaction of a moment ago.
        None => Some(Outcome::Unknown),
    })
}

/// Whether the server has been out of reach since the last connection attempt: the
/// pool then answers at once instead of waiting for a connection, and the log says
/// so once, when it happens and when it ends.
#[derive(Default)]
pub struct Health {
    down: AtomicBool,
}

impl Health {
    pub fn is_down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    fn reached(&self) {
        if self.down.swap(false, Ordering::Relaxed) {
            log::warn!("PostgreSQL is reachable again");
        }
    }

    fn unreachable(&self, cause: &anyhow::Error) {
        if !self.down.swap(true, Ordering::Relaxed) {
            log::error!("PostgreSQL is unreachable: {cause:#}");
        }
    }
}

/// The pool's manager: each connection is a `Connection` (the statement cache, the
/// pipeline, and interior mutability for `&Conn`).
pub struct Manager {
    pub target: Arc<Target>,
    pub health: Arc<Health>,
}

/// A new session with the settings every connection has, and its server process id.
fn connect(target: &Target, health: &Health) -> anyhow::Result<(Session, i32)> {
    let connected = (|| {
        let mut session = target.session()?;
        // Notices ("already exists, skipping") are not the log's business.
        let answers = session.simple_query(&format!(
            "SET lock_timeout = '{LOCK_TIMEOUT}'; SET client_min_messages = warning; SELECT pg_backend_pid()"
        ))?;
        let pid = answers
            .iter()
            .find_map(|m| match m {
                postgres::SimpleQueryMessage::Row(row) => row.get(0)?.parse().ok(),
                _ => None,
            })
            .unwrap_or_default();
        anyhow::Ok((session, pid))
    })();
    match &connected {
        Ok(_) => health.reached(),
        Err(e) if e.chain().any(lost) => health.unreachable(e),
        Err(_) => {}
    }
    connected
}

/// True when `err` came from a connection the server (or the network) had closed.
pub(in crate::db) fn closed(err: &anyhow::Error) -> bool {
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

/// Why a pooled connection could not be made (r2d2 wants a `std::error::Error`).
#[derive(Debug)]
pub struct ConnectError(anyhow::Error);

impl std::fmt::Display for ConnectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(self.0.as_ref())
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = Connection;
    type Error = ConnectError;

    fn connect(&self) -> Result<Connection, ConnectError> {
        let (session, pid) = connect(&self.target, &self.health).map_err(ConnectError)?;
        Ok(Connection {
            session: RefCell::new(session),
            pid: Cell::new(pid),
            target: self.target.clone(),
            health: self.health.clone(),
            statements: RefCell::default(),
            in_tx: Cell::new(false),
            begun: Cell::new(false),
            failed: Cell::new(false),
            xid: Cell::new(None),
            deferred: RefCell::default(),
            remembered: RefCell::default(),
            cursors: Cell::new(0),
        })
    }

    fn is_valid(&self, conn: &mut Connection) -> Result<(), ConnectError> {
        conn.session
            .get_mut()
            .batch_execute("")
            .map_err(|e| ConnectError(e.into()))
    }

    fn has_broken(&self, conn: &mut Connection) -> bool {
        conn.session.get_mut().is_closed()
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

/// True when `cause` is a conflict the server resolved by failing this side (a
/// deadlock, a serialization failure): the transaction did nothing, and running it
/// again is PostgreSQL's own remedy.
pub(in crate::db) fn is_conflict(cause: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        sql_state(cause),
        Some(s) if *s == SqlState::T_R_DEADLOCK_DETECTED
            || *s == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

/// True when `cause` is a lock that stayed taken past `LOCK_TIMEOUT`, or a conflict
/// the server resolved by failing one side: retryable (a 503).
pub(in crate::db) fn is_busy(cause: &(dyn std::error::Error + 'static)) -> bool {
    matches!(
        sql_state(cause),
        Some(s) if *s == SqlState::LOCK_NOT_AVAILABLE
            || *s == SqlState::T_R_DEADLOCK_DETECTED
            || *s == SqlState::T_R_SERIALIZATION_FAILURE
    )
}

/// True when `cause` says the server is out of reach (a 503 that did nothing).
pub(in crate::db) fn is_unreachable(cause: &(dyn std::error::Error + 'static)) -> bool {
    lost(cause)
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
            health: Arc::default(),
        })
        .context(CANNOT_CONNECT)?;
        Ok(Single(conn))
    }

    /// Prepares `sql` (the seam's text, as a table module writes it) as the service would
    /// on first running it, its parameters typed from the statement alone (an untyped
    /// one as text): what CI checks every statement the service ran with
    /// (`db::statements`).
    pub fn prepares(&self, sql: &str) -> anyhow::Result<()> {
        let nulls = vec![None::<String>; value::parameters(sql)];
        let params: Vec<&dyn Param> = nulls.iter().map(|p| p as &dyn Param).collect();
        self.0.statement(sql, &params).map(drop)
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
    fn a_server_out_of_reach_is_lost_so_unreachable_and_a_503() {
        // Nothing listens on port 1: the connection is refused.
        let config: Config = "postgres://cfdi@127.0.0.1:1/none".parse().expect("url");
        let Err(err) = config.connect(NoTls) else {
            panic!("connected to port 1")
        };
        let err = anyhow::Error::from(err);
        assert!(closed(&err));
        assert!(err.chain().any(is_unreachable));
        assert!(!err.chain().any(is_busy), "out of reach is not busy");
        let other = anyhow::anyhow!("a constraint failed");
        assert!(!closed(&other) && !other.chain().any(is_unreachable));
    }
}
