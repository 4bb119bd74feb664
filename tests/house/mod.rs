//! The house's rules, checked on the sources so they hold after every change: the
//! storage seam (only `src/db/` names the driver or holds SQL), no import circles
//! between source files, the jobs and the ingestion path free of any channel's types,
//! and no sandbox table in the service's schema. README's "Layout" states them.

mod schema;
mod statements;

use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const SRC: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/src");

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read_dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// A file's code without comments and without its unit tests (`#[cfg(test)] mod tests`
/// and the `tests.rs` / `tests/` files beside a module): what the crate itself runs.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("read");
    let no_comments = Regex::new(r"//[^\n]*").expect("re").replace_all(&text, "");
    let tests = Regex::new(r"#\[cfg\(test\)\]\s*(#\[[^\]]*\]\s*)*mod tests").expect("re");
    match tests.find(&no_comments) {
        Some(m) => no_comments[..m.start()].to_string(),
        None => no_comments.into_owned(),
    }
}

fn is_test_file(path: &Path) -> bool {
    path.file_name().is_some_and(|n| n == "tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

fn relative(path: &Path) -> String {
    path.strip_prefix(SRC)
        .expect("under src")
        .to_string_lossy()
        .into_owned()
}

/// The module path of a file: `src/db/sqlite/mod.rs` is `db::sqlite`.
fn module_of(path: &Path) -> Vec<String> {
    let rel = relative(path);
    let mut parts: Vec<String> = rel
        .trim_end_matches(".rs")
        .split('/')
        .map(String::from)
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts
}

#[test]
fn only_db_names_the_driver_or_holds_sql() {
    let driver = Regex::new(r"\b(rusqlite|r2d2_sqlite|r2d2\b|postgres::)").expect("re");
    let sql = Regex::new(
        r#""[^"]*\b(SELECT\s+[^"]*\bFROM|INSERT\s+INTO|UPDATE\s+\w+\s+SET|DELETE\s+FROM|CREATE\s+(TABLE|INDEX)|PRAGMA)\b"#,
    )
    .expect("re");
    let mut found = Vec::new();
    for path in rust_files(Path::new(SRC)) {
        let rel = relative(&path);
        if rel.starts_with("db/") || is_test_file(&path) {
            continue;
        }
        let code = code(&path);
        if driver.is_match(&code) {
            found.push(format!("{rel}: names a database driver"));
        }
        if let Some(m) = sql.find(&code) {
            found.push(format!(
                "{rel}: holds SQL ({})",
                &m.as_str()[..m.len().min(60)]
            ));
        }
    }
    assert!(found.is_empty(), "outside src/db/:\n{}", found.join("\n"));
}

#[test]
fn table_modules_run_statements_through_the_seam() {
    // db::sql is the statements' engine-neutral API: a table module that reached for
    // a driver would tie itself to one engine (issue 27). The engines' machinery (the
    // pool over them, and db/mod.rs, which declares them) and the sandbox's own SQLite
    // store are the exceptions.
    let driver = Regex::new(r"\b(rusqlite|r2d2_sqlite|postgres::)").expect("re");
    let mut found = Vec::new();
    for path in rust_files(&Path::new(SRC).join("db")) {
        let rel = relative(&path);
        let engine = rel.starts_with("db/sqlite/")
            || rel.starts_with("db/postgres/")
            || rel == "db/sql.rs"
            || rel == "db/store.rs"
            || rel == "db/mod.rs";
        if engine || rel == "db/sandbox/mod.rs" {
            continue;
        }
        if driver.is_match(&code(&path)) {
            found.push(rel);
        }
    }
    assert!(
        found.is_empty(),
        "these name the driver instead of db::sql:\n{}",
        found.join("\n")
    );
}

#[test]
fn jobs_and_ingest_name_no_channel() {
    // A run reaches the channels only through the registry (`sat::Channels`), the
    // `sat::Channel` interface and its sink: no channel's module, type or credential
    // is named there, so a new channel is its folder and its place in the registry.
    let channel =
        Regex::new(r"(?i)\b(ciec|efirma|e\.firma|Portal|Soap|Package|SatCode|BulkService)")
            .expect("re");
    let mut found = Vec::new();
    for path in rust_files(Path::new(SRC)) {
        let rel = relative(&path);
        if !(rel.starts_with("jobs/") || rel.starts_with("ingest/")) || is_test_file(&path) {
            continue;
        }
        for m in channel.find_iter(&code(&path)) {
            found.push(format!("{rel}: {}", m.as_str()));
        }
    }
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_schema_has_no_sandbox_table() {
    let schema = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/schema.sql"))
        .expect("schema.sql");
    let table = Regex::new(r"(?i)CREATE\s+TABLE\s+(IF\s+NOT\s+EXISTS\s+)?sandbox").expect("re");
    assert!(
        !table.is_match(&schema),
        "schema.sql creates a sandbox table"
    );
}

/// Which modules each module's own code uses: `crate::a::b` and `super::…` paths (in
/// `use` lines and in expressions, groups expanded) and paths into its child modules,
/// each resolved to the longest module it names.
fn imports() -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let files: Vec<PathBuf> = rust_files(Path::new(SRC))
        .into_iter()
        .filter(|p| !is_test_file(p))
        .collect();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|p| module_of(p)).collect();
    let resolve = |parts: &[String]| -> Option<Vec<String>> {
        (1..=parts.len())
            .rev()
            .map(|n| parts[..n].to_vec())
            .find(|m| modules.contains(m))
    };
    let visibility = Regex::new(r"pub\((crate|super|self|in [^)]*)\)").expect("re");
    let absolute = Regex::new(r"\b(crate|super)((?:::\w+)*)(?:::\{([^;]*?)\})?").expect("re");
    let relative_path = Regex::new(r"(?:^|[^:\w])(?:self::)?(\w+)::").expect("re");
    let mut graph = BTreeMap::new();
    for path in &files {
        let me = module_of(path);
        if me.first().is_some_and(|m| m == "main") {
            continue;
        }
        let code = visibility.replace_all(&code(path), "pub").into_owned();
        let mut deps = BTreeSet::new();
        for c in absolute.captures_iter(&code) {
            let mut base: Vec<String> = match &c[1] {
                "crate" => Vec::new(),
                _ => me[..me.len().saturating_sub(1)].to_vec(),
            };
            base.extend(c[2].split("::").filter(|s| !s.is_empty()).map(String::from));
            let mut targets = vec![base.clone()];
            if let Some(group) = c.get(3) {
                for item in group.as_str().split(',') {
                    let item = item.split(" as ").next().unwrap_or("").trim();
                    if item.is_empty() || item == "self" {
                        continue;
                    }
                    let mut t = base.clone();
                    t.extend(
                        item.split("::")
                            .map(|s| {
                                s.trim_matches(|c: char| c == '{' || c == '}' || c.is_whitespace())
                            })
                            .filter(|s| !s.is_empty())
                            .map(String::from),
                    );
                    targets.push(t);
                }
            }
            deps.extend(targets.iter().filter_map(|t| resolve(t)));
        }
        for c in relative_path.captures_iter(&code) {
            let mut child = me.clone();
            child.push(c[1].to_string());
            if modules.contains(&child) {
                deps.insert(child);
            }
        }
        deps.remove(&me);
        graph.insert(me, deps);
    }
    graph
}

#[test]
fn no_two_source_files_import_each_other() {
    let graph = imports();
    // A module is in a circle when it can reach itself; report each circle once, by
    // its members.
    let reach = |from: &Vec<String>| -> BTreeSet<Vec<String>> {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<Vec<String>> = graph.get(from).into_iter().flatten().cloned().collect();
        while let Some(m) = stack.pop() {
            if seen.insert(m.clone()) {
                stack.extend(graph.get(&m).into_iter().flatten().cloned());
            }
        }
        seen
    };
    let mut circles = BTreeSet::new();
    for m in graph.keys() {
        let from_m = reach(m);
        if from_m.contains(m) {
            let members: BTreeSet<String> = from_m
                .into_iter()
                .filter(|o| reach(o).contains(m))
                .map(|o| o.join("::"))
                .collect();
            circles.insert(members);
        }
    }
    assert!(circles.is_empty(), "import circles: {circles:?}");
    // The check sees real imports: the channels' runs use their own files.
    assert!(
        graph[&vec!["sat".to_string(), "efirma".to_string(), "run".to_string()]].contains(&vec![
            "sat".to_string(),
            "efirma".to_string(),
            "window".to_string()
        ])
    );
}

/// A clone stands alone: nothing in the repository reads a folder beside it (the
/// fixtures the tests, benchmarks and browser checks read are in `tests/fixtures/`).
#[test]
fn nothing_reads_outside_the_repository() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let skip = ["target", ".git", "node_modules", "data", "out"];
    let outside = ["../", "shared/"].concat();
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            if path.is_dir() {
                if !skip.contains(&name.as_deref().unwrap_or_default()) {
                    stack.push(path);
                }
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                if text.contains(&outside) {
                    found.push(path.strip_prefix(root).expect("under root").to_path_buf());
                }
            }
        }
    }
    assert!(found.is_empty(), "files that read {outside}: {found:?}");
}

