//! Which documents a simulated request delivers: the sandbox's invoices (or, on the
//! retentions' hosts, its retention documents) of the window that match the query's
//! filters, as the run that asked sees them (the same listing rules as the CIEC
//! sandbox, recorded in `listings`).

use chrono::{Days, NaiveDate};

use super::packages::{Listed, ListedRetention};
use crate::db::sandbox::{listings, SandboxStore};
use crate::domain::extraction::Direction;
use crate::sandbox::ciec::{docs_direction, listed_cancelled};
use crate::sandbox::docs::{self as sandbox_docs, SandboxInvoice, SandboxRetention};
use crate::sat::efirma::envelope::{DocumentStatus, RequestType, WindowQuery};

/// The most CFDI one request may hold (5003 beyond).
pub const MAX_CFDI: usize = 500;
/// The most metadata rows one request may hold (5003 beyond).
pub const MAX_METADATA: usize = 2_000;

/// Days generated at a time: bounds memory, and a request over the maximum stops early.
const CHUNK_DAYS: u64 = 7;

pub fn maximum(kind: RequestType) -> usize {
    match kind {
        RequestType::Cfdi => MAX_CFDI,
        RequestType::Metadata => MAX_METADATA,
    }
}

/// Who asks: the e.firma's RFC and the run the listing is recorded for.
pub struct Asker<'a> {
    pub rfc: &'a str,
    pub entity_id: &'a str,
    pub extraction_id: &'a str,
}

pub enum Selection<T = Listed> {
    /// In the sandbox's order (issue time, then UUID).
    Documents(Vec<T>),
    /// More than the maximum (the rest of the window is not generated).
    OverMaximum,
}

/// The documents `query` delivers to `asker`.
pub fn select(db: &SandboxStore, asker: &Asker, query: &WindowQuery) -> anyhow::Result<Selection> {
    let dir = docs_direction(query.direction);
    let max = maximum(query.request_type);
    let mut out = Vec::new();
    let mut from = query.start.date();
    let last = query.end.date();
    while from <= last {
        let to = chunk_end(from, last);
        let invoices: Vec<SandboxInvoice> =
            sandbox_docs::invoices_for_period(asker.rfc, dir, from, to)
                .into_iter()
                .filter(|inv| matches(query, inv))
                .collect();
        let first = db.tx(|tx| {
            listings::record(
                tx,
                asker.entity_id,
                query.direction.as_str(),
                asker.extraction_id,
                invoices.iter().map(|inv| inv.uuid.as_str()),
            )
        })?;
        for invoice in invoices {
            let first_listing = first.get(&invoice.uuid).copied().unwrap_or(false);
            let cancelled = listed_cancelled(&invoice, first_listing);
            let listed = Listed {
                invoice,
                first_listing,
                cancelled,
            };
            if delivers(query, &listed) {
                out.push(listed);
            }
        }
        if out.len() > max {
            return Ok(Selection::OverMaximum);
        }
        match to.checked_add_days(Days::new(1)) {
            Some(next) => from = next,
            None => break,
        }
    }
    Ok(Selection::Documents(out))
}

/// The retention documents `query` delivers to `asker` (on the retentions' hosts).
/// Their listing rules: a cancelled one is seen active by the first run that lists it
/// and cancelled by any later one; cancelled received ones come as metadata only.
pub fn select_retentions(
    db: &SandboxStore,
    asker: &Asker,
    query: &WindowQuery,
) -> anyhow::Result<Selection<ListedRetention>> {
    let dir = docs_direction(query.direction);
    let docs: Vec<SandboxRetention> =
        sandbox_docs::retentions_for_period(asker.rfc, dir, query.start.date(), query.end.date())
            .into_iter()
            .filter(|r| retention_matches(query, r))
            .collect();
    if docs.len() > maximum(query.request_type) {
        return Ok(Selection::OverMaximum);
    }
    let first = db.tx(|tx| {
        listings::record(
            tx,
            asker.entity_id,
            query.direction.as_str(),
            asker.extraction_id,
            docs.iter().map(|r| r.uuid.as_str()),
        )
    })?;
    let listed = docs.into_iter().map(|retention| {
        let first_listing = first.get(&retention.uuid).copied().unwrap_or(false);
        let cancelled = retention.cancelled_at.is_some() && !first_listing;
        ListedRetention {
            retention,
            cancelled,
        }
    });
    Ok(Selection::Documents(
        listed.filter(|l| delivers_retention(query, l)).collect(),
    ))
}

