//! Running an extraction: the registry chooses its channel (which opens its own
//! credential), then the channel advances it, storing
//! what it fetches through the ingest path (`RunSink`) with the run's counts. Each state
//! change and its `extraction.update` commit together. A run cut short (stop, crash, a
//! wait on the SAT) is picked up again where its channel left it.

use super::outcome::Outcome;
use crate::app::Context;
use crate::db::{self, extractions::Extraction, jobs::Job, Db};
use crate::domain::class::DocumentClass;
use crate::domain::event::Kind;
use crate::domain::extraction::{Direction, FailedReason, Status};
use crate::domain::listing::Metadata;
use crate::events;
use crate::ingest::{self, IngestError, Owner};
use crate::sat::{self, Fetched, Resume, Run, RunContext, Secret, Sink, Step, Verdict};
use crate::seal::Verifier;
use std::sync::atomic::{AtomicBool, Ordering};

/// After this many attempts that ended in an unexpected error, the run fails
/// `internal_error` instead of being retried again.
const MAX_ATTEMPTS: u32 = 3;

pub fn run(ctx: &Context, job: &Job) -> anyhow::Result<Outcome> {
    match execute(ctx, &job.target_id, job.attempts) {
        Ok(outcome) => Ok(outcome),
        // Another instance runs it now: nothing more to do or write here.
        Err(e) if db::lease::is_lost(&e) => Err(e),
        // The entity (and with it this extraction) was deleted while it ran: the
        // failed write is expected and there is nothing left to do.
        Err(_) if db::extractions::get_any(&ctx.db.conn()?, &job.target_id)?.is_none() => {
            Ok(Outcome::Done)
        }
        Err(e) if job.attempts >= MAX_ATTEMPTS => {
            log::error!("extraction {} failed for good: {e:#}", job.target_id);
            finish(ctx, &job.target_id, Some(FailedReason::InternalError), None)?;
            Ok(Outcome::Done)
        }
        Err(e) => Err(e),
    }
}

fn execute(ctx: &Context, id: &str, attempts: u32) -> anyhow::Result<Outcome> {
    let Some(ext) = db::extractions::get_any(&ctx.db.conn()?, id)? else {
        return Ok(Outcome::Done); // its entity was deleted
    };
    if matches!(ext.status, Status::Finished | Status::Failed) {
        return Ok(Outcome::Done);
    }
    let Some(entity) = db::entities::get_any(&ctx.db.conn()?, &ext.entity_id)? else {
        return Ok(Outcome::Done);
    };
    let channel = match ext.channel.as_deref() {
        Some(name) => ctx
            .channels
            .named(name)
            .ok_or_else(|| anyhow::anyhow!("extraction {}: no channel {name:?}", ext.id))?,
        None => match ctx
            .channels
            .choose(&entity, ext.document_class, !ext.uuids.is_empty())
        {
            Ok(channel) => {
                start(ctx, &ext.id, channel.name())?;
                channel
            }
            Err(reason) => {
                log::info!(
                    "extraction {}: no channel can run it now: {}",
                    ext.id,
                    reason.as_str()
                );
                return fail(ctx, &ext.id, reason, None);
            }
        },
    };
    let Some(period) = ext.period() else {
        return fail(ctx, &ext.id, FailedReason::InternalError, None);
    };
    let Some(secret) = channel.open(&ctx.db.conn()?, &ctx.cipher, &entity)? else {
        log::warn!(
            "extraction {}: the {} credential was removed or lapsed during the run",
            ext.id,
            channel.name()
        );
        return fail(ctx, &ext.id, FailedReason::InvalidCredentials, None);
    };
    let run = Run {
        context: RunContext {
            entity_id: entity.id.clone(),
            extraction_id: ext.id.clone(),
            period: Some(period),
        },
        direction: ext.direction,
        period,
        class: ext.document_class,
        uuids: &ext.uuids,
        secret: &secret,
        attempts,
    };
    let sink = RunSink {
        db: &ctx.db,
        sat_certificates: ctx.sat_certificates.at_hand(),
        stopping: &ctx.stopping,
        extraction_id: &ext.id,
        owner: Owner {
            org_id: &entity.org_id,
            entity_id: &entity.id,
            batch: &ext.id,
        },
        direction: ext.direction,
        class: ext.document_class,
        party: (!ext.uuids.is_empty()).then_some(entity.tax_id.as_str()),
    };
    match channel.advance(&run, &sink)? {
        Step::Done => finish(ctx, &ext.id, None, None).map(|_| Outcome::Done),
        Step::Wait(after) => Ok(Outcome::Wait { after }),
        Step::Retry { after, error } => Ok(Outcome::Retry { after, error }),
        Step::Failed(reason) => fail(ctx, &ext.id, reason, None),
        Step::CredentialRefused => fail(
            ctx,
            &ext.id,
            FailedReason::InvalidCredentials,
            Some((channel, &secret)),
        ),
    }
}

