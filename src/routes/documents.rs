//! What every document class serves, written once: its list (filters, keyset cursor in
//! either order), one document, and its `/cfdi` in the formats clients negotiate (the
//! XML byte for byte, a PDF stored or printed from the XML, or JSON). A class plugs in
//! by implementing `Served` (its filters and how its PDF is printed) beside `Stored`,
//! and its routes file mounts one-line handlers that call these.

use crate::auth::AuthUser;
use crate::db::classes::{ListRow, Order, Stored};
use crate::domain::seal::SealFilter;
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::{heavy::Heavy, ids, pagination::Page, query::Query, Ctx};
use rocket::http::{ContentType, Header};
use rocket::response::{self, content::RawJson, Responder};
use rocket::serde::json::Json;
use rocket::Request;
use serde_json::Value;

/// A document class as the API serves it.
pub trait Served: Stored {
    /// The list's filters and order (shared with the exports); each bad value is a 422
    /// on its name.
    fn parse_filter(query: &Query, errors: &mut FieldErrors) -> Self::Filter;
    /// The query parameters of its period's bounds (an accountant's file is named for
    /// them).
    const PERIOD: (&'static str, &'static str);
    /// Where a PDF comes from when none is stored with the document.
    const PRINTING: Printing;
    /// The printed representation of a stored XML (it parsed when it was stored).
    fn print(xml: &[u8]) -> anyhow::Result<Vec<u8>>;
}

/// How a class's PDF is printed from its XML when none is stored.
pub enum Printing {
    /// Only when asked with `render=true`; otherwise a 404 with this message (the
    /// contract's: the SAT's PDF or none).
    OnRequest(&'static str),
    /// Always (the SAT's downloads carry none).
    Always,
}

// ---------------------------------------------------------------------------------------
// Filters every class shares

/// `entity_id`: a UUID.
pub fn entity_id(query: &Query, errors: &mut FieldErrors) -> Option<String> {
    query
        .get("entity_id")
        .and_then(|v| match uuid::Uuid::parse_str(v.trim()) {
            Ok(u) => Some(u.to_string()),
            Err(_) => {
                errors.add("entity_id", "must be a UUID");
                None
            }
        })
}

/// A date parameter (`YYYY-MM-DD`, or an RFC 3339 timestamp's date).
pub fn date(query: &Query, name: &str, errors: &mut FieldErrors) -> Option<chrono::NaiveDate> {
    let v = query.get(name)?;
    let d = crate::time::parse_date(v);
    if d.is_none() {
        errors.add(name, crate::time::DATE_RULE);
    }
    d
}

/// `updated_since`: an RFC 3339 timestamp (any offset), kept in the service's format
/// so that it compares with `updated_at` as text.
pub fn timestamp(query: &Query, name: &str, errors: &mut FieldErrors) -> Option<String> {
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
pub fn order(query: &Query, errors: &mut FieldErrors) -> Order {
    match query
        .one_of("order", &["issued_at_desc", "updated_at_asc"], errors)
        .as_deref()
    {
        Some("updated_at_asc") => Order::UpdatedAsc,
        _ => Order::IssuedDesc,
    }
}

/// `seal`: the seal's status (`valid`, `invalid` or `unverified`, `domain::seal`).
pub fn seal(query: &Query, errors: &mut FieldErrors) -> Option<SealFilter> {
    query
        .one_of("seal", SealFilter::WIRE, errors)
        .and_then(|v| SealFilter::parse(&v))
}

/// A text filter compared in upper case (RFCs, UUIDs, currencies); blank is absent.
pub fn upper(query: &Query, name: &str) -> Option<String> {
    query
        .get(name)
        .map(|v| v.trim().to_uppercase())
        .filter(|v| !v.is_empty())
}

// ---------------------------------------------------------------------------------------
// The list and the read

/// The first part of an `updated_at_asc` cursor: a cursor of one order is refused
/// (422) by the other.
const UPDATED_TAG: &str = "updated_at";

/// The parts of a list cursor: `(issued_at, id)`, or `("updated_at", updated_at, id)`.
fn cursor_key(order: Order, row: &ListRow) -> Vec<String> {
    match order {
        Order::IssuedDesc => vec![row.issued_at.clone(), row.id.clone()],
        Order::UpdatedAsc => vec![UPDATED_TAG.into(), row.updated_at.clone(), row.id.clone()],
    }
}

/// `GET /v1/<class>`: a page of the organization's documents matching the filters.
pub async fn list<C: Served>(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
) -> ApiResult<RawJson<String>> {
    let mut errors = FieldErrors::new();
    let filter = C::parse_filter(&query, &mut errors);
    let order = C::order(&filter);
    let key_len = match order {
        Order::IssuedDesc => 2,
        Order::UpdatedAsc => 3,
    };
    let mut page = Page::parse(
        query.get("limit"),
        query.get("cursor"),
        key_len,
        &mut errors,
    );
    if order == Order::UpdatedAsc && page.after.as_ref().is_some_and(|k| k[0] != UPDATED_TAG) {
        errors.add("cursor", "is invalid");
        page.after = None;
    }
    errors.into_result()?;
    let (after, fetch) = (page.after.clone(), page.fetch());
    let rows = ctx
        .db
        .read(move |c| {
            // The last two parts of the key are (timestamp, id) in either order.
            let after = after.as_ref().map(|k| {
                let n = k.len();
                (k[n - 2].as_str(), k[n - 1].as_str())
            });
            C::list(c, &user.org_id, &filter, after, fetch)
        })
        .await?;
    let keyed = rows
        .into_iter()
        .map(|r| (cursor_key(order, &r), r))
        .collect();
    Ok(page.envelope(keyed, |r| r.view).splice())
}

/// `GET /v1/<class>/totals`: how many of the organization's documents match the list's
/// filters, and what their amounts add up to per currency. It reads every match (the
/// amounts are added exactly, in Rust), so it runs on the heavy pool in the
/// organization's turn.
pub async fn totals<C: Served>(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
    heavy: &Heavy,
) -> ApiResult<Json<Value>> {
    let mut errors = FieldErrors::new();
    let filter = C::parse_filter(&query, &mut errors);
    errors.into_result()?;
    let db = ctx.db.clone();
    let org = user.org_id.clone();
    let totals = heavy
        .run(&user.org_id, move || {
            let conn = db.conn().map_err(ApiError::Internal)?;
            C::totals(&conn, &org, &filter).map_err(ApiError::Internal)
        })
        .await?;
    Ok(Json(totals.view()))
}

/// `GET /v1/<class>/{id}`: one document of the organization.
pub async fn get<C: Served>(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    let id = ids::parse(id)?;
    let found = ctx.db.read(move |c| C::get(c, &user.org_id, &id)).await?;
    Ok(RawJson(found.ok_or(ApiError::NotFound)?))
}

// ---------------------------------------------------------------------------------------
// The document endpoint

/// The representations of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Xml,
    Pdf,
    Json,
}

/// `?format=` wins; otherwise the first media type of `Accept` we can serve; JSON by default.
pub fn negotiate(query: &Query, accept: Option<&str>) -> ApiResult<Format> {
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
    bytes: Vec<u8>,
    kind: DocumentKind,
    filename: String,
}

#[derive(Clone, Copy)]
enum DocumentKind {
    Xml,
    /// `X-Cfdi-Pdf`: the stored PDF (`original`) or one printed from the XML (`rendered`).
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

pub struct AcceptHeader<'r>(Option<&'r str>);

#[rocket::async_trait]
impl<'r> rocket::request::FromRequest<'r> for AcceptHeader<'r> {
    type Error = std::convert::Infallible;
    async fn from_request(req: &'r Request<'_>) -> rocket::request::Outcome<Self, Self::Error> {
        rocket::request::Outcome::Success(AcceptHeader(req.headers().get_one("Accept")))
    }
}

