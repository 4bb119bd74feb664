//! `GET /v1/entities/{id}/diot?month=YYYY-MM`: the month's DIOT (`crate::summary::diot`)
//! from the taxpayer's received documents and payments on the cash basis, with its
//! suppliers' settings, as JSON, as the batch TXT for the SAT's upload
//! (`format=txt`: the 54-field layout for months from January 2025, the 24-field one
//! before) or as the XLSX to review it (`format=xlsx`).

use chrono::Datelike;
use rocket::{get, routes, Route, State};
use serde_json::{json, Value};

use super::iva::{month, month_bounds, month_last_day, Answer, Definitive};
use crate::auth::AuthUser;
use crate::db::{self, summary::Period};
use crate::domain::supplier::Layout;
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::Ctx;
use crate::http::{heavy::Heavy, ids, query::Query};
use crate::summary::diot::Builder;
use crate::summary::diot_fields;
use crate::summary::sheet::{self, Taxpayer};

pub fn routes() -> Vec<Route> {
    routes![entity_diot]
}

#[get("/v1/entities/<id>/diot")]
async fn entity_diot(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Answer<Value>> {
    let mut errors = FieldErrors::new();
    let month = month(&query, &mut errors);
    let format = query.one_of("format", &["json", "txt", "xlsx"], &mut errors);
    errors.into_result()?;
    let month = month.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("month missing")))?;
    let id = ids::parse(id)?;
    let layout = Layout::of_year(month.year());
    let (db, org) = (ctx.db.clone(), user.org_id.clone());
    let found = heavy
        .run(&org, move || -> anyhow::Result<Option<(String, Value, db::entities::Entity)>> {
            let c = &*db.conn()?;
            let Some(entity) = db::entities::get(c, &user.org_id, &id)? else {
                return Ok(None);
            };
            let (from, before) = month_bounds(month);
            let period = Period {
                org_id: &user.org_id,
                entity_id: &id,
                direction: "received",
                from: &from,
                before: &before,
            };
            let saved = db::suppliers::of_entity(c, &user.org_id, &id)?;
            let mut definitive = Definitive::new(c);
            let mut builder = Builder::new(layout, saved);
            db::summary::each_document(c, &period, |d| {
                let flagged = definitive.is(&d.issuer.tax_id);
                builder.document(&d, flagged);
            })?;
            db::summary::each_payment(c, &period, |e| {
                let flagged = definitive.is(&e.payment_issuer.tax_id);
                builder.payment(&e, flagged);
            })?;
            definitive.failed()?;
            let diot = builder.finish();
            let txt = diot_fields::txt(&diot, layout);
            let view = json!({
                "entity_id": id,
                "month": month.format("%Y-%m").to_string(),
                "from": from,
                "to": month_last_day(month),
                "basis": "cash",
                "layout": diot.layout,
                "records": diot.records.iter().map(|r| diot_fields::view(r, layout)).collect::<Vec<_>>(),
                "excluded": diot.excluded,
            });
            Ok(Some((txt, view, entity)))
        })
        .await?;
    let (txt, view, entity) = found.ok_or(ApiError::NotFound)?;
    let name = format!("diot-{}", month.format("%Y-%m"));
    match format.as_deref() {
        Some("txt") => Ok(Answer::File {
            bytes: txt.into_bytes(),
            filename: format!("{name}.txt"),
            media_type: "text/plain; charset=utf-8",
        }),
        Some("xlsx") => {
            let bytes = heavy
                .run(&org, move || {
                    let taxpayer = Taxpayer {
                        tax_id: &entity.tax_id,
                        name: &entity.name,
                    };
                    sheet::write_diot(&view, &taxpayer).map_err(|e| ApiError::Internal(e.into()))
                })
                .await?;
            Ok(Answer::File {
                bytes,
                filename: format!("{name}.xlsx"),
                media_type: crate::export::Format::Xlsx.media_type(),
            })
        }
        _ => Ok(Answer::Json(rocket::serde::json::Json(Box::new(view)))),
    }
}
