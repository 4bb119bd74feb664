//! Which engine the suite runs on, and each test's database on it.
//!
//! Without `CFDI_EXTRACT_TEST_POSTGRES` every data directory keeps its SQLite file, as
//! it always has. With it set to a PostgreSQL server's URL, e.g.
//!
//! ```text
//! CFDI_EXTRACT_TEST_POSTGRES=postgres://postgres@127.0.0.1:55433/postgres \
//!     cargo test --test it
//! ```
//!
//! (`.ci/postgres.sh` starts such a server), each data directory a test uses gets a
//! fresh database of its own on that server, and every command of the binary the
//! harness runs on that directory gets `CFDI_EXTRACT_DATABASE_URL` naming it: the
//! server's URL with its database (the path) replaced by `t_<16 hex digits of the
//! SHA-256 of the data directory's path>`. The variable is a URL (not the key=value
//! form) because the harness rewrites its database name; a socket directory goes in the
//! host, percent-encoded (`postgres://postgres@%2Ftmp%2Fpg:5432/postgres`), or as
//! `?host=/tmp/pg`. The URL's own database is only used to create and drop the tests'.
//!
//! The name comes from the path, not from a file written into the directory: tests
//! check the directory's contents and modes and let the binary create it, so the
//! harness must not touch it. A database is made fresh (dropped if left over, created)
//! the first time the process routes a command to its directory, and dropped once the
//! temporary directory it lives in is gone (swept when the next database is created);
//! the last few of a run stay on the server, which CI throws away.
//!
//! `app::run_command` (so `run_cli`, `cli_on`) and `TestApp` route their commands; a
//! test that spawns the binary itself calls `.on_test_database()` on the command once
//! its arguments are set. `TestDb` reads and writes a test's database on either engine;
//! `sqlite_only!` skips a test of what only the SQLite engine has.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The environment variable that turns the suite to PostgreSQL.
pub const TEST_POSTGRES: &str = "CFDI_EXTRACT_TEST_POSTGRES";
/// What the binary reads the database URL from.
pub const DATABASE_URL: &str = "CFDI_EXTRACT_DATABASE_URL";
/// The PEM file of the CA that signed the test server's TLS certificate (for
/// 127.0.0.1 and localhost), set by `.ci/postgres.sh` when its server offers TLS.
pub const TEST_POSTGRES_CA: &str = "CFDI_EXTRACT_TEST_POSTGRES_CA";

