//! `/v1/schedules`: entities kept in sync by extractions the service starts itself.

use crate::auth::AuthUser;
use crate::db;
use crate::db::{entities::Entity, schedules::Schedule};
use crate::domain::class::DocumentClass;
use crate::domain::schedule::{NewSchedule, Plan, SchedulePatch, PAUSED_BY_USER};
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
use crate::sat::Channels;
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

/// The 422 when another schedule of the entity would start the same run at the same
/// slot (two such schedules would extract everything twice).
fn collision(other: &Schedule) -> ApiError {
    ApiError::validation(
        "entity_id",
        &format!(
            "already has a schedule at the same times for one of these directions and document classes ({}); change that one with PATCH",
            other.id
        ),
    )
}

/// Whether the plan may be kept for the entity: no other schedule of it colliding, and,
/// when `channels` is given (the classes are being chosen), a channel for each class
/// (retentions need the e.firma).
fn check_plan(
    tx: &db::Conn,
    channels: Option<&Channels>,
    entity: &Entity,
    plan: &Plan,
    own_id: Option<&str>,
) -> anyhow::Result<Result<(), ApiError>> {
    let others = db::schedules::of_entity(tx, &entity.id)?;
    if let Some(other) = others
        .iter()
        .filter(|o| Some(o.id.as_str()) != own_id)
        .find(|o| o.plan.collides_with(plan))
    {
        return Ok(Err(collision(other)));
    }
    // As for extractions, invoice runs are always taken (a CIEC turned invalid pauses
    // the schedule); other classes need their channel when they are asked for.
    let missing = |channels: &Channels| {
        (plan.classes.iter())
            .any(|c| *c != DocumentClass::Invoices && !channels.may_run(entity, *c, false))
    };
    if channels.is_some_and(missing) {
        return Ok(Err(ApiError::validation(
            "document_classes",
            super::extractions::NO_RETENTIONS_CHANNEL,
        )));
    }
    Ok(Ok(()))
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
    let (channels, clock) = (ctx.channels.clone(), ctx.config.schedule_clock);
    idempotency::write(ctx, &user.org_id, once, request.0, move |tx| {
        let Some(entity) = db::entities::get(tx, &org_id, &new.entity_id)? else {
            return Ok(Err(ApiError::FieldNotFound("entity_id")));
        };
        // The entity's schedules are read, then one added: two creations take turns
        // (PostgreSQL runs them side by side otherwise).
        tx.lock(db::Lock::Entity(&entity.id))?;
        if let Err(e) = check_plan(tx, Some(&channels), &entity, &new.plan, None)? {
            return Ok(Err(e));
        }
        let created = db::schedules::insert(tx, &org_id, &new, clock.now())?;
        Ok(Ok(Answer::new(Status::Created, &created.view())))
    })
    .await?
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
    let (channels, clock) = (ctx.channels.clone(), ctx.config.schedule_clock);
    let updated = ctx
        .db
        .write(move |tx| {
            let Some(mut s) = db::schedules::get(tx, &user.org_id, &id)? else {
                return Ok(Err(ApiError::NotFound));
            };
            let Some(entity) = db::entities::get(tx, &user.org_id, &s.entity_id)? else {
                return Ok(Err(ApiError::NotFound));
            };
            let retimed = match patch.apply(&mut s.plan) {
                Ok(retimed) => retimed,
                Err(errors) => return Ok(Err(ApiError::Validation(errors))),
            };
            let chosen = patch.classes.is_some().then_some(&channels);
            if let Err(e) = check_plan(tx, chosen, &entity, &s.plan, Some(&s.id))? {
                return Ok(Err(e));
            }
            let now = clock.now();
            if retimed {
                // A new timing starts counting now: its first slot is the next one.
                s.next_run_at = crate::time::format(s.plan.timing.next_after(now));
            }
            match patch.active {
                Some(true) if !s.active => s.resume(&crate::time::format(now)),
                Some(false) if s.active => s.pause(PAUSED_BY_USER),
                _ => {}
            }
            s.updated_at = crate::time::now();
            db::schedules::update(tx, &s)?;
            Ok(Ok(s))
        })
        .await??;
    Ok(Json(updated.view()))
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
