//! `/v1/extractions`: runs against the tax authority.

use crate::auth::AuthUser;
use crate::db;
use crate::db::extractions::Extraction;
use crate::domain::class::DocumentClass;
use crate::domain::extraction::{NewExtraction, Status};
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
use rocket::serde::json::Json;
use rocket::{get, post, routes, Route};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![create_extraction, list_extractions, get_extraction]
}

#[post("/v1/extractions", data = "<body>")]
async fn create_extraction(
    user: AuthUser,
    request: RequestId,
    key: KeyHeader,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
) -> ApiResult<Answer> {
    let body = body?.0;
    let once = key.once(Some(&body))?;
    let new = NewExtraction::parse(&body).map_err(ApiError::Validation)?;
    let org_id = user.org_id.clone();
    let channels = ctx.channels.clone();
    idempotency::write(ctx, &user.org_id, once, request.0, move |tx| {
        let Some(entity) = db::entities::get(tx, &org_id, &new.entity_id)? else {
            return Ok(Err(ApiError::FieldNotFound("entity_id")));
        };
        // The contract's invoice runs are always taken (one without a usable
        // credential fails `invalid_credentials`); other classes need a channel.
        let class = new.document_class;
        if class != DocumentClass::Invoices && !channels.may_run(&entity, class, false) {
            let mut errors = FieldErrors::new();
            errors.add("options.document_class", NO_RETENTIONS_CHANNEL);
            return Ok(Err(ApiError::Validation(errors)));
        }
        if !new.uuids.is_empty() && !channels.may_run(&entity, class, true) {
            let mut errors = FieldErrors::new();
            errors.add("options.uuids", NO_UUID_CHANNEL);
            return Ok(Err(ApiError::Validation(errors)));
        }
        let created = db::extractions::queue(tx, &org_id, &new, None)?;
        Ok(Ok(Answer::new(
            rocket::http::Status::Created,
            &created.view(),
        )))
    })
    .await?
}

/// Why an entity cannot have invoices fetched by UUID: both channels can (the e.firma's
/// request by folio, the portal's search by folio fiscal), but neither credential is
/// usable.
pub(super) const NO_UUID_CHANNEL: &str = "no channel can fetch invoices by UUID for this entity: its CIEC is not valid and it has no e.firma in force (or being checked); update its CIEC or upload its e.firma";

/// Why an entity without an e.firma cannot have its retentions extracted (the only
/// class some entities have no channel for: the CIEC's status is the contract's, and
/// an invoice run of an entity whose CIEC is invalid fails `invalid_credentials`).
pub(super) const NO_RETENTIONS_CHANNEL: &str = "retentions are extracted through the e.firma web service only (the CIEC portal does not serve them): upload the entity's e.firma first";

#[get("/v1/extractions")]
async fn list_extractions(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let mut errors = FieldErrors::new();
    let page = Page::parse(query.get("limit"), query.get("cursor"), 1, &mut errors);
    let entity_id = query.uuid("entity_id", &mut errors);
    let status = query.one_of(
        "status",
        &["pending", "running", "finished", "failed"],
        &mut errors,
    );
    errors.into_result()?;
    let fetch = move |c: &db::Conn, after: Option<&str>, limit| {
        db::extractions::list(
            c,
            &user.org_id,
            entity_id.as_deref(),
            status.as_deref(),
            after,
            limit,
        )
    };
    list_by_id(ctx, page, fetch, |e| &e.id, |e| e.view()).await
}

/// Why an ended run of invoices processed fewer than it found (`unprocessed`): the
/// listed invoices still without their XML, those refused for another document under
/// their UUID, and the rest, which an earlier run or import had already stored (a run
/// does not download those again). None when it processed all it found.
fn unprocessed(c: &crate::db::Conn, ext: &Extraction) -> anyhow::Result<Option<Value>> {
    let ended = matches!(ext.status, Status::Finished | Status::Failed);
    let missing = ext.invoices_found - ext.invoices_processed;
    if !ended || missing <= 0 || ext.document_class != DocumentClass::Invoices {
        return Ok(None);
    }
    let Some(period) = ext.period() else {
        return Ok(None);
    };
    let awaiting = db::invoices::awaiting_xml(
        c,
        &ext.entity_id,
        ext.direction.as_str(),
        &period.from.format("%Y-%m-%d").to_string(),
        &crate::time::day_after(period.to),
    )?;
    let conflicting = ext.invoices_conflicting.min(missing);
    let awaiting = awaiting.min(missing - conflicting);
    Ok(Some(serde_json::json!({
        "awaiting_xml": awaiting,
        "conflicting": conflicting,
        "stored_before": missing - awaiting - conflicting,
    })))
}

#[get("/v1/extractions/<id>")]
async fn get_extraction(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<Json<Value>> {
    let id = ids::parse(id)?;
    let channels = ctx.channels.clone();
    let found = ctx
        .db
        .read(move |c| {
            let Some(ext) = db::extractions::get(c, &user.org_id, &id)? else {
                return Ok(None);
            };
            let mut view = ext.view();
            // A run says what it waits on at the SAT, and when it checks next, when its
            // channel keeps one.
            let channel = ext.channel.as_deref().and_then(|n| channels.named(n));
            if let Some(channel) = channel.filter(|_| ext.status == Status::Running) {
                if let Some(waiting) = channel.waiting(c, &ext.id)? {
                    view["waiting"] = waiting;
                }
            }
            if let Some(unprocessed) = unprocessed(c, &ext)? {
                view["unprocessed"] = unprocessed;
            }
            Ok(Some(view))
        })
        .await?;
    Ok(Json(found.ok_or(ApiError::NotFound)?))
}