/// The ingest path for one run: every batch a channel hands it commits with the run's
/// counts, its conflicts and the channel's resume point.
pub struct RunSink<'a> {
    pub db: &'a Db,
    /// What verifies each document's seal as it is prepared: the SAT certificates
    /// at hand, none fetched.
    pub sat_certificates: crate::sat::certificates::AtHand<'a>,
    /// Set when the service stops.
    pub stopping: &'a AtomicBool,
    pub extraction_id: &'a str,
    pub owner: Owner<'a>,
    pub direction: Direction,
    /// What the run's listings list: invoices, or retentions.
    pub class: DocumentClass,
    /// A run by UUID: the entity's RFC, which must be the document's party in
    /// `direction` (the SAT answers a UUID whichever side the entity is on): another
    /// is left out, and so reported not found.
    pub party: Option<&'a str>,
}

impl Sink for RunSink<'_> {
    fn verifier(&self) -> Verifier<'_> {
        Verifier {
            trust: self.sat_certificates.trust(),
            sat: &self.sat_certificates,
        }
    }

    fn stopping(&self) -> bool {
        self.stopping.load(Ordering::Relaxed)
    }

    fn recount(&self) -> anyhow::Result<()> {
        self.db
            .tx(|tx| db::extractions::reset_found(tx, self.extraction_id))
    }

    fn listed(&self, rows: &[Metadata], resume: Resume) -> anyhow::Result<Vec<usize>> {
        self.db.tx(|tx| {
            tx.lock(db::Lock::Entity(self.owner.entity_id))?;
            let pending =
                ingest::record_listing_of(self.class, tx, self.owner, self.direction, rows)?;
            db::extractions::add_counts(tx, self.extraction_id, rows.len() as i64, 0)?;
            resume(tx)?;
            Ok(pending)
        })
    }

    fn found(&self, count: u64, resume: Resume) -> anyhow::Result<()> {
        self.db.tx(|tx| {
            db::extractions::add_counts(tx, self.extraction_id, count as i64, 0)?;
            resume(tx)
        })
    }

    fn documents(&self, docs: &[Fetched], resume: Resume) -> anyhow::Result<()> {
        let extraction_id = self.extraction_id;
        self.db.tx(|tx| {
            tx.lock(db::Lock::Entity(self.owner.entity_id))?;
            let uuids = docs.iter().filter_map(|doc| doc.prepared.as_ref().ok()?.uuid());
            let mut ahead = ingest::Ahead::read(
                tx,
                self.owner.entity_id,
                uuids.map(str::to_owned),
            )?;
            let mut processed = 0;
            for doc in docs {
                // A bad document is logged and left metadata-only; it never stops the others.
                let (owner, direction, listed) = (self.owner, self.direction, doc.listed);
                let stored = match &doc.prepared {
                    Ok(prepared) if self.other_side(prepared) => {
                        log::warn!(
                            "extraction {extraction_id}: {} left out: the entity is not its {} party",
                            doc.name,
                            direction.as_str()
                        );
                        continue;
                    }
                    Ok(prepared) => prepared.store(tx, owner, direction, listed, &mut ahead),
                    Err(e) => Err(IngestError::Cfdi(e.clone())),
                };
                match stored {
                    Ok(_) => processed += 1,
                    Err(IngestError::Storage(e)) => return Err(e),
                    Err(IngestError::UuidTaken { uuid }) => {
                        // The listing's spelling of the UUID when there is one.
                        let named = doc.listed.map_or(uuid.clone(), |m| m.uuid.clone());
                        let e = IngestError::UuidTaken { uuid };
                        log::warn!(
                            "extraction {extraction_id}: {} not processed: {e}",
                            doc.name
                        );
                        db::extractions::record_conflict(
                            tx,
                            extraction_id,
                            &named,
                            &e.to_string(),
                        )?;
                    }
                    Err(e) => log::warn!(
                        "extraction {extraction_id}: {} not processed: {e}",
                        doc.name
                    ),
                }
            }
            db::extractions::add_counts(tx, extraction_id, 0, processed)?;
            resume(tx)
        })
    }
}