/// The test server's CA file, when it offers TLS.
pub fn server_ca() -> Option<String> {
    std::env::var(TEST_POSTGRES_CA)
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

/// `url` with `key=value` added to its query (the value percent-encoded).
pub fn with_parameter(url: &str, key: &str, value: &str) -> String {
    let value = percent_encoding::utf8_percent_encode(value, percent_encoding::NON_ALPHANUMERIC);
    let joint = if url.contains('?') { '&' } else { '?' };
    format!("{url}{joint}{key}={value}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

/// The PostgreSQL server's URL the suite runs against, if any.
fn server() -> Option<&'static str> {
    static SERVER: OnceLock<Option<String>> = OnceLock::new();
    SERVER
        .get_or_init(|| {
            std::env::var(TEST_POSTGRES)
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        })
        .as_deref()
}

pub fn engine() -> Engine {
    if server().is_some() {
        Engine::Postgres
    } else {
        Engine::Sqlite
    }
}

pub fn is_postgres() -> bool {
    engine() == Engine::Postgres
}

/// Returns from the test, saying why, when the suite runs on PostgreSQL: for tests of
/// something only the SQLite engine has (its file, its upgrade from release 1, its
/// write lock, the file backup).
macro_rules! sqlite_only {
    ($why:expr) => {
        if $crate::common::engine::is_postgres() {
            eprintln!("skipped on PostgreSQL (SQLite only): {}", $why);
            return;
        }
    };
}
pub(crate) use sqlite_only;

/// Skips a test of what only several instances on one PostgreSQL database do.
macro_rules! postgres_only {
    ($why:expr) => {
        if !$crate::common::engine::is_postgres() {
            eprintln!("skipped on SQLite (PostgreSQL only): {}", $why);
            return;
        }
    };
}
pub(crate) use postgres_only;

/// The database name of `data_dir` on the PostgreSQL server.
pub fn database_name(data_dir: &Path) -> String {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(data_dir.as_os_str().as_encoded_bytes());
    let hex: String = digest[..8].iter().map(|b| format!("{b:02x}")).collect();
    format!("t_{hex}")
}

/// `server` (a URL) with its database replaced by `name`.
pub fn url_with_database(server: &str, name: &str) -> String {
    let mut url = url::Url::parse(server)
        .unwrap_or_else(|e| panic!("{TEST_POSTGRES} is not a postgres:// URL ({e}): {server}"));
    url.set_path(&format!("/{name}"));
    url.to_string()
}

/// The data directories kept on SQLite in a PostgreSQL run (`keep_on_sqlite`).
fn on_sqlite() -> &'static Mutex<std::collections::HashSet<PathBuf>> {
    static DIRS: OnceLock<Mutex<std::collections::HashSet<PathBuf>>> = OnceLock::new();
    DIRS.get_or_init(Mutex::default)
}

/// Keeps `data_dir` on its SQLite file even when the suite runs on PostgreSQL: a test
/// that compares the two engines runs one server of each.
pub fn keep_on_sqlite(data_dir: &Path) {
    on_sqlite()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(data_dir.to_path_buf());
}

/// The URL of `data_dir`'s own database, created fresh on first use; `None` on SQLite.
pub fn database_url(data_dir: &Path) -> Option<String> {
    let server = server()?;
    if on_sqlite()
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .contains(data_dir)
    {
        return None;
    }
    let name = Databases::get().fresh(server, data_dir);
    Some(url_with_database(server, &name))
}

/// Points a command of the binary at its data directory's database (PostgreSQL only):
/// the directory is its `--data-dir` argument (`--data-dir X` or `--data-dir=X`), else
/// its `CFDI_EXTRACT_DATA_DIR`. A command without one (healthcheck) is left alone.
pub fn route(cmd: &mut Command) -> &mut Command {
    if server().is_none() {
        return cmd;
    }
    if let Some(url) = data_dir_of(cmd).and_then(|dir| database_url(&dir)) {
        cmd.env(DATABASE_URL, url);
    }
    cmd
}

/// `route` as a method, for commands built in one expression.
pub trait OnTestDatabase {
    fn on_test_database(&mut self) -> &mut Self;
}

impl OnTestDatabase for Command {
    fn on_test_database(&mut self) -> &mut Self {
        route(self)
    }
}

fn data_dir_of(cmd: &Command) -> Option<PathBuf> {
    let mut args = cmd.get_args();
    while let Some(arg) = args.next() {
        if arg == "--data-dir" {
            return args.next().map(PathBuf::from);
        }
        if let Some(dir) = arg.to_str().and_then(|a| a.strip_prefix("--data-dir=")) {
            return Some(PathBuf::from(dir));
        }
    }
    cmd.get_envs()
        .find(|(k, _)| *k == "CFDI_EXTRACT_DATA_DIR")
        .and_then(|(_, v)| v.map(PathBuf::from))
}

// ---------------------------------------------------------------------------------------
// The databases this process made

/// A database made for a data directory, and what tells it is still in use: the
/// deepest directory of its path that existed then (the temporary directory itself, or
/// the one the test will create it in), with its inode, so a path used again by a new
/// temporary directory gets a fresh database.
struct Made {
    name: String,
    anchor: PathBuf,
    inode: u64,
}

impl Made {
    fn alive(&self) -> bool {
        std::fs::metadata(&self.anchor).is_ok_and(|m| m.ino() == self.inode)
    }
}

struct Databases {
    inner: Mutex<Inner>,
}

struct Inner {
    admin: Option<postgres::Client>,
    made: HashMap<PathBuf, Made>,
}

impl Databases {
    fn get() -> &'static Databases {
        static DATABASES: OnceLock<Databases> = OnceLock::new();
        DATABASES.get_or_init(|| Databases {
            inner: Mutex::new(Inner {
                admin: None,
                made: HashMap::new(),
            }),
        })
    }

    /// The name of `data_dir`'s database, made on its first use (or when its directory
    /// was replaced since).
    fn fresh(&self, server: &str, data_dir: &Path) -> String {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(made) = inner.made.get(data_dir).filter(|m| m.alive()) {
            return made.name.clone();
        }
        // Sweep the databases whose temporary directory is gone.
        let gone: Vec<PathBuf> = inner
            .made
            .iter()
            .filter(|(_, m)| !m.alive())
            .map(|(k, _)| k.clone())
            .collect();
        for key in gone {
            if let Some(m) = inner.made.remove(&key) {
                admin(
                    &mut inner,
                    server,
                    &format!("DROP DATABASE IF EXISTS {} WITH (FORCE)", m.name),
                );
            }
        }
        let name = database_name(data_dir);
        admin(
            &mut inner,
            server,
            &format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
        );
        admin(&mut inner, server, &format!("CREATE DATABASE {name}"));
        let anchor = data_dir
            .ancestors()
            .find(|d| d.is_dir())
            .unwrap_or(Path::new("/"))
            .to_path_buf();
        let inode = std::fs::metadata(&anchor).map(|m| m.ino()).unwrap_or(0);
        inner.made.insert(
            data_dir.to_path_buf(),
            Made {
                name: name.clone(),
                anchor,
                inode,
            },
        );
        name
    }
}

