//! Route tables. Handlers take the `AuthUser` guard first, so authentication is always
//! checked before anything else (401), then the body and query (413/422), then scope
//! (404): Rocket evaluates request guards before the data guard, and handlers parse
//! path ids only after validating their input. An unknown `/v1` path is answered by the
//! 404 catcher, which authenticates first (see `catchers`).

pub mod entities;
pub mod extractions;
pub mod invoices;
pub mod service;
pub mod webhooks;

use crate::jobs::Context;
use rocket::{Route, State};
use std::sync::Arc;

/// The state handlers share.
pub type Ctx = State<Arc<Context>>;

pub fn v1() -> Vec<Route> {
    let mut all = entities::routes();
    all.extend(extractions::routes());
    all.extend(invoices::routes());
    all.extend(webhooks::routes());
    all
}

/// Turns a list of rows into `(sort key, row)` pairs keyed on their id.
pub fn keyed_by_id<T>(rows: Vec<T>, id: impl Fn(&T) -> &str) -> Vec<(Vec<String>, T)> {
    rows.into_iter()
        .map(|r| (vec![id(&r).to_string()], r))
        .collect()
}
