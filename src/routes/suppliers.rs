//! `/v1/entities/{id}/suppliers`: a taxpayer's suppliers' DIOT settings
//! (`domain::supplier`), what a CFDI cannot say about the operations with each, kept
//! per supplier RFC and read by every month's DIOT. A supplier without settings takes
//! the documented defaults; `GET /v1/diot/codes` lists the codes with their
//! descriptions.

use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, get, put, routes, Route};
use serde_json::Value;

use crate::auth::AuthUser;
use crate::db;
use crate::domain::entity::{is_rfc, normalize_tax_id};
use crate::domain::supplier::{self, Supplier};
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::json_body::{BodyError, JsonBody};
use crate::http::pagination::{list_by_id, Envelope, Page};
use crate::http::{ids, query::Query, Ctx};

pub fn routes() -> Vec<Route> {
    routes![
        list_suppliers,
        get_supplier,
        put_supplier,
        delete_supplier,
        diot_codes
    ]
}

/// The path's RFC, upper case; a 422 on `tax_id` when it is not one.
fn tax_id(rfc: &str) -> Result<String, ApiError> {
    let tax_id = normalize_tax_id(rfc);
    if is_rfc(&tax_id) {
        Ok(tax_id)
    } else {
        Err(ApiError::validation(
            "tax_id",
            "must be an RFC: 3 or 4 letters, 6 digits and a 3-character homoclave (XEXX010101000 for a foreign supplier)",
        ))
    }
}

#[get("/v1/entities/<id>/suppliers")]
async fn list_suppliers(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let mut errors = FieldErrors::new();
    let page = Page::parse(query.get("limit"), query.get("cursor"), 1, &mut errors);
    errors.into_result()?;
    let id = ids::parse(id)?;
    let (org, entity) = (user.org_id.clone(), id.clone());
    let exists = ctx
        .db
        .read(move |c| Ok(db::entities::get(c, &org, &entity)?.is_some()))
        .await?;
    if !exists {
        return Err(ApiError::NotFound);
    }
    let fetch = move |c: &db::Conn, after: Option<&str>, limit| {
        db::suppliers::list(c, &user.org_id, &id, after, limit)
    };
    list_by_id(ctx, page, fetch, |s| &s.tax_id, |s| s.view()).await
}

#[get("/v1/entities/<id>/suppliers/<rfc>")]
async fn get_supplier(user: AuthUser, id: &str, rfc: &str, ctx: &Ctx) -> ApiResult<Json<Value>> {
    let tax_id = tax_id(rfc)?;
    let id = ids::parse(id)?;
    let found = ctx
        .db
        .read(move |c| db::suppliers::get(c, &user.org_id, &id, &tax_id))
        .await?;
    Ok(Json(found.ok_or(ApiError::NotFound)?.view()))
}

/// Saves the supplier's settings whole (absent or null fields take their defaults).
#[put("/v1/entities/<id>/suppliers/<rfc>", data = "<body>")]
async fn put_supplier(
    user: AuthUser,
    id: &str,
    rfc: &str,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
) -> ApiResult<Json<Value>> {
    let body = body?.0;
    let tax_id = tax_id(rfc)?;
    let supplier = Supplier::parse(&tax_id, &body).map_err(ApiError::Validation)?;
    let id = ids::parse(id)?;
    let saved = ctx
        .db
        .write(move |tx| {
            if db::entities::get(tx, &user.org_id, &id)?.is_none() {
                return Ok(None);
            }
            let now = crate::time::now();
            db::suppliers::put(tx, &user.org_id, &id, &supplier, &now).map(Some)
        })
        .await?;
    Ok(Json(saved.ok_or(ApiError::NotFound)?.view()))
}

/// Forgets the supplier's settings: it takes the defaults again.
#[delete("/v1/entities/<id>/suppliers/<rfc>")]
async fn delete_supplier(user: AuthUser, id: &str, rfc: &str, ctx: &Ctx) -> ApiResult<Status> {
    let tax_id = tax_id(rfc)?;
    let id = ids::parse(id)?;
    let deleted = ctx
        .db
        .write(move |tx| db::suppliers::delete(tx, &user.org_id, &id, &tax_id))
        .await?;
    if deleted {
        Ok(Status::NoContent)
    } else {
        Err(ApiError::NotFound)
    }
}

/// The DIOT's code lists with their descriptions, and each type's operations per
/// layout.
#[get("/v1/diot/codes")]
fn diot_codes(_user: AuthUser) -> Json<Value> {
    Json(supplier::codes())
}
