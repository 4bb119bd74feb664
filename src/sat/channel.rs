//! The interface of a tax-authority channel. The extraction job hands a channel the run
//! and a sink (the ingest path, counting for the run); the channel advances the run as
//! far as it can now and answers what comes next (`Step`). Everything a channel must
//! remember between steps (the e.firma's request ids) it stores itself, committed with
//! the documents it hands the sink, so a run killed at any moment resumes where it was.

use crate::cfdi::CfdiError;
use crate::db::Conn;
use crate::domain::extraction::{Channel as Kind, Direction, DocumentClass, FailedReason, Period};
use crate::domain::listing::Metadata;
use crate::ingest::AnyPrepared;
use std::sync::Arc;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum SatError {
    /// The authority refused the credential (the RFC / CIEC pair, or the e.firma).
    #[error("the tax authority refused the credentials")]
    InvalidCredentials,
    /// Unreachable, timed out, an error page, or a page we do not recognise.
    #[error("the tax authority is unavailable: {0}")]
    Unavailable(String),
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

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

/// A stored e.firma, unsealed: the certificate, the encrypted private key and its
/// password. The channel opens it (it passed every check when uploaded).
pub struct EfirmaKey {
    pub tax_id: String,
    pub certificate: Vec<u8>,
    pub key: Vec<u8>,
    pub password: String,
}

/// The credential a channel is given, opened from the vault for one call.
pub enum Secret {
    Ciec(Credential),
    Efirma(EfirmaKey),
}

impl Secret {
    pub fn tax_id(&self) -> &str {
        match self {
            Secret::Ciec(c) => &c.tax_id,
            Secret::Efirma(k) => &k.tax_id,
        }
    }
}

/// Identifies the run a conversation belongs to (the sandbox keys its state on it).
#[derive(Debug, Clone)]
pub struct RunContext {
    pub entity_id: String,
    pub extraction_id: String,
}

/// One extraction run, as a channel sees it.
pub struct Run<'a> {
    pub context: RunContext,
    pub direction: Direction,
    pub period: Period,
    /// Invoices, or CFDI de Retenciones (the e.firma channel only).
    pub class: DocumentClass,
    pub secret: &'a Secret,
    /// The job's attempts so far, this one included.
    pub attempts: u32,
}

/// What comes next for a run, after a step.
#[derive(Debug)]
pub enum Step {
    Done,
    /// Nothing to do before `after` (the SAT is preparing a request): not a failure.
    Wait(Duration),
    /// Try again after `after` (unreachable, or the service is stopping): an attempt.
    Retry {
        after: Duration,
        error: String,
    },
    Failed(FailedReason),
    /// The SAT refused the credential: the run fails `invalid_credentials` and the
    /// credential turns `invalid`.
    CredentialRefused,
}

/// A fetched document, parsed and compressed for storing (on the channel's thread).
pub struct Fetched<'a> {
    /// The listing row it was downloaded for; None when it came alone (in a package).
    pub listed: Option<&'a Metadata>,
    /// How the log names it.
    pub name: String,
    /// Of the run's document class (one of the other class does not parse as it).
    pub prepared: Result<AnyPrepared, CfdiError>,
}

/// The channel's own record, written in the transaction that stores a batch (its resume
/// point); `|_| Ok(())` when it keeps none.
pub type Resume<'a> = &'a mut dyn FnMut(&Conn) -> anyhow::Result<()>;

/// Where a channel hands what it fetches: each call stores one batch in one transaction
/// with the run's counts and the channel's `Resume`.
pub trait Sink: Sync {
    /// The service is stopping: stop at the next batch; what is stored stays.
    fn stopping(&self) -> bool;
    /// The run lists its period again from the start: `invoices_found` restarts at 0.
    fn recount(&self) -> anyhow::Result<()>;
    /// Stage 1: listing rows (of the run's document class), counted found. Returns the
    /// positions in `rows` whose XML is still to be stored.
    fn listed(&self, rows: &[Metadata], resume: Resume) -> anyhow::Result<Vec<usize>>;
    /// Stage 2: documents, counted processed when stored; one that does not parse or
    /// whose UUID names another stored document is logged (and the latter recorded as
    /// the run's conflict) and never stops the others.
    fn documents(&self, docs: &[Fetched], resume: Resume) -> anyhow::Result<()>;
}

pub trait Channel: Send + Sync {
    /// Checks a credential once: `InvalidCredentials` when the SAT refuses it.
    fn validate(&self, secret: &Secret) -> Result<(), SatError>;
    /// Advances the run as far as it can go now.
    fn advance(&self, run: &Run, sink: &dyn Sink) -> anyhow::Result<Step>;
}

/// The channels in force, by the API's `channel`.
#[derive(Clone)]
pub struct Channels {
    pub ciec: Arc<dyn Channel>,
    pub efirma: Arc<dyn Channel>,
}

impl Channels {
    pub fn get(&self, kind: Kind) -> &dyn Channel {
        match kind {
            Kind::Ciec => &*self.ciec,
            Kind::Efirma => &*self.efirma,
        }
    }
}

/// A secret of another channel: a bug of the caller.
pub fn wrong_secret(channel: &str) -> SatError {
    SatError::Internal(anyhow::anyhow!(
        "the {channel} channel was given another channel's credential"
    ))
}
