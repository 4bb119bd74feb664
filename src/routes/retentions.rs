//! `/v1/retentions`: CFDI de Retenciones e Información de Pagos, a document class of
//! their own beside invoices: the list, one retention, and its document (the XML byte
//! for byte, a PDF, or JSON) with the invoices' content negotiation.

use super::invoices::{
    negotiate, timestamp, AcceptHeader, CfdiResponse, Document, DocumentKind, Format, UPDATED_TAG,
};
use crate::auth::AuthUser;
use crate::db::{
    self,
    documents::Class,
    retentions::{Filter, RetentionRow},
};
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, ApiResult};
use crate::http::{heavy::Heavy, ids, pagination::Page, query::Query, Ctx};
use rocket::response::content::RawJson;
use rocket::{get, routes, Route, State};

pub fn routes() -> Vec<Route> {
    routes![list_retentions, get_retention, get_retention_cfdi]
}

/// A period bound, `YYYY-MM` with a month from 01 to 12.
fn month(query: &Query, name: &str, errors: &mut FieldErrors) -> Option<String> {
    let v = query.get(name)?.trim();
    let valid = v.len() == 7
        && v.as_bytes()[4] == b'-'
        && v[..4].bytes().all(|b| b.is_ascii_digit())
        && v[5..].parse::<u32>().is_ok_and(|m| (1..=12).contains(&m))
        && v[5..].bytes().all(|b| b.is_ascii_digit());
    if !valid {
        errors.add(name, "must be a month, YYYY-MM (e.g. 2026-01)");
        return None;
    }
    Some(v.to_owned())
}

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
    let period_from = month(query, "period_from", errors);
    let period_to = month(query, "period_to", errors);
    if let (Some(from), Some(to)) = (&period_from, &period_to) {
        if to < from {
            errors.add("period_to", "must be on or after period_from");
        }
    }
    let retention_key = query.get("retention_key").map(str::trim).and_then(|k| {
        let valid = !k.is_empty() && k.len() <= 4 && k.bytes().all(|b| b.is_ascii_digit());
        if !valid {
            errors.add("retention_key", "must be the SAT's retention key, e.g. 14");
        }
        valid.then(|| k.to_owned())
    });
    let updated_order = matches!(
        query
            .one_of("order", &["issued_at_desc", "updated_at_asc"], errors)
            .as_deref(),
        Some("updated_at_asc")
    );
    Filter {
        entity_id,
        direction: query.one_of("direction", &["issued", "received"], errors),
        retention_key,
        counterpart_tax_id: query
            .get("counterpart_tax_id")
            .map(|v| v.trim().to_uppercase())
            .filter(|v| !v.is_empty()),
        status: query.one_of("status", &["active", "cancelled"], errors),
        period_from,
        period_to,
        updated_since: timestamp(query, "updated_since", errors),
        updated_order,
    }
}

/// The parts of a list cursor, as for invoices: `(issued_at, id)`, or
/// `("updated_at", updated_at, id)` so that a cursor of one order is refused by the other.
fn cursor_key(updated_order: bool, row: &RetentionRow) -> Vec<String> {
    if updated_order {
        vec![UPDATED_TAG.into(), row.updated_at.clone(), row.id.clone()]
    } else {
        vec![row.issued_at.clone(), row.id.clone()]
    }
}

#[get("/v1/retentions")]
async fn list_retentions(user: AuthUser, query: Query, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    let mut errors = FieldErrors::new();
    let filter = parse_filter(&query, &mut errors);
    let updated_order = filter.updated_order;
    let key_len = if updated_order { 3 } else { 2 };
    let mut page = Page::parse(
        query.get("limit"),
        query.get("cursor"),
        key_len,
        &mut errors,
    );
    if updated_order && page.after.as_ref().is_some_and(|k| k[0] != UPDATED_TAG) {
        errors.add("cursor", "is invalid");
        page.after = None;
    }
    errors.into_result()?;
    let (after, fetch) = (page.after.clone(), page.fetch());
    let rows = ctx
        .db
        .read(move |c| {
            let after = after.as_ref().map(|k| {
                let n = k.len();
                (k[n - 2].as_str(), k[n - 1].as_str())
            });
            db::retentions::list(c, &user.org_id, &filter, after, fetch)
        })
        .await?;
    let keyed = rows
        .into_iter()
        .map(|r| (cursor_key(updated_order, &r), r))
        .collect();
    Ok(page.envelope(keyed, |r| r.view).splice())
}

