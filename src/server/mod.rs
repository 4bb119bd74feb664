//! Builds the Rocket instance: configuration, managed state, routes, catchers, and the
//! fairing that prints the real listening address.

pub mod metrics;

use crate::app::Context;
use crate::auth::Authenticator;
use rocket::config::{LogLevel, Shutdown};
use rocket::data::{Limits, ToByteUnit};
use rocket::fairing::AdHoc;
use rocket::{Build, Rocket};
use std::sync::Arc;

pub fn build(ctx: Arc<Context>) -> anyhow::Result<Rocket<Build>> {
    let config = &ctx.config;
    let figment = rocket::Config::figment()
        .merge(("address", config.address))
        .merge(("port", config.port))
        .merge(("log_level", LogLevel::Off))
        .merge(("cli_colors", false))
        .merge(("ident", "cfdi-extract"))
        // Rocket believes `X-Real-IP` by default; any client can send it. The client
        // address is decided in `auth` from `--trusted-proxy` instead.
        .merge(("ip_header", false))
        .merge(("limits", Limits::default().limit("bytes", 2.mebibytes())))
        .merge((
            "shutdown",
            Shutdown {
                grace: 5,
                mercy: 5,
                ..Shutdown::default()
            },
        ));
    // Exports, summaries, rendered PDFs and e.firma checks: a pool of their own.
    let heavy = crate::http::heavy::Heavy::for_this_host()?;
    Ok(rocket::custom(figment)
        .manage(ctx.db.clone())
        .manage(heavy)
        .manage(authenticator(config, &ctx.db))
        .manage(ctx.clone())
        .mount("/", crate::routes::service::routes())
        .mount("/", crate::routes::v1())
        .mount("/", crate::docs::routes())
        .mount("/", crate::console::routes())
        .register("/", crate::catchers::all())
        .attach(crate::http::request_log::RequestLog(ctx.metrics.clone()))
        .attach(AdHoc::on_liftoff("announce", |rocket| {
            Box::pin(async move {
                let c = rocket.config();
                // Printed once the socket is bound, so `--port 0` shows the real port.
                println!("listening on http://{}:{}", c.address, c.port);
                use std::io::Write;
                let _ = std::io::stdout().flush();
            })
        })))
}

/// Logins: against the data directory's users' stamp, or, with several instances on
/// PostgreSQL, the database's.
fn authenticator(config: &crate::config::Config, db: &crate::db::Db) -> Authenticator {
    let auth = Authenticator::new(config.trusted_proxies.clone(), Some(&config.data_dir));
    match db.engine() {
        crate::db::Engine::Sqlite => auth,
        crate::db::Engine::Postgres => auth.shared(),
    }
}
