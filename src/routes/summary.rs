//! `GET /v1/entities/{id}/summary`: an entity's period summary (`crate::summary`) as
//! JSON, or as a one-sheet XLSX with `format=xlsx`; it says at its top whether it is
//! complete (no payment left out for want of its invoice). `POST
//! /v1/entities/{id}/summary/complete` fetches the invoices it misses: one extraction by
//! UUID per direction (and per `MAX_UUIDS`).

use chrono::NaiveDate;
use rocket::response::{self, Responder, Response};
use rocket::serde::json::Json;
use rocket::{get, post, routes, Request, Route, State};
use serde::Serialize;

use super::documents::date;
use crate::auth::AuthUser;
use crate::db::{self, entities::Entity, summary::Period};
use crate::domain::class::DocumentClass;
use crate::domain::extraction::{self, Direction, NewExtraction, MAX_UUIDS};
use crate::domain::list_69b::{Exposures, Situation};
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::idempotency::{self, Answer, KeyHeader};
use crate::http::request_log::RequestId;
use crate::http::Ctx;
use crate::http::{heavy::Heavy, ids, query::Query};
use crate::summary::{self, Builder};

/// The longest period a summary covers: a year, so one request stays bounded.
const MAX_DAYS: i64 = 366;

pub fn routes() -> Vec<Route> {
    routes![entity_summary, complete_summary]
}

/// The validated query.
struct Params {
    from: NaiveDate,
    to: NaiveDate,
    direction: String,
    xlsx: bool,
    /// `invalid_seals=true`: the warning of documents whose seal is invalid.
    invalid_seals: bool,
}

/// `from` and `to`: required, in order, at most `MAX_DAYS` apart.
fn period(query: &Query, errors: &mut FieldErrors) -> (Option<NaiveDate>, Option<NaiveDate>) {
    let required = |name: &str, errors: &mut FieldErrors| {
        if query.get(name).is_none() {
            errors.add(name, "is required");
        }
        date(query, name, errors)
    };
    let from = required("from", errors);
    let to = required("to", errors);
    if let (Some(f), Some(t)) = (from, to) {
        if t < f {
            errors.add("to", "must be on or after from");
        } else if (t - f).num_days() >= MAX_DAYS {
            errors.add("to", &format!("must be at most {MAX_DAYS} days after from"));
        }
    }
    (from, to)
}

fn parse(query: &Query) -> Result<Params, ApiError> {
    let mut errors = FieldErrors::new();
    let (from, to) = period(query, &mut errors);
    let direction = query.one_of("direction", &["issued", "received"], &mut errors);
    if query.get("direction").is_none() {
        errors.add("direction", "is required");
    }
    let format = query.one_of("format", &["json", "xlsx"], &mut errors);
    let invalid_seals = query.flag("invalid_seals", &mut errors).unwrap_or(false);
    errors.into_result()?;
    match (from, to, direction) {
        (Some(from), Some(to), Some(direction)) => Ok(Params {
            from,
            to,
            direction,
            xlsx: format.as_deref() == Some("xlsx"),
            invalid_seals,
        }),
        _ => Err(ApiError::Internal(anyhow::anyhow!(
            "validated parameters missing"
        ))),
    }
}

