//! Command-line interface. Every `serve` flag also reads `CFDI_EXTRACT_<FLAG>`.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::time::Duration;

/// A secret setting (a key): `Debug` never shows it, so neither can a log line.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl From<String> for Secret {
    fn from(s: String) -> Self {
        Secret(s)
    }
}

impl std::str::FromStr for Secret {
    type Err = std::convert::Infallible;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(Secret(s.to_string()))
    }
}

#[derive(Debug, Parser)]
#[command(
    name = "cfdi-extract",
    version,
    about = "Self-hosted CFDI invoice extraction service"
)]
pub struct Cli {
    /// Data directory: database and encryption key. Created if missing.
    #[arg(
        long,
        global = true,
        env = "CFDI_EXTRACT_DATA_DIR",
        default_value = "./data"
    )]
    pub data_dir: PathBuf,

    /// PostgreSQL instead of SQLite in the data directory, for several instances sharing
    /// one database: `postgres://USER:PASSWORD@HOST:PORT/DATABASE`. TLS as libpq's
    /// `sslmode` says (default `prefer`; `?sslmode=verify-full&sslrootcert=CA.pem` to
    /// verify the server). The data directory still holds the encryption key (give every
    /// instance the same one).
    #[arg(
        long,
        global = true,
        env = "CFDI_EXTRACT_DATABASE_URL",
        hide_env_values = true
    )]
    pub database_url: Option<Secret>,

    /// Log lines on stderr: `text`, or `json` (one object per line).
    #[arg(
        long,
        global = true,
        env = "CFDI_EXTRACT_LOG_FORMAT",
        default_value = "text"
    )]
    pub log_format: crate::logging::Format,

    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the HTTP API and the background workers.
    Serve(Box<ServeArgs>),
    /// Manage organizations.
    #[command(subcommand)]
    Org(OrgCommand),
    /// Manage users (API credentials).
    #[command(subcommand)]
    User(UserCommand),
    /// Work with invoices directly.
    #[command(subcommand)]
    Invoices(InvoicesCommand),
    /// The SAT's 69-B list (taxpayers presumed to invoice simulated operations).
    #[command(subcommand, name = "list-69b")]
    List69b(List69bCommand),
    /// The SAT's stamping certificates, which verify the SAT's seal on stamps offline.
    #[command(subcommand, name = "sat-certificates")]
    SatCertificates(SatCertificatesCommand),
    /// Copy the database into a new file (0600) while the server may be running.
    Backup {
        /// The backup file to create; never overwritten.
        #[arg(long)]
        to: PathBuf,
        /// Also write the encryption key beside it as FILE.key (0600). Without the key,
        /// a backup's sealed credentials (CIEC passwords, e.firma keys, webhook tokens)
        /// cannot be opened.
        #[arg(long)]
        with_key: bool,
        #[command(flatten)]
        key: KeyArg,
    },
    /// Make a backup the data directory's database (and FILE.key, if beside it, its
    /// secret.key). Refused while a server runs on the directory.
    Restore {
        /// The backup file.
        #[arg(long)]
        from: PathBuf,
        /// Replace the directory's existing database (and a different secret.key).
        #[arg(long)]
        force: bool,
    },
    /// Check the data directory: database integrity, schema version, and that the key
    /// opens every stored credential. Exits non-zero with one line per problem.
    Check {
        #[command(flatten)]
        key: KeyArg,
    },
    /// GET the server's `/up` and exit 0 when it answers 200, 1 otherwise (a container
    /// health check without curl in the image).
    Healthcheck {
        /// The server's address, as given to `serve` (an unspecified one such as
        /// `0.0.0.0` is reached on loopback).
        #[arg(long, env = "CFDI_EXTRACT_ADDRESS", default_value = "127.0.0.1")]
        address: std::net::IpAddr,
        /// The server's port, as given to `serve`.
        #[arg(long, env = "CFDI_EXTRACT_PORT", default_value_t = 8000)]
        port: u16,
        /// Give up after this long.
        #[arg(long, default_value = "5s", value_parser = parse_duration)]
        timeout: Duration,
    },
}

/// The encryption key as `serve` takes it, for commands that need to open what it sealed.
#[derive(Debug, Clone, Args)]
pub struct KeyArg {
    /// Encryption key (base64 of 32 bytes), when `serve` gets it this way. Default: `secret.key` in the data directory.
    #[arg(long, env = "CFDI_EXTRACT_ENCRYPTION_KEY", hide_env_values = true)]
    pub encryption_key: Option<Secret>,
}

