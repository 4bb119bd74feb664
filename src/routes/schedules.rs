//! `/v1/schedules`: entities kept in sync by extractions the service starts itself.

use crate::auth::AuthUser;
use crate::db;
use crate::domain::schedule::{NewSchedule, SchedulePatch, PAUSED_BY_USER};
use crate::domain::FieldErrors;
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
use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, get, patch, post, routes, Route};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![
        create_schedule,
        list_schedules,
        get_schedule,
        update_schedule,
        delete_schedule
    ]
}

/// The 422 when the entity already has its one schedule.
fn taken() -> ApiError {
    ApiError::validation(
        "entity_id",
        "already has a schedule; change that one with PATCH",
    )
}

#[post("/v1/schedules", data = "<body>")]
async fn create_schedule(
    user: AuthUser,
    request: RequestId,
    key: KeyHeader,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
) -> ApiResult<Answer> {
    let body = body?.0;
    let once = key.once(Some(&body))?;
    let new = NewSchedule::parse(&body, ctx.config.schedule_min_interval)
        .map_err(ApiError::Validation)?;
    let org_id = user.org_id.clone();
    let created = idempotency::write(ctx, &user.org_id, once, request.0, move |tx| {
        if db::entities::get(tx, &org_id, &new.entity_id)?.is_none() {
            return Ok(Err(ApiError::FieldNotFound("entity_id")));
        }
        if db::schedules::exists_for_entity(tx, &new.entity_id)? {
            return Ok(Err(taken()));
        }
        let created = db::schedules::insert(tx, &org_id, &new)?;
        Ok(Ok(Answer::new(Status::Created, &created.view())))
    })
    .await;
    match created {
        Ok(answer) => answer,
        // Another request made the entity's schedule meanwhile (its unique key).
        Err(e) if db::is_unique_violation(&e) => Err(taken()),
        Err(e) => Err(e.into()),
    }
}

#[get("/v1/schedules")]
async fn list_schedules(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let mut errors = FieldErrors::new();
    let page = Page::parse(query.get("limit"), query.get("cursor"), 1, &mut errors);
    let entity_id = query.uuid("entity_id", &mut errors);
    errors.into_result()?;
    let fetch = move |c: &db::Conn, after: Option<&str>, limit| {
        db::schedules::list(c, &user.org_id, entity_id.as_deref(), after, limit)
    };
    list_by_id(ctx, page, fetch, |s| &s.id, |s| s.view()).await
}

#[get("/v1/schedules/<id>")]
async fn get_schedule(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<Json<Value>> {
    let id = ids::parse(id)?;
    let found = ctx
        .db
        .read(move |c| db::schedules::get(c, &user.org_id, &id))
        .await?;
    Ok(Json(found.ok_or(ApiError::NotFound)?.view()))
}

#[patch("/v1/schedules/<id>", data = "<body>")]
async fn update_schedule(
    user: AuthUser,
    id: &str,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
) -> ApiResult<Json<Value>> {
    let patch = SchedulePatch::parse(&body?.0, ctx.config.schedule_min_interval)
        .map_err(ApiError::Validation)?;
    let id = ids::parse(id)?;
    let updated = ctx
        .db
        .write(move |tx| {
            let Some(mut s) = db::schedules::get(tx, &user.org_id, &id)? else {
                return Ok(None);
            };
            let now = chrono::Utc::now();
            if let Some(directions) = patch.directions {
                s.directions = directions;
            }
            if let Some(days) = patch.lookback_days {
                s.lookback_days = days;
            }
            if let Some(timing) = patch.timing {
                // A new timing starts counting now: its first slot is the next one.
                s.timing = timing;
                s.next_run_at = crate::time::format(timing.next_after(now));
            }
            match patch.active {
                Some(true) if !s.active => s.resume(&crate::time::format(now)),
                Some(false) if s.active => s.pause(PAUSED_BY_USER),
                _ => {}
            }
            s.updated_at = crate::time::format(now);
            db::schedules::update(tx, &s)?;
            Ok(Some(s))
        })
        .await?;
    Ok(Json(updated.ok_or(ApiError::NotFound)?.view()))
}

/// Deletes the schedule; the extractions it started stay (they keep its id).
#[delete("/v1/schedules/<id>")]
async fn delete_schedule(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<Status> {
    let id = ids::parse(id)?;
    let deleted = ctx
        .db
        .write(move |tx| db::schedules::delete(tx, &user.org_id, &id))
        .await?;
    if deleted {
        Ok(Status::NoContent)
    } else {
        Err(ApiError::NotFound)
    }
}
