//! `/v1/invoices`: processed invoices, their documents and the payments that pay them.

use crate::auth::AuthUser;
use crate::db::{
    self,
    invoices::{Filter, Order},
};
use crate::domain::sat_status::State as SatState;
use crate::error::{ApiError, ApiResult, FieldErrors};
use crate::http::Ctx;
use crate::http::{
    heavy::Heavy,
    ids,
    pagination::{Envelope, Page},
    query::Query,
};
use rocket::http::{ContentType, Header};
use rocket::response::{self, content::RawJson, Responder};
use rocket::serde::json::Json;
use rocket::{get, post, routes, Request, Route, State};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![
        list_invoices,
        get_invoice,
        get_invoice_cfdi,
        list_invoice_items,
        list_invoice_payments,
        list_invoice_relates_to,
        list_invoice_related_by,
        request_status_check
    ]
}

pub(super) fn date(
    query: &Query,
    name: &str,
    errors: &mut FieldErrors,
) -> Option<chrono::NaiveDate> {
    let v = query.get(name)?;
    let d = crate::time::parse_date(v);
    if d.is_none() {
        errors.add(name, crate::time::DATE_RULE);
    }
    d
}

/// `updated_since`: an RFC 3339 timestamp (any offset), kept in the service's format
/// so that it compares with `updated_at` as text.
pub(super) fn timestamp(query: &Query, name: &str, errors: &mut FieldErrors) -> Option<String> {
    let v = query.get(name)?;
    let t = crate::time::parse(v).map(crate::time::format);
    if t.is_none() {
        errors.add(
            name,
            "must be an RFC 3339 timestamp (e.g. 2026-01-31T18:00:00Z)",
        );
    }
    t
}

/// `order`: `issued_at_desc` (the default) or `updated_at_asc`.
fn order(query: &Query, errors: &mut FieldErrors) -> Order {
    match query
        .one_of("order", &["issued_at_desc", "updated_at_asc"], errors)
        .as_deref()
    {
        Some("updated_at_asc") => Order::UpdatedAsc,
        _ => Order::IssuedDesc,
    }
}

/// The parts of a list cursor: `(issued_at, id)`, or `("updated_at", updated_at, id)`
/// so that a cursor of one order is refused (422) by the other.
fn cursor_key(order: Order, row: &db::invoices::InvoiceRow) -> Vec<String> {
    match order {
        Order::IssuedDesc => vec![row.issued_at.clone(), row.id.clone()],
        Order::UpdatedAsc => vec![UPDATED_TAG.into(), row.updated_at.clone(), row.id.clone()],
    }
}

pub(super) const UPDATED_TAG: &str = "updated_at";

/// The list's filters and order (shared with the exports); each bad value is a 422 on
/// its name.
pub(super) fn parse_filter(query: &Query, errors: &mut FieldErrors) -> Filter {
    let entity_id = query
        .get("entity_id")
        .and_then(|v| match uuid::Uuid::parse_str(v.trim()) {
            Ok(u) => Some(u.to_string()),
            Err(_) => {
                errors.add("entity_id", "must be a UUID");
                None
            }
        });
    let outstanding = query.flag("outstanding", errors);
    let substituted = query.flag("substituted", errors);
    let credited = query.flag("credited", errors);
    let upper = |name: &str| {
        query
            .get(name)
            .map(|v| v.trim().to_uppercase())
            .filter(|v| !v.is_empty())
    };
    let from = date(query, "issued_from", errors);
    let to = date(query, "issued_to", errors);
    if let (Some(f), Some(t)) = (from, to) {
        if t < f {
            errors.add("issued_to", "must be on or after issued_from");
        }
    }
    Filter {
        entity_id,
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
        issuer_tax_id: upper("issuer_tax_id"),
        receiver_tax_id: upper("receiver_tax_id"),
        uuid: upper("uuid"),
        currency: upper("currency"),
        issued_from: from.map(|d| d.format("%Y-%m-%d").to_string()),
        issued_before: to.map(crate::time::day_after),
        outstanding,
        substituted,
        credited,
        updated_since: timestamp(query, "updated_since", errors),
        order: order(query, errors),
    }
}

