//! `cfdi-extract serve`: the boot sequence as named steps, then graceful shutdown.

use crate::app::Context;
use crate::cli::Secret;
use crate::cli::ServeArgs;
use crate::config::{self, Config};
use crate::crypto::Cipher;
use crate::db::{self, Checkpoints, Db, Store, Upkeep};
use crate::jobs::{self, scheduler::Scheduler, Workers};
use crate::sandbox::status::SandboxStatus;
use crate::sandbox::Sandbox;
use crate::sat::certificates;
use crate::sat::ciec::{Authority, CaptchaConfig, CiecChannel, Portal, PortalConfig};
use crate::sat::efirma::endpoints::Endpoints;
use crate::sat::efirma::{EfirmaChannel, Service, Soap};
use crate::sat::list_69b::{
    self,
    refresh::{self, Origin},
};
use crate::sat::status::policy::Pace;
use crate::sat::status::{self, Checks, StatusService};
use crate::sat::Channels;
use crate::seal::Trust;
use anyhow::Context as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const DEMO_ORG: &str = "Demo";
const DEMO_EMAIL: &str = "demo@example.com";
const DEMO_PASSWORD: &str = "demo-password";

pub fn run(store: &Store, data_dir: &Path, args: ServeArgs) -> anyhow::Result<()> {
    let config = Config::new(data_dir, args);
    db::lease::set_length(config.job_lease);
    if matches!(store, Store::Postgres { .. }) && config.backup_every.is_some() {
        anyhow::bail!(
            "--backup-every copies the SQLite database; with --database-url, back up with pg_dump"
        );
    }
    // Held until we return: `restore` refuses to run under a live server.
    crate::data_dir::create_dir(&config.data_dir)?;
    let _lock = crate::data_dir::lock(&config.data_dir)?;
    db::lease::adopt(&config.data_dir)?;
    // Workers and the upkeep thread hold one connection each; the rest serve requests.
    let db_connections = ((config.workers + config.delivery_workers) as u32).saturating_add(8);
    // A new event's first delivery is due after the retry schedule's first step.
    let first_delivery = config.webhook_retry_schedule.0.first().copied();
    let db = Db::connect(store, db_connections, Checkpoints::Background)?
        .with_first_delivery(first_delivery.unwrap_or_default());
    let upkeep = Upkeep::start(&db)?;
    db.listen_for_work()?;
    let cipher = Cipher::load(
        &db.conn()?,
        config.encryption_key.as_ref().map(Secret::expose),
        &config::key_path(&config.data_dir),
    )?;
    let sealed = db.tx(|tx| db::webhooks::seal_plain_tokens(tx, |t| cipher.seal(t)))?;
    if sealed > 0 {
        log::info!("sealed {sealed} webhook token(s) stored in plain text by an older version");
    }
    if config.dev {
        ensure_demo_user(&db)?;
    }
    let ctx = Arc::new(Context {
        channels: channels(&config, &db)?,
        sat_certificates: sat_certificates(&config, &db),
        agent: jobs::delivery::agent(config.webhook_timeout, config.webhook_block_private),
        db,
        cipher,
        stopping: AtomicBool::new(false),
        metrics: Arc::default(),
        sat_status: sat_status(&config),
        config: config.clone(),
    });
    let workers = Workers::start(ctx.clone(), config.workers, config.delivery_workers)?;
    let backups = backup_schedule(&config, &ctx.cipher)
        .map(|s| crate::ops::scheduled_backups::start(&config.data_dir, s))
        .transpose()?;
    let scheduler = Scheduler::start(ctx.clone())?;
    let backfill = crate::ops::relations_backfill::start(ctx.db.clone())?;
    let list_69b = list_69b_refresh(&config)
        .map(|origin| refresh::start(ctx.db.clone(), origin, config.list_69b_every))
        .transpose()?;
    let seal_verifier = crate::ops::seals::start(
        ctx.db.clone(),
        crate::ops::seals::Seals::new(
            ctx.sat_certificates.trust().clone(),
            ctx.sat_certificates.clone(),
            config.seal_recheck_every,
        ),
    )?;
    let retention = crate::events::purge::start(
        ctx.db.clone(),
        config.event_retention,
        config.event_purge_every,
    )?;
    let served = runtime(db_connections)?.block_on(launch(ctx.clone()));
    // Rocket has stopped accepting requests; queue no more runs, and let running jobs
    // reach a resumable point.
    scheduler.stop();
    retention.stop();
    backfill.stop();
    seal_verifier.stop();
    if let Some(list_69b) = list_69b {
        list_69b.stop();
    }
    workers.stop();
    if let Some(backups) = backups {
        backups.stop();
    }
    upkeep.stop();
    served.context("the HTTP server failed")
}

