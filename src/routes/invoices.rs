//! `/v1/invoices`: processed invoices, their documents and the payments that pay them.

use super::documents::{self, AcceptHeader, CfdiResponse, Printing, Served};
use crate::auth::AuthUser;
use crate::db::{self, invoices::Filter};
use crate::domain::class::InvoiceClass;
use crate::domain::sat_status::State as SatState;
use crate::domain::search::Search;
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::request_log::RequestId;
use crate::http::Ctx;
use crate::http::{
    heavy::Heavy,
    idempotency::{self, Answer, KeyHeader},
    ids,
    pagination::{Envelope, Page},
    query::Query,
};
use rocket::response::content::RawJson;
use rocket::serde::json::Json;
use rocket::{get, post, routes, Route, State};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![
        list_invoices,
        invoice_totals,
        get_invoice,
        get_invoice_cfdi,
        list_invoice_items,
        list_invoice_payments,
        list_invoice_relates_to,
        list_invoice_related_by,
        request_status_check
    ]
}

impl Served for InvoiceClass {
    fn parse_filter(query: &Query, errors: &mut FieldErrors) -> Filter {
        let outstanding = query.flag("outstanding", errors);
        let substituted = query.flag("substituted", errors);
        let credited = query.flag("credited", errors);
        let from = documents::date(query, "issued_from", errors);
        let to = documents::date(query, "issued_to", errors);
        if let (Some(f), Some(t)) = (from, to) {
            if t < f {
                errors.add("issued_to", "must be on or after issued_from");
            }
        }
        Filter {
            entity_id: documents::entity_id(query, errors),
            direction: query.one_of("direction", &["issued", "received"], errors),
            invoice_type: query.one_of("type", &["I", "E", "T", "N", "P"], errors),
            status: query.one_of("status", &["active", "cancelled"], errors),
            sat_state: query.one_of("sat_state", SatState::WIRE, errors),
            counterparty_69b: query.one_of(
                "counterparty_69b",
                &[
                    "listed",
                    "presumed",
                    "disproved",
                    "definitive",
                    "favorable_ruling",
                ],
                errors,
            ),
            payment_method: query.one_of("payment_method", &["PUE", "PPD"], errors),
            issuer_tax_id: documents::upper(query, "issuer_tax_id"),
            receiver_tax_id: documents::upper(query, "receiver_tax_id"),
            uuid: documents::upper(query, "uuid"),
            currency: documents::upper(query, "currency"),
            issued_from: from.map(|d| d.format("%Y-%m-%d").to_string()),
            issued_before: to.map(crate::time::day_after),
            outstanding,
            substituted,
            credited,
            updated_since: documents::timestamp(query, "updated_since", errors),
            q: Search::parse(query.get("q"), errors),
            seal: documents::seal(query, errors),
            order: documents::order(query, errors),
        }
    }

    const PERIOD: (&'static str, &'static str) = ("issued_from", "issued_to");

    /// The spec's PDF is the SAT's own (404 without it); printing one from the XML is
    /// ours, so it is asked for by name.
    const PRINTING: Printing = Printing::OnRequest(NO_PDF_MESSAGE);

    fn print(xml: &[u8]) -> anyhow::Result<Vec<u8>> {
        let cfdi = crate::cfdi::Cfdi::parse(xml)
            .map_err(|e| anyhow::anyhow!("stored CFDI does not parse: {e}"))?;
        Ok(crate::pdf::invoice::render(&cfdi))
    }
}

/// The spec's 404 when `has_pdf` is false, saying how to get one printed from the XML.
pub const NO_PDF_MESSAGE: &str =
    "The SAT gave no PDF for this invoice (has_pdf is false); add render=true for one printed from the XML";

#[get("/v1/invoices")]
async fn list_invoices(user: AuthUser, query: Query, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    documents::list::<InvoiceClass>(user, query, ctx).await
}

