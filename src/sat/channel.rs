//! The interface of a tax-authority channel, and the registry of those in force. A
//! channel owns its credential: it says whether an entity's is ready, opens it from the
//! vault, validates it with the SAT and records the verdict. The extraction job asks the
//! registry for the channel a run takes, then hands it the run and a sink (the ingest
//! path, counting for the run); the channel advances the run as far as it can now and
//! answers what comes next (`Step`). Everything a channel must remember between steps
//! (the e.firma's request ids) it stores itself, committed with the documents it hands
//! the sink, so a run killed at any moment resumes where it was. The jobs name no
//! channel: a new one is its folder under `sat/` and its place in the registry
//! (`commands/serve.rs`).

use crate::cfdi::CfdiError;
use crate::crypto::Cipher;
use crate::db::entities::Entity;
use crate::db::Conn;
use crate::domain::class::DocumentClass;
use crate::domain::extraction::{Direction, FailedReason, Period};
use crate::domain::listing::Metadata;
use crate::ingest::AnyPrepared;
use crate::seal::Verifier;
use serde_json::Value;
use std::any::Any;
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

/// A channel's credential, opened from the vault for one call: the entity's RFC and
/// what the channel stored, which only that channel reads (each puts its own type in).
/// Never logged.
pub struct Secret {
    tax_id: String,
    opened: Box<dyn Any + Send + Sync>,
}

impl Secret {
    pub fn new<T: Any + Send + Sync>(tax_id: &str, opened: T) -> Secret {
        Secret {
            tax_id: tax_id.to_string(),
            opened: Box::new(opened),
        }
    }

    pub fn tax_id(&self) -> &str {
        &self.tax_id
    }

    /// What the channel put in; an error when it is another channel's.
    pub fn opened<T: Any>(&self, channel: &str) -> Result<&T, SatError> {
        self.opened.downcast_ref().ok_or_else(|| {
            SatError::Internal(anyhow::anyhow!(
                "the {channel} channel was given another channel's credential"
            ))
        })
    }
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret")
            .field("tax_id", &self.tax_id)
            .finish_non_exhaustive()
    }
}

/// A channel's credential for an entity, as stored: what a run may expect of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readiness {
    /// Checked and in force.
    Ready,
    /// Not checked yet: a run waits for the check.
    Pending,
    /// Absent, refused or lapsed.
    Unusable,
}

/// A check's verdict on a stored credential.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Valid,
    Invalid,
    /// Lapsed (an e.firma's certificate): recorded without asking the SAT.
    Expired,
}

/// What a credential check of one channel has to do now.
pub enum Due {
    Nothing,
    /// Ask the SAT whether it accepts the credential.
    Check(Secret),
    /// Record a verdict known without the SAT.
    Record(Secret, Verdict),
}

/// Identifies the run a conversation belongs to (the sandbox keys its state on it).
#[derive(Debug, Clone)]
pub struct RunContext {
    pub entity_id: String,
    pub extraction_id: String,
    /// The run's period: where the sandbox looks for an invoice asked by UUID (the
    /// SAT's own request by UUID has no dates). None outside a run.
    pub period: Option<Period>,
}

/// One extraction run, as a channel sees it.
pub struct Run<'a> {
    pub context: RunContext,
    pub direction: Direction,
    pub period: Period,
    /// Invoices, or CFDI de Retenciones (the e.firma channel only).
    pub class: DocumentClass,
    /// The CFDI to fetch by UUID (upper case), whatever their date; empty: the period's.
    pub uuids: &'a [String],
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
    /// Documents the SAT reports without a listing row (a request by UUID), counted
    /// found.
    fn found(&self, count: u64, resume: Resume) -> anyhow::Result<()>;
    /// Stage 2: documents, counted processed when stored; one that does not parse or
    /// whose UUID names another stored document is logged (and the latter recorded as
    /// the run's conflict) and never stops the others.
    fn documents(&self, docs: &[Fetched], resume: Resume) -> anyhow::Result<()>;
    /// How documents are verified as they are prepared (off the write lock): the
    /// service's trust and SAT certificates; offline (the SAT's authorities, no SAT
    /// certificate) unless the sink says otherwise.
    fn verifier(&self) -> Verifier<'_> {
        Verifier::offline()
    }
}

