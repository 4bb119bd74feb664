use clap::Parser;
use std::process::ExitCode;

// argon2 allocates 19 MiB per verification; glibc's allocator keeps such blocks per
// thread arena and grows to gigabytes under bursts, mimalloc returns them. Its v2 series
// without transparent huge pages (Cargo.toml): v3's 1 s purge delay and 2 MiB pages
// held a third more memory at the peak of four extractions (BENCHMARKS.md, issue 28).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = cfdi_extract::cli::Cli::parse();
    cfdi_extract::logging::init(cli.log_format);
    match cfdi_extract::commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
