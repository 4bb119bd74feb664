//! `cfdi-extract serve`: the boot sequence as named steps, then graceful shutdown.

use crate::cli::ServeArgs;
use crate::config::{self, Config};
use crate::crypto::Cipher;
use crate::db::{self, Db};
use crate::jobs::{self, Context, Waker, Workers};
use crate::sat::sandbox::Sandbox;
use anyhow::Context as _;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

const DEMO_ORG: &str = "Demo";
const DEMO_EMAIL: &str = "demo@example.com";
const DEMO_PASSWORD: &str = "demo-password";

pub fn run(data_dir: &Path, args: ServeArgs) -> anyhow::Result<()> {
    let config = Config::new(data_dir, args);
    // Workers hold one connection each; the rest serve requests.
    let db = Db::open(&config.data_dir, (config.workers as u32).saturating_add(16))?;
    let cipher = Cipher::load(
        config.encryption_key.as_deref(),
        &config::key_path(&config.data_dir),
    )?;
    if config.dev {
        ensure_demo_user(&db)?;
    }
    let ctx = Arc::new(Context {
        provider: Arc::new(Sandbox::new(db.clone(), config.sim_latency)),
        agent: jobs::delivery::agent(config.webhook_timeout),
        db,
        cipher,
        waker: Arc::new(Waker::default()),
        stopping: AtomicBool::new(false),
        config: config.clone(),
    });
    let workers = Workers::start(ctx.clone(), config.workers)?;
    let served = rocket::execute(crate::server::build(ctx).launch());
    // Rocket has stopped accepting requests; let running jobs reach a resumable point.
    workers.stop();
    served.map(|_| ()).context("the HTTP server failed")
}

/// `--dev`: a demo organization and user when the service has no user yet.
fn ensure_demo_user(db: &Db) -> anyhow::Result<()> {
    if db::users::count(&*db.conn()?)? > 0 {
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
