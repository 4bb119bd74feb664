//! One schema, two engines (issues 38 and 42). `schema.sql` (SQLite's) is the
//! description; `src/db/postgres/schema.sql` is held to it by reading both schemas as
//! the engines made them, table by table: columns (type, NOT NULL, default), primary
//! key, unique constraints, foreign keys with their ON DELETE, CHECK constraints (the
//! columns they read and the values they allow), and indexes (name, table, uniqueness,
//! columns or expression, partial or not). The translation between them is the one the
//! PostgreSQL schema's header states: INTEGER is BIGINT (a rowid key an identity),
//! TEXT is text with the "C" collation (checked too: byte order, as SQLite's), BLOB is
//! BYTEA. A SQLite database migrated from release 1's schema is held to a new one the
//! same way, so a change to `schema.sql` without its migration step shows too.

use crate::common::app::cli_on;
use crate::common::engine::{self, postgres_only, TestDb};
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Where the engines' types differ on purpose: (table, column, SQLite's, PostgreSQL's).
/// `events.payload` is declared TEXT on SQLite, whose rows from before payloads were
/// compressed hold JSON text and newer ones bytes in the same column (the value says
/// which: `db::events`); PostgreSQL, with no row from before, stores bytes.
const DIFFERENT_TYPES: &[(&str, &str, &str, &str)] = &[("events", "payload", "text", "blob")];

#[derive(Debug, Default, PartialEq)]
struct Table {
    /// name -> (type, not null, default)
    columns: BTreeMap<String, (String, bool, Option<String>)>,
    primary_key: Vec<String>,
    uniques: BTreeSet<Vec<String>>,
    /// (columns, table, its columns, on delete)
    foreign_keys: BTreeSet<(Vec<String>, String, Vec<String>, String)>,
    /// (the table's columns it reads, the quoted values in it)
    checks: BTreeSet<(Vec<String>, Vec<String>)>,
}

#[derive(Debug, PartialEq)]
struct Index {
    table: String,
    unique: bool,
    /// Column names, `<expression>` for an expression.
    columns: Vec<String>,
    partial: bool,
}

#[derive(Debug, Default, PartialEq)]
struct Schema {
    tables: BTreeMap<String, Table>,
    indexes: BTreeMap<String, Index>,
}

/// SQLite's and PostgreSQL's names of a column type, as the description's.
fn kind(ty: &str) -> String {
    let ty = ty.to_ascii_lowercase();
    match ty.as_str() {
        t if t.contains("int") => "integer",
        "text" | "character varying" => "text",
        "blob" | "bytea" => "blob",
        "real" | "double precision" => "real",
        other => panic!("a column type the schemas do not use: {other}"),
    }
    .to_string()
}

/// A default as written, without PostgreSQL's casts (`'x'::text` is `'x'`).
fn default(text: Option<String>) -> Option<String> {
    let cast = Regex::new(r"::[a-z ]+").expect("re");
    text.map(|t| cast.replace_all(t.trim(), "").trim().to_string())
}

/// The columns of `columns` a CHECK expression reads, and the quoted values in it.
fn check_of(expression: &str, columns: &BTreeSet<String>) -> (Vec<String>, Vec<String>) {
    let word = Regex::new(r"[A-Za-z_][A-Za-z0-9_]*").expect("re");
    let quoted = Regex::new(r"'([^']*)'").expect("re");
    let without_values = quoted.replace_all(expression, "");
    let read: BTreeSet<String> = word
        .find_iter(&without_values)
        .map(|m| m.as_str().to_string())
        .filter(|w| columns.contains(w))
        .collect();
    let mut values: Vec<String> = quoted
        .captures_iter(expression)
        .map(|c| c[1].to_string())
        .collect();
    values.sort();
    values.dedup();
    (read.into_iter().collect(), values)
}

