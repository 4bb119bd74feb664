//! What a channel fetches from the SAT, before it is stored: a listing row and a
//! downloaded document. Shared by the channels (`sat`), the ingest path and storage.

use rust_decimal::Decimal;

/// One row of the authority's listing: what is known before the XML is downloaded.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    pub uuid: String,
    pub issuer_tax_id: String,
    pub issuer_name: Option<String>,
    pub receiver_tax_id: String,
    pub receiver_name: Option<String>,
    pub issued_at: Option<String>,
    pub certified_at: Option<String>,
    pub total: Option<Decimal>,
    pub invoice_type: Option<String>,
    pub cancelled: bool,
    pub cancelled_at: Option<String>,
}

/// A downloaded document. `xml` is None when the authority does not provide it yet.
#[derive(Debug, Clone)]
pub struct Document {
    pub uuid: String,
    pub xml: Option<Vec<u8>>,
    pub pdf: Option<Vec<u8>>,
}