#[get("/v1/invoices")]
async fn list_invoices(user: AuthUser, query: Query, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    let mut errors = FieldErrors::new();
    let filter = parse_filter(&query, &mut errors);
    let key_len = match filter.order {
        Order::IssuedDesc => 2,
        Order::UpdatedAsc => 3,
    };
    let mut page = Page::parse(
        query.get("limit"),
        query.get("cursor"),
        key_len,
        &mut errors,
    );
    if filter.order == Order::UpdatedAsc && page.after.as_ref().is_some_and(|k| k[0] != UPDATED_TAG)
    {
        errors.add("cursor", "is invalid");
        page.after = None;
    }
    errors.into_result()?;
    let (after, fetch, order) = (page.after.clone(), page.fetch(), filter.order);
    let rows = ctx
        .db
        .read(move |c| {
            // The last two parts of the key are (timestamp, id) in either order.
            let after = after.as_ref().map(|k| {
                let n = k.len();
                (k[n - 2].as_str(), k[n - 1].as_str())
            });
            db::invoices::list(c, &user.org_id, &filter, after, fetch)
        })
        .await?;
    let keyed = rows
        .into_iter()
        .map(|r| (cursor_key(order, &r), r))
        .collect();
    Ok(page.envelope(keyed, |r| r.view).splice())
}

#[get("/v1/invoices/<id>")]
async fn get_invoice(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    let id = ids::parse(id)?;
    let invoice = ctx
        .db
        .read(move |c| db::invoices::get(c, &user.org_id, &id))
        .await?;
    Ok(RawJson(invoice.ok_or(ApiError::NotFound)?))
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
    ctx: &Ctx,
) -> ApiResult<(rocket::http::Status, RawJson<String>)> {
    let id = ids::parse(id)?;
    let on = ctx.sat_status.is_some();
    let invoice = ctx
        .db
        .write(move |tx| {
            let now = crate::time::now();
            if on && !db::invoices::sat_status::request(tx, &user.org_id, &id, &now)? {
                return Ok(None);
            }
            db::invoices::get(tx, &user.org_id, &id)
        })
        .await?
        .ok_or(ApiError::NotFound)?;
    if !on {
        return Err(ApiError::UnavailableSaying(STATUS_CHECKS_OFF));
    }
    Ok((rocket::http::Status::Accepted, RawJson(invoice)))
}

/// The representations of an invoice document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Format {
    Xml,
    Pdf,
    Json,
}

/// `?format=` wins; otherwise the first media type of `Accept` we can serve; JSON by default.
pub(super) fn negotiate(query: &Query, accept: Option<&str>) -> ApiResult<Format> {
    if let Some(f) = query.get("format") {
        return match f.trim().to_ascii_lowercase().as_str() {
            "xml" => Ok(Format::Xml),
            "pdf" => Ok(Format::Pdf),
            "json" => Ok(Format::Json),
            _ => Err(ApiError::validation(
                "format",
                "must be one of xml, pdf, json",
            )),
        };
    }
    let found = accept.unwrap_or("").split(',').find_map(|part| {
        let media = part
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        match media.as_str() {
            "application/xml" | "text/xml" => Some(Format::Xml),
            "application/pdf" => Some(Format::Pdf),
            "application/json" | "*/*" | "application/*" => Some(Format::Json),
            _ => None,
        }
    });
    Ok(found.unwrap_or(Format::Json))
}

/// Raw document bytes: the XML, or a PDF saying where it came from.
pub struct Document {
    pub(super) bytes: Vec<u8>,
    pub(super) kind: DocumentKind,
    pub(super) filename: String,
}

#[derive(Clone, Copy)]
pub(super) enum DocumentKind {
    Xml,
    /// `X-Cfdi-Pdf`: the SAT's PDF (`original`) or one rendered from the XML.
    Pdf(&'static str),
}

impl<'r> Responder<'r, 'static> for Document {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let mut res = self.bytes.respond_to(req)?;
        res.set_header(match self.kind {
            DocumentKind::Xml => ContentType::XML,
            DocumentKind::Pdf(_) => ContentType::PDF,
        });
        res.set_header(Header::new(
            "Content-Disposition",
            format!("inline; filename=\"{}\"", self.filename),
        ));
        if let DocumentKind::Pdf(source) = self.kind {
            res.set_header(Header::new("X-Cfdi-Pdf", source));
        }
        Ok(res)
    }
}

#[derive(rocket::Responder)]
pub enum CfdiResponse {
    Document(Document),
    Json(RawJson<String>),
}

pub(super) struct AcceptHeader<'r>(pub(super) Option<&'r str>);

