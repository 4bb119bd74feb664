//! Statements, the engine-neutral half of the storage seam: the table modules run their
//! SQL through these `Conn` methods and read columns through `Row`, never through a
//! driver; each engine (`db/sqlite`, `db/postgres`) implements `Driver` and `Values`
//! under them. SQL is written once, with numbered parameters (`?1`), in the subset
//! both engines share, or per engine with `Conn::pick` where they differ.
//!
//! Both engines cache statements per connection: the same few hundred texts run again
//! and again, and parsing was a visible cost of every request.

use rusqlite::types::{FromSql, ValueRef};

/// Declares a statement's columns once, each with a name: `Col::X.at()` is the
/// position of the column `COLUMNS` names in the same place, so a row is read by name,
/// never by a counted number, and adding a column cannot shift another's reader.
/// `WIDTH` is how many there are: what a statement selects after them is its own.
macro_rules! columns {
    ($(#[$doc:meta])* $first:ident = $first_sql:literal $(, $name:ident = $sql:literal)* $(,)?) => {
        /// The columns by position in `COLUMNS`.
        #[derive(Debug, Clone, Copy)]
        #[allow(dead_code)]
        pub(super) enum Col {
            $first,
            $($name,)*
        }

        impl Col {
            pub(super) const fn at(self) -> usize {
                self as usize
            }
        }

        $(#[$doc])*
        pub(super) const COLUMNS: &str = concat!($first_sql $(, ", ", $sql)*);

        /// How many columns `COLUMNS` names.
        #[allow(dead_code)]
        pub(super) const WIDTH: usize = [$first_sql $(, $sql)*].len();
    };
}
pub(crate) use columns;

/// Which engine a connection speaks to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// What an engine's connection does for `Conn` (`db/sqlite`, `db/postgres`).
pub trait Driver {
    fn engine(&self) -> Engine;
    fn exec(&self, sql: &str, params: &[&dyn Param]) -> anyhow::Result<usize>;
    /// `exec` whose count nobody reads: an engine may send it with the next statement
    /// (PostgreSQL, inside a transaction: one round trip for many writes); its failure
    /// then fails that statement, or the commit.
    fn defer(&self, sql: &str, params: &[&dyn Param]) -> anyhow::Result<()> {
        self.exec(sql, params).map(drop)
    }
    fn batch(&self, sql: &str) -> anyhow::Result<()>;
    /// What the open transaction read and may read again, by key (`Conn::remember`);
    /// `None` where reading again costs nothing worth saving (SQLite, in process).
    fn remembered(&self) -> Option<&std::cell::RefCell<Remembered>> {
        None
    }
    /// Hands each row to `f` until it returns false; `f` may run statements on this
    /// connection. `stream`: the caller does not hold the rows, so an engine reads them
    /// as they come (PostgreSQL through a cursor); otherwise it may read them all first.
    fn query(
        &self,
        sql: &str,
        params: &[&dyn Param],
        stream: bool,
        f: &mut dyn FnMut(&Row) -> anyhow::Result<bool>,
    ) -> anyhow::Result<()>;
    /// The SQLite connection underneath, for the engine's own machinery.
    fn sqlite(&self) -> Option<&rusqlite::Connection> {
        None
    }
}

/// Values a transaction read, by key, kept until it ends (`Conn::remember`).
pub type Remembered = std::collections::HashMap<String, Box<dyn std::any::Any + Send>>;

/// A connection, in a transaction or not: what the table modules read and write
/// through. Outside `db` it is only passed along.
#[derive(ref_cast::RefCast)]
#[repr(transparent)]
pub struct Conn(dyn Driver);

impl Conn {
    pub fn engine(&self) -> Engine {
        self.0.engine()
    }

    /// The text for this connection's engine, where one text cannot serve both.
    pub fn pick<'s>(&self, sqlite: &'s str, postgres: &'s str) -> &'s str {
        match self.engine() {
            Engine::Sqlite => {
                super::statements::picked(sqlite, postgres);
                sqlite
            }
            Engine::Postgres => postgres,
        }
    }

    /// The SQLite connection underneath (pragmas, checkpoints, file copies); `None` on
    /// PostgreSQL.
    pub(in crate::db) fn sqlite(&self) -> Option<&rusqlite::Connection> {
        self.0.sqlite()
    }
}

/// A value a statement binds. `Sync`: PostgreSQL's client encodes parameters by reference.
pub trait Param: rusqlite::ToSql + Sync {}

impl<T: rusqlite::ToSql + Sync + ?Sized> Param for T {}

/// A statement's parameters, in `?1`, `?2`... order.
#[macro_export]
macro_rules! sql_params {
    () => { &[] as &[&dyn $crate::db::sql::Param] };
    ($($p:expr),+ $(,)?) => { &[$(&$p as &dyn $crate::db::sql::Param),+] as &[&dyn $crate::db::sql::Param] };
}
pub use crate::sql_params as params;

/// A statement built piece by piece (filters, cursors): `bind` writes the next numbered
/// parameter where the text has got to, so the text and its parameters cannot drift.
pub struct Query<'a> {
    pub sql: String,
    pub params: Vec<&'a dyn Param>,
}

impl<'a> Query<'a> {
    pub fn new(sql: impl Into<String>) -> Query<'a> {
        Query {
            sql: sql.into(),
            params: Vec::new(),
        }
    }

    /// Binds `value` to the next parameter, named at the end of the SQL so far.
    pub fn bind(&mut self, value: &'a dyn Param) {
        use std::fmt::Write;
        self.params.push(value);
        write!(self.sql, "?{}", self.params.len()).expect("writing to a String");
    }

    /// Binds `value` to the next parameter and returns its placeholder (`?3`) without
    /// writing it, for a value the statement names more than once.
    pub fn placeholder(&mut self, value: &'a dyn Param) -> String {
        self.params.push(value);
        format!("?{}", self.params.len())
    }

    /// A keyset cursor's condition: `clause` (` AND (issued_at, id) < `) then the
    /// position `(at, id)`.
    pub fn after(&mut self, clause: &str, at: &'a dyn Param, id: &'a dyn Param) {
        self.sql.push_str(clause);
        self.sql.push('(');
        self.bind(at);
        self.sql.push_str(", ");
        self.bind(id);
        self.sql.push(')');
    }
}

