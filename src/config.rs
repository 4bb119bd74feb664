//! The validated configuration of `serve`, built once and passed around (never global).

use crate::cli::{RetrySchedule, Secret, ServeArgs};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct Config {
    pub data_dir: PathBuf,
    pub address: std::net::IpAddr,
    pub port: u16,
    pub trusted_proxies: Vec<std::net::IpAddr>,
    pub workers: usize,
    pub delivery_workers: usize,
    pub dev: bool,
    pub sim_latency: Duration,
    pub webhook_timeout: Duration,
    pub webhook_retry_schedule: RetrySchedule,
    pub webhook_block_private: bool,
    pub encryption_key: Option<Secret>,
    pub sat: String,
    pub sat_login_url: Option<String>,
    pub sat_portal_url: Option<String>,
    pub sat_timeout: Duration,
    pub sat_ws_url: Option<String>,
    pub sat_ws_download_url: Option<String>,
    pub sat_ws_retentions_url: Option<String>,
    pub sat_ws_retentions_download_url: Option<String>,
    pub sat_ws_poll: Duration,
    pub sat_status_url: Option<String>,
    pub sat_certificates_url: Option<String>,
    pub sat_certificates_rate: f64,
    /// Status checks a second; 0: off.
    pub sat_status_rate: f64,
    pub sat_status_every: Duration,
    pub sat_status_every_pending: Duration,
    pub sat_status_not_registered_after: Duration,
    pub list_69b_url: Option<String>,
    pub list_69b_every: Duration,
    pub schedule_tick: Duration,
    pub schedule_min_interval: Duration,
    /// The schedules' clock (`--schedule-clock`; real time unless a test moves it).
    pub schedule_clock: crate::time::Clock,
    /// How long events are kept (`--event-retention-days`).
    pub event_retention: Duration,
    pub event_purge_every: Duration,
    pub seal_recheck_every: Duration,
    pub job_lease: Duration,
    pub captcha_command: Option<String>,
    pub anticaptcha_url: String,
    pub anticaptcha_key: Option<Secret>,
    pub metrics_address: Option<std::net::SocketAddr>,
    pub backup_every: Option<Duration>,
    pub backup_dir: Option<PathBuf>,
    pub backup_keep: usize,
    pub backup_with_key: bool,
}

impl Config {
    pub fn new(data_dir: &Path, args: ServeArgs) -> Self {
        Self {
            data_dir: data_dir.to_path_buf(),
            address: args.address,
            port: args.port,
            trusted_proxies: args.trusted_proxy,
            workers: usize::from(args.workers),
            delivery_workers: usize::from(args.delivery_workers),
            dev: args.dev,
            sim_latency: args.sim_latency,
            webhook_timeout: args.webhook_timeout,
            webhook_retry_schedule: args.webhook_retry_schedule,
            webhook_block_private: args.webhook_block_private,
            encryption_key: args.encryption_key,
            sat: args.sat,
            sat_login_url: args.sat_login_url,
            sat_portal_url: args.sat_portal_url,
            sat_timeout: args.sat_timeout,
            sat_ws_url: args.sat_ws_url,
            sat_ws_download_url: args.sat_ws_download_url,
            sat_ws_retentions_url: args.sat_ws_retentions_url,
            sat_ws_retentions_download_url: args.sat_ws_retentions_download_url,
            sat_ws_poll: args.sat_ws_poll,
            sat_status_url: args.sat_status_url,
            sat_certificates_url: args.sat_certificates_url,
            sat_certificates_rate: args.sat_certificates_rate,
            sat_status_rate: args.sat_status_rate,
            sat_status_every: args.sat_status_every,
            sat_status_every_pending: args.sat_status_every_pending,
            sat_status_not_registered_after: args.sat_status_not_registered_after,
            list_69b_url: args.list_69b_url,
            list_69b_every: args.list_69b_every,
            schedule_tick: args.schedule_tick,
            schedule_min_interval: args.schedule_min_interval,
            schedule_clock: crate::time::Clock::starting_at(args.schedule_clock),
            event_retention: Duration::from_secs(u64::from(args.event_retention_days) * 86_400),
            event_purge_every: args.event_purge_every,
            seal_recheck_every: args.seal_recheck_every,
            job_lease: args.job_lease,
            captcha_command: args.captcha_command,
            anticaptcha_url: args.anticaptcha_url,
            anticaptcha_key: args.anticaptcha_key,
            metrics_address: args.metrics_address,
            backup_every: args.backup_every,
            backup_dir: args.backup_dir,
            backup_keep: args.backup_keep as usize,
            backup_with_key: args.backup_with_key,
        }
    }
}

pub fn db_path(data_dir: &Path) -> PathBuf {
    data_dir.join("cfdi-extract.db")
}

pub fn key_path(data_dir: &Path) -> PathBuf {
    data_dir.join("secret.key")
}