pub trait Channel: Send + Sync {
    /// The channel's name: an extraction's `channel`, as the API shows and the database
    /// keeps it.
    fn name(&self) -> &'static str;
    /// Whether it serves this class of documents.
    fn offers(&self, class: DocumentClass) -> bool;
    /// Whether it fetches invoices named by UUID (`Run::uuids`).
    fn fetches_by_uuid(&self) -> bool {
        false
    }
    /// Its credential for the entity, as stored.
    fn readiness(&self, entity: &Entity) -> Readiness;
    /// Opens its stored credential for one call; None when the entity has none in force
    /// (removed or lapsed since the run started).
    fn open(&self, conn: &Conn, cipher: &Cipher, entity: &Entity)
        -> anyhow::Result<Option<Secret>>;
    /// What a check of its credential has to do now.
    fn due(&self, conn: &Conn, cipher: &Cipher, entity: &Entity) -> anyhow::Result<Due>;
    /// Checks a credential once: `InvalidCredentials` when the SAT refuses it.
    fn validate(&self, secret: &Secret) -> Result<(), SatError>;
    /// Records a verdict on the stored credential `secret` was opened from, in the
    /// caller's transaction, unless it changed since (then the check queued by that
    /// change decides). True when the stored status changed.
    fn record(
        &self,
        tx: &Conn,
        entity_id: &str,
        secret: &Secret,
        verdict: Verdict,
    ) -> anyhow::Result<bool>;
    /// Advances the run as far as it can go now.
    fn advance(&self, run: &Run, sink: &dyn Sink) -> anyhow::Result<Step>;
    /// What a running extraction of this channel waits on at the SAT, for its view.
    fn waiting(&self, _conn: &Conn, _extraction_id: &str) -> anyhow::Result<Option<Value>> {
        Ok(None)
    }
}

/// The channels in force, in order of preference.
#[derive(Clone)]
pub struct Channels(Vec<Arc<dyn Channel>>);

impl Channels {
    /// `preferred` first: a run takes the first one ready for it.
    pub fn new(preferred: Vec<Arc<dyn Channel>>) -> Channels {
        Channels(preferred)
    }

    pub fn all(&self) -> impl Iterator<Item = &dyn Channel> {
        self.0.iter().map(|c| &**c)
    }

    /// The channel of that name (an extraction's `channel`).
    pub fn named(&self, name: &str) -> Option<&dyn Channel> {
        self.all().find(|c| c.name() == name)
    }

    /// The channel a run of `class` for `entity` takes now (`by_uuid`: one that fetches
    /// invoices by UUID): the first one ready, in order of preference. When none is,
    /// why: the last channel that serves the run decides (`credentials_not_validated`
    /// while its credential waits for its check).
    pub fn choose(
        &self,
        entity: &Entity,
        class: DocumentClass,
        by_uuid: bool,
    ) -> Result<&dyn Channel, FailedReason> {
        let mut reason = FailedReason::InvalidCredentials;
        for channel in self.serving(class, by_uuid) {
            match channel.readiness(entity) {
                Readiness::Ready => return Ok(channel),
                Readiness::Pending => reason = FailedReason::CredentialsNotValidated,
                Readiness::Unusable => reason = FailedReason::InvalidCredentials,
            }
        }
        Err(reason)
    }

    /// Whether a run of `class` for `entity` (`by_uuid`: by UUID) may work: some channel
    /// that serves it has a credential in force or waiting for its check.
    pub fn may_run(&self, entity: &Entity, class: DocumentClass, by_uuid: bool) -> bool {
        self.serving(class, by_uuid)
            .any(|c| c.readiness(entity) != Readiness::Unusable)
    }

    fn serving(&self, class: DocumentClass, by_uuid: bool) -> impl Iterator<Item = &dyn Channel> {
        self.all()
            .filter(move |c| c.offers(class) && (!by_uuid || c.fetches_by_uuid()))
    }
}