#[derive(Debug, Subcommand)]
pub enum InvoicesCommand {
    /// Import CFDI XML files you already have (e.g. from a SAT bulk download) into an
    /// entity, through the same path extractions use. Invoices and CFDI de Retenciones
    /// alike: each file's root element picks its class. Prints one line per file
    /// (`imported`, the file, the stored id, and `retention` for a retention), then a
    /// `seal` line per document saying whether its seal verified (`valid`, `invalid`
    /// or `unverified`, and why when it is not valid).
    Import {
        /// The entity's id.
        #[arg(long)]
        entity: String,
        /// Whether the entity issued or received these documents.
        #[arg(long, value_parser = ["issued", "received"])]
        direction: String,
        /// XML files; a PDF with the same name beside a file is imported with it.
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Refuse (skip) a file whose seal is invalid: one not signed by its issuer's
        /// certificate, edited after it was sealed, or a certificate the SAT did not issue.
        #[arg(long)]
        require_valid_seal: bool,
    },
    /// Write one entity's invoices issued in a period (or their concepts, with
    /// --items) to a CSV or XLSX file: the same file `GET /v1/invoices/export` serves.
    Export {
        /// The entity's id.
        #[arg(long)]
        entity: String,
        /// First day of the period (YYYY-MM-DD), inclusive.
        #[arg(long)]
        from: String,
        /// Last day of the period (YYYY-MM-DD), inclusive.
        #[arg(long)]
        to: String,
        /// Only the invoices the entity issued, or only those it received.
        #[arg(long, value_parser = ["issued", "received"])]
        direction: Option<String>,
        /// One row per concept instead of one per invoice.
        #[arg(long)]
        items: bool,
        #[arg(long, value_parser = ["csv", "xlsx"], default_value = "csv")]
        format: String,
        /// `api`: the documented columns; `accountant`: the accountant's layout
        /// (`/docs/exports#accountant`).
        #[arg(long, value_parser = ["api", "accountant"], default_value = "api")]
        layout: String,
        /// The file to write (replaced if it exists).
        #[arg(long)]
        out: PathBuf,
    },
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Listen address.
    #[arg(long, env = "CFDI_EXTRACT_ADDRESS", default_value = "127.0.0.1")]
    pub address: std::net::IpAddr,
    /// Listen port (0 picks a free one; the real port is printed).
    #[arg(long, env = "CFDI_EXTRACT_PORT", default_value_t = 8000)]
    pub port: u16,
    /// Background workers for extractions and credential validations.
    #[arg(long, env = "CFDI_EXTRACT_WORKERS", default_value_t = 4, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub workers: u16,
    /// Reverse proxies (comma-separated addresses) whose `X-Forwarded-For` / `X-Real-IP`
    /// headers name the client for the failed-login throttle. Without it those headers
    /// are ignored and the TCP peer is the client.
    #[arg(long, env = "CFDI_EXTRACT_TRUSTED_PROXY", value_delimiter = ',')]
    pub trusted_proxy: Vec<std::net::IpAddr>,
    /// Background workers for webhook deliveries; one organization uses at most half of them.
    #[arg(long, env = "CFDI_EXTRACT_DELIVERY_WORKERS", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub delivery_workers: u16,
    /// Zero-setup mode: create the demo organization and user when no user exists.
    #[arg(long, env = "CFDI_EXTRACT_DEV")]
    pub dev: bool,
    /// Simulated latency per call to the SAT (`--sat sandbox`).
    #[arg(long, env = "CFDI_EXTRACT_SIM_LATENCY", default_value = "300ms", value_parser = parse_duration)]
    pub sim_latency: Duration,
    /// Timeout of one webhook delivery attempt.
    #[arg(long, env = "CFDI_EXTRACT_WEBHOOK_TIMEOUT", default_value = "15s", value_parser = parse_duration)]
    pub webhook_timeout: Duration,
    /// Delay before each delivery attempt, comma-separated; its length is the attempt count.
    #[arg(long, env = "CFDI_EXTRACT_WEBHOOK_RETRY_SCHEDULE", default_value = "0s,5s,5m,30m,2h,5h,10h,10h", value_parser = parse_schedule)]
    pub webhook_retry_schedule: RetrySchedule,
    /// Refuse deliveries to loopback, private and link-local addresses.
    #[arg(long, env = "CFDI_EXTRACT_WEBHOOK_BLOCK_PRIVATE")]
    pub webhook_block_private: bool,
    /// Serve Prometheus metrics at `http://ADDR:PORT/metrics`, unauthenticated, on this
    /// address of its own (e.g. `127.0.0.1:9100`). Off by default.
    #[arg(long, env = "CFDI_EXTRACT_METRICS_ADDRESS")]
    pub metrics_address: Option<std::net::SocketAddr>,
    /// Back up the database this often (e.g. `24h`) into `--backup-dir`, on a thread of its own.
    #[arg(long, env = "CFDI_EXTRACT_BACKUP_EVERY", value_parser = parse_duration, requires = "backup_dir")]
    pub backup_every: Option<Duration>,
    /// Directory of the scheduled backups (created 0700).
    #[arg(long, env = "CFDI_EXTRACT_BACKUP_DIR", requires = "backup_every")]
    pub backup_dir: Option<PathBuf>,
    /// How many scheduled backups to keep; older ones are removed.
    #[arg(long, env = "CFDI_EXTRACT_BACKUP_KEEP", default_value_t = 7, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub backup_keep: u32,
    /// Write the encryption key beside each scheduled backup (FILE.key, 0600).
    #[arg(long, env = "CFDI_EXTRACT_BACKUP_WITH_KEY")]
    pub backup_with_key: bool,
    /// Encryption key for stored credentials: CIEC passwords, e.firma keys, webhook tokens (base64 of 32 bytes). Default: `secret.key` in the data directory.
    #[arg(long, env = "CFDI_EXTRACT_ENCRYPTION_KEY", hide_env_values = true)]
    pub encryption_key: Option<Secret>,
    /// The SAT behind the channels: `sandbox` (the built-in simulation of both) or `portal` (the real SAT: its CFDI portal for the CIEC, with a captcha, and its web service for the e.firma).
    #[arg(long, env = "CFDI_EXTRACT_SAT", default_value = "sandbox", value_parser = ["sandbox", "portal"])]
    pub sat: String,
    /// SAT CIEC login page (`--sat portal`). Default: the SAT's own.
    #[arg(long, env = "CFDI_EXTRACT_SAT_LOGIN_URL")]
    pub sat_login_url: Option<String>,
    /// Base URL of the SAT CFDI portal (`--sat portal`). Default: the SAT's own.
    #[arg(long, env = "CFDI_EXTRACT_SAT_PORTAL_URL")]
    pub sat_portal_url: Option<String>,
    /// Base URL of the SAT's bulk-download web service (authentication, requests,
    /// verification) for the e.firma channel. Default: the SAT's own with `--sat portal`,
    /// the built-in simulation with `--sat sandbox`.
    #[arg(long, env = "CFDI_EXTRACT_SAT_WS_URL")]
    pub sat_ws_url: Option<String>,
    /// Base URL of the web service's package downloads. Default: `--sat-ws-url` when
    /// given, else the SAT's own.
    #[arg(long, env = "CFDI_EXTRACT_SAT_WS_DOWNLOAD_URL")]
    pub sat_ws_download_url: Option<String>,
    /// Base URL of the web service's hosts for CFDI de Retenciones (authentication,
    /// requests, verification; a token of their own). Default: the SAT's own
    /// (`retendescargamasivasolicitud.clouda.sat.gob.mx`); used where the e.firma channel
    /// is the web service (`--sat portal`, or `--sat-ws-url`).
    #[arg(long, env = "CFDI_EXTRACT_SAT_WS_RETENTIONS_URL")]
    pub sat_ws_retentions_url: Option<String>,
    /// Base URL of the retentions' package downloads. Default:
    /// `--sat-ws-retentions-url` when given, else the SAT's own.
    #[arg(long, env = "CFDI_EXTRACT_SAT_WS_RETENTIONS_DOWNLOAD_URL")]
    pub sat_ws_retentions_download_url: Option<String>,
    /// First wait before checking a request to the web service again; it doubles at each
    /// check up to 15 minutes.
    #[arg(long, env = "CFDI_EXTRACT_SAT_WS_POLL", default_value = "10s", value_parser = parse_duration)]
    pub sat_ws_poll: Duration,
    /// The SAT's CFDI status service (ConsultaCFDIService). Default: the SAT's own with
    /// `--sat portal`, the built-in simulation with `--sat sandbox`.
    #[arg(long, env = "CFDI_EXTRACT_SAT_STATUS_URL")]
    pub sat_status_url: Option<String>,
    /// The SAT's certificate repository, where the SAT's stamping certificates are
    /// fetched from on demand to verify stamps. Default: the SAT's own
    /// (`https://rdc.sat.gob.mx/rccf`) with `--sat portal`, the sandbox's with `--sat sandbox`.
    #[arg(long, env = "CFDI_EXTRACT_SAT_CERTIFICATES_URL")]
    pub sat_certificates_url: Option<String>,
    /// Certificate fetches a second at most, service-wide; a failed fetch is tried
    /// again after ten times that interval.
    #[arg(long, env = "CFDI_EXTRACT_SAT_CERTIFICATES_RATE", default_value_t = 1.0, value_parser = parse_rate)]
    pub sat_certificates_rate: f64,
    /// Status checks a second at most, service-wide (e.g. `0.5`); `0` turns checks off.
    #[arg(long, env = "CFDI_EXTRACT_SAT_STATUS_RATE", default_value_t = 2.0, value_parser = parse_rate)]
    pub sat_status_rate: f64,
    /// How often an invoice that can still be cancelled is checked again.
    #[arg(long, env = "CFDI_EXTRACT_SAT_STATUS_EVERY", default_value = "7d", value_parser = parse_duration)]
    pub sat_status_every: Duration,
    /// How often while a cancellation is in process or a PPD invoice has a balance.
    #[arg(long, env = "CFDI_EXTRACT_SAT_STATUS_EVERY_PENDING", default_value = "1d", value_parser = parse_duration)]
    pub sat_status_every_pending: Duration,
    /// How long the SAT may not find an invoice (and its stamp be old) before it is
    /// `not_registered`.
    #[arg(long, env = "CFDI_EXTRACT_SAT_STATUS_NOT_REGISTERED_AFTER", default_value = "72h", value_parser = parse_duration)]
    pub sat_status_not_registered_after: Duration,
    /// Where the SAT's full 69-B list is downloaded from on `--list-69b-every`. Default:
    /// the SAT's own (`Listado_Completo_69-B.csv`) with `--sat portal`, the sandbox's
    /// built-in list with `--sat sandbox`.
    #[arg(long = "list-69b-url", env = "CFDI_EXTRACT_LIST_69B_URL")]
    pub list_69b_url: Option<String>,
    /// How often the 69-B list is downloaded again (an unchanged file makes no new
    /// version); `0` turns the refresh off (`list-69b load` still works).
    #[arg(long = "list-69b-every", env = "CFDI_EXTRACT_LIST_69B_EVERY", default_value = "1d", value_parser = parse_duration)]
    pub list_69b_every: Duration,
    /// How often the scheduler looks for due schedules.
    #[arg(long, env = "CFDI_EXTRACT_SCHEDULE_TICK", default_value = "5s", value_parser = parse_duration)]
    pub schedule_tick: Duration,
    /// The shortest `every` a schedule may have. Lower it only for testing: the SAT
    /// throttles taxpayers that log in too often.
    #[arg(long, env = "CFDI_EXTRACT_SCHEDULE_MIN_INTERVAL", default_value = "1h", value_parser = parse_duration)]
    pub schedule_min_interval: Duration,
    /// For testing only: the schedules' clock starts at this instant (RFC 3339) and runs
    /// on from there, so a monthly slot can be reached; every other clock stays real.
    #[arg(long, env = "CFDI_EXTRACT_SCHEDULE_CLOCK", value_parser = parse_instant)]
    pub schedule_clock: Option<chrono::DateTime<chrono::Utc>>,
    /// Days events (the feed and webhook payloads) are kept; an event with a pending
    /// delivery is kept until that delivery ends. 0 keeps them only until delivered.
    #[arg(long, env = "CFDI_EXTRACT_EVENT_RETENTION_DAYS", default_value_t = 30,
          value_parser = clap::value_parser!(u32).range(0..=3650))]
    pub event_retention_days: u32,
    /// How long a claimed job stays an instance's without renewal: with several
    /// instances on one PostgreSQL database, a job of one that died is taken over
    /// after it. A live instance renews its leases every third of it.
    #[arg(long, env = "CFDI_EXTRACT_JOB_LEASE", default_value = "30s", value_parser = parse_duration)]
    pub job_lease: Duration,
    /// How long the seal verifier waits before it asks again for a SAT certificate that
    /// documents' stamps wait for and that could not be had (a certificate newly
    /// awaited is asked for within seconds); tests shorten it.
    #[arg(long, env = "CFDI_EXTRACT_SEAL_RECHECK_EVERY", default_value = "5m", value_parser = parse_duration)]
    pub seal_recheck_every: Duration,
    /// How often events past their retention are purged (tests shorten it).
    #[arg(long, env = "CFDI_EXTRACT_EVENT_PURGE_EVERY", default_value = "1h", value_parser = parse_duration)]
    pub event_purge_every: Duration,
    /// Timeout of one HTTP exchange with the SAT portal, redirects included.
    #[arg(long, env = "CFDI_EXTRACT_SAT_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub sat_timeout: Duration,
    /// Captcha solver: `PROGRAM ARGS...` (split on white space, no quoting). It reads the image on stdin and prints the answer as its last line.
    #[arg(
        long,
        env = "CFDI_EXTRACT_CAPTCHA_COMMAND",
        conflicts_with = "anticaptcha_key"
    )]
    pub captcha_command: Option<String>,
    /// Base URL of the anti-captcha.com API.
    #[arg(
        long,
        env = "CFDI_EXTRACT_ANTICAPTCHA_URL",
        default_value = "https://api.anti-captcha.com"
    )]
    pub anticaptcha_url: String,
    /// anti-captcha.com client key; solves captchas through that paid service.
    #[arg(long, env = "CFDI_EXTRACT_ANTICAPTCHA_KEY", hide_env_values = true)]
    pub anticaptcha_key: Option<Secret>,
}

