//! Every statement the service ran, prepared against PostgreSQL (issue 42). The unit
//! tests run on SQLite in memory, and a statement only SQLite accepts passes them; the
//! PostgreSQL suite runs only what its tests reach. So CI records every statement the
//! binary prepares during the SQLite suite (`CFDI_TEST_RECORD_SQL`, with each
//! `Conn::pick` replaced by its PostgreSQL text: `db::statements`), and this test, in
//! the PostgreSQL suite, prepares each of them on PostgreSQL through the engine's own
//! translation.

use crate::common::app::cli_on;
use crate::common::engine::{self, postgres_only};
use std::collections::BTreeSet;

const RECORD_TO: &str = "CFDI_TEST_RECORD_SQL";

#[test]
fn every_statement_the_sqlite_suite_ran_prepares_on_postgresql() {
    postgres_only!("statements prepared on PostgreSQL");
    let Some(file) = std::env::var_os(RECORD_TO) else {
        eprintln!("skipped: {RECORD_TO} names no recording (.ci/run makes one)");
        return;
    };
    let text = std::fs::read_to_string(&file)
        .unwrap_or_else(|e| panic!("{RECORD_TO}={file:?} cannot be read: {e}"));
    let statements: BTreeSet<String> = text
        .lines()
        .map(|l| serde_json::from_str::<String>(l).expect("a recorded statement"))
        .collect();
    assert!(
        statements.len() >= 200,
        "only {} statements recorded: was the SQLite suite run with {RECORD_TO}?",
        statements.len()
    );
    let dir = tempfile::TempDir::new().expect("temp dir");
    cli_on(dir.path(), &["org", "list"], None).expect_success("the schema");
    let url = engine::database_url(dir.path()).expect("a PostgreSQL database");
    let conn = cfdi_extract::db::PostgresConnection::connect(&url).expect("connect");
    let failures: Vec<String> = statements
        .iter()
        .filter_map(|sql| conn.prepares(sql).err().map(|e| format!("{e:#}")))
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} statements do not prepare on PostgreSQL:\n{}",
        failures.len(),
        statements.len(),
        failures.join("\n")
    );
}