#[get("/v1/retentions/<id>")]
async fn get_retention(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    let id = ids::parse(id)?;
    let retention = ctx
        .db
        .read(move |c| db::retentions::get(c, &user.org_id, &id))
        .await?;
    Ok(RawJson(retention.ok_or(ApiError::NotFound)?))
}

/// What the document endpoint serves.
enum Body {
    Xml(Vec<u8>),
    Pdf(Vec<u8>),
    RenderFrom(Vec<u8>),
    Json(String),
}

/// The retention's document: `format=xml` the XML as received, `json` the retention
/// object, `pdf` the PDF stored with it (`X-Cfdi-Pdf: original`, an import can bring
/// one) or else one printed from the XML (`rendered`): the SAT's downloads carry no
/// PDF of a retention, so printing needs no `render=true` here.
#[get("/v1/retentions/<id>/cfdi")]
async fn get_retention_cfdi(
    user: AuthUser,
    id: &str,
    query: Query,
    accept: AcceptHeader<'_>,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<CfdiResponse> {
    let format = negotiate(&query, accept.0)?;
    let id = ids::parse(id)?;
    let org = user.org_id.clone();
    let found = ctx.db.read(move |c| {
        let Some(json) = db::retentions::get(c, &org, &id)? else {
            return Ok(None);
        };
        let get = |kind| db::documents::get_of(c, Class::Retention, &id, kind);
        let body = match format {
            Format::Json => Some(Body::Json(json)),
            Format::Xml => get("xml")?.map(Body::Xml),
            Format::Pdf => match get("pdf")? {
                Some(pdf) => Some(Body::Pdf(pdf)),
                None => get("xml")?.map(Body::RenderFrom),
            },
        };
        let uuid = db::retentions::uuid(c, &org, &id)?;
        Ok(Some((uuid.unwrap_or_default(), body)))
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
    Ok(match body.ok_or(ApiError::NotFound)? {
        Body::Json(json) => CfdiResponse::Json(RawJson(json)),
        Body::Xml(xml) => document(xml, DocumentKind::Xml),
        Body::Pdf(pdf) => document(pdf, DocumentKind::Pdf("original")),
        Body::RenderFrom(xml) => {
            let pdf = heavy.run(&user.org_id, move || render_pdf(&xml)).await?;
            document(pdf, DocumentKind::Pdf("rendered"))
        }
    })
}

/// The printed representation of a stored retention's XML (it parsed when stored).
fn render_pdf(xml: &[u8]) -> ApiResult<Vec<u8>> {
    let r = crate::retention::Retention::parse(xml)
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("stored retention does not parse: {e}")))?;
    Ok(crate::pdf::retention::render(&r))
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
        parse_filter(
            &q(&[
                ("direction", "sideways"),
                ("period_from", "2026-13"),
                ("period_to", "2026-1"),
                ("retention_key", "dividendos"),
                ("updated_since", "yesterday"),
                ("entity_id", "x"),
                ("order", "random"),
            ]),
            &mut e,
        );
        for f in [
            "direction",
            "period_from",
            "period_to",
            "retention_key",
            "updated_since",
            "entity_id",
            "order",
        ] {
            assert!(e.contains(f), "{f}");
        }
        let mut e = FieldErrors::new();
        parse_filter(
            &q(&[("period_from", "2026-05"), ("period_to", "2026-04")]),
            &mut e,
        );
        assert!(e.contains("period_to"));
        let mut e = FieldErrors::new();
        let f = parse_filter(
            &q(&[
                ("period_from", "2014-06"),
                ("period_to", "2014-06"),
                ("counterpart_tax_id", " aaa010101aaa "),
                ("retention_key", "14"),
            ]),
            &mut e,
        );
        assert!(e.is_empty());
        assert_eq!(f.counterpart_tax_id.as_deref(), Some("AAA010101AAA"));
        assert_eq!(f.retention_key.as_deref(), Some("14"));
        assert_eq!(f.period_from.as_deref(), Some("2014-06"));
    }
}