#[derive(Debug, Subcommand)]
pub enum List69bCommand {
    /// Load the full list from a CSV file as the SAT publishes it
    /// (`Listado_Completo_69-B.csv`, Windows-1252 or UTF-8). A file with a broken line
    /// is refused, naming the line, and the current list is kept.
    Load { file: PathBuf },
    /// Print the current version: id, when loaded, its cut-off date, its taxpayers.
    Show,
}

#[derive(Debug, Subcommand)]
pub enum SatCertificatesCommand {
    /// Store certificates from `.cer` files (DER or PEM), for deployments that do not
    /// reach the SAT's repository. Each must be issued by the SAT (or by the sandbox's
    /// authority); one already stored is kept. Prints each file's number.
    Load {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
}

#[derive(Debug, Subcommand)]
pub enum OrgCommand {
    /// Create an organization and print its id.
    Create { name: String },
    /// List organizations.
    List,
}

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Create a user in an organization; the password is read from stdin.
    Create {
        /// Organization id or exact name.
        #[arg(long)]
        org: String,
        #[arg(long)]
        email: String,
        /// Read the password from standard input (the only way, so it stays out of shell history).
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// List users.
    List {
        /// Only this organization (id or exact name).
        #[arg(long)]
        org: Option<String>,
    },
    /// Change a user's password; read from stdin.
    SetPassword {
        #[arg(long)]
        email: String,
        #[arg(long, required = true)]
        password_stdin: bool,
    },
}

/// The delays before each webhook delivery attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetrySchedule(pub Vec<Duration>);

/// Parses `300ms`, `5s`, `5m`, `2h` (humantime syntax).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    humantime::parse_duration(s.trim()).map_err(|e| format!("invalid duration {s:?}: {e}"))
}