/// A column that holds bytes or text, told apart by the stored value (event payloads:
/// compressed, or plain JSON from before compression).
pub enum Stored<'r> {
    Null,
    Text(&'r str),
    Bytes(&'r [u8]),
}

/// One row of a result.
pub struct Row<'r>(&'r (dyn Values + 'r));

/// An engine's row, read column by column as values of SQLite's kinds (PostgreSQL's
/// are mapped by `db::postgres::value`).
pub trait Values {
    fn value(&self, i: usize) -> anyhow::Result<ValueRef<'_>>;
}

impl<'r> Row<'r> {
    pub fn new(row: &'r (dyn Values + 'r)) -> Row<'r> {
        Row(row)
    }
}

impl Row<'_> {
    fn value(&self, i: usize) -> anyhow::Result<ValueRef<'_>> {
        self.0.value(i)
    }

    /// Column `i` (from 0) as `T`; NULL only into an `Option`.
    pub fn get<T: Column>(&self, i: usize) -> anyhow::Result<T> {
        T::from_value(self.value(i)?).map_err(|e| anyhow::anyhow!("column {i}: {e}"))
    }

    /// Column `i` as text borrowed from the row (no copy): NULL is `None`.
    pub fn text(&self, i: usize) -> anyhow::Result<Option<&str>> {
        match self.value(i)? {
            ValueRef::Null => Ok(None),
            ValueRef::Text(t) => Ok(Some(std::str::from_utf8(t)?)),
            other => anyhow::bail!("column {i} is {}, not text", other.data_type()),
        }
    }

    /// Column `i` as it is stored, borrowed from the row.
    pub fn stored(&self, i: usize) -> anyhow::Result<Stored<'_>> {
        match self.value(i)? {
            ValueRef::Null => Ok(Stored::Null),
            ValueRef::Text(t) => Ok(Stored::Text(std::str::from_utf8(t)?)),
            ValueRef::Blob(b) => Ok(Stored::Bytes(b)),
            other => anyhow::bail!("column {i} is {}, not bytes or text", other.data_type()),
        }
    }
}