#[get("/v1/entities/<id>/summary")]
async fn entity_summary(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Summary> {
    let params = parse(&query)?;
    let id = ids::parse(id)?;
    let (from, to) = (params.from, params.to);
    let direction = params.direction.clone();
    let invalid_seals = params.invalid_seals;
    let (db, org) = (ctx.db.clone(), user.org_id.clone());
    // A year of documents: heavy work, in the organization's turn on its own pool.
    let found = heavy
        .run(&org, move || -> anyhow::Result<Option<(View, Entity)>> {
            let c = &*db.conn()?;
            let Some(entity) = db::entities::get(c, &user.org_id, &id)? else {
                return Ok(None);
            };
            let (from_text, before) = (day(from), crate::time::day_after(to));
            let period = Period {
                org_id: &user.org_id,
                entity_id: &id,
                direction: &direction,
                from: &from_text,
                before: &before,
            };
            let mut builder = Builder::default();
            let issued = direction == "issued";
            db::summary::each_document(c, &period, |d| {
                builder.document(&d);
                if issued {
                    builder.issued_withholdings(&d);
                }
            })?;
            if !issued {
                db::summary::each_document_of(c, &period, "issued", |d| {
                    builder.issued_withholdings(&d)
                })?;
            }
            db::summary::each_retention(c, &period, |r| builder.retention(&r))?;
            db::summary::each_payment(c, &period, |e| builder.payment(&e))?;
            let definitive_69b_issuers = if issued {
                vec![]
            } else {
                definitive_issuers(c, &period)?
            };
            let summary = builder.finish();
            let missing_invoices = summary.missing_invoices();
            let invalid_seals = invalid_seals
                .then(|| db::seals::invalid_in_period(c, &period))
                .transpose()?
                .map(summary::seals::warning);
            let view = View {
                complete: missing_invoices.count == 0,
                missing_invoices,
                entity_id: id,
                direction,
                from: from_text,
                to: day(to),
                summary,
                definitive_69b_issuers,
                invalid_seals,
            };
            Ok(Some((view, entity)))
        })
        .await?;
    let (view, entity) = found.ok_or(ApiError::NotFound)?;
    if !params.xlsx {
        return Ok(Summary::Json(Json(Box::new(view))));
    }
    let view = serde_json::to_value(&view).map_err(|e| ApiError::Internal(e.into()))?;
    let filename = format!(
        "summary-{}-{}-{}.xlsx",
        day(from),
        day(to),
        params.direction
    );
    let bytes = heavy
        .run(&org, move || {
            let taxpayer = summary::sheet::Taxpayer {
                tax_id: &entity.tax_id,
                name: &entity.name,
            };
            summary::sheet::write(&view, &taxpayer).map_err(|e| ApiError::Internal(e.into()))
        })
        .await?;
    Ok(Summary::Xlsx { bytes, filename })
}

fn day(d: NaiveDate) -> String {
    d.format("%Y-%m-%d").to_string()
}

/// The answer: the period, then the summary's sections. Serialized straight from the
/// sums (no JSON tree of the whole answer is built for the JSON format).
#[derive(Serialize)]
pub struct View {
    /// First, plainly: whether every payment of the period was counted (no invoice it
    /// pays is missing), and if not, which invoices to fetch (`complete_summary`).
    complete: bool,
    missing_invoices: summary::Missing,
    entity_id: String,
    direction: String,
    from: String,
    to: String,
    #[serde(flatten)]
    summary: summary::Summary,
    /// The warning: received invoices whose issuer is `definitive` on the 69-B list
    /// (their expenses are not deductible), per issuer and currency.
    definitive_69b_issuers: Vec<serde_json::Value>,
    /// With `invalid_seals=true` only (the answer keeps its shape otherwise): the
    /// period's documents whose seal is invalid.
    #[serde(skip_serializing_if = "Option::is_none")]
    invalid_seals: Option<summary::seals::InvalidSeals>,
}

/// `POST /v1/entities/{id}/summary/complete?from=&to=[&direction=]`: extracts by UUID
/// the invoices the period's summary misses (both directions unless one is named), one
/// extraction per direction and per `MAX_UUIDS` UUIDs, over the summary's period. 202
/// with them; 200 with none when nothing is missing; 422 when no channel can fetch for
/// the entity (its CIEC invalid, and no e.firma).
#[post("/v1/entities/<id>/summary/complete")]
async fn complete_summary(
    user: AuthUser,
    id: &str,
    query: Query,
    request: RequestId,
    key: KeyHeader,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Answer> {
    let mut errors = FieldErrors::new();
    let (from, to) = period(&query, &mut errors);
    let direction = query.one_of("direction", &["issued", "received"], &mut errors);
    errors.into_result()?;
    let (Some(from), Some(to)) = (from, to) else {
        return Err(ApiError::Internal(anyhow::anyhow!(
            "validated period missing"
        )));
    };
    // The key binds the period too: it is in the query, not a body.
    let mut asked = serde_json::Map::new();
    for name in ["from", "to", "direction"] {
        if let Some(v) = query.get(name) {
            asked.insert(name.into(), v.into());
        }
    }
    let once = key.once(Some(&asked))?;
    let id = ids::parse(id)?;
    let directions: Vec<Direction> = match direction.as_deref().and_then(Direction::parse) {
        Some(d) => vec![d],
        None => vec![Direction::Issued, Direction::Received],
    };
    let (db, org) = (ctx.db.clone(), user.org_id.clone());
    let (entity_id, from_text, before) = (id.clone(), day(from), crate::time::day_after(to));
    // What is missing: a year of payments, read on the heavy pool.
    let missing = heavy
        .run(
            &org,
            move || -> anyhow::Result<Vec<(Direction, Vec<String>)>> {
                let c = &*db.conn()?;
                let mut missing = Vec::new();
                for direction in directions {
                    let period = Period {
                        org_id: &user.org_id,
                        entity_id: &entity_id,
                        direction: direction.as_str(),
                        from: &from_text,
                        before: &before,
                    };
                    let mut builder = Builder::default();
                    db::summary::each_payment(c, &period, |e| builder.payment(&e))?;
                    let uuids = fetchable(builder.finish().missing_invoices().uuids);
                    if !uuids.is_empty() {
                        missing.push((direction, uuids));
                    }
                }
                Ok(missing)
            },
        )
        .await?;
    let (org_id, channels) = (org.clone(), ctx.channels.clone());
    let period = extraction::Period { from, to };
    idempotency::write(ctx, &org, once, request.0, move |tx| {
        let Some(entity) = db::entities::get(tx, &org_id, &id)? else {
            return Ok(Err(ApiError::NotFound));
        };
        let count: usize = missing.iter().map(|(_, uuids)| uuids.len()).sum();
        if count > 0 && !channels.may_run(&entity, DocumentClass::Invoices, true) {
            return Ok(Err(ApiError::validation(
                "entity_id",
                super::extractions::NO_UUID_CHANNEL,
            )));
        }
        let mut extractions = Vec::new();
        for (direction, uuids) in &missing {
            for chunk in uuids.chunks(MAX_UUIDS) {
                let new = NewExtraction {
                    entity_id: entity.id.clone(),
                    period,
                    direction: *direction,
                    document_class: DocumentClass::Invoices,
                    uuids: chunk.to_vec(),
                };
                extractions.push(db::extractions::queue(tx, &org_id, &new, None)?.view());
            }
        }
        let status = match extractions.is_empty() {
            true => rocket::http::Status::Ok,
            false => rocket::http::Status::Accepted,
        };
        let body = serde_json::json!({
            "entity_id": entity.id, "from": day(from), "to": day(to),
            "missing_invoices": count, "extractions": extractions,
        });
        Ok(Ok(Answer::new(status, &body)))
    })
    .await?
}

/// The UUIDs an extraction can ask for (a complement may name a malformed one, which no
/// channel can fetch: it stays listed as missing).
fn fetchable(uuids: Vec<String>) -> Vec<String> {
    uuids
        .into_iter()
        .filter(|u| u.len() == 36 && uuid::Uuid::parse_str(u).is_ok())
        .collect()
}

/// The received invoices of the period whose issuer is `definitive` on the list loaded
/// last, cancelled ones left out.
fn definitive_issuers(c: &db::Conn, p: &Period) -> anyhow::Result<Vec<serde_json::Value>> {
    let mut exposures = Exposures::default();
    let which = db::list_69b::Flagged {
        direction: Some("received"),
        period: Some((p.from, p.before)),
        situation: Some(Situation::Definitive),
    };
    db::list_69b::each_flagged_invoice(c, p.org_id, p.entity_id, &which, |l, i| {
        exposures.add(l, i)
    })?;
    Ok(exposures.lines())
}

pub enum Summary {
    Json(Json<Box<View>>),
    Xlsx { bytes: Vec<u8>, filename: String },
}

impl<'r> Responder<'r, 'static> for Summary {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        match self {
            Summary::Json(json) => json.respond_to(req),
            Summary::Xlsx { bytes, filename } => Response::build()
                .raw_header("Content-Type", crate::export::Format::Xlsx.media_type())
                .raw_header(
                    "Content-Disposition",
                    format!("attachment; filename=\"{filename}\""),
                )
                .sized_body(bytes.len(), std::io::Cursor::new(bytes))
                .ok(),
        }
    }
}
