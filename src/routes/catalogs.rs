//! `/v1/catalogs`: the SAT's catalogs the service embeds (`crate::catalogs`), so a
//! client (the console) shows each code with its description without a copy of its
//! own: every catalog's name, and a catalog's entries (all of them, or the codes asked
//! for).

use rocket::serde::json::Json;
use rocket::{get, routes, Route};
use serde_json::{json, Value};

use crate::auth::AuthUser;
use crate::catalogs::{Catalog, Edition, Entry};
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::query::Query;

pub fn routes() -> Vec<Route> {
    routes![list_catalogs, get_catalog]
}

/// Codes asked for at once, at most.
const MAX_CODES: usize = 500;

/// A catalog too large to answer whole (c_ClaveProdServ, 52,514 entries): its codes
/// are asked for by name.
const WHOLE_AT_MOST: usize = 10_000;

/// Which table a lookup reads: `4.0` (the default) or `3.3` for the CFDI's catalogs
/// that differ by version; `retenciones` for the Retenciones' own c_Pais and
/// c_Periodicidad. Other catalogs have one table, whatever it says.
fn edition(query: &Query, errors: &mut FieldErrors) -> (Edition, bool) {
    match query
        .one_of("edition", &["4.0", "3.3", "retenciones"], errors)
        .as_deref()
    {
        Some("3.3") => (Edition::Cfdi33, false),
        Some("retenciones") => (Edition::Cfdi40, true),
        _ => (Edition::Cfdi40, false),
    }
}

#[get("/v1/catalogs")]
async fn list_catalogs(_user: AuthUser) -> Json<Value> {
    let data: Vec<Value> = Catalog::ALL
        .iter()
        .map(|c| json!({"catalog": c.sat_name(), "retenciones": c.is_retenciones()}))
        .collect();
    Json(json!({ "data": data, "next_cursor": null }))
}

/// `GET /v1/catalogs/{name}?codes=01,03`: the entries of a catalog, the ones `codes`
/// names (in their order; a code the catalog does not know is left out) or all of it.
#[get("/v1/catalogs/<name>")]
async fn get_catalog(_user: AuthUser, name: &str, query: Query) -> ApiResult<Json<Value>> {
    let mut errors = FieldErrors::new();
    let (edition, retenciones) = edition(&query, &mut errors);
    let codes: Option<Vec<&str>> = query.get("codes").map(|c| {
        c.split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .collect()
    });
    if codes.as_ref().is_some_and(|c| c.len() > MAX_CODES) {
        errors.add("codes", &format!("must name at most {MAX_CODES} codes"));
    }
    errors.into_result()?;
    let catalog = Catalog::named(name, retenciones).ok_or(ApiError::NotFound)?;
    let entries: Vec<&Entry> = match &codes {
        Some(codes) => codes
            .iter()
            .filter_map(|c| catalog.entry(c, edition))
            .collect(),
        None => {
            let all = catalog.entries(edition);
            if all.len() > WHOLE_AT_MOST {
                return Err(ApiError::validation(
                    "codes",
                    "is required for this catalog (too large to answer whole): name the codes to describe, e.g. codes=01010101,84111506",
                ));
            }
            all.iter().collect()
        }
    };
    let data: Vec<Value> = entries
        .into_iter()
        .map(|e| {
            json!({
                "code": e.code,
                "description": e.description,
                "label": catalog.label(e.code, edition),
                "valid_from": e.valid_from.map(|d| d.to_string()),
                "valid_to": e.valid_to.map(|d| d.to_string()),
            })
        })
        .collect();
    Ok(Json(json!({ "catalog": catalog.sat_name(), "data": data })))
}