/// `GET /v1/invoices/totals`: how many invoices the list's filters match, and their
/// amounts per currency.
#[get("/v1/invoices/totals")]
async fn invoice_totals(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Json<Value>> {
    documents::totals::<InvoiceClass>(user, query, ctx, heavy).await
}

#[get("/v1/invoices/<id>")]
async fn get_invoice(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    documents::get::<InvoiceClass>(user, id, ctx).await
}

#[get("/v1/invoices/<id>/cfdi")]
async fn get_invoice_cfdi(
    user: AuthUser,
    id: &str,
    query: Query,
    accept: AcceptHeader<'_>,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<CfdiResponse> {
    documents::cfdi::<InvoiceClass>(user, id, query, accept, ctx, heavy).await
}

/// The 503 of an on-demand check on a server without status checks.
const STATUS_CHECKS_OFF: &str =
    "SAT status checks are off on this server (--sat-status-rate 0); ask its operator to turn them on";

/// `POST /v1/invoices/{id}/status-check`: asks the SAT about the invoice ahead of the
/// planned checks (`jobs::sat_status`). 202 with the invoice; its `sat_status` changes
/// when the answer is in. 503 when the server runs with checks off.
#[post("/v1/invoices/<id>/status-check")]
async fn request_status_check(
    user: AuthUser,
    id: &str,
    request: RequestId,
    key: KeyHeader,
    ctx: &Ctx,
) -> ApiResult<Answer> {
    let once = key.once(None)?;
    let id = ids::parse(id)?;
    let on = ctx.sat_status.is_some();
    let org_id = user.org_id.clone();
    idempotency::write(ctx, &user.org_id, once, request.0, move |tx| {
        let now = crate::time::now();
        if on && !db::invoices::sat_status::request(tx, &org_id, &id, &now)? {
            return Ok(Err(ApiError::NotFound));
        }
        let Some(invoice) = db::invoices::get(tx, &org_id, &id)? else {
            return Ok(Err(ApiError::NotFound));
        };
        if !on {
            return Ok(Err(ApiError::UnavailableSaying(STATUS_CHECKS_OFF)));
        }
        Ok(Ok(Answer::raw(rocket::http::Status::Accepted, invoice)))
    })
    .await?
}

/// Every concept of an invoice, in document order; the cursor is the position of the
/// last one returned, so a page reads only the stored pages it spans.
#[get("/v1/invoices/<id>/items")]
async fn list_invoice_items(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let page = Page::from_query(&query, 1)?;
    let id = ids::parse(id)?;
    let start = position(&page);
    let fetch = page.limit + 1;
    let items = ctx
        .db
        .read(move |c| db::invoices::items(c, &user.org_id, &id, start, fetch))
        .await?
        .ok_or(ApiError::NotFound)?;
    let keyed = (start + 1..)
        .zip(items)
        .map(|(n, item)| (vec![n.to_string()], item));
    Ok(Json(page.envelope(keyed.collect(), |item| item)))
}

/// Where a positional list resumes: after the position its cursor names (capped far
/// beyond any real list, so position arithmetic cannot overflow).
fn position(page: &Page) -> usize {
    page.after
        .as_ref()
        .and_then(|k| k[0].parse::<u32>().ok())
        .map_or(0, |n| n as usize)
}

/// Every document the invoice's CfdiRelacionados name, in document order (the invoice
/// object carries the first `relations::EMBEDDED`); the cursor is the last position.
#[get("/v1/invoices/<id>/relates-to")]
async fn list_invoice_relates_to(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<RawJson<String>> {
    let page = Page::from_query(&query, 1)?;
    let id = ids::parse(id)?;
    let after = match &page.after {
        Some(key) => key[0].parse::<i64>().map_err(|_| cursor_invalid())?,
        None => -1,
    };
    let fetch = page.fetch();
    let entries = ctx
        .db
        .read(move |c| {
            let Some(_) = db::invoices::visible(c, &user.org_id, &id)? else {
                return Ok(None);
            };
            db::invoices::relations::relates_to(c, &id, after, fetch).map(Some)
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    let keyed = entries
        .into_iter()
        .map(|(position, entry)| (vec![position.to_string()], entry))
        .collect();
    Ok(page.envelope(keyed, |entry| entry).splice())
}

/// Every stored document whose CfdiRelacionados name the invoice, oldest first (the
/// invoice object carries the first `relations::EMBEDDED`); the cursor is the last
/// entry's key (`NamedAt`).
#[get("/v1/invoices/<id>/related-by")]
async fn list_invoice_related_by(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<RawJson<String>> {
    let page = Page::from_query(&query, 3)?;
    let id = ids::parse(id)?;
    let after = match &page.after {
        Some(key) => db::invoices::relations::NamedAt {
            issued_at: key[0].clone(),
            invoice_id: key[1].clone(),
            position: key[2].parse().map_err(|_| cursor_invalid())?,
        },
        None => Default::default(),
    };
    let fetch = page.fetch();
    let entries = ctx
        .db
        .read(move |c| {
            let Some(_) = db::invoices::visible(c, &user.org_id, &id)? else {
                return Ok(None);
            };
            db::invoices::relations::related_by(c, &id, &after, fetch).map(Some)
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    let keyed = entries
        .into_iter()
        .map(|(at, entry)| {
            let key = vec![at.issued_at, at.invoice_id, at.position.to_string()];
            (key, entry)
        })
        .collect();
    Ok(page.envelope(keyed, |entry| entry).splice())
}

/// The 422 of a cursor whose parts decode but do not parse.
fn cursor_invalid() -> ApiError {
    let mut errors = FieldErrors::new();
    errors.add("cursor", "is invalid");
    ApiError::Validation(errors)
}

#[get("/v1/invoices/<id>/payments")]
async fn list_invoice_payments(
    user: AuthUser,
    id: &str,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<Json<Envelope<Value>>> {
    let mut errors = FieldErrors::new();
    let page = Page::parse(query.get("limit"), query.get("cursor"), 1, &mut errors);
    errors.into_result()?;
    let id = ids::parse(id)?;
    let entries = ctx
        .db
        .read(move |c| {
            let Some((uuid, entity_id)) = db::invoices::visible(c, &user.org_id, &id)? else {
                return Ok(None);
            };
            db::payment_entries::payments_of(c, &entity_id, &uuid).map(Some)
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    // Oldest first; the cursor is the position of the last entry returned.
    let start = position(&page);
    let keyed = entries
        .into_iter()
        .enumerate()
        .skip(start)
        .take(page.limit + 1)
        .map(|(i, e)| (vec![(i + 1).to_string()], e))
        .collect();
    Ok(Json(page.envelope(keyed, |(pid, e)| {
        db::invoices::payment_view(&pid, &e)
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(pairs: &[(&str, &str)]) -> Query {
        Query(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn filters_validate_each_parameter_by_name() {
        let mut e = FieldErrors::new();
        InvoiceClass::parse_filter(
            &q(&[
                ("direction", "sideways"),
                ("type", "X"),
                ("issued_from", "2026-02-30"),
                ("outstanding", "maybe"),
                ("entity_id", "x"),
            ]),
            &mut e,
        );
        for f in [
            "direction",
            "type",
            "issued_from",
            "outstanding",
            "entity_id",
        ] {
            assert!(e.contains(f), "{f}");
        }
        let mut e = FieldErrors::new();
        let f = InvoiceClass::parse_filter(
            &q(&[
                ("issued_from", "2026-01-01"),
                ("issued_to", "2026-01-31"),
                ("uuid", "abc"),
            ]),
            &mut e,
        );
        assert!(e.is_empty());
        assert_eq!(f.issued_before.as_deref(), Some("2026-02-01"));
        assert_eq!(f.uuid.as_deref(), Some("ABC"));
    }
}