/// The crate's layers, lowest first: a module imports only from its own layer or those
/// below it, so nothing below ever calls back up. Every top-level module has a place
/// here: a new one fails the test until it is given one.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "ground: values, pure parsers and small utilities",
        &[
            "time",
            "origin",
            "periodic",
            "webhook_signing",
            "password",
            "logging",
            "domain",
            "cfdi",
            "retention",
            "samples",
            "catalogs",
            "format",
            "seal",
        ],
    ),
    ("settings", &["cli", "config", "data_dir"]),
    ("storage", &["db", "crypto"]),
    (
        "services over storage",
        &[
            "events", "ingest", "export", "summary", "pdf", "metrics", "ops",
        ],
    ),
    (
        "the SAT's channels and their simulation",
        &["sat", "sandbox"],
    ),
    ("the app's state and its workers", &["app", "jobs"]),
    (
        "the HTTP edge",
        &[
            "http", "auth", "catchers", "console", "docs", "routes", "server",
        ],
    ),
    ("commands", &["commands", "lib", "main"]),
];

#[test]
fn no_module_imports_from_a_higher_layer() {
    // `lib.rs` is the empty module path.
    let layer = |path: &[String]| {
        let top = path.first().map_or("lib", String::as_str);
        LAYERS.iter().position(|(_, ms)| ms.contains(&top))
    };
    let mut unplaced = BTreeSet::new();
    let mut upward = Vec::new();
    for (from, deps) in imports() {
        let Some(here) = layer(&from) else {
            unplaced.insert(from.join("::"));
            continue;
        };
        for to in deps {
            match layer(&to) {
                Some(there) if there > here => upward.push(format!(
                    "{} ({}) imports {} ({})",
                    from.join("::"),
                    LAYERS[here].0,
                    to.join("::"),
                    LAYERS[there].0
                )),
                Some(_) => {}
                None => {
                    unplaced.insert(to.join("::"));
                }
            }
        }
    }
    assert!(unplaced.is_empty(), "modules without a layer: {unplaced:?}");
    assert!(
        upward.is_empty(),
        "imports from a higher layer:\n{}",
        upward.join("\n")
    );
}