/// A retentions query's filters: window, other party; it has no document type, and
/// the sandbox's retentions carry no complement.
fn retention_matches(query: &WindowQuery, r: &SandboxRetention) -> bool {
    let other_party = match query.direction {
        Direction::Issued => &r.receiver_tax_id,
        Direction::Received => &r.issuer_tax_id,
    };
    query.start <= r.issued_at
        && r.issued_at <= query.end
        && query
            .counterpart
            .as_deref()
            .is_none_or(|c| c.trim().eq_ignore_ascii_case(other_party))
        && query.document_type.is_none()
        && query.complement.is_none()
        && query.on_behalf_of.is_none()
}

fn delivers_retention(query: &WindowQuery, listed: &ListedRetention) -> bool {
    let status = match query.status {
        DocumentStatus::All => true,
        DocumentStatus::Active => !listed.cancelled,
        DocumentStatus::Cancelled => listed.cancelled,
    };
    let cancelled_received = query.request_type == RequestType::Cfdi
        && query.direction == Direction::Received
        && listed.cancelled;
    status && !cancelled_received
}

fn chunk_end(from: NaiveDate, last: NaiveDate) -> NaiveDate {
    from.checked_add_days(Days::new(CHUNK_DAYS - 1))
        .map_or(last, |end| end.min(last))
}

/// The query's own filters: window (both ends included), other party, type, complement.
fn matches(query: &WindowQuery, inv: &SandboxInvoice) -> bool {
    let in_window = query.start <= inv.issued_at && inv.issued_at <= query.end;
    let other_party = match query.direction {
        Direction::Issued => &inv.receiver_tax_id,
        Direction::Received => &inv.issuer_tax_id,
    };
    let same = |wanted: &Option<String>, actual: &str| {
        wanted
            .as_deref()
            .is_none_or(|w| w.trim().eq_ignore_ascii_case(actual))
    };
    let complement = query
        .complement
        .as_deref()
        .is_none_or(|c| complement_type(c) == Some(inv.invoice_type));
    in_window
        && same(&query.counterpart, other_party)
        && same(&query.document_type, &inv.invoice_type.to_string())
        && complement
        // The sandbox's invoices are never issued on behalf of a third party.
        && query.on_behalf_of.is_none()
}

/// The sandbox's invoices carry two complements: payroll on `N`, payments on `P`.
fn complement_type(code: &str) -> Option<char> {
    match code.trim().to_ascii_lowercase().as_str() {
        "nomina12" => Some('N'),
        "pagos20" => Some('P'),
        _ => None,
    }
}

/// What the run is served once it sees the invoice: the status filter, and for XML the
/// SAT's rules (withheld XML of a first listing, no cancelled received XML).
fn delivers(query: &WindowQuery, listed: &Listed) -> bool {
    let status = match query.status {
        DocumentStatus::All => true,
        DocumentStatus::Active => !listed.cancelled,
        DocumentStatus::Cancelled => listed.cancelled,
    };
    let xml = match query.request_type {
        RequestType::Metadata => true,
        RequestType::Cfdi => {
            let withheld = listed.invoice.xml_withheld_first && listed.first_listing;
            let cancelled_received = query.direction == Direction::Received && listed.cancelled;
            !withheld && !cancelled_received
        }
    };
    status && xml
}
