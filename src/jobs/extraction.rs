//! Running an extraction: choose its channel, then let the channel advance it, storing
//! what it fetches through the ingest path (`RunSink`) with the run's counts. Each state
//! change and its `extraction.update` commit together. A run cut short (stop, crash, a
//! wait on the SAT) is picked up again where its channel left it.

use super::outcome::Outcome;
use crate::app::Context;
use crate::db::{self, extractions::Extraction, jobs::Job, Db};
use crate::domain::efirma::EfirmaStatus;
use crate::domain::entity::CredentialStatus;
use crate::domain::event::Kind;
use crate::domain::extraction::{Channel, Direction, DocumentClass, FailedReason, Status};
use crate::domain::listing::Metadata;
use crate::events;
use crate::ingest::{self, AnyPrepared, IngestError, Owner};
use crate::sat::{Credential, Fetched, Resume, Run, RunContext, Secret, Sink, Step};
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
            finish(
                ctx,
                &job.target_id,
                Some(FailedReason::InternalError),
                Refused::Nothing,
            )?;
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
    let channel = match ext.channel {
        Some(channel) => channel,
        // The SAT serves CFDI de Retenciones through the e.firma web service only: a run
        // of them needs a usable e.firma (checked when it was asked for, and again now).
        None if ext.document_class == DocumentClass::Retentions => {
            match entity.efirma.as_ref().map(|f| f.current_status()) {
                Some(EfirmaStatus::Valid) => {}
                Some(EfirmaStatus::Pending) => {
                    return fail(
                        ctx,
                        &ext.id,
                        FailedReason::CredentialsNotValidated,
                        Refused::Nothing,
                    )
                }
                _ => {
                    log::warn!(
                        "extraction {}: retentions need the entity's e.firma, which it no longer has in force",
                        ext.id
                    );
                    return fail(
                        ctx,
                        &ext.id,
                        FailedReason::InvalidCredentials,
                        Refused::Nothing,
                    );
                }
            }
            start(ctx, &ext.id, Channel::Efirma)?;
            Channel::Efirma
        }
        None => {
            // An e.firma checked by the service and in force is preferred: no captcha
            // and far larger requests. Otherwise the CIEC, which must be valid.
            let channel = if entity.efirma.as_ref().is_some_and(|f| f.usable()) {
                Channel::Efirma
            } else {
                match entity.credential_status {
                    CredentialStatus::Valid => Channel::Ciec,
                    CredentialStatus::Pending => {
                        return fail(
                            ctx,
                            &ext.id,
                            FailedReason::CredentialsNotValidated,
                            Refused::Nothing,
                        )
                    }
                    CredentialStatus::Invalid => {
                        return fail(
                            ctx,
                            &ext.id,
                            FailedReason::InvalidCredentials,
                            Refused::Nothing,
                        )
                    }
                }
            };
            start(ctx, &ext.id, channel)?;
            channel
        }
    };
    let Some(period) = ext.period() else {
        return fail(ctx, &ext.id, FailedReason::InternalError, Refused::Nothing);
    };
    // The credential the channel logs in with, and the one it would turn invalid.
    let sealed;
    let (secret, refused) = match channel {
        Channel::Ciec => {
            let credential = Credential {
                tax_id: entity.tax_id.clone(),
                password: ctx.cipher.open(&entity.ciec_ciphertext)?,
            };
            (Secret::Ciec(credential), Refused::Ciec)
        }
        Channel::Efirma => {
            let Some(stored) = db::efirmas::sealed(&ctx.db.conn()?, &entity.id)? else {
                log::warn!(
                    "extraction {}: the e.firma was removed during the run",
                    ext.id
                );
                return fail(
                    ctx,
                    &ext.id,
                    FailedReason::InvalidCredentials,
                    Refused::Nothing,
                );
            };
            sealed = stored;
            if entity
                .efirma
                .as_ref()
                .is_none_or(|e| e.current_status() == EfirmaStatus::Expired)
            {
                log::warn!(
                    "extraction {}: the e.firma expired or was removed during the run",
                    ext.id
                );
                return fail(
                    ctx,
                    &ext.id,
                    FailedReason::InvalidCredentials,
                    Refused::Nothing,
                );
            }
            (
                Secret::Efirma(super::credential::efirma_key(ctx, &sealed, &entity.tax_id)?),
                Refused::Efirma(&sealed),
            )
        }
    };
    let run = Run {
        context: RunContext {
            entity_id: entity.id.clone(),
            extraction_id: ext.id.clone(),
        },
        direction: ext.direction,
        period,
        class: ext.document_class,
        secret: &secret,
        attempts,
    };
    let sink = RunSink {
        db: &ctx.db,
        stopping: &ctx.stopping,
        extraction_id: &ext.id,
        owner: Owner {
            org_id: &entity.org_id,
            entity_id: &entity.id,
            batch: &ext.id,
        },
        direction: ext.direction,
        class: ext.document_class,
    };
    match ctx.channels.get(channel).advance(&run, &sink)? {
        Step::Done => finish(ctx, &ext.id, None, Refused::Nothing).map(|_| Outcome::Done),
        Step::Wait(after) => Ok(Outcome::Wait { after }),
        Step::Retry { after, error } => Ok(Outcome::Retry { after, error }),
        Step::Failed(reason) => fail(ctx, &ext.id, reason, Refused::Nothing),
        Step::CredentialRefused => fail(ctx, &ext.id, FailedReason::InvalidCredentials, refused),
    }
}

