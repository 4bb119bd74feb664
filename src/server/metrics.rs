//! `--metrics-address`: `GET /metrics` on a listener of its own, unauthenticated as
//! Prometheus scrapes expect; bind it to loopback or a private interface.

use crate::db::{self, Db};
use crate::http::error::ApiResult;
use crate::metrics::{DbFigures, Metrics};
use rocket::config::LogLevel;
use rocket::fairing::AdHoc;
use rocket::http::ContentType;
use rocket::{get, routes, Build, Rocket, State};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

struct DataDir(PathBuf);

pub fn build(
    address: SocketAddr,
    db: Db,
    metrics: Arc<Metrics>,
    data_dir: PathBuf,
) -> Rocket<Build> {
    let figment = rocket::Config::figment()
        .merge(("address", address.ip()))
        .merge(("port", address.port()))
        .merge(("log_level", LogLevel::Off))
        .merge(("cli_colors", false))
        .merge(("ident", "cfdi-extract"))
        .merge(("ip_header", false));
    rocket::custom(figment)
        .manage(db)
        .manage(metrics)
        .manage(DataDir(data_dir))
        .mount("/", routes![scrape])
        .attach(AdHoc::on_liftoff("announce metrics", |rocket| {
            Box::pin(async move {
                let c = rocket.config();
                println!("metrics on http://{}:{}/metrics", c.address, c.port);
                use std::io::Write;
                let _ = std::io::stdout().flush();
            })
        }))
}

#[get("/metrics")]
async fn scrape(
    db: &State<Db>,
    metrics: &State<Arc<Metrics>>,
    dir: &State<DataDir>,
) -> ApiResult<(ContentType, String)> {
    let figures = db
        .read(|conn| {
            Ok(DbFigures {
                jobs: db::stats::jobs(conn)?,
                extractions: db::stats::extractions(conn)?,
                database_bytes: db::stats::database_bytes(conn)?,
            })
        })
        .await?;
    let metrics = metrics.inner().clone();
    let dir = dir.0.clone();
    // File sizes and /proc reads are blocking I/O too.
    let text = tokio::task::spawn_blocking(move || metrics.render(&figures, &dir))
        .await
        .map_err(anyhow::Error::from)??;
    let openmetrics = ContentType::new("application", "openmetrics-text")
        .with_params([("version", "1.0.0"), ("charset", "utf-8")]);
    Ok((openmetrics, text))
}
