//! The statements the service prepares, recorded for CI: with `CFDI_TEST_RECORD_SQL`
//! naming a file (not a `CFDI_EXTRACT_` setting: the test harness passes those to no
//! process it starts), each statement a process prepares on the service's SQLite database
//! is appended to it once, as PostgreSQL would run it (every `Conn::pick` made on the
//! way is applied: its SQLite text is replaced by its PostgreSQL one), one JSON string
//! a line. CI records the SQLite integration suite this way, then prepares every
//! recorded statement against PostgreSQL (`tests/house/statements.rs`): a statement
//! only SQLite accepts fails there, even when no PostgreSQL test runs it.

use std::collections::HashSet;
use std::io::Write;
use std::sync::{Mutex, OnceLock};

/// The environment variable naming the file.
pub const RECORD_TO: &str = "CFDI_TEST_RECORD_SQL";

struct Recorder {
    file: std::fs::File,
    seen: HashSet<String>,
    /// The texts `Conn::pick` chose on SQLite, with PostgreSQL's, longest first.
    picks: Vec<(String, String)>,
}

fn recorder() -> Option<&'static Mutex<Recorder>> {
    static RECORDER: OnceLock<Option<Mutex<Recorder>>> = OnceLock::new();
    RECORDER
        .get_or_init(|| {
            // The crate's own unit tests run statements of their own on scratch
            // tables (SQLite's checkpoints): only what the service runs is recorded.
            if cfg!(test) {
                return None;
            }
            let path = std::env::var_os(RECORD_TO)?;
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&path)
                .map_err(|e| log::warn!("cannot record statements to {path:?}: {e}"))
                .ok()?;
            Some(Mutex::new(Recorder {
                file,
                seen: HashSet::new(),
                picks: Vec::new(),
            }))
        })
        .as_ref()
}

/// Remembers that `sqlite` stands where PostgreSQL runs `postgres` (`Conn::pick`).
pub(in crate::db) fn picked(sqlite: &str, postgres: &str) {
    let Some(recorder) = recorder() else { return };
    let mut r = recorder.lock().unwrap_or_else(|p| p.into_inner());
    if sqlite != postgres && !r.picks.iter().any(|(s, _)| s == sqlite) {
        r.picks.push((sqlite.to_string(), postgres.to_string()));
        r.picks.sort_by_key(|(s, _)| std::cmp::Reverse(s.len()));
    }
}

/// Records `sql`, prepared on the service's database, once per process.
pub(in crate::db) fn prepared(sql: &str) {
    let Some(recorder) = recorder() else { return };
    let mut r = recorder.lock().unwrap_or_else(|p| p.into_inner());
    if r.seen.contains(sql) {
        return;
    }
    r.seen.insert(sql.to_string());
    let mut text = sql.to_string();
    for (sqlite, postgres) in &r.picks {
        text = text.replace(sqlite.as_str(), postgres);
    }
    // One write a line: processes append to the same file.
    let line = format!("{}\n", serde_json::Value::String(text));
    if let Err(e) = r.file.write_all(line.as_bytes()) {
        log::warn!("cannot record a statement: {e}");
    }
}

/// Whether statements are being recorded.
pub(in crate::db) fn recording() -> bool {
    recorder().is_some()
}
