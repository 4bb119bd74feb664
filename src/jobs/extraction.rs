//! Running an extraction: check the credential, log in, list the period's metadata
//! (stage 1), then download and process the XML in batches (stage 2). Each state change
//! and its `extraction.update` commit together. A run cut short (stop, crash) is picked
//! up again: stage 1 is repeatable and stage 2 only fetches what is still unprocessed.

use super::{Context, Outcome};
use crate::db::{self, extractions::Extraction, jobs::Job};
use crate::domain::entity::CredentialStatus;
use crate::domain::extraction::{FailedReason, Status};
use crate::events::{self, Resource};
use crate::ingest::{self, Owner};
use crate::sat::{Credential, RunContext, SatError, DOWNLOAD_BATCH};
use std::time::Duration;

/// After this many attempts that ended in an unexpected error, the run fails
/// `internal_error` instead of being retried again.
const MAX_ATTEMPTS: u32 = 3;

pub fn run(ctx: &Context, job: &Job) -> anyhow::Result<Outcome> {
    match execute(ctx, &job.target_id) {
        Ok(outcome) => Ok(outcome),
        Err(e) if job.attempts >= MAX_ATTEMPTS => {
            log::error!("extraction {} failed for good: {e:#}", job.target_id);
            finish(
                ctx,
                &job.target_id,
                Some(FailedReason::InternalError),
                false,
            )?;
            Ok(Outcome::Done)
        }
        Err(e) => Err(e),
    }
}

fn execute(ctx: &Context, id: &str) -> anyhow::Result<Outcome> {
    let Some(ext) = db::extractions::get_any(&*ctx.db.conn()?, id)? else {
        return Ok(Outcome::Done); // its entity was deleted
    };
    if matches!(ext.status, Status::Finished | Status::Failed) {
        return Ok(Outcome::Done);
    }
    let Some(entity) = db::entities::get_any(&*ctx.db.conn()?, &ext.entity_id)? else {
        return Ok(Outcome::Done);
    };
    if ext.status == Status::Pending {
        match entity.credential_status {
            CredentialStatus::Valid => start(ctx, &ext.id)?,
            CredentialStatus::Pending => {
                return fail(ctx, &ext.id, FailedReason::CredentialsNotValidated, false)
            }
            CredentialStatus::Invalid => {
                return fail(ctx, &ext.id, FailedReason::InvalidCredentials, false)
            }
        }
    }
    let Some(period) = ext.period() else {
        return fail(ctx, &ext.id, FailedReason::InternalError, false);
    };
    let credential = Credential {
        tax_id: entity.tax_id.clone(),
        password: ctx.cipher.open(&entity.ciec_ciphertext)?,
    };
    let run = RunContext {
        entity_id: entity.id.clone(),
        extraction_id: ext.id.clone(),
    };
    let owner = Owner {
        org_id: &entity.org_id,
        entity_id: &entity.id,
    };

    let result = (|| -> Result<Outcome, SatError> {
        let mut session = ctx.provider.login(&credential, &run)?;
        let listing = session.list(ext.direction, period)?;
        let pending = ctx.db.tx(|tx| {
            let pending = ingest::record_listing(tx, owner, ext.direction, &listing)?;
            update_counters(tx, &ext.id, Some(listing.len() as i64), 0)?;
            Ok(pending)
        })?;
        let todo: Vec<_> = pending.into_iter().map(|i| listing[i].clone()).collect();
        for batch in todo.chunks(DOWNLOAD_BATCH) {
            if ctx.stopping() {
                // Leave the run resumable: what is processed stays, the rest is fetched on restart.
                return Ok(Outcome::Retry {
                    after: Duration::ZERO,
                    error: "service stopping".into(),
                });
            }
            let docs = session.download(ext.direction, batch)?;
            ctx.db.tx(|tx| {
                let mut processed = 0;
                for (meta, doc) in batch.iter().zip(&docs) {
                    let Some(xml) = &doc.xml else { continue };
                    // A bad document is logged and left metadata-only; it never stops the others.
                    match ingest::ingest_document(
                        tx,
                        owner,
                        ext.direction,
                        Some(meta),
                        xml,
                        doc.pdf.as_deref(),
                    ) {
                        Ok(_) => processed += 1,
                        Err(ingest::IngestError::Storage(e)) => return Err(e),
                        Err(e) => log::warn!(
                            "extraction {}: invoice {} not processed: {e}",
                            ext.id,
                            meta.uuid
                        ),
                    }
                }
                update_counters(tx, &ext.id, None, processed)
            })?;
        }
        Ok(Outcome::Done)
    })();

    match result {
        Ok(Outcome::Done) => finish(ctx, &ext.id, None, false).map(|_| Outcome::Done),
        Ok(retry) => Ok(retry),
        Err(SatError::InvalidCredentials) => {
            fail(ctx, &ext.id, FailedReason::InvalidCredentials, true)
        }
        Err(SatError::Unavailable(detail)) => {
            log::warn!("extraction {}: tax authority unavailable: {detail}", ext.id);
            fail(ctx, &ext.id, FailedReason::SatUnavailable, false)
        }
        Err(SatError::Internal(e)) => Err(e),
    }
}

fn update_counters(
    tx: &rusqlite::Connection,
    id: &str,
    found: Option<i64>,
    processed: i64,
) -> anyhow::Result<()> {
    tx.prepare_cached(
        "UPDATE extractions SET invoices_found = COALESCE(?2, invoices_found),
            invoices_processed = invoices_processed + ?3, updated_at = ?4 WHERE id = ?1",
    )?
    .execute(rusqlite::params![id, found, processed, crate::time::now()])?;
    Ok(())
}

/// Applies `change` to the extraction and emits `extraction.update`, in one transaction.
fn transition(
    ctx: &Context,
    id: &str,
    change: impl FnOnce(&mut Extraction),
    also: impl FnOnce(&rusqlite::Connection, &Extraction) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let committed = ctx.db.tx(|tx| {
        let Some(mut ext) = db::extractions::get_any(tx, id)? else {
            return Ok(());
        };
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
            Resource::Extraction,
            &ext.id,
            object,
            &ctx.first_attempt_at(),
        )?;
        also(tx, &ext)
    });
    // The event's deliveries are due now: wake a worker rather than wait for this job to end.
    ctx.waker.wake();
    committed
}

fn start(ctx: &Context, id: &str) -> anyhow::Result<()> {
    transition(
        ctx,
        id,
        |e| {
            let now = crate::time::now();
            e.status = Status::Running;
            e.started_at = Some(now.clone());
            e.updated_at = now;
        },
        |_, _| Ok(()),
    )
}

fn fail(
    ctx: &Context,
    id: &str,
    reason: FailedReason,
    entity_refused: bool,
) -> anyhow::Result<Outcome> {
    finish(ctx, id, Some(reason), entity_refused)?;
    Ok(Outcome::Done)
}

/// `finished`, or `failed` with a reason. When the authority refused the login, the
/// entity turns `invalid` (with its own `entity.update`) in the same transaction.
fn finish(
    ctx: &Context,
    id: &str,
    reason: Option<FailedReason>,
    entity_refused: bool,
) -> anyhow::Result<()> {
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
            if !entity_refused {
                return Ok(());
            }
            match db::entities::get_any(tx, &ext.entity_id)? {
                Some(mut entity) if entity.credential_status != CredentialStatus::Invalid => {
                    super::credential::set_status(tx, ctx, &mut entity, CredentialStatus::Invalid)
                }
                _ => Ok(()),
            }
        },
    )
}