/// Runs `sql` on the server's own database (one connection, made again if it broke).
fn admin(inner: &mut Inner, server: &str, sql: &str) {
    for attempt in 0..2 {
        if inner.admin.as_ref().is_none_or(|c| c.is_closed()) {
            inner.admin = Some(
                postgres::Client::connect(server, postgres::NoTls)
                    .unwrap_or_else(|e| panic!("cannot connect to {TEST_POSTGRES} {server}: {e}")),
            );
        }
        let client = inner.admin.as_mut().expect("connected");
        match client.batch_execute(sql) {
            Ok(()) => return,
            Err(e) if attempt == 0 && client.is_closed() => {
                eprintln!("{sql}: {e}; connecting again");
            }
            Err(e) => panic!("{sql} on {server}: {e}"),
        }
    }
}

// ---------------------------------------------------------------------------------------
// A test's own look at its database

/// A connection to a data directory's database on the suite's engine, for the tests
/// that read or set what the API does not show (a cancellation as the SAT's listing
/// would set it, a rewound schedule). Statements are plain SQL both engines accept,
/// with `?1`, `?2` parameters (text only); where they cannot be, `pick` chooses.
pub enum TestDb {
    Sqlite(rusqlite::Connection),
    Postgres(postgres::Client),
}

/// A column's value as the tests read it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Text(String),
    Bytes(Vec<u8>),
}

impl Value {
    pub fn int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    pub fn text(&self) -> Option<String> {
        match self {
            Value::Text(s) => Some(s.clone()),
            _ => None,
        }
    }
}

impl TestDb {
    /// The database of `data_dir`: its `cfdi-extract.db` file, or its PostgreSQL database.
    pub fn open(data_dir: &Path) -> TestDb {
        TestDb::try_open(data_dir).unwrap_or_else(|e| panic!("open the database: {e}"))
    }

    pub fn try_open(data_dir: &Path) -> Result<TestDb, String> {
        match database_url(data_dir) {
            None => rusqlite::Connection::open(data_dir.join("cfdi-extract.db"))
                .map(TestDb::Sqlite)
                .map_err(|e| e.to_string()),
            Some(url) => postgres::Client::connect(&url, postgres::NoTls)
                .map(TestDb::Postgres)
                .map_err(|e| format!("{url}: {e}")),
        }
    }

    /// `sqlite` on SQLite, `postgres` on PostgreSQL.
    pub fn pick<'a>(&self, sqlite: &'a str, postgres: &'a str) -> &'a str {
        match self {
            TestDb::Sqlite(_) => sqlite,
            TestDb::Postgres(_) => postgres,
        }
    }

