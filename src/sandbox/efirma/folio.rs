//! A request by UUID (`SolicitaDescargaFolio`) in the sandbox: the invoice the sandbox
//! generates under that UUID for the taxpayer, as a sender or a receiver, issued from
//! 120 days before the run's period (`docs::uuid_search_start`) to its end. It is asked as the window
//! request that selects it (its second, its other party, its type), so it is stored,
//! counted, packaged and served by the same rules as any other request. The SAT's
//! request has no dates; the sandbox looks back that far because that covers every
//! invoice its payment complements of the period pay (`/docs/sandbox`).

use crate::domain::extraction::{Direction, Period};
use crate::sandbox::ciec::docs_direction;
use crate::sandbox::docs;
use crate::sat::efirma::envelope::{DocumentStatus, RequestType, WindowQuery};

/// The window request that selects invoice `uuid` of `rfc`, None when the sandbox
/// generates none under it in the search range.
pub fn locate(rfc: &str, period: Period, uuid: &str) -> Option<WindowQuery> {
    let from = docs::uuid_search_start(period.from);
    [Direction::Issued, Direction::Received]
        .into_iter()
        .find_map(|direction| {
            let found = docs::find_invoice(rfc, docs_direction(direction), from, period.to, uuid)?;
            let counterpart = match direction {
                Direction::Issued => found.receiver_tax_id,
                Direction::Received => found.issuer_tax_id,
            };
            Some(WindowQuery {
                direction,
                request_type: RequestType::Cfdi,
                start: found.issued_at,
                end: found.issued_at,
                status: DocumentStatus::All,
                counterpart: Some(counterpart),
                document_type: Some(found.invoice_type.to_string()),
                complement: None,
                on_behalf_of: None,
            })
        })
}
