//! Routes outside `/v1`: health.

use crate::db::{self, Db};
use crate::http::error::{ApiError, ApiResult};
use rocket::serde::json::Json;
use rocket::{get, routes, Route, State};
use serde_json::{json, Value};

pub fn routes() -> Vec<Route> {
    routes![get_health]
}

/// 200 when the database answers a query, 503 otherwise.
#[get("/up")]
async fn get_health(db: &State<Db>) -> ApiResult<Json<Value>> {
    let ok = db.read(db::health::answers).await;
    match ok {
        Ok(()) => Ok(Json(json!({ "status": "ok" }))),
        Err(e) => {
            log::error!("health check failed: {e:#}");
            Err(ApiError::Unavailable)
        }
    }
}