/// What the document endpoint found.
enum Body {
    Json(String),
    Xml(Vec<u8>),
    Pdf(Vec<u8>),
    PrintFrom(Vec<u8>),
}

/// `GET /v1/<class>/{id}/cfdi`: the document as negotiated. A PDF is the one stored
/// with it, else one printed from the XML as the class prints (`Served::PRINTING`),
/// on the heavy pool.
pub async fn cfdi<C: Served>(
    user: AuthUser,
    id: &str,
    query: Query,
    accept: AcceptHeader<'_>,
    ctx: &Ctx,
    heavy: &Heavy,
) -> ApiResult<CfdiResponse> {
    let format = negotiate(&query, accept.0)?;
    let print = match C::PRINTING {
        Printing::Always => true,
        Printing::OnRequest(_) => {
            let mut errors = FieldErrors::new();
            let render = query.flag("render", &mut errors).unwrap_or(false);
            errors.into_result()?;
            render
        }
    };
    let id = ids::parse(id)?;
    let org = user.org_id.clone();
    let found = ctx.db.read(move |c| {
        let Some(uuid) = C::uuid(c, &org, &id)? else {
            return Ok(None);
        };
        let file = |kind| crate::db::documents::get_of(c, C::FILES, &id, kind);
        let body = match format {
            Format::Json => C::get(c, &org, &id)?.map(Body::Json),
            Format::Xml => file("xml")?.map(Body::Xml),
            Format::Pdf => match file("pdf")? {
                Some(pdf) => Some(Body::Pdf(pdf)),
                None if print => file("xml")?.map(Body::PrintFrom),
                None => None,
            },
        };
        Ok(Some((uuid, body)))
    });
    let (uuid, body) = found.await?.ok_or(ApiError::NotFound)?;
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
    Ok(match body {
        Some(Body::Json(json)) => CfdiResponse::Json(RawJson(json)),
        Some(Body::Xml(xml)) => document(xml, DocumentKind::Xml),
        Some(Body::Pdf(pdf)) => document(pdf, DocumentKind::Pdf("original")),
        Some(Body::PrintFrom(xml)) => {
            let pdf = heavy
                .run(&user.org_id, move || {
                    C::print(&xml).map_err(ApiError::Internal)
                })
                .await?;
            document(pdf, DocumentKind::Pdf("rendered"))
        }
        None => match (format, C::PRINTING) {
            (Format::Pdf, Printing::OnRequest(message)) => {
                return Err(ApiError::NotFoundSaying(message))
            }
            _ => return Err(ApiError::NotFound),
        },
    })
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
}
