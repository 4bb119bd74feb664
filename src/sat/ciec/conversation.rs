//! The CIEC channel's conversation with the SAT's side: the real portal (`portal.rs`)
//! or the sandbox's speak it, and the channel's run (`run.rs`) drives it.

use crate::domain::extraction::{Direction, Period};
use crate::sat::{Document, Metadata, RunContext, SatError};

/// An entity's login at the portal. Never logged.
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

/// The SAT's side of the CIEC channel: the real portal (`Portal`), or the sandbox's.
pub trait Authority: Send + Sync {
    /// Logs in once to check the credential.
    fn validate(&self, credential: &Credential) -> Result<(), SatError>;
    /// Logs in for an extraction.
    fn login(
        &self,
        credential: &Credential,
        run: &RunContext,
    ) -> Result<Box<dyn Session>, SatError>;
}

/// A logged-in conversation with the portal.
pub trait Session: Send {
    /// Stage 1: the metadata of the period's invoices.
    fn list(&mut self, direction: Direction, period: Period) -> Result<Vec<Metadata>, SatError>;
    /// Stage 1 of a run by UUID: the invoice of that UUID the direction's page lists
    /// (the portal's search by folio fiscal), None when it lists none.
    fn find(&mut self, direction: Direction, uuid: &str) -> Result<Option<Metadata>, SatError>;
    /// Stage 2: the XML (and PDF) of some listed invoices, in the same order.
    fn download(
        &mut self,
        direction: Direction,
        items: &[Metadata],
    ) -> Result<Vec<Document>, SatError>;
}

/// How many documents one download call asks for.
pub const DOWNLOAD_BATCH: usize = 50;
