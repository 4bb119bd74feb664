//! `GET /v1/entities/{id}/summary`: an entity's period summary (`crate::summary`) as
//! JSON, or as a one-sheet XLSX with `format=xlsx`.

use chrono::NaiveDate;
use rocket::response::{self, Responder, Response};
use rocket::serde::json::Json;
use rocket::{get, routes, Request, Route, State};
use serde::Serialize;

use super::documents::date;
use crate::auth::AuthUser;
use crate::db::{self, entities::Entity, summary::Period};
use crate::domain::list_69b::{Exposures, Situation};
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::Ctx;
use crate::http::{heavy::Heavy, ids, query::Query};
use crate::summary::{self, Builder};

/// The longest period a summary covers: a year, so one request stays bounded.
const MAX_DAYS: i64 = 366;

pub fn routes() -> Vec<Route> {
    routes![entity_summary]
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

fn parse(query: &Query) -> Result<Params, ApiError> {
    let mut errors = FieldErrors::new();
    let required = |name: &str, errors: &mut FieldErrors| {
        if query.get(name).is_none() {
            errors.add(name, "is required");
        }
        date(query, name, errors)
    };
    let from = required("from", &mut errors);
    let to = required("to", &mut errors);
    if let (Some(f), Some(t)) = (from, to) {
        if t < f {
            errors.add("to", "must be on or after from");
        } else if (t - f).num_days() >= MAX_DAYS {
            errors.add("to", &format!("must be at most {MAX_DAYS} days after from"));
        }
    }
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
            let invalid_seals = invalid_seals
                .then(|| db::seals::invalid_in_period(c, &period))
                .transpose()?
                .map(summary::seals::warning);
            let view = View {
                entity_id: id,
                direction,
                from: from_text,
                to: day(to),
                summary: builder.finish(),
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
