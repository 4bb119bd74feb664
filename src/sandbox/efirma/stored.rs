//! A simulated request as stored in `requests`, to and from the query.

use anyhow::Context;
use chrono::NaiveDateTime;

use super::documents::Asker;
use super::READY;
use crate::db::sandbox::requests::Request;
use crate::domain::extraction::Direction;
use crate::sat::efirma::envelope::{DocumentStatus, RequestType, WindowQuery};

const LOCAL_TIME: &str = "%Y-%m-%dT%H:%M:%S";

/// A new request for `query` (outcome and count are filled in by the caller).
pub fn new_request(asker: &Asker, query: &WindowQuery) -> Request {
    Request {
        id: uuid::Uuid::new_v4().to_string(),
        rfc: asker.rfc.to_string(),
        entity_id: asker.entity_id.to_string(),
        extraction_id: asker.extraction_id.to_string(),
        direction: query.direction.as_str().to_string(),
        request_type: query.request_type.as_sat().to_string(),
        window_start: query.start.format(LOCAL_TIME).to_string(),
        window_end: query.end.format(LOCAL_TIME).to_string(),
        status_filter: query.status.as_sat().to_string(),
        counterpart: query.counterpart.clone(),
        document_type: query.document_type.clone(),
        complement: query.complement.clone(),
        on_behalf_of: query.on_behalf_of.clone(),
        outcome: READY.to_string(),
        documents: 0,
        verifications: 0,
        created_at: crate::time::now(),
    }
}

/// The stored request's query, as it was made.
pub fn window_query(row: &Request) -> anyhow::Result<WindowQuery> {
    let time = |text: &str| {
        NaiveDateTime::parse_from_str(text, LOCAL_TIME)
            .with_context(|| format!("sandbox request {}: bad time {text}", row.id))
    };
    let direction = Direction::parse(&row.direction)
        .with_context(|| format!("sandbox request {}: bad direction", row.id))?;
    let request_type = [RequestType::Cfdi, RequestType::Metadata]
        .into_iter()
        .find(|t| t.as_sat() == row.request_type)
        .with_context(|| format!("sandbox request {}: bad type", row.id))?;
    let status = [
        DocumentStatus::All,
        DocumentStatus::Active,
        DocumentStatus::Cancelled,
    ]
    .into_iter()
    .find(|s| s.as_sat() == row.status_filter)
    .with_context(|| format!("sandbox request {}: bad status", row.id))?;
    Ok(WindowQuery {
        direction,
        request_type,
        start: time(&row.window_start)?,
        end: time(&row.window_end)?,
        status,
        counterpart: row.counterpart.clone(),
        document_type: row.document_type.clone(),
        complement: row.complement.clone(),
        on_behalf_of: row.on_behalf_of.clone(),
    })
}
