//! `GET /v1/entities/{id}/iva?month=YYYY-MM`: the month's IVA determination
//! (`crate::summary::iva`) from both directions on the cash basis, as JSON or, with
//! `format=xlsx`, a one-sheet XLSX in Spanish.

use std::collections::HashMap;

use chrono::{Datelike, NaiveDate};
use rocket::response::{self, Responder, Response};
use rocket::serde::json::Json;
use rocket::{get, routes, Request, Route, State};
use serde::Serialize;

use crate::auth::AuthUser;
use crate::db::{self, summary::Period};
use crate::domain::list_69b::Situation;
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::Ctx;
use crate::http::{heavy::Heavy, ids, query::Query};
use crate::summary::iva::{self, Determination, Side};
use crate::summary::sheet::{self, Taxpayer};

pub fn routes() -> Vec<Route> {
    routes![entity_iva]
}

/// `month` (`YYYY-MM`, required) as its first day, and whether the XLSX is asked for.
pub fn month_and_format(query: &Query) -> Result<(NaiveDate, bool), ApiError> {
    let mut errors = FieldErrors::new();
    let month = month(query, &mut errors);
    let format = query.one_of("format", &["json", "xlsx"], &mut errors);
    errors.into_result()?;
    let month = month.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("month missing")))?;
    Ok((month, format.as_deref() == Some("xlsx")))
}

/// `month` (`YYYY-MM`, required) as its first day; an error on `month` otherwise.
pub fn month(query: &Query, errors: &mut FieldErrors) -> Option<NaiveDate> {
    let Some(m) = query.get("month") else {
        errors.add("month", "is required");
        return None;
    };
    let first = (m.len() == 7 && m.as_bytes()[4] == b'-')
        .then(|| NaiveDate::parse_from_str(&format!("{m}-01"), "%Y-%m-%d").ok())
        .flatten()
        .filter(|d| (2000..=9999).contains(&d.year()));
    if first.is_none() {
        errors.add("month", "must be a month as YYYY-MM (e.g. 2026-10)");
    }
    first
}

/// The month's last day, as `YYYY-MM-DD`.
pub fn month_last_day(first: NaiveDate) -> String {
    first
        .checked_add_months(chrono::Months::new(1))
        .and_then(|d| d.pred_opt())
        .unwrap_or(first)
        .format("%Y-%m-%d")
        .to_string()
}

/// The month's first day and the first day after it, as `YYYY-MM-DD`.
pub fn month_bounds(first: NaiveDate) -> (String, String) {
    let next = first
        .checked_add_months(chrono::Months::new(1))
        .unwrap_or(first);
    (
        first.format("%Y-%m-%d").to_string(),
        next.format("%Y-%m-%d").to_string(),
    )
}

/// The answer: the month, then the determination.
#[derive(Serialize)]
pub struct View {
    entity_id: String,
    month: String,
    from: String,
    to: String,
    basis: &'static str,
    #[serde(flatten)]
    determination: Determination,
}

#[get("/v1/entities/<id>/iva")]
async fn entity_iva(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Answer<View>> {
    let (month, xlsx) = month_and_format(&query)?;
    let id = ids::parse(id)?;
    let (db, org) = (ctx.db.clone(), user.org_id.clone());
    let found = heavy
        .run(
            &org,
            move || -> anyhow::Result<Option<(View, db::entities::Entity)>> {
                let c = &*db.conn()?;
                let Some(entity) = db::entities::get(c, &user.org_id, &id)? else {
                    return Ok(None);
                };
                let (from, before) = month_bounds(month);
                let mut definitive = Definitive::new(c);
                let mut builder = iva::Builder::default();
                for (side, direction) in [(Side::Issued, "issued"), (Side::Received, "received")] {
                    let period = Period {
                        org_id: &user.org_id,
                        entity_id: &id,
                        direction,
                        from: &from,
                        before: &before,
                    };
                    let received = side == Side::Received;
                    db::summary::each_document(c, &period, |d| {
                        let flagged = received && definitive.is(&d.issuer.tax_id);
                        builder.document(side, &d, flagged);
                    })?;
                    db::summary::each_payment(c, &period, |e| {
                        let flagged = received && definitive.is(&e.payment_issuer.tax_id);
                        builder.payment(side, &e, flagged);
                    })?;
                }
                definitive.failed()?;
                let view = View {
                    entity_id: id,
                    month: month.format("%Y-%m").to_string(),
                    from,
                    to: month_last_day(month),
                    basis: "cash",
                    determination: builder.finish(),
                };
                Ok(Some((view, entity)))
            },
        )
        .await?;
    let (view, entity) = found.ok_or(ApiError::NotFound)?;
    if !xlsx {
        return Ok(Answer::Json(Json(Box::new(view))));
    }
    let filename = format!("iva-{}.xlsx", view.month);
    let view = serde_json::to_value(&view).map_err(|e| ApiError::Internal(e.into()))?;
    let bytes = heavy
        .run(&org, move || {
            let taxpayer = Taxpayer {
                tax_id: &entity.tax_id,
                name: &entity.name,
            };
            sheet::write_iva(&view, &taxpayer).map_err(|e| ApiError::Internal(e.into()))
        })
        .await?;
    Ok(Answer::File {
        bytes,
        filename,
        media_type: crate::export::Format::Xlsx.media_type(),
    })
}

/// Whether an issuer is `definitive` on the 69-B list loaded last, each RFC looked up
/// once; a failed lookup is kept for `failed` (the readers' callbacks return nothing).
pub struct Definitive<'c> {
    conn: &'c db::Conn,
    known: HashMap<String, bool>,
    error: Option<anyhow::Error>,
}

impl<'c> Definitive<'c> {
    pub fn new(conn: &'c db::Conn) -> Self {
        Definitive {
            conn,
            known: HashMap::new(),
            error: None,
        }
    }

    pub fn is(&mut self, rfc: &str) -> bool {
        let rfc = rfc.trim().to_uppercase();
        if let Some(&known) = self.known.get(&rfc) {
            return known;
        }
        let found = match db::list_69b::entry(self.conn, &rfc) {
            Ok(listed) => listed.is_some_and(|l| l.entry.situation == Situation::Definitive),
            Err(e) => {
                self.error.get_or_insert(e);
                false
            }
        };
        self.known.insert(rfc, found);
        found
    }

    pub fn failed(self) -> anyhow::Result<()> {
        self.error.map_or(Ok(()), Err)
    }
}

/// JSON, or a file to download.
pub enum Answer<T> {
    Json(Json<Box<T>>),
    File {
        bytes: Vec<u8>,
        filename: String,
        media_type: &'static str,
    },
}

impl<'r, T: Serialize> Responder<'r, 'static> for Answer<T> {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        match self {
            Answer::Json(json) => json.respond_to(req),
            Answer::File {
                bytes,
                filename,
                media_type,
            } => Response::build()
                .raw_header("Content-Type", media_type)
                .raw_header(
                    "Content-Disposition",
                    format!("attachment; filename=\"{filename}\""),
                )
                .sized_body(bytes.len(), std::io::Cursor::new(bytes))
                .ok(),
        }
    }
}