/// Each `CHECK (...)` expression of a CREATE TABLE statement (its comments, which
/// SQLite keeps in the text, left out).
fn checks_in(sql: &str) -> Vec<String> {
    let comment = Regex::new(r"--[^\n]*").expect("re");
    let sql = comment.replace_all(sql, "");
    let check = Regex::new(r"(?i)\bCHECK\s*\(").expect("re");
    let mut found = Vec::new();
    for m in check.find_iter(&sql) {
        let open = m.end() - 1;
        let (mut depth, mut quoted) = (0, false);
        for (i, c) in sql[open..].char_indices() {
            match c {
                '\'' => quoted = !quoted,
                _ if quoted => {}
                '(' => depth += 1,
                ')' => {
                    depth -= 1;
                    if depth == 0 {
                        found.push(sql[open + 1..open + i].to_string());
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    found
}

fn sqlite_schema(file: &Path) -> Schema {
    let conn = rusqlite::Connection::open(file).expect("open the SQLite database");
    let strings = |sql: &str| -> Vec<Vec<Option<String>>> {
        let mut statement = conn.prepare(sql).expect("prepare");
        let n = statement.column_count();
        statement
            .query_map([], |r| {
                (0..n)
                    .map(|i| {
                        Ok(match r.get_ref(i)? {
                            rusqlite::types::ValueRef::Null => None,
                            rusqlite::types::ValueRef::Integer(i) => Some(i.to_string()),
                            v => Some(String::from_utf8_lossy(v.as_bytes()?).into_owned()),
                        })
                    })
                    .collect()
            })
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    };
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    let mut schema = Schema::default();
    for t in strings(
        "SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    ) {
        let name = text(&t[0]);
        let mut table = Table::default();
        let mut key: Vec<(i64, String)> = Vec::new();
        for c in strings(&format!("PRAGMA table_info({name})")) {
            let column = text(&c[1]);
            let pk: i64 = text(&c[5]).parse().unwrap_or(0);
            if pk > 0 {
                key.push((pk, column.clone()));
            }
            let not_null = text(&c[3]) == "1" || pk > 0;
            table.columns.insert(
                column,
                (kind(&text(&c[2])), not_null, default(c[4].clone())),
            );
        }
        key.sort();
        table.primary_key = key.into_iter().map(|(_, c)| c).collect();
        for f in strings(&format!("PRAGMA foreign_key_list({name})")) {
            table.foreign_keys.insert((
                vec![text(&f[3])],
                text(&f[2]),
                vec![text(&f[4])],
                text(&f[6]).to_ascii_lowercase(),
            ));
        }
        let names: BTreeSet<String> = table.columns.keys().cloned().collect();
        for expression in checks_in(&text(&t[1])) {
            table.checks.insert(check_of(&expression, &names));
        }
        for i in strings(&format!("PRAGMA index_list({name})")) {
            let index = text(&i[1]);
            let columns: Vec<String> = strings(&format!("PRAGMA index_info({index})"))
                .iter()
                .map(|c| c[2].clone().unwrap_or_else(|| "<expression>".into()))
                .collect();
            match text(&i[3]).as_str() {
                "pk" => {}
                "u" => {
                    table.uniques.insert(columns);
                }
                _ => {
                    schema.indexes.insert(
                        index,
                        Index {
                            table: name.clone(),
                            unique: text(&i[2]) == "1",
                            columns,
                            partial: text(&i[4]) == "1",
                        },
                    );
                }
            }
        }
        schema.tables.insert(name, table);
    }
    schema
}

fn postgres_schema(db: &mut TestDb) -> (Schema, Vec<String>) {
    let rows = |db: &mut TestDb, sql: &str| -> Vec<Vec<String>> {
        db.rows(sql, &[])
            .into_iter()
            .map(|r| r.iter().map(|v| v.text().unwrap_or_default()).collect())
            .collect()
    };
    let mut schema = Schema::default();
    let mut not_c = Vec::new();
    let tables = rows(
        db,
        "SELECT table_name::text FROM information_schema.tables
          WHERE table_schema = 'public' AND table_type = 'BASE TABLE'
            AND table_name <> 'cfdi_extract_schema'",
    );
    for t in tables {
        let name = t[0].clone();
        let mut table = Table::default();
        for c in rows(
            db,
            &format!(
                "SELECT column_name::text, data_type::text, is_nullable::text,
                        coalesce(column_default::text, ''), is_identity::text,
                        coalesce(collation_name::text, '')
                   FROM information_schema.columns
                  WHERE table_schema = 'public' AND table_name = '{name}'"
            ),
        ) {
            let ty = kind(&c[1]);
            if ty == "text" && c[5] != "C" {
                not_c.push(format!("{name}.{}", c[0]));
            }
            let default = (c[4] != "YES" && !c[3].is_empty()).then(|| c[3].clone());
            table
                .columns
                .insert(c[0].clone(), (ty, c[2] == "NO", self::default(default)));
        }
        let names: BTreeSet<String> = table.columns.keys().cloned().collect();
        let constraints = rows(
            db,
            &format!(
                "SELECT c.contype::text, pg_get_constraintdef(c.oid),
                        coalesce((SELECT string_agg(a.attname::text, ',' ORDER BY k.n)
                          FROM unnest(c.conkey) WITH ORDINALITY k(attnum, n)
                          JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.attnum), ''),
                        coalesce(f.relname::text, ''),
                        coalesce((SELECT string_agg(a.attname::text, ',' ORDER BY k.n)
                          FROM unnest(c.confkey) WITH ORDINALITY k(attnum, n)
                          JOIN pg_attribute a ON a.attrelid = c.confrelid AND a.attnum = k.attnum), ''),
                        c.confdeltype::text
                   FROM pg_constraint c
                   LEFT JOIN pg_class f ON f.oid = c.confrelid
                  WHERE c.conrelid = 'public.{name}'::regclass"
            ),
        );
        let list = |s: &str| -> Vec<String> { s.split(',').map(str::to_string).collect() };
        for c in constraints {
            match c[0].as_str() {
                "p" => table.primary_key = list(&c[2]),
                "u" => {
                    table.uniques.insert(list(&c[2]));
                }
                "f" => {
                    let on_delete = match c[5].as_str() {
                        "c" => "cascade",
                        "n" => "set null",
                        "d" => "set default",
                        "r" => "restrict",
                        _ => "no action",
                    };
                    table.foreign_keys.insert((
                        list(&c[2]),
                        c[3].clone(),
                        list(&c[4]),
                        on_delete.to_string(),
                    ));
                }
                "c" => {
                    table.checks.insert(check_of(&c[1], &names));
                }
                other => panic!("a constraint of kind {other} on {name}"),
            }
        }
        for i in rows(
            db,
            &format!(
                "SELECT ic.relname::text, x.indisunique::text,
                        coalesce((SELECT string_agg(CASE WHEN k.attnum = 0 THEN '<expression>'
                                                     ELSE a.attname::text END, ',' ORDER BY k.n)
                          FROM unnest(x.indkey::int2[]) WITH ORDINALITY k(attnum, n)
                          LEFT JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum), ''),
                        (x.indpred IS NOT NULL)::text
                   FROM pg_index x JOIN pg_class ic ON ic.oid = x.indexrelid
                  WHERE x.indrelid = 'public.{name}'::regclass
                    AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = x.indexrelid)"
            ),
        ) {
            schema.indexes.insert(
                i[0].clone(),
                Index {
                    table: name.clone(),
                    unique: i[1] == "true",
                    columns: list(&i[2]),
                    partial: i[3] == "true",
                },
            );
        }
        schema.tables.insert(name, table);
    }
    (schema, not_c)
}

/// Where `a` (named `an`) and `b` (named `bn`) differ, one line each.
fn differences(an: &str, a: &Schema, bn: &str, b: &Schema) -> Vec<String> {
    let mut out = Vec::new();
    let names = |m: &BTreeMap<String, Table>| m.keys().cloned().collect::<BTreeSet<_>>();
    for only in names(&a.tables).symmetric_difference(&names(&b.tables)) {
        out.push(format!(
            "table {only}: only in {}",
            if a.tables.contains_key(only) { an } else { bn }
        ));
    }
    for (name, ta) in &a.tables {
        let Some(tb) = b.tables.get(name) else {
            continue;
        };
        if ta != tb {
            out.push(format!("table {name}:\n  {an}: {ta:?}\n  {bn}: {tb:?}"));
        }
    }
    let index_names = |s: &Schema| s.indexes.keys().cloned().collect::<BTreeSet<_>>();
    for only in index_names(a).symmetric_difference(&index_names(b)) {
        out.push(format!(
            "index {only}: only in {}",
            if a.indexes.contains_key(only) { an } else { bn }
        ));
    }
    for (name, ia) in &a.indexes {
        match b.indexes.get(name) {
            Some(ib) if ib != ia => out.push(format!("index {name}: {an} {ia:?}, {bn} {ib:?}")),
            _ => {}
        }
    }
    out
}

/// A data directory whose database the binary made (its schema applied by a command).
fn made_by_the_binary() -> tempfile::TempDir {
    let dir = tempfile::TempDir::new().expect("temp dir");
    cli_on(dir.path(), &["org", "list"], None).expect_success("org list");
    dir
}

#[test]
fn the_postgresql_schema_is_the_sqlite_one_translated() {
    postgres_only!("the PostgreSQL schema, against the SQLite one");
    // The description: a new SQLite database (a command without the server's URL).
    let sqlite = tempfile::TempDir::new().expect("temp dir");
    let out = std::process::Command::new(crate::common::app::BIN)
        .args(["org", "list", "--data-dir"])
        .arg(sqlite.path())
        .env_remove(engine::DATABASE_URL)
        .output()
        .expect("org list on SQLite");
    assert!(out.status.success(), "{out:?}");
    let description = sqlite_schema(&sqlite.path().join("cfdi-extract.db"));
    let postgres = made_by_the_binary();
    let (mut translated, not_c) = postgres_schema(&mut TestDb::open(postgres.path()));
    for (table, column, sqlite, postgres) in DIFFERENT_TYPES {
        let ty = translated
            .tables
            .get_mut(*table)
            .and_then(|t| t.columns.get_mut(*column))
            .map(|c| &mut c.0)
            .unwrap_or_else(|| panic!("{table}.{column} is gone: update DIFFERENT_TYPES"));
        assert_eq!(ty, postgres, "{table}.{column} on PostgreSQL");
        *ty = sqlite.to_string();
    }
    assert!(not_c.is_empty(), "text without COLLATE \"C\": {not_c:?}");
    assert!(
        description.tables.len() >= 30,
        "{:?}",
        description.tables.keys()
    );
    let differences = differences("SQLite", &description, "PostgreSQL", &translated);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn a_database_migrated_from_release_1_has_the_new_schema() {
    engine::sqlite_only!("release 1's SQLite file, migrated");
    let fresh = made_by_the_binary();
    let old = tempfile::TempDir::new().expect("temp dir");
    let conn = rusqlite::Connection::open(old.path().join("cfdi-extract.db")).expect("db");
    conn.execute_batch(include_str!("../../src/db/schema_v1.sql"))
        .expect("schema 1");
    conn.pragma_update(None, "user_version", 1)
        .expect("version");
    drop(conn);
    cli_on(old.path(), &["org", "list"], None).expect_success("migrate");
    let new = sqlite_schema(&fresh.path().join("cfdi-extract.db"));
    let migrated = sqlite_schema(&old.path().join("cfdi-extract.db"));
    let differences = differences("new", &new, "migrated", &migrated);
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

#[test]
fn a_check_reads_its_columns_and_values_whatever_the_engine_wrote() {
    let columns: BTreeSet<String> = ["status", "kind"].map(String::from).into();
    assert_eq!(
        check_of("status IN ('pending', 'valid')", &columns),
        (
            vec!["status".into()],
            vec!["pending".into(), "valid".into()]
        )
    );
    assert_eq!(
        check_of(
            "CHECK ((status = ANY (ARRAY['valid'::text, 'pending'::text])))",
            &columns
        ),
        (
            vec!["status".into()],
            vec!["pending".into(), "valid".into()]
        )
    );
    assert_eq!(
        checks_in(
            "a TEXT CHECK (a IN ('x', 'y)')), -- a check (of a)\n sat_check_at TEXT, b INTEGER CHECK(b > (1))"
        ),
        ["a IN ('x', 'y)')", "b > (1)"]
    );
    assert_eq!(
        default(Some("'identity'::text".into())).as_deref(),
        Some("'identity'")
    );
}