impl RunSink<'_> {
    /// Whether a run by UUID got a document of the entity's other side.
    fn other_side(&self, prepared: &ingest::AnyPrepared) -> bool {
        self.party
            .is_some_and(|rfc| !prepared.party(self.direction).eq_ignore_ascii_case(rfc))
    }
}

/// Applies `change` to the extraction and emits `extraction.update`, in one transaction.
fn transition(
    ctx: &Context,
    id: &str,
    change: impl FnOnce(&mut Extraction),
    also: impl FnOnce(&db::Tx, &Extraction) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    ctx.db.tx(|tx| {
        let Some(mut ext) = db::extractions::get_any(tx, id)? else {
            return Ok(());
        };
        tx.lock(db::Lock::Org(&ext.org_id))?;
        let Some(entity) = db::entities::get_any(tx, &ext.entity_id)? else {
            return Ok(());
        };
        change(&mut ext);
        db::extractions::update(tx, &ext)?;
        let mut object = ext.view();
        object["entity"] = entity.summary();
        events::emit(
            tx,
            &ext.org_id,
            Kind::ExtractionUpdate,
            &ext.id,
            &serde_json::value::to_raw_value(&object)?,
            None,
        )?;
        also(tx, &ext)
    })
}

fn start(ctx: &Context, id: &str, channel: &str) -> anyhow::Result<()> {
    transition(
        ctx,
        id,
        |e| {
            let now = crate::time::now();
            e.channel = Some(channel.to_string());
            e.status = Status::Running;
            e.started_at = Some(now.clone());
            e.updated_at = now;
        },
        |_, _| Ok(()),
    )
}

/// The credential the authority refused during the run, and its channel: it turns
/// `invalid` (with its `entity.update`) in the transaction that fails the extraction.
type Refused<'a> = Option<(&'a dyn sat::Channel, &'a Secret)>;

fn fail(
    ctx: &Context,
    id: &str,
    reason: FailedReason,
    refused: Refused,
) -> anyhow::Result<Outcome> {
    finish(ctx, id, Some(reason), refused)?;
    Ok(Outcome::Done)
}

/// `finished`, or `failed` with a reason. When the authority refused the login, the
/// entity turns `invalid` (with its own `entity.update`) in the same transaction. The
/// run's invoice and retention events go first, in chunks; the final transaction takes
/// any left, so the run never ends with its changes unannounced.
fn finish(
    ctx: &Context,
    id: &str,
    reason: Option<FailedReason>,
    refused: Refused,
) -> anyhow::Result<()> {
    events::documents::flush_all(&ctx.db, id)?;
    // A run by UUID ends saying which of them the SAT did not give (whatever the channel:
    // those the entity still has no invoice under).
    let not_found = match db::extractions::get_any(&ctx.db.conn()?, id)? {
        Some(e) if !e.uuids.is_empty() => Some(db::extractions::uuids_not_stored(
            &ctx.db.conn()?,
            &e.entity_id,
            &e.uuids,
        )?),
        _ => None,
    };
    transition(
        ctx,
        id,
        |e| {
            e.uuids_not_found = not_found;
            match reason {
                Some(r) => e.fail(r),
                None => {
                    let now = crate::time::now();
                    e.status = Status::Finished;
                    e.finished_at = Some(now.clone());
                    e.updated_at = now;
                }
            }
        },
        |tx, ext| {
            events::documents::flush(tx, id, i64::MAX)?;
            match refused {
                Some((channel, secret)) => {
                    super::credential::record(tx, channel, &ext.entity_id, secret, Verdict::Invalid)
                }
                None => Ok(()),
            }
        },
    )
}