/// The API, and beside it the metrics listener with `--metrics-address`; when the API
/// stops (a signal, or failing to start) the metrics listener stops with it.
async fn launch(ctx: Arc<Context>) -> anyhow::Result<()> {
    let metrics = match ctx.config.metrics_address {
        Some(address) => Some(
            crate::server::metrics::build(
                address,
                ctx.db.clone(),
                ctx.metrics.clone(),
                ctx.config.data_dir.clone(),
            )
            .ignite()
            .await?,
        ),
        None => None,
    };
    let stop_metrics = metrics.as_ref().map(|m| m.shutdown());
    let metrics = metrics.map(|m| {
        tokio::spawn(async move {
            if let Err(e) = m.launch().await {
                log::error!("the metrics listener failed: {e}");
            }
        })
    });
    let served = match crate::server::build(ctx) {
        Ok(rocket) => rocket.launch().await.map_err(anyhow::Error::from),
        Err(e) => Err(e),
    };
    if let Some(stop) = stop_metrics {
        stop.notify();
    }
    if let Some(task) = metrics {
        let _ = task.await;
    }
    served.map(|_| ())
}

/// `--backup-every`, `--backup-dir`, `--backup-keep`, `--backup-with-key`.
fn backup_schedule(
    config: &Config,
    cipher: &Cipher,
) -> Option<crate::ops::scheduled_backups::Schedule> {
    Some(crate::ops::scheduled_backups::Schedule {
        every: config.backup_every?,
        dir: config.backup_dir.clone()?,
        keep: config.backup_keep,
        key: config
            .backup_with_key
            .then(|| Secret::from(cipher.key_text())),
    })
}

/// The HTTP server's runtime. Blocking work (SQLite, argon2) runs on tokio's blocking
/// pool, bounded to two threads per core (and never more than the database pool): a
/// burst of requests queues inside tokio instead of parking threads, each with its own
/// stack and allocator heap, on a connection. On 2 cores, 4 threads served the 64-
/// connection listing at p99 23 ms where 12 threads took 33-48 ms (BENCHMARKS.md):
/// SQLite work is CPU-bound, so more threads than cores only add context switches.
fn runtime(db_connections: u32) -> anyhow::Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .thread_name("http")
        .max_blocking_threads(blocking_threads(db_connections))
        .enable_all()
        .build()
        .context("cannot start the async runtime")
}

fn blocking_threads(db_connections: u32) -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    (2 * cores).min(db_connections as usize).max(1)
}

/// `--sat`: the sandbox's simulation of both channels, or the real SAT: its portal for
/// the CIEC and its web service for the e.firma. `--sat-ws-url` points the e.firma
/// channel at another web service (a fake) either way; the retentions' hosts are
/// `--sat-ws-retentions-url`, the SAT's own by default. The registry: the e.firma is
/// preferred (no captcha, far larger requests), the CIEC is the contract's channel.
fn channels(config: &Config, db: &Db) -> anyhow::Result<Channels> {
    let (portal, sandbox_service): (Arc<dyn Authority>, _) = if config.sat == "portal" {
        let portal = PortalConfig::from_settings(
            config.sat_login_url.as_deref(),
            config.sat_portal_url.as_deref(),
            config.sat_timeout,
            config.captcha_command.as_deref(),
            &config.anticaptcha_url,
            config.anticaptcha_key.as_ref().map(Secret::expose),
        )
        .map_err(anyhow::Error::msg)?;
        if matches!(portal.captcha, CaptchaConfig::None) {
            log::warn!("--sat portal without a captcha resolver: validations stay pending and extractions fail sat_unavailable until --captcha-command or --anticaptcha-key is set");
        }
        (Arc::new(Portal::new(portal)), None)
    } else {
        let sandbox = Sandbox::open(&config.data_dir, config.sim_latency)?;
        (sandbox.portal, Some(sandbox.web_service))
    };
    let retentions = match &config.sat_ws_retentions_url {
        Some(base) => {
            let download = config
                .sat_ws_retentions_download_url
                .as_deref()
                .unwrap_or(base);
            Endpoints::new(base, download)
        }
        None => Endpoints::sat_retentions(),
    };
    let soap = |endpoints| -> Arc<dyn Service> {
        Arc::new(Soap::new(endpoints, retentions.clone(), config.sat_timeout))
    };
    let web_service = match (&config.sat_ws_url, sandbox_service) {
        (Some(base), _) => {
            let download = config.sat_ws_download_url.as_deref().unwrap_or(base);
            soap(Endpoints::new(base, download))
        }
        (None, Some(sandbox)) => sandbox,
        (None, None) => soap(Endpoints::sat()),
    };
    Ok(Channels::new(vec![
        Arc::new(EfirmaChannel::new(
            web_service,
            db.clone(),
            config.sat_ws_poll,
        )),
        Arc::new(CiecChannel::new(portal)),
    ]))
}

