//! Log lines go to stderr; stdout is kept for what a user or script reads
//! (`listening on ...`, ids printed by the CLI).

/// Installs the logger. `RUST_LOG` overrides the default level (`info`).
pub fn init() {
    let env = env_logger::Env::default().default_filter_or(
        "info,rocket=off,cfdi_extract::routes=error,cfdi_extract::docs=error,ureq=warn,rustls=warn",
    );
    let _ = env_logger::Builder::from_env(env)
        .target(env_logger::Target::Stderr)
        .try_init();
}