/// What a column reads into. No binary float: money is decimal text (rust_decimal).
pub trait Column: Sized {
    fn from_value(value: ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self>;
}

macro_rules! column_via_sqlite {
    ($($t:ty),*) => {$(
        impl Column for $t {
            fn from_value(value: ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
                <$t as FromSql>::column_result(value)
            }
        }
    )*};
}
column_via_sqlite!(i64, String, Vec<u8>, bool);

impl<T: Column> Column for Option<T> {
    fn from_value(value: ValueRef<'_>) -> rusqlite::types::FromSqlResult<Self> {
        match value {
            ValueRef::Null => Ok(None),
            v => T::from_value(v).map(Some),
        }
    }
}

impl Conn {
    /// Runs a statement that returns no rows; how many rows it changed.
    pub fn exec(&self, sql: &str, params: &[&dyn Param]) -> anyhow::Result<usize> {
        self.0.exec(sql, params)
    }

    /// A write whose count is not needed: on PostgreSQL, inside a transaction, it goes
    /// to the server with the next statement (or the commit) instead of on its own.
    /// Its failure surfaces there, and fails the transaction as any failure does.
    pub fn defer(&self, sql: &str, params: &[&dyn Param]) -> anyhow::Result<()> {
        self.0.defer(sql, params)
    }

    /// `read()`, or what it gave earlier in the same transaction under `key`: for what
    /// a transaction reads again and again and does not change itself (an
    /// organization's webhooks for each of its events, an issuer's certificate for
    /// each of its documents). On PostgreSQL that is a round trip saved each time; on
    /// SQLite it reads again.
    pub fn remember<T: Clone + Send + 'static>(
        &self,
        key: &str,
        read: impl FnOnce() -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        let Some(memo) = self.0.remembered() else {
            return read();
        };
        if let Some(value) = memo.borrow().get(key).and_then(|v| v.downcast_ref::<T>()) {
            return Ok(value.clone());
        }
        let value = read()?;
        memo.borrow_mut()
            .insert(key.to_string(), Box::new(value.clone()));
        Ok(value)
    }

    /// Statements separated by `;`, without parameters (DDL, pragmas).
    pub fn batch(&self, sql: &str) -> anyhow::Result<()> {
        self.0.batch(sql)
    }

    /// The first row, or `None` when there is none.
    pub fn opt<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row) -> anyhow::Result<T>,
    ) -> anyhow::Result<Option<T>> {
        let (mut f, mut out) = (Some(f), None);
        self.0.query(sql, params, false, &mut |row| {
            if let Some(f) = f.take() {
                out = Some(f(row)?);
            }
            Ok(false)
        })?;
        Ok(out)
    }

    /// The first row, which must exist (an aggregate, a row just written).
    pub fn one<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        f: impl FnOnce(&Row) -> anyhow::Result<T>,
    ) -> anyhow::Result<T> {
        self.opt(sql, params, f)?
            .ok_or_else(|| anyhow::anyhow!("the statement returned no row: {sql}"))
    }

    /// Every row, mapped.
    pub fn all<T>(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row) -> anyhow::Result<T>,
    ) -> anyhow::Result<Vec<T>> {
        let mut out = Vec::new();
        self.0.query(sql, params, false, &mut |row| {
            out.push(f(row)?);
            Ok(true)
        })?;
        Ok(out)
    }

    /// Every row, in turn, without collecting them; `f` may run statements on this
    /// connection meanwhile (PostgreSQL reads through a cursor for it).
    pub fn each(
        &self,
        sql: &str,
        params: &[&dyn Param],
        mut f: impl FnMut(&Row) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        self.0
            .query(sql, params, true, &mut |row| f(row).map(|()| true))
    }
}

