//! Log lines go to stderr; stdout is kept for what a user or script reads
//! (`listening on ...`, ids printed by the CLI).
//!
//! Secrets must not reach a log at any level. Our own code never logs them; the HTTP
//! and HTML crates we use do at debug and trace (ureq and ureq_proto print request
//! headers, so webhook `Authorization: Bearer` tokens and portal session cookies;
//! cookie_store prints cookies; html5ever whole pages with session tokens). Their
//! records below `warn` are dropped by a wrapper around the logger, whatever `RUST_LOG`
//! says: a directive such as `RUST_LOG=ureq_proto::client=trace` cannot re-enable them.

use log::{Level, Log, Metadata, Record};

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

/// Installs the logger. `RUST_LOG` overrides the default level (`info`).
pub fn init() {
    let env = env_logger::Env::default()
        .default_filter_or("info,rocket=off,cfdi_extract::routes=error,cfdi_extract::docs=error");
    let inner = env_logger::Builder::from_env(env)
        .target(env_logger::Target::Stderr)
        .build();
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
        if allowed(record.target(), record.level()) {
            self.inner.log(record);
        }
    }

    fn flush(&self) {
        self.inner.flush();
    }
}

/// False for a quiet crate's records below `warn`.
fn allowed(target: &str, level: Level) -> bool {
    level <= Level::Warn || !QUIET.iter().any(|c| is_within(target, c))
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