/// A rate: a finite number from 0 to 1000.
pub fn parse_instant(s: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    crate::time::parse(s).ok_or_else(|| format!("{s:?} is not an RFC 3339 time"))
}

pub fn parse_rate(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(r) if r.is_finite() && (0.0..=1000.0).contains(&r) => Ok(r),
        _ => Err(format!("invalid rate {s:?}: a number from 0 to 1000")),
    }
}

pub fn parse_schedule(s: &str) -> Result<RetrySchedule, String> {
    let steps = s
        .split(',')
        .map(parse_duration)
        .collect::<Result<Vec<_>, _>>()?;
    if steps.is_empty() {
        return Err("the schedule needs at least one step".into());
    }
    Ok(RetrySchedule(steps))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_show_in_debug_output() {
        let s: Secret = "k3y-value".parse().expect("infallible");
        assert_eq!(s.expose(), "k3y-value");
        assert!(!format!("{s:?}").contains("k3y"));
    }

    #[test]
    fn durations_accept_the_documented_units() {
        assert_eq!(parse_duration("300ms"), Ok(Duration::from_millis(300)));
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("5m"), Ok(Duration::from_secs(300)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7200)));
        assert!(parse_duration("five").is_err());
    }

    #[test]
    fn schedule_lists_every_step() {
        let s = parse_schedule("0s,5s,5m").expect("valid");
        assert_eq!(s.0.len(), 3);
        assert!(parse_schedule("0s,,5s").is_err());
    }
}
