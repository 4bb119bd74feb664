//! Route tables. Handlers take the `AuthUser` guard first, so authentication is always
//! checked before anything else (401), then the body and query (413/422), then scope
//! (404): Rocket evaluates request guards before the data guard, and handlers parse
//! path ids only after validating their input.

pub mod entities;
pub mod extractions;
pub mod invoices;
pub mod service;
pub mod webhooks;

use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::jobs::Context;
use rocket::{delete, get, patch, post, put, routes, Route, State};
use std::path::PathBuf;
use std::sync::Arc;

/// The state handlers share.
pub type Ctx = State<Arc<Context>>;

pub fn v1() -> Vec<Route> {
    let mut all = routes![
        fallback_get,
        fallback_post,
        fallback_put,
        fallback_patch,
        fallback_delete
    ];
    all.extend(entities::routes());
    all.extend(extractions::routes());
    all.extend(invoices::routes());
    all.extend(webhooks::routes());
    all
}

// Unknown `/v1` paths: 401 without valid credentials, 404 with them.
#[get("/v1/<_path..>", rank = 100)]
fn fallback_get(_user: AuthUser, _path: PathBuf) -> ApiError {
    ApiError::NotFound
}
#[post("/v1/<_path..>", rank = 100)]
fn fallback_post(_user: AuthUser, _path: PathBuf) -> ApiError {
    ApiError::NotFound
}
#[put("/v1/<_path..>", rank = 100)]
fn fallback_put(_user: AuthUser, _path: PathBuf) -> ApiError {
    ApiError::NotFound
}
#[patch("/v1/<_path..>", rank = 100)]
fn fallback_patch(_user: AuthUser, _path: PathBuf) -> ApiError {
    ApiError::NotFound
}
#[delete("/v1/<_path..>", rank = 100)]
fn fallback_delete(_user: AuthUser, _path: PathBuf) -> ApiError {
    ApiError::NotFound
}

/// Turns a list of rows into `(sort key, row)` pairs keyed on their id.
pub fn keyed_by_id<T>(rows: Vec<T>, id: impl Fn(&T) -> &str) -> Vec<(Vec<String>, T)> {
    rows.into_iter()
        .map(|r| (vec![id(&r).to_string()], r))
        .collect()
}
