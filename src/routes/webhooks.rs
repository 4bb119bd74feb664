//! `/v1/webhooks`: registrations and their delivery log.

use crate::auth::AuthUser;
use crate::db;
use crate::domain::webhook::{self, NewWebhook};
use crate::http::error::{ApiError, ApiResult};
use crate::http::pagination::{keyed_by_id, list_by_id};
use crate::http::request_log::RequestId;
use crate::http::Ctx;
use crate::http::{
    idempotency::{self, Answer, KeyHeader},
    ids,
    json_body::{BodyError, JsonBody},
    pagination::{Envelope, Page},
    query::Query,
};
use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, get, post, routes, Route};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![
        create_webhook,
        list_webhooks,
        get_webhook,
        delete_webhook,
        list_webhook_deliveries
    ]
}

#[post("/v1/webhooks", data = "<body>")]
async fn create_webhook(
    user: AuthUser,
    request: RequestId,
    key: KeyHeader,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
) -> ApiResult<Answer> {
    let body = body?.0;
    let once = key.once(Some(&body))?;
    let new = NewWebhook::parse(&body).map_err(ApiError::Validation)?;
    let token = crate::crypto::webhook_token()?;
    let sealed = ctx.cipher.seal(&token)?;
    let org_id = user.org_id.clone();
    idempotency::write(ctx, &user.org_id, once, request.0, move |tx| {
        // Counted with the organization's other writes kept out meanwhile.
        tx.lock(db::Lock::Org(&org_id))?;
        if db::webhooks::count_for_org(tx, &org_id)? >= webhook::MAX_PER_ORG {
            return Ok(Err(ApiError::Validation(webhook::too_many())));
        }
        let hook = db::webhooks::insert(tx, &org_id, &new.url, &new.events, sealed)?;
        Ok(Ok(Answer::new(Status::Created, &hook.view(&token))))
    })
    .await?
}

#[get("/v1/webhooks")]
async fn list_webhooks(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let page = Page::from_query(&query, 1)?;
    let cipher = ctx.cipher.clone();
    let fetch = move |c: &db::Conn, after: Option<&str>, limit| {
        let hooks = db::webhooks::list(c, &user.org_id, after, limit)?;
        hooks
            .into_iter()
            .map(|w| Ok((cipher.open_token(&w.token)?, w)))
            .collect()
    };
    list_by_id(
        ctx,
        page,
        fetch,
        |(_, w)| &w.id,
        |(token, w)| w.view(&token),
    )
    .await
}

#[get("/v1/webhooks/<id>")]
async fn get_webhook(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<Json<Value>> {
    let id = ids::parse(id)?;
    let hook = ctx
        .db
        .read(move |c| db::webhooks::get(c, &user.org_id, &id))
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(hook.view(&ctx.cipher.open_token(&hook.token)?)))
}

#[delete("/v1/webhooks/<id>")]
async fn delete_webhook(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<Status> {
    let id = ids::parse(id)?;
    let deleted = ctx
        .db
        .write_again(move |tx| db::webhooks::delete(tx, &user.org_id, &id))
        .await?;
    if deleted {
        Ok(Status::NoContent)
    } else {
        Err(ApiError::NotFound)
    }
}

#[get("/v1/webhooks/<id>/deliveries")]
async fn list_webhook_deliveries(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let page = Page::from_query(&query, 1)?;
    let id = ids::parse(id)?;
    let (after, fetch) = (page.after.as_ref().map(|k| k[0].clone()), page.fetch());
    let rows = ctx
        .db
        .read(move |c| {
            if !db::webhooks::exists(c, &user.org_id, &id)? {
                return Ok(None);
            }
            db::deliveries::list(c, &id, after.as_deref(), fetch).map(Some)
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(Json(
        page.envelope(keyed_by_id(rows, |d| &d.id), |d| d.view()),
    ))
}
