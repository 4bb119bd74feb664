//! The one ingestion path for every document class (`class` tells them apart by their
//! root element and sends each down its class's path: `invoices`, `retentions`), shared
//! by the channels' extractions, the `invoices import` command and tests. Stage 1
//! (`listing`) records what the authority's listing says (metadata-only rows, invisible
//! through the API, and status changes such as cancellations); stage 2 (`invoices`)
//! stores a parsed invoice byte for byte with its PDF; `payments` keeps payment aggregates right whatever order
//! documents arrive in: every change recomputes the invoices it can affect from all
//! stored entries. All SQL is in `db::invoices::write`, `db::documents` and
//! `db::payment_entries`.

mod ahead;
mod class;
mod invoices;
mod listing;
mod payments;
mod retentions;

#[cfg(test)]
mod tests;

pub use crate::db::invoices::write::Owner;
pub use ahead::Ahead;
pub use class::{prepare_any, record_listing_of, AnyPrepared};
pub use invoices::{ingest_invoice, prepare, same_document, store_invoice, Prepared};
pub use listing::{apply_status, record_listing};
pub use retentions::{
    prepare_retention, record_retention_listing, set_retention_status, store_retention,
    PreparedRetention,
};

use crate::cfdi::CfdiError;

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("invalid CFDI: {0}")]
    Cfdi(#[from] CfdiError),
    #[error("the XML's UUID {found} is not the listed {expected}")]
    UuidMismatch { expected: String, found: String },
    /// Another document with this UUID is stored: it is kept, this one is not stored.
    #[error(
        "another document with UUID {uuid} is already stored (its content differs); the stored one is kept"
    )]
    UuidTaken { uuid: String },
    #[error(transparent)]
    Storage(#[from] anyhow::Error),
}
