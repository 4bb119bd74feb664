//! `/v1/extractions`: runs against the tax authority.

use crate::auth::AuthUser;
use crate::db;
use crate::domain::efirma::EfirmaStatus;
use crate::domain::extraction::{Channel, DocumentClass, NewExtraction, Status};
use crate::error::{ApiError, ApiResult, FieldErrors};
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
    idempotency::write(ctx, &user.org_id, once, request.0, move |tx| {
        let Some(entity) = db::entities::get(tx, &org_id, &new.entity_id)? else {
            return Ok(Err(ApiError::FieldNotFound("entity_id")));
        };
        if new.document_class == DocumentClass::Retentions && !can_extract_retentions(&entity) {
            let mut errors = FieldErrors::new();
            errors.add("options.document_class", NO_RETENTIONS_CHANNEL);
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

/// Why an entity without an e.firma cannot have its retentions extracted.
const NO_RETENTIONS_CHANNEL: &str = "retentions are extracted through the e.firma web service only (the CIEC portal does not serve them): upload the entity's e.firma first";

/// The SAT serves CFDI de Retenciones through the e.firma web service only: the entity
/// needs an e.firma that is, or may still turn out, in force (a pending one is checked
/// before the run starts).
fn can_extract_retentions(entity: &db::entities::Entity) -> bool {
    entity.efirma.as_ref().is_some_and(|f| {
        matches!(
            f.current_status(),
            EfirmaStatus::Valid | EfirmaStatus::Pending
        )
    })
}

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

#[get("/v1/extractions/<id>")]
async fn get_extraction(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<Json<Value>> {
    let id = ids::parse(id)?;
    let found = ctx
        .db
        .read(move |c| {
            let Some(ext) = db::extractions::get(c, &user.org_id, &id)? else {
                return Ok(None);
            };
            let mut view = ext.view();
            // An e.firma run says what it waits on at the SAT, and when it checks next.
            if ext.channel == Some(Channel::Efirma) && ext.status == Status::Running {
                view["waiting"] = db::sat_requests::waiting_view(c, &ext.id)?.into();
            }
            Ok(Some(view))
        })
        .await?;
    Ok(Json(found.ok_or(ApiError::NotFound)?))
}
