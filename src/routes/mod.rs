//! Route tables. Handlers take the `AuthUser` guard first, so authentication is always
//! checked before anything else (401), then the body and query (413/422), then scope
//! (404): Rocket evaluates request guards before the data guard, and handlers parse
//! path ids only after validating their input. An unknown `/v1` path is answered by the
//! 404 catcher, which authenticates first (see `catchers`).

pub mod catalogs;
pub mod diot;
pub mod documents;
pub mod efirmas;
pub mod entities;
pub mod events;
pub mod exports;
pub mod extractions;
pub mod invoices;
pub mod iva;
pub mod retentions;
pub mod schedules;
pub mod seals;
pub mod service;
pub mod summary;
pub mod suppliers;
pub mod webhooks;

use rocket::Route;

pub fn v1() -> Vec<Route> {
    let mut all = entities::routes();
    all.extend(catalogs::routes());
    all.extend(diot::routes());
    all.extend(efirmas::routes());
    all.extend(events::routes());
    all.extend(extractions::routes());
    all.extend(invoices::routes());
    all.extend(iva::routes());
    all.extend(retentions::routes());
    all.extend(exports::routes());
    all.extend(schedules::routes());
    all.extend(seals::routes());
    all.extend(summary::routes());
    all.extend(suppliers::routes());
    all.extend(webhooks::routes());
    all
}