#[cfg(test)]
mod tests {
    use super::params;
    use crate::db::store::Memory;

    #[test]
    fn statements_bind_numbered_parameters_and_read_typed_columns() {
        let db = Memory::new();
        db.tx(|tx| {
            tx.batch("CREATE TABLE t (n INTEGER, s TEXT, b BLOB)")?;
            let changed = tx.exec(
                "INSERT INTO t VALUES (?1, ?2, ?3), (?1 + 1, NULL, NULL)",
                params![41_i64, "forty-one", vec![1_u8, 2]],
            )?;
            assert_eq!(changed, 2);
            let first = tx.one("SELECT n, s, b FROM t ORDER BY n LIMIT 1", params![], |r| {
                Ok((r.get::<i64>(0)?, r.get::<String>(1)?, r.get::<Vec<u8>>(2)?))
            })?;
            assert_eq!(first, (41, "forty-one".to_string(), vec![1, 2]));
            let texts = tx.all("SELECT s FROM t ORDER BY n", params![], |r| {
                Ok(r.text(0)?.map(str::to_string))
            })?;
            assert_eq!(texts, [Some("forty-one".to_string()), None]);
            let none = tx.opt("SELECT n FROM t WHERE n > ?1", params![100_i64], |r| {
                r.get::<i64>(0)
            })?;
            assert_eq!(none, None);
            let missing: Option<Option<String>> =
                tx.opt("SELECT s FROM t WHERE n = 42", params![], |r| r.get(0))?;
            assert_eq!(missing, Some(None), "NULL reads into an Option");
            Ok(())
        })
        .expect("statements");
    }

    #[test]
    fn a_column_is_read_as_stored_bytes_or_text() {
        use super::Stored;
        let db = Memory::new();
        db.tx(|tx| {
            let kinds = tx.all(
                "SELECT x'0102' UNION ALL SELECT 'text' UNION ALL SELECT NULL",
                params![],
                |r| {
                    Ok(match r.stored(0)? {
                        Stored::Bytes(b) => format!("bytes {b:?}"),
                        Stored::Text(t) => format!("text {t}"),
                        Stored::Null => "null".to_string(),
                    })
                },
            )?;
            assert_eq!(kinds, ["bytes [1, 2]", "text text", "null"]);
            assert!(tx
                .one("SELECT 1", params![], |r| r.stored(0).map(drop))
                .is_err());
            Ok(())
        })
        .expect("stored");
    }

    #[test]
    fn a_query_numbers_its_parameters_in_the_order_its_text_names_them() {
        use super::Query;
        let (low, high) = (2_i64, 3_i64);
        let mut q = Query::new("SELECT ");
        q.bind(&low);
        q.sql.push_str(" * 10 + ");
        q.bind(&high);
        assert_eq!(q.sql, "SELECT ?1 * 10 + ?2");
        let mut cursor = Query::new("SELECT 1 WHERE 1 = 1");
        cursor.after(" AND (2, 3) > ", &low, &low);
        assert_eq!(cursor.sql, "SELECT 1 WHERE 1 = 1 AND (2, 3) > (?1, ?2)");
        let db = Memory::new();
        let n = db.tx(|tx| tx.one(&q.sql, &q.params, |r| r.get::<i64>(0)));
        assert_eq!(n.expect("query"), 23);
    }

    #[test]
    fn a_null_into_a_plain_type_is_an_error_not_a_default() {
        let db = Memory::new();
        let read = db.tx(|tx| tx.one("SELECT NULL", params![], |r| r.get::<i64>(0)));
        assert!(read.is_err());
    }
}