/// The SAT status checker: the sandbox's simulation, or the SAT's service with
/// `--sat portal`; `--sat-status-url` points it at another one (a fake) either way.
/// None with `--sat-status-rate 0`.
/// The SAT's stamping certificates: fetched from `--sat-certificates-url`, else the
/// SAT's repository with `--sat portal` and the sandbox's otherwise; the sandbox's
/// authority is trusted only with `--sat sandbox`.
fn sat_certificates(config: &Config, db: &Db) -> Arc<certificates::Store> {
    let sandbox = config.sat != "portal";
    let http = |url: &str| -> Arc<dyn certificates::Repository> {
        Arc::new(certificates::repository::Http::new(url, config.sat_timeout))
    };
    let repository = match (&config.sat_certificates_url, sandbox) {
        (Some(url), _) => http(url),
        (None, false) => http(certificates::SAT_REPOSITORY_URL),
        (None, true) => Arc::new(crate::sandbox::rccf::SandboxRepository),
    };
    let trust = if sandbox {
        Trust::sat().and(crate::sandbox::docs::authority_certificate().clone())
    } else {
        Trust::sat()
    };
    Arc::new(certificates::Store::new(
        db.clone(),
        repository,
        trust,
        config.sat_certificates_rate,
    ))
}

fn sat_status(config: &Config) -> Option<Checks> {
    if config.sat_status_rate <= 0.0 {
        log::info!("SAT status checks are off (--sat-status-rate 0)");
        return None;
    }
    let client = |url: &str| -> Arc<dyn StatusService> {
        Arc::new(status::Client::new(url, config.sat_timeout))
    };
    let service = match (&config.sat_status_url, config.sat.as_str()) {
        (Some(url), _) => client(url),
        (None, "portal") => client(status::SAT_STATUS_URL),
        (None, _) => Arc::new(SandboxStatus::new(config.sim_latency)),
    };
    Some(Checks {
        service,
        rate: config.sat_status_rate,
        pace: Pace {
            every: config.sat_status_every,
            every_pending: config.sat_status_every_pending,
            not_registered_after: config.sat_status_not_registered_after,
        },
    })
}

/// Where the 69-B list's refresh takes it: `--list-69b-url`, else the SAT's with
/// `--sat portal` and the sandbox's built-in list otherwise. None with
/// `--list-69b-every 0`.
fn list_69b_refresh(config: &Config) -> Option<Origin> {
    if config.list_69b_every.is_zero() {
        log::info!("the 69-B list's refresh is off (--list-69b-every 0)");
        return None;
    }
    Some(match (&config.list_69b_url, config.sat.as_str()) {
        (Some(url), _) => Origin::Url(url.clone()),
        (None, "portal") => Origin::Url(list_69b::SAT_LIST_URL.into()),
        (None, _) => Origin::BuiltIn {
            name: crate::sandbox::list_69b::SOURCE,
            bytes: crate::sandbox::list_69b::LIST,
        },
    })
}

/// `--dev`: a demo organization and user when the service has no user yet.
fn ensure_demo_user(db: &Db) -> anyhow::Result<()> {
    if db::users::count(&db.conn()?)? > 0 {
        return Ok(());
    }
    let hash = crate::password::hash(DEMO_PASSWORD)?;
    db.tx(|tx| {
        let org = db::orgs::insert(tx, DEMO_ORG)?;
        db::users::insert(tx, &org.id, DEMO_EMAIL, &hash)
    })?;
    println!("dev mode: created organization {DEMO_ORG:?} with user {DEMO_EMAIL} / password {DEMO_PASSWORD}");
    Ok(())
}
