//! Route tables. Handlers take the `AuthUser` guard first, so authentication is always
//! checked before anything else (401), then the body and query (413/422), then scope
//! (404): Rocket evaluates request guards before the data guard, and handlers parse
//! path ids only after validating their input. An unknown `/v1` path is answered by the
//! 404 catcher, which authenticates first (see `catchers`).

pub mod efirmas;
pub mod entities;
pub mod events;
pub mod exports;
pub mod extractions;
pub mod invoices;
pub mod schedules;
pub mod service;
pub mod summary;
pub mod webhooks;

use crate::app::Context;
use crate::db::Conn;
use crate::error::ApiResult;
use crate::http::pagination::{Envelope, Page};
use rocket::serde::json::Json;
use rocket::{Route, State};
use serde_json::Value;
use std::sync::Arc;

/// The state handlers share.
pub type Ctx = State<Arc<Context>>;

pub fn v1() -> Vec<Route> {
    let mut all = entities::routes();
    all.extend(efirmas::routes());
    all.extend(events::routes());
    all.extend(extractions::routes());
    all.extend(invoices::routes());
    all.extend(exports::routes());
    all.extend(schedules::routes());
    all.extend(summary::routes());
    all.extend(webhooks::routes());
    all
}

/// Turns a list of rows into `(sort key, row)` pairs keyed on their id.
pub fn keyed_by_id<T>(rows: Vec<T>, id: fn(&T) -> &str) -> Vec<(Vec<String>, T)> {
    rows.into_iter()
        .map(|r| (vec![id(&r).to_string()], r))
        .collect()
}

/// A list keyed on UUIDv7 ids, newest first: `fetch(conn, after_id, limit)` reads up to
/// `limit` rows older than the cursor's id; paging and the envelope are shared.
pub async fn list_by_id<T: Send + 'static>(
    ctx: &Context,
    page: Page,
    fetch: impl FnOnce(&Conn, Option<&str>, i64) -> anyhow::Result<Vec<T>> + Send + 'static,
    id: fn(&T) -> &str,
    view: fn(T) -> Value,
) -> ApiResult<Json<Envelope<Value>>> {
    let (after, limit) = (page.after.as_ref().map(|k| k[0].clone()), page.fetch());
    let rows = ctx
        .db
        .read(move |c| fetch(c, after.as_deref(), limit))
        .await?;
    Ok(Json(page.envelope(keyed_by_id(rows, id), view)))
}