/// The ingest path for one run: every batch a channel hands it commits with the run's
/// counts, its conflicts and the channel's resume point.
pub struct RunSink<'a> {
    pub db: &'a Db,
    /// Set when the service stops.
    pub stopping: &'a AtomicBool,
    pub extraction_id: &'a str,
    pub owner: Owner<'a>,
    pub direction: Direction,
    /// What the run's listings list: invoices, or retentions.
    pub class: DocumentClass,
}

impl Sink for RunSink<'_> {
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
            let pending = match self.class {
                DocumentClass::Invoices => {
                    ingest::record_listing(tx, self.owner, self.direction, rows)?
                }
                DocumentClass::Retentions => {
                    ingest::record_retention_listing(tx, self.owner, rows)?
                }
            };
            db::extractions::add_counts(tx, self.extraction_id, rows.len() as i64, 0)?;
            resume(tx)?;
            Ok(pending)
        })
    }

    fn documents(&self, docs: &[Fetched], resume: Resume) -> anyhow::Result<()> {
        let extraction_id = self.extraction_id;
        self.db.tx(|tx| {
            tx.lock(db::Lock::Entity(self.owner.entity_id))?;
            let mut processed = 0;
            for doc in docs {
                // A bad document is logged and left metadata-only; it never stops the others.
                let (owner, direction, listed) = (self.owner, self.direction, doc.listed);
                let stored = match &doc.prepared {
                    Ok(AnyPrepared::Invoice(prepared)) => {
                        ingest::store_document(tx, owner, direction, listed, prepared)
                    }
                    Ok(AnyPrepared::Retention(prepared)) => {
                        ingest::store_retention(tx, owner, direction, listed, prepared)
                    }
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

fn start(ctx: &Context, id: &str, channel: Channel) -> anyhow::Result<()> {
    transition(
        ctx,
        id,
        |e| {
            let now = crate::time::now();
            e.channel = Some(channel);
            e.status = Status::Running;
            e.started_at = Some(now.clone());
            e.updated_at = now;
        },
        |_, _| Ok(()),
    )
}

/// Which credential the authority refused during the run: it turns `invalid` (with its
/// `entity.update`) in the transaction that fails the extraction.
enum Refused<'a> {
    Nothing,
    Ciec,
    Efirma(&'a db::efirmas::SealedEfirma),
}

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
    events::invoices::flush_all(&ctx.db, id)?;
    transition(
        ctx,
        id,
        |e| match reason {
            Some(r) => e.fail(r),
            None => {
                let now = crate::time::now();
                e.status = Status::Finished;
                e.finished_at = Some(now.clone());
                e.updated_at = now;
            }
        },
        |tx, ext| {
            events::invoices::flush(tx, id, i64::MAX)?;
            match refused {
                Refused::Nothing => Ok(()),
                Refused::Ciec => match db::entities::get_any(tx, &ext.entity_id)? {
                    Some(mut entity) if entity.credential_status != CredentialStatus::Invalid => {
                        super::credential::set_status(tx, &mut entity, CredentialStatus::Invalid)
                    }
                    _ => Ok(()),
                },
                Refused::Efirma(sealed) => super::credential::set_efirma_status(
                    tx,
                    &ext.entity_id,
                    sealed,
                    EfirmaStatus::Invalid,
                ),
            }
        },
    )
}
