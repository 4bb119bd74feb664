//! Routes outside `/v1`: health.

use crate::db::{self, Db};
use rocket::serde::json::Json;
use rocket::{get, routes, Route, State};
use serde_json::{json, Value};

pub fn routes() -> Vec<Route> {
    routes![get_health]
}

/// 200 when the database answers a query, 503 otherwise; while the database server is
/// out of reach the 503 says so (`"database": "unreachable"`), at once.
#[get("/up")]
async fn get_health(
    db: &State<Db>,
) -> Result<Json<Value>, rocket::response::status::Custom<Json<Value>>> {
    let ok = db.read(db::health::answers).await;
    match ok {
        Ok(()) => Ok(Json(json!({ "status": "ok" }))),
        Err(e) => {
            let mut body = json!({ "status": "unavailable" });
            if db::is_unreachable(&e) || db.is_unreachable() {
                log::warn!("health check: the database is unreachable: {e:#}");
                body["database"] = json!("unreachable");
            } else {
                log::error!("health check failed: {e:#}");
            }
            Err(rocket::response::status::Custom(
                rocket::http::Status::ServiceUnavailable,
                Json(body),
            ))
        }
    }
}
