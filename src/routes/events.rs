//! `/v1/events`: the feed of everything the organization's webhooks are sent (and
//! what they would be sent without one), kept `--event-retention-days`.

use crate::auth::AuthUser;
use crate::db;
use crate::domain::event::FeedFilter;
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::pagination::keyed_by_id;
use crate::http::Ctx;
use crate::http::{ids, pagination::Page, query::Query};
use rocket::response::content::RawJson;
use rocket::{get, routes, Route};

pub fn routes() -> Vec<Route> {
    routes![list_events, get_event]
}

/// Each item is an event's payload exactly as delivered (spliced, never rebuilt).
#[get("/v1/events")]
async fn list_events(user: AuthUser, query: Query, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    let mut errors = FieldErrors::new();
    let page = Page::parse(query.get("limit"), query.get("cursor"), 1, &mut errors);
    let resource_id = query.uuid("resource_id", &mut errors);
    let filter = FeedFilter::parse(
        query.get("event"),
        query.get("resource_type"),
        resource_id.as_deref(),
        query.get("order"),
        &mut errors,
    );
    errors.into_result()?;
    let (after, limit) = (page.after.as_ref().map(|k| k[0].clone()), page.fetch());
    let rows = ctx
        .db
        .read(move |c| db::events::feed(c, &user.org_id, &filter, after.as_deref(), limit))
        .await?;
    Ok(page
        .envelope(keyed_by_id(rows, |r| &r.id), |r| r.payload)
        .splice())
}

#[get("/v1/events/<id>")]
async fn get_event(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    let id = ids::parse(id)?;
    let payload = ctx
        .db
        .read(move |c| db::events::get(c, &user.org_id, &id))
        .await?;
    Ok(RawJson(payload.ok_or(ApiError::NotFound)?))
}
