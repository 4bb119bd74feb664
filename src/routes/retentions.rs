//! `/v1/retentions`: CFDI de Retenciones e Información de Pagos, a document class of
//! their own beside invoices: the list, one retention, and its document (the XML byte
//! for byte, a PDF, or JSON) with the invoices' content negotiation.

use super::documents::{self, AcceptHeader, CfdiResponse, Printing, Served};
use crate::auth::AuthUser;
use crate::db::retentions::Filter;
use crate::domain::class::RetentionClass;
use crate::domain::search::Search;
use crate::domain::FieldErrors;
use crate::http::error::ApiResult;
use crate::http::{heavy::Heavy, query::Query, Ctx};
use rocket::response::content::RawJson;
use rocket::serde::json::Json;
use rocket::{get, routes, Route, State};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![
        list_retentions,
        retention_totals,
        get_retention,
        get_retention_cfdi
    ]
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

impl Served for RetentionClass {
    fn parse_filter(query: &Query, errors: &mut FieldErrors) -> Filter {
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
        Filter {
            entity_id: documents::entity_id(query, errors),
            direction: query.one_of("direction", &["issued", "received"], errors),
            retention_key,
            counterpart_tax_id: documents::upper(query, "counterpart_tax_id"),
            status: query.one_of("status", &["active", "cancelled"], errors),
            period_from,
            period_to,
            updated_since: documents::timestamp(query, "updated_since", errors),
            q: Search::parse(query.get("q"), errors),
            seal: documents::seal(query, errors),
            order: documents::order(query, errors),
        }
    }

    const PERIOD: (&'static str, &'static str) = ("period_from", "period_to");

    /// The SAT's downloads carry no PDF of a retention, so printing needs no
    /// `render=true` here (an import can bring one, which wins).
    const PRINTING: Printing = Printing::Always;

    fn print(xml: &[u8]) -> anyhow::Result<Vec<u8>> {
        let r = crate::retention::Retention::parse(xml)
            .map_err(|e| anyhow::anyhow!("stored retention does not parse: {e}"))?;
        Ok(crate::pdf::retention::render(&r))
    }
}

#[get("/v1/retentions")]
async fn list_retentions(user: AuthUser, query: Query, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    documents::list::<RetentionClass>(user, query, ctx).await
}

/// `GET /v1/retentions/totals`: how many retentions the list's filters match, and
/// their totals.
#[get("/v1/retentions/totals")]
async fn retention_totals(
    user: AuthUser,
    query: Query,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Json<Value>> {
    documents::totals::<RetentionClass>(user, query, ctx, heavy).await
}

#[get("/v1/retentions/<id>")]
async fn get_retention(user: AuthUser, id: &str, ctx: &Ctx) -> ApiResult<RawJson<String>> {
    documents::get::<RetentionClass>(user, id, ctx).await
}

/// The retention's document: `format=xml` the XML as received, `json` the retention
/// object, `pdf` the PDF stored with it (`X-Cfdi-Pdf: original`) or else one printed
/// from the XML (`rendered`).
#[get("/v1/retentions/<id>/cfdi")]
async fn get_retention_cfdi(
    user: AuthUser,
    id: &str,
    query: Query,
    accept: AcceptHeader<'_>,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<CfdiResponse> {
    documents::cfdi::<RetentionClass>(user, id, query, accept, ctx, heavy).await
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
        RetentionClass::parse_filter(
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
        RetentionClass::parse_filter(
            &q(&[("period_from", "2026-05"), ("period_to", "2026-04")]),
            &mut e,
        );
        assert!(e.contains("period_to"));
        let mut e = FieldErrors::new();
        let f = RetentionClass::parse_filter(
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
