//! Log lines go to stderr; stdout is kept for what a user or script reads
//! (`listening on ...`, ids printed by the CLI). `--log-format json` writes each record
//! as one JSON object per line: `time`, `level`, `target`, `message` and the record's
//! key-values (an access line's `request_id`, `route`, `status`, `duration_ms`, ...).
//!
//! Secrets must not reach a log at any level. Our own code never logs them; the HTTP
//! and HTML crates we use do at debug and trace (ureq and ureq_proto print request
//! headers, so webhook `Authorization: Bearer` tokens and portal session cookies;
//! cookie_store prints cookies; html5ever whole pages with session tokens). Their
//! records below `warn` are dropped by a wrapper around the logger, whatever `RUST_LOG`
//! says: a directive such as `RUST_LOG=ureq_proto::client=trace` cannot re-enable them.

use log::kv::{Key, Value, VisitSource};
use log::{Level, Log, Metadata, Record};
use serde_json::{Map, Value as Json};
use std::io::Write;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Text,
    Json,
}

/// Crates (and their modules) held at `warn` and above.
const QUIET: &[&str] = &[
    "ureq",
    "ureq_proto",
    "rustls",
    "cookie_store",
    "html5ever",
    "selectors",
    "hyper",
    "h2",
    "rocket",
];

/// The default filter: `info`. Access lines (one per request) are part of the JSON log,
/// which goes to a log collector; the text log leaves them out unless `RUST_LOG` asks
/// (`cfdi_extract::access=info`): a line per request costs a write at every request.
const DEFAULT_FILTER: &str = "info,rocket=off,cfdi_extract::routes=error,cfdi_extract::docs=error";

/// Installs the logger. `RUST_LOG` overrides the default level (`info`).
pub fn init(format: Format) {
    let default = match format {
        Format::Json => DEFAULT_FILTER.to_string(),
        Format::Text => format!("{DEFAULT_FILTER},cfdi_extract::access=warn"),
    };
    let env = env_logger::Env::default().default_filter_or(default);
    let mut builder = env_logger::Builder::from_env(env);
    builder.target(env_logger::Target::Stderr);
    match format {
        Format::Json => builder.format(|buf, record| writeln!(buf, "{}", json_line(record))),
        Format::Text => builder.format(|buf, record| writeln!(buf, "{}", text_line(record))),
    };
    let inner = builder.build();
    let max = inner.filter();
    if log::set_boxed_logger(Box::new(Guarded { inner })).is_ok() {
        log::set_max_level(max);
    }
}

struct Guarded<L> {
    inner: L,
}

impl<L: Log> Log for Guarded<L> {
    fn enabled(&self, metadata: &Metadata) -> bool {
        allowed(metadata.target(), metadata.level()) && self.inner.enabled(metadata)
    }

    fn log(&self, record: &Record) {
        if !allowed(record.target(), record.level()) {
            return;
        }
        if is_routing_chatter(record) {
            // A 404 is the client's mistake, not the server's: it shows only where the
            // filter asks for rocket's debug lines (the access line has the status).
            let debug = Metadata::builder()
                .level(Level::Debug)
                .target(record.target())
                .build();
            if !self.inner.enabled(&debug) {
                return;
            }
        }
        self.inner.log(record);
    }

    fn flush(&self) {
        self.inner.flush();
    }
}

/// One record as a JSON object.
fn json_line(record: &Record) -> Json {
    let mut line = Map::new();
    let time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    line.insert("time".into(), time.into());
    line.insert("level".into(), record.level().as_str().into());
    line.insert("target".into(), record.target().into());
    line.insert("message".into(), record.args().to_string().into());
    let mut fields = Fields(&mut line);
    let _ = record.key_values().visit(&mut fields);
    // The request this thread works for (a job's cause); an access line names its own.
    crate::origin::with(|id| {
        if let Some(id) = id {
            line.entry("request_id").or_insert_with(|| id.into());
        }
    });
    Json::Object(line)
}

/// One record as env_logger's default text line (key-values after the message as
/// `key=value`), plus the request this thread works for as `request_id=ID`.
fn text_line(record: &Record) -> String {
    let time = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    let mut line = format!(
        "[{time} {:<5} {}] {}",
        record.level(),
        record.target(),
        record.args()
    );
    let mut pairs = Pairs(&mut line, false);
    let _ = record.key_values().visit(&mut pairs);
    let named = pairs.1;
    crate::origin::with(|id| match id {
        Some(id) if !named => line.push_str(&format!(" request_id={id}")),
        _ => {}
    });
    line
}

/// Appends ` key=value` per key-value; remembers whether one was `request_id`.
struct Pairs<'a>(&'a mut String, bool);