    /// Several statements without parameters.
    pub fn batch(&mut self, sql: &str) {
        let done = match self {
            TestDb::Sqlite(c) => c.execute_batch(sql).map_err(|e| e.to_string()),
            TestDb::Postgres(c) => c.batch_execute(sql).map_err(|e| e.to_string()),
        };
        done.unwrap_or_else(|e| panic!("{sql}: {e}"));
    }

    /// One statement; the rows it changed.
    pub fn execute(&mut self, sql: &str, params: &[&str]) -> u64 {
        let done = match self {
            TestDb::Sqlite(c) => c
                .execute(sql, rusqlite::params_from_iter(params))
                .map(|n| n as u64)
                .map_err(|e| e.to_string()),
            TestDb::Postgres(c) => c
                .execute(numbered(sql).as_str(), &pg_params(params))
                .map_err(|e| e.to_string()),
        };
        done.unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Every row of a query.
    pub fn rows(&mut self, sql: &str, params: &[&str]) -> Vec<Vec<Value>> {
        self.try_rows(sql, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    pub fn try_rows(&mut self, sql: &str, params: &[&str]) -> Result<Vec<Vec<Value>>, String> {
        match self {
            TestDb::Sqlite(c) => {
                let mut stmt = c.prepare(sql).map_err(|e| e.to_string())?;
                let width = stmt.column_count();
                let rows = stmt
                    .query_map(rusqlite::params_from_iter(params), |row| {
                        (0..width)
                            .map(|i| row.get_ref(i).map(from_sqlite))
                            .collect()
                    })
                    .map_err(|e| e.to_string())?;
                rows.collect::<Result<_, _>>().map_err(|e| e.to_string())
            }
            TestDb::Postgres(c) => {
                let rows = c
                    .query(numbered(sql).as_str(), &pg_params(params))
                    .map_err(|e| e.to_string())?;
                Ok(rows
                    .iter()
                    .map(|row| (0..row.len()).map(|i| from_postgres(row, i)).collect())
                    .collect())
            }
        }
    }

    /// The first row of a query, if any.
    pub fn row(&mut self, sql: &str, params: &[&str]) -> Option<Vec<Value>> {
        self.rows(sql, params).into_iter().next()
    }

    /// The first column of the first row (`Value::Null` when there is no row).
    pub fn value(&mut self, sql: &str, params: &[&str]) -> Value {
        self.row(sql, params)
            .and_then(|r| r.into_iter().next())
            .unwrap_or(Value::Null)
    }
}

/// On PostgreSQL, whether a row of any table of `data_dir`'s database holds `needle`
/// (in its text, or as bytes of a BYTEA): what reading the data directory's files finds
/// on SQLite, whose database is one of them. Always false on SQLite.
pub fn database_holds(data_dir: &Path, needle: &str) -> bool {
    if !is_postgres() {
        return false;
    }
    let mut db = TestDb::open(data_dir);
    let tables = db.rows(
        "SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) FROM pg_tables
         WHERE schemaname NOT IN ('pg_catalog', 'information_schema')",
        &[],
    );
    // A row as text shows a BYTEA as \x and its bytes in lower-case hex.
    let hex: String = needle.bytes().map(|b| format!("{b:02x}")).collect();
    tables.iter().filter_map(|t| t[0].text()).any(|table| {
        db.value(
            &format!(
                "SELECT count(*) FROM {table} t
                 WHERE strpos(t::text, ?1) > 0 OR strpos(t::text, ?2) > 0"
            ),
            &[needle, &hex],
        ) != Value::Int(0)
    })
}

fn from_sqlite(v: rusqlite::types::ValueRef<'_>) -> Value {
    use rusqlite::types::ValueRef;
    match v {
        ValueRef::Null => Value::Null,
        ValueRef::Integer(i) => Value::Int(i),
        ValueRef::Real(f) => Value::Text(f.to_string()),
        ValueRef::Text(t) => Value::Text(String::from_utf8_lossy(t).into_owned()),
        ValueRef::Blob(b) => Value::Bytes(b.to_vec()),
    }
}

fn from_postgres(row: &postgres::Row, i: usize) -> Value {
    use postgres::types::Type;
    let ty = row.columns()[i].type_().clone();
    let got = match ty {
        Type::INT8 => row.try_get::<_, Option<i64>>(i).map(|v| v.map(Value::Int)),
        Type::INT4 => row
            .try_get::<_, Option<i32>>(i)
            .map(|v| v.map(|n| Value::Int(n.into()))),
        Type::INT2 => row
            .try_get::<_, Option<i16>>(i)
            .map(|v| v.map(|n| Value::Int(n.into()))),
        Type::BOOL => row
            .try_get::<_, Option<bool>>(i)
            .map(|v| v.map(|b| Value::Int(b.into()))),
        Type::BYTEA => row
            .try_get::<_, Option<Vec<u8>>>(i)
            .map(|v| v.map(Value::Bytes)),
        _ => row
            .try_get::<_, Option<String>>(i)
            .map(|v| v.map(Value::Text)),
    };
    got.unwrap_or_else(|e| panic!("column {i} ({ty}): {e}"))
        .unwrap_or(Value::Null)
}

fn pg_params<'a>(params: &'a [&'a str]) -> Vec<&'a (dyn postgres::types::ToSql + Sync)> {
    params
        .iter()
        .map(|p| p as &(dyn postgres::types::ToSql + Sync))
        .collect()
}

/// `?1`, `?2` (outside quotes) as PostgreSQL's `$1`, `$2`.
pub fn numbered(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut quote: Option<char> = None;
    let mut chars = sql.chars().peekable();
    while let Some(c) = chars.next() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '?' && chars.peek().is_some_and(char::is_ascii_digit) => {
                out.push('$');
                continue;
            }
            None => {}
        }
        out.push(c);
    }
    out
}

/// Restarts the suite's PostgreSQL server (`.ci/postgres.sh restart`: sessions ended,
/// as in a failover), waiting until it accepts connections again. Only for a test that
/// has the server to itself: `.ci/run` runs those alone, on a server of their own.
pub fn restart_server() {
    server_command("restart");
}

/// Stops the test server, keeping its data (`.ci/postgres.sh down`): an outage until
/// `start_server`.
pub fn stop_server() {
    server_command("down");
}

/// Starts the server `stop_server` stopped, on the same port.
pub fn start_server() {
    server_command("up");
}

fn server_command(what: &str) {
    let dir = std::env::var("CFDI_EXTRACT_TEST_POSTGRES_DIR").unwrap_or_else(|_| {
        panic!("`{what}` on the server needs CFDI_EXTRACT_TEST_POSTGRES_DIR (run under .ci/postgres.sh)")
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join(".ci/postgres.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args([what, &dir])
        .output()
        .unwrap_or_else(|e| panic!("run .ci/postgres.sh {what}: {e}"));
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_data_dir_maps_to_one_database_name_and_the_servers_url_keeps_the_rest() {
        let a = database_name(Path::new("/tmp/.tmpAbc123"));
        assert_eq!(a, database_name(Path::new("/tmp/.tmpAbc123")));
        assert_ne!(a, database_name(Path::new("/tmp/.tmpAbc124")));
        assert!(a.starts_with("t_") && a.len() == 18, "{a}");
        assert!(a[2..].chars().all(|c| c.is_ascii_hexdigit()), "{a}");
        assert_eq!(
            url_with_database("postgres://postgres@127.0.0.1:55433/postgres", &a),
            format!("postgres://postgres@127.0.0.1:55433/{a}")
        );
        assert_eq!(
            url_with_database(
                "postgres://u:p@%2Ftmp%2Fpg:5432/postgres?sslmode=disable",
                "t_1"
            ),
            "postgres://u:p@%2Ftmp%2Fpg:5432/t_1?sslmode=disable"
        );
        assert_eq!(
            url_with_database("postgres://postgres@localhost?host=/tmp/pg", "t_1"),
            "postgres://postgres@localhost/t_1?host=/tmp/pg"
        );
    }

    #[test]
    fn the_data_dir_of_a_command_is_its_flag_or_its_environment() {
        let mut cmd = Command::new("x");
        cmd.args(["user", "create", "--data-dir", "/d/1", "--org", "o"]);
        assert_eq!(data_dir_of(&cmd), Some(PathBuf::from("/d/1")));
        let mut cmd = Command::new("x");
        cmd.args(["serve", "--data-dir=/d/2"]);
        assert_eq!(data_dir_of(&cmd), Some(PathBuf::from("/d/2")));
        let mut cmd = Command::new("x");
        cmd.args(["org", "list"])
            .env("CFDI_EXTRACT_DATA_DIR", "/d/3");
        assert_eq!(data_dir_of(&cmd), Some(PathBuf::from("/d/3")));
        let mut cmd = Command::new("x");
        cmd.args(["healthcheck", "--port", "1"]);
        assert_eq!(data_dir_of(&cmd), None);
    }

    #[test]
    fn a_command_on_a_data_dir_gets_its_database_on_postgres_only() {
        let dir = tempfile::TempDir::new().expect("tmp");
        let mut cmd = crate::common::app::command();
        cmd.arg("serve")
            .arg("--data-dir")
            .arg(dir.path())
            .on_test_database();
        let url = cmd
            .get_envs()
            .find(|(k, _)| *k == DATABASE_URL)
            .and_then(|(_, v)| v.map(|v| v.to_string_lossy().into_owned()));
        match engine() {
            Engine::Sqlite => assert_eq!(url, None),
            Engine::Postgres => assert_eq!(url, database_url(dir.path())),
        }
    }

    #[test]
    fn a_test_database_is_fresh_reads_and_writes_and_is_dropped_after_its_directory() {
        if !is_postgres() {
            return;
        }
        let dir = tempfile::TempDir::new().expect("tmp");
        let name = database_name(dir.path());
        let url = database_url(dir.path()).expect("a URL");
        assert_eq!(url, url_with_database(server().expect("a server"), &name));
        let mut db = TestDb::open(dir.path());
        db.batch("CREATE TABLE t (id TEXT PRIMARY KEY, n BIGINT, b BYTEA)");
        assert_eq!(
            db.execute("INSERT INTO t VALUES (?1, 7, '\\x0102')", &["a"]),
            1
        );
        let row = db.row("SELECT id, n, length(b), b FROM t WHERE id = ?1", &["a"]);
        assert_eq!(
            row,
            Some(vec![
                Value::Text("a".into()),
                Value::Int(7),
                Value::Int(2),
                Value::Bytes(vec![1, 2])
            ])
        );
        drop(db);
        // The same directory keeps its database.
        assert_eq!(database_url(dir.path()), Some(url));
        assert_eq!(
            TestDb::open(dir.path()).value("SELECT count(*) FROM t", &[]),
            Value::Int(1)
        );

        let exists = |name: &str| {
            let other = tempfile::TempDir::new().expect("tmp");
            TestDb::open(other.path()).value(
                "SELECT count(*) FROM pg_database WHERE datname = ?1",
                &[name],
            ) == Value::Int(1)
        };
        assert!(database_holds(dir.path(), "a"));
        assert!(database_holds(dir.path(), "\u{1}\u{2}"), "bytes in a BYTEA");
        assert!(!database_holds(dir.path(), "not there"));
        assert!(exists(&name));
        drop(dir);
        // The next database made sweeps the one whose directory went.
        assert!(!exists(&name), "{name} was not dropped");
    }

    #[test]
    fn parameters_are_numbered_for_postgres_outside_quotes() {
        assert_eq!(
            numbered("UPDATE t SET a = ?1, b = '?2' WHERE c = ?12 AND d = \"?3\""),
            "UPDATE t SET a = $1, b = '?2' WHERE c = $12 AND d = \"?3\""
        );
    }
}