#[rocket::async_trait]
impl<'r> rocket::request::FromRequest<'r> for AcceptHeader<'r> {
    type Error = std::convert::Infallible;
    async fn from_request(req: &'r Request<'_>) -> rocket::request::Outcome<Self, Self::Error> {
        rocket::request::Outcome::Success(AcceptHeader(req.headers().get_one("Accept")))
    }
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
    let format = negotiate(&query, accept.0)?;
    // The spec's PDF is the SAT's own (404 without it); printing one from the XML is
    // ours, so it is asked for by name.
    let mut errors = FieldErrors::new();
    let render = query.flag("render", &mut errors).unwrap_or(false);
    errors.into_result()?;
    let id = ids::parse(id)?;
    let org = user.org_id.clone();
    let found = ctx.db.read(move |c| {
        let Some((uuid, _)) = db::invoices::visible(c, &org, &id)? else {
            return Ok(None);
        };
        let body = match format {
            Format::Json => None,
            Format::Xml => db::documents::get(c, &id, "xml")?.map(Body::Xml),
            // The SAT's PDF wins; without one, the XML to render one from, when asked.
            Format::Pdf => match db::documents::get(c, &id, "pdf")? {
                Some(pdf) => Some(Body::Pdf(pdf)),
                None if render => db::documents::get(c, &id, "xml")?.map(Body::RenderFrom),
                None => None,
            },
        };
        let json = if format == Format::Json {
            db::invoices::get(c, &org, &id)?
        } else {
            None
        };
        Ok(Some((uuid, body, json)))
    });
    let (uuid, body, json) = found.await?.ok_or(ApiError::NotFound)?;
    if format == Format::Json {
        return Ok(CfdiResponse::Json(RawJson(json.ok_or(ApiError::NotFound)?)));
    }
    if body.is_none() && format == Format::Pdf {
        return Err(ApiError::NotFoundSaying(NO_PDF_MESSAGE));
    }
    let document = |bytes, kind| {
        let ext = match kind {
            DocumentKind::Xml => "xml",
            DocumentKind::Pdf(_) => "pdf",
        };
        CfdiResponse::Document(Document {
            bytes,
            kind,
            filename: format!("{uuid}.{ext}"),
        })
    };
    Ok(match body.ok_or(ApiError::NotFound)? {
        Body::Xml(xml) => document(xml, DocumentKind::Xml),
        Body::Pdf(pdf) => document(pdf, DocumentKind::Pdf("original")),
        Body::RenderFrom(xml) => {
            let pdf = heavy.run(&user.org_id, move || render_pdf(&xml)).await?;
            document(pdf, DocumentKind::Pdf("rendered"))
        }
    })
}

/// The spec's 404 when `has_pdf` is false, saying how to get one printed from the XML.
pub const NO_PDF_MESSAGE: &str =
    "The SAT gave no PDF for this invoice (has_pdf is false); add render=true for one printed from the XML";

/// A stored document, or the XML a PDF is to be rendered from.
enum Body {
    Xml(Vec<u8>),
    Pdf(Vec<u8>),
    RenderFrom(Vec<u8>),
}

/// The printed representation of a stored XML (it parsed when it was stored).
fn render_pdf(xml: &[u8]) -> ApiResult<Vec<u8>> {
    let cfdi = crate::cfdi::Cfdi::parse(xml)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("stored CFDI does not parse: {e}")))?;
    Ok(crate::pdf::invoice::render(&cfdi))
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
    fn format_parameter_wins_over_accept() {
        assert_eq!(
            negotiate(&q(&[("format", "pdf")]), Some("application/xml")).ok(),
            Some(Format::Pdf)
        );
        assert_eq!(negotiate(&q(&[]), Some("text/xml")).ok(), Some(Format::Xml));
        assert_eq!(
            negotiate(&q(&[]), Some("application/pdf;q=0.9, */*")).ok(),
            Some(Format::Pdf)
        );
        assert_eq!(negotiate(&q(&[]), None).ok(), Some(Format::Json));
        assert_eq!(
            negotiate(&q(&[]), Some("image/png")).ok(),
            Some(Format::Json)
        );
        assert!(negotiate(&q(&[("format", "docx")]), None).is_err());
    }

    #[test]
    fn filters_validate_each_parameter_by_name() {
        let mut e = FieldErrors::new();
        parse_filter(
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
        let f = parse_filter(
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