impl<'kvs> VisitSource<'kvs> for Pairs<'_> {
    fn visit_pair(&mut self, key: Key<'kvs>, value: Value<'kvs>) -> Result<(), log::kv::Error> {
        self.1 |= key.as_str() == "request_id";
        self.0.push_str(&format!(" {key}={value}"));
        Ok(())
    }
}

/// Copies a record's key-values into the line: numbers as JSON numbers, the rest as
/// text. The fixed fields above win over a key-value of the same name.
struct Fields<'a>(&'a mut Map<String, Json>);

impl<'kvs> VisitSource<'kvs> for Fields<'_> {
    fn visit_pair(&mut self, key: Key<'kvs>, value: Value<'kvs>) -> Result<(), log::kv::Error> {
        let json = if let Some(n) = value.to_u64() {
            n.into()
        } else if let Some(n) = value.to_i64() {
            n.into()
        } else if let Some(n) = value.to_f64() {
            serde_json::Number::from_f64(n).map_or(Json::Null, Json::Number)
        } else {
            value.to_string().into()
        };
        self.0.entry(key.as_str().to_string()).or_insert(json);
        Ok(())
    }
}

/// False for a quiet crate's records below `warn`.
fn allowed(target: &str, level: Level) -> bool {
    level <= Level::Warn || !QUIET.iter().any(|c| is_within(target, c))
}

/// Rocket's lines about routing one request, which it logs as errors and warnings:
/// "No matching routes for GET /random." and the catcher that answered.
fn is_routing_chatter(record: &Record) -> bool {
    const CHATTER: &[&str] = &["No matching routes for", "Responding with registered"];
    if record.target() != "rocket::server::_" {
        return false;
    }
    let text = record.args().to_string();
    CHATTER.iter().any(|c| text.starts_with(c))
}

/// `target` is the crate `krate` or one of its modules.
fn is_within(target: &str, krate: &str) -> bool {
    target
        .strip_prefix(krate)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use log::LevelFilter;

    #[test]
    fn quiet_crates_keep_only_warnings_and_errors() {
        assert!(!allowed("ureq_proto::client", Level::Trace));
        assert!(!allowed("ureq", Level::Debug));
        assert!(!allowed("cookie_store::cookie_store", Level::Info));
        assert!(allowed("ureq::agent", Level::Warn));
        assert!(allowed("ureq_proto", Level::Error));
        assert!(allowed("cfdi_extract::jobs", Level::Trace));
        assert!(
            allowed("ureqx", Level::Trace),
            "only whole crate names match"
        );
    }

    #[test]
    fn json_lines_carry_the_fixed_fields_and_key_values() {
        let kvs: &[(&str, &str)] = &[("request_id", "abc"), ("level", "forged")];
        let line = json_line(
            &Record::builder()
                .args(format_args!("GET /up 200"))
                .level(Level::Info)
                .target("cfdi_extract::access")
                .key_values(&kvs)
                .build(),
        );
        assert_eq!(line["message"], "GET /up 200");
        assert_eq!(
            line["level"], "INFO",
            "a key-value cannot replace a fixed field"
        );
        assert_eq!(line["target"], "cfdi_extract::access");
        assert_eq!(line["request_id"], "abc");
        assert!(line["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    }

    #[test]
    fn lines_written_for_a_request_carry_its_id() {
        let record = |kvs: &[(&str, &str)], f: &dyn Fn(&Record) -> String| {
            f(&Record::builder()
                .args(format_args!("job 1 run_extraction x: done"))
                .level(Level::Info)
                .target("cfdi_extract::jobs")
                .key_values(&kvs)
                .build())
        };
        let json = |r: &Record| json_line(r).to_string();
        let none = record(&[], &json);
        assert!(!none.contains("request_id"), "{none}");
        let _origin = crate::origin::enter(Some("req-7".into()));
        let line: Json = serde_json::from_str(&record(&[], &json)).expect("json");
        assert_eq!(line["request_id"], "req-7");
        let own: Json =
            serde_json::from_str(&record(&[("request_id", "own")], &json)).expect("json");
        assert_eq!(own["request_id"], "own", "an access line keeps its own");
        let text = record(&[("kind", "k")], &|r| text_line(r));
        assert!(
            text.ends_with("] job 1 run_extraction x: done kind=k request_id=req-7"),
            "{text}"
        );
        assert!(text.contains(" INFO  cfdi_extract::jobs]"), "{text}");
    }

    #[test]
    fn the_level_filter_is_left_to_rust_log() {
        // The wrapper only removes records; it never raises the configured level.
        let inner = env_logger::Builder::new()
            .filter_level(LevelFilter::Error)
            .build();
        let g = Guarded { inner };
        let meta = Metadata::builder()
            .target("cfdi_extract")
            .level(Level::Info)
            .build();
        assert!(!g.enabled(&meta));
    }
}
