//! `/console`: the accountants' browser console, static files under `static/console`
//! embedded like the docs (same lookup, content types, caching and security headers).
//! It has no endpoint of its own: its scripts call the public `/v1` API.

use crate::docs::{find, Asset};
use crate::http::error::ApiError;
use rocket::http::uri::error::PathError;
use rocket::{get, routes, Route};
use std::path::PathBuf;

pub fn routes() -> Vec<Route> {
    routes![console_index, console_file]
}

#[get("/console")]
fn console_index() -> Result<Asset, ApiError> {
    find("console", "").map(Asset).ok_or(ApiError::NotFound)
}

/// Segments such as `..` are refused by Rocket before they reach us: a 404 like any
/// other missing file.
#[get("/console/<path..>")]
fn console_file(path: Result<PathBuf, PathError>) -> Result<Asset, ApiError> {
    let path = path.map_err(|_| ApiError::NotFound)?;
    let rel = path.to_str().ok_or(ApiError::NotFound)?;
    find("console", rel).map(Asset).ok_or(ApiError::NotFound)
}
