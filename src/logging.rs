//! Log lines go to stderr; stdout is kept for what a user or script reads
//! (`listening on ...`, ids printed by the CLI).

/// Installs the logger. `RUST_LOG` overrides the default level (`info`).
pub fn init() {
    let env = env_logger::Env::default().default_filter_or(
        "info,rocket=off,cfdi_extract::routes=error,cfdi_extract::docs=error,ureq=warn,rustls=warn",
    );
    // The SAT portal connector's dependencies log cookies (cookie_store) and whole pages
    // with session tokens (html5ever) at debug level: never below warn, even with RUST_LOG.
    let _ = env_logger::Builder::from_env(env)
        .filter_module("cookie_store", log::LevelFilter::Warn)
        .filter_module("html5ever", log::LevelFilter::Warn)
        .filter_module("selectors", log::LevelFilter::Warn)
        .target(env_logger::Target::Stderr)
        .try_init();
}
