//! `/v1/entities`: taxpayers and their CIEC credential.

use crate::auth::AuthUser;
use crate::db;
use crate::domain::entity::{CredentialStatus, EntityPatch, NewEntity};
use crate::domain::list_69b::{Exposures, Situation};
use crate::domain::FieldErrors;
use crate::events;
use crate::http::error::{ApiError, ApiResult};
use crate::http::pagination::list_by_id;
use crate::http::request_log::RequestId;
use crate::http::Ctx;
use crate::http::{
    idempotency::{self, Answer, KeyHeader},
    ids,
    json_body::{BodyError, JsonBody},
    pagination::{Envelope, Page},
    query::Query,
};
use crate::jobs::credential;
use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, get, patch, post, routes, Route};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![
        create_entity,
        list_entities,
        get_entity,
        update_entity,
        delete_entity,
        entity_counterparties_69b
    ]
}

#[post("/v1/entities", data = "<body>")]
async fn create_entity(
    user: AuthUser,
    request: RequestId,
    key: KeyHeader,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
) -> ApiResult<Answer> {
    let body = body?.0;
    let once = key.once(Some(&body))?;
    let new = NewEntity::parse(&body).map_err(ApiError::Validation)?;
    let sealed = ctx.cipher.seal(&new.ciec_password)?;
    let org_id = user.org_id.clone();
    let created = idempotency::write(ctx, &user.org_id, once, request.0, move |tx| {
        let e = db::entities::insert(tx, &org_id, &new.tax_id, &new.name, &sealed)?;
        credential::enqueue(tx, &e.id)?;
        Ok(Ok(Answer::new(Status::Created, &e.view())))
    })
    .await;
    match created {
        Ok(answer) => answer,
        Err(e) if db::is_unique_violation(&e) => {
            Err(ApiError::validation("tax_id", "has already been taken"))
        }
        Err(e) => Err(e.into()),
    }
}

#[get("/v1/entities")]
async fn list_entities(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let page = Page::from_query(&query, 1)?;
    let fetch = move |c: &db::Conn, after: Option<&str>, limit| {
        db::entities::list(c, &user.org_id, after, limit)
    };
    list_by_id(ctx, page, fetch, |e| &e.id, |e| e.view()).await
}

#[get("/v1/entities/<id>")]
async fn get_entity(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<Json<Value>> {
    let id = ids::parse(id)?;
    let entity = ctx
        .db
        .read(move |c| db::entities::get(c, &user.org_id, &id))
        .await?;
    Ok(Json(entity.ok_or(ApiError::NotFound)?.view()))
}

/// `GET /v1/entities/{id}/counterparties-69b`: each counterparty of the entity's
/// invoices that is on the 69-B list loaded last, with its entry and the invoices'
/// counts and totals; `situation` narrows them. One page: an entity deals with few
/// listed taxpayers.
#[get("/v1/entities/<id>/counterparties-69b")]
async fn entity_counterparties_69b(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let mut errors = FieldErrors::new();
    let situation = query
        .one_of("situation", Situation::WIRE, &mut errors)
        .and_then(|s| Situation::parse(&s));
    errors.into_result()?;
    let id = ids::parse(id)?;
    let views = ctx
        .db
        .read(move |c| {
            if db::entities::get(c, &user.org_id, &id)?.is_none() {
                return Ok(None);
            }
            let mut exposures = Exposures::default();
            let which = db::list_69b::Flagged {
                situation,
                ..Default::default()
            };
            db::list_69b::each_flagged_invoice(c, &user.org_id, &id, &which, |l, i| {
                exposures.add(l, i)
            })?;
            Ok(Some(exposures.views()))
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(Envelope {
        data: views,
        next_cursor: None,
    }))
}

#[patch("/v1/entities/<id>", data = "<body>")]
async fn update_entity(
    user: AuthUser,
    request: RequestId,
    id: &str,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
) -> ApiResult<Json<Value>> {
    let patch = EntityPatch::parse(&body?.0).map_err(ApiError::Validation)?;
    let id = ids::parse(id)?;
    let sealed = patch
        .ciec_password
        .as_deref()
        .map(|p| ctx.cipher.seal(p))
        .transpose()?;
    let updated = ctx
        .db
        .write_for(request.0, move |tx| {
            // Read and written with the organization's other changes kept out (a
            // credential's verdict landing meanwhile is not overwritten).
            tx.lock(db::Lock::Org(&user.org_id))?;
            let Some(mut e) = db::entities::get(tx, &user.org_id, &id)? else {
                return Ok(None);
            };
            if let Some(name) = patch.name {
                e.name = name;
            }
            e.updated_at = crate::time::now();
            if let Some(sealed) = sealed {
                // A new password must be validated again.
                e.ciec_ciphertext = sealed;
                let was = e.credential_status;
                e.credential_status = CredentialStatus::Pending;
                credential::enqueue(tx, &e.id)?;
                db::entities::update(tx, &e)?;
                if was != CredentialStatus::Pending {
                    events::entity_changed(tx, &e)?;
                }
            } else {
                db::entities::update(tx, &e)?;
            }
            Ok(Some(e))
        })
        .await?;
    Ok(Json(updated.ok_or(ApiError::NotFound)?.view()))
}

#[delete("/v1/entities/<id>")]
async fn delete_entity(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<Status> {
    let id = ids::parse(id)?;
    let deleted = ctx
        .db
        .write(move |tx| db::entities::delete(tx, &user.org_id, &id))
        .await?;
    if deleted {
        Ok(Status::NoContent)
    } else {
        Err(ApiError::NotFound)
    }
}
