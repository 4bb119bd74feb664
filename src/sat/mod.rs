//! Tax-authority providers. The service talks to the SAT through this interface; the
//! default provider is the deterministic sandbox in `sandbox`.

pub mod bulk;
pub mod portal;
pub mod sandbox;
pub mod sandbox_bulk;
pub mod sandbox_docs;
pub mod webservice;

use crate::domain::extraction::{Direction, Period};
use rust_decimal::Decimal;

/// An entity's login at the authority. Never logged.
pub struct Credential {
    pub tax_id: String,
    pub password: String,
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credential")
            .field("tax_id", &self.tax_id)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SatError {
    /// The authority refused the RFC / CIEC pair.
    #[error("the tax authority refused the credentials")]
    InvalidCredentials,
    /// Unreachable, timed out, an error page, or a page we do not recognise.
    #[error("the tax authority is unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// One row of the authority's listing: what is known before the XML is downloaded.
#[derive(Debug, Clone, PartialEq)]
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

/// Identifies the run a session belongs to (the sandbox keys its state on it).
#[derive(Debug, Clone)]
pub struct RunContext {
    pub entity_id: String,
    pub extraction_id: String,
}

pub trait TaxAuthority: Send + Sync {
    /// Logs in once to check the credential.
    fn validate(&self, credential: &Credential) -> Result<(), SatError>;
    /// Logs in for an extraction.
    fn login(
        &self,
        credential: &Credential,
        run: &RunContext,
    ) -> Result<Box<dyn Session>, SatError>;
}

/// A logged-in conversation with the authority.
pub trait Session: Send {
    /// Stage 1: the metadata of the period's invoices.
    fn list(&mut self, direction: Direction, period: Period) -> Result<Vec<Metadata>, SatError>;
    /// Stage 2: the XML (and PDF) of some listed invoices, in the same order.
    fn download(
        &mut self,
        direction: Direction,
        items: &[Metadata],
    ) -> Result<Vec<Document>, SatError>;
}

/// How many documents one download call asks for.
pub const DOWNLOAD_BATCH: usize = 50;
