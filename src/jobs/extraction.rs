//! Running an extraction: check the credential, log in, list the period's metadata
//! (stage 1), then download and process the XML in batches (stage 2). Each state change
//! and its `extraction.update` commit together. A run cut short (stop, crash) is picked
//! up again: stage 1 is repeatable and stage 2 only fetches what is still unprocessed.

use super::bulk::End;
use super::{Context, Outcome};
use crate::cfdi::CfdiError;
use crate::db::{self, extractions::Extraction, jobs::Job};
use crate::domain::efirma::EfirmaStatus;
use crate::domain::entity::CredentialStatus;
use crate::domain::event::Kind;
use crate::domain::extraction::{Channel, Direction, FailedReason, Period, Status};
use crate::events;
use crate::ingest::{self, Owner};
use crate::sat::{Credential, Document, Metadata, RunContext, SatError, Session, DOWNLOAD_BATCH};
use std::time::Duration;

/// Days listed at a time: keeps memory bounded for long periods of busy taxpayers
/// (the portal answers per day anyway).
const WINDOW_DAYS: u64 = 7;

/// The period cut into consecutive windows of at most `WINDOW_DAYS` days.
fn windows(period: Period) -> Vec<Period> {
    let mut out = vec![];
    let mut from = period.from;
    while from <= period.to {
        let to = from
            .checked_add_days(chrono::Days::new(WINDOW_DAYS - 1))
            .map_or(period.to, |d| d.min(period.to));
        out.push(Period { from, to });
        match to.succ_opt() {
            Some(next) => from = next,
            None => break,
        }
    }
    out
}

/// After this many attempts that ended in an unexpected error, the run fails
/// `internal_error` instead of being retried again.
const MAX_ATTEMPTS: u32 = 3;

pub fn run(ctx: &Context, job: &Job) -> anyhow::Result<Outcome> {
    match execute(ctx, &job.target_id, job.attempts) {
        Ok(outcome) => Ok(outcome),
        // The entity (and with it this extraction) was deleted while it ran: the
        // failed write is expected and there is nothing left to do.
        Err(_) if db::extractions::get_any(&*ctx.db.conn()?, &job.target_id)?.is_none() => {
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

/// The e.firma channel (`bulk`), its end turned into the extraction's state.
fn run_bulk(
    ctx: &Context,
    ext: &Extraction,
    entity: &db::entities::Entity,
    attempts: u32,
) -> anyhow::Result<Outcome> {
    let Some(sealed) = db::efirmas::sealed(&*ctx.db.conn()?, &entity.id)? else {
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
    match super::bulk::run(ctx, ext, entity, &sealed, attempts)? {
        End::Finished => finish(ctx, &ext.id, None, Refused::Nothing).map(|_| Outcome::Done),
        End::Failed(reason) => fail(ctx, &ext.id, reason, Refused::Nothing),
        End::EfirmaRefused => fail(
            ctx,
            &ext.id,
            FailedReason::InvalidCredentials,
            Refused::Efirma(&sealed),
        ),
        End::Later(outcome) => Ok(outcome),
    }
}

fn execute(ctx: &Context, id: &str, attempts: u32) -> anyhow::Result<Outcome> {
    let Some(ext) = db::extractions::get_any(&*ctx.db.conn()?, id)? else {
        return Ok(Outcome::Done); // its entity was deleted
    };
    if matches!(ext.status, Status::Finished | Status::Failed) {
        return Ok(Outcome::Done);
    }
    let Some(entity) = db::entities::get_any(&*ctx.db.conn()?, &ext.entity_id)? else {
        return Ok(Outcome::Done);
    };
    let channel = match ext.channel {
        Some(channel) => channel,
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
    if channel == Channel::Efirma {
        return run_bulk(ctx, &ext, &entity, attempts);
    }
    let Some(period) = ext.period() else {
        return fail(ctx, &ext.id, FailedReason::InternalError, Refused::Nothing);
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
        batch: &ext.id,
    };

    let result = (|| -> Result<Outcome, SatError> {
        let mut session = ctx.provider.login(&credential, &run)?;
        // A run that restarts recounts what it lists; processed documents are not
        // fetched again, so invoices_processed carries on.
        ctx.db.tx(|tx| {
            tx.execute(
                "UPDATE extractions SET invoices_found = 0 WHERE id = ?1",
                [&ext.id],
            )?;
            Ok(())
        })?;
        for window in windows(period) {
            let listing = session.list(ext.direction, window)?;
            let pending = ctx.db.tx(|tx| {
                let pending = ingest::record_listing(tx, owner, ext.direction, &listing)?;
                add_counts(tx, &ext.id, listing.len() as i64, 0)?;
                Ok(pending)
            })?;
            let todo: Vec<_> = pending.into_iter().map(|i| listing[i].clone()).collect();
            if let Some(stopped) =
                store_window(ctx, &ext.id, owner, ext.direction, &mut *session, &todo)?
            {
                return Ok(stopped);
            }
        }
        Ok(Outcome::Done)
    })();

    match result {
        Ok(Outcome::Done) => finish(ctx, &ext.id, None, Refused::Nothing).map(|_| Outcome::Done),
        Ok(retry) => Ok(retry),
        Err(SatError::InvalidCredentials) => fail(
            ctx,
            &ext.id,
            FailedReason::InvalidCredentials,
            Refused::Ciec,
        ),
        Err(SatError::Unavailable(detail)) => {
            log::warn!("extraction {}: tax authority unavailable: {detail}", ext.id);
            fail(ctx, &ext.id, FailedReason::SatUnavailable, Refused::Nothing)
        }
        Err(SatError::Internal(e)) => Err(e),
    }
}

/// A downloaded document and, when it has an XML, the result of preparing it (parsed,
/// and compressed with its PDF) for storing.
type Fetched<'a> = (
    &'a Metadata,
    Document,
    Option<Result<ingest::Prepared, CfdiError>>,
);

/// The most documents one storing transaction takes. Batches already downloaded are
/// stored together: each commit writes the index pages its documents share once, so
/// fewer, larger commits write less, while the write lock is held some tens of ms.
const STORE_BATCH: usize = 4 * DOWNLOAD_BATCH;

/// Downloads `todo` in batches on a thread of its own (up to four batches ahead), so the
/// authority's latency (or the sandbox's rendering), XML parsing and compression overlap
/// with SQLite's writes; the batches waiting when a transaction starts are stored in it.
/// Returns a retry when the service is stopping: what is stored stays, the rest is
/// fetched on restart.
fn store_window(
    ctx: &Context,
    extraction_id: &str,
    owner: Owner,
    direction: Direction,
    session: &mut dyn Session,
    todo: &[Metadata],
) -> Result<Option<Outcome>, SatError> {
    std::thread::scope(|scope| {
        let (sender, downloads) = std::sync::mpsc::sync_channel(STORE_BATCH / DOWNLOAD_BATCH);
        scope.spawn(move || {
            for batch in todo.chunks(DOWNLOAD_BATCH) {
                let docs = session.download(direction, batch).map(|docs| {
                    batch
                        .iter()
                        .zip(docs)
                        .map(|(meta, doc)| {
                            let prepared = doc
                                .xml
                                .as_deref()
                                .map(|xml| ingest::prepare(xml, doc.pdf.as_deref()));
                            (meta, doc, prepared)
                        })
                        .collect::<Vec<Fetched>>()
                });
                let failed = docs.is_err();
                // A closed channel means the storing side stopped: so do we.
                if sender.send(docs).is_err() || failed {
                    break;
                }
            }
        });
        let (batches, mut received) = (todo.len().div_ceil(DOWNLOAD_BATCH), 0);
        while received < batches {
            if ctx.stopping() {
                return Ok(Some(Outcome::Retry {
                    after: Duration::ZERO,
                    error: "service stopping".into(),
                }));
            }
            let mut docs = downloads
                .recv()
                .map_err(|_| anyhow::anyhow!("the download thread ended early"))??;
            received += 1;
            let mut failed = None;
            while docs.len() < STORE_BATCH {
                match downloads.try_recv() {
                    Ok(Ok(more)) => {
                        received += 1;
                        docs.extend(more);
                    }
                    Ok(Err(e)) => {
                        failed = Some(e);
                        break;
                    }
                    Err(_) => break,
                }
            }
            // What arrived before a failed download is stored first.
            store_batch(ctx, extraction_id, owner, direction, &docs)?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(None)
    })
}

fn store_batch(
    ctx: &Context,
    extraction_id: &str,
    owner: Owner,
    direction: Direction,
    docs: &[Fetched],
) -> anyhow::Result<()> {
    ctx.db.tx(|tx| {
        let mut processed = 0;
        for (meta, doc, prepared) in docs {
            let (Some(_), Some(prepared)) = (&doc.xml, prepared) else {
                continue;
            };
            // A bad document is logged and left metadata-only; it never stops the others.
            let stored = match prepared {
                Ok(doc) => ingest::store_document(tx, owner, direction, Some(meta), doc),
                Err(e) => Err(ingest::IngestError::Cfdi(e.clone())),
            };
            match stored {
                Ok(_) => processed += 1,
                Err(ingest::IngestError::Storage(e)) => return Err(e),
                Err(e @ ingest::IngestError::UuidTaken { .. }) => {
                    log::warn!("extraction {extraction_id}: {e}");
                    db::extractions::record_conflict(
                        tx,
                        extraction_id,
                        &meta.uuid,
                        &e.to_string(),
                    )?;
                }
                Err(e) => log::warn!(
                    "extraction {extraction_id}: invoice {} not processed: {e}",
                    meta.uuid
                ),
            }
        }
        add_counts(tx, extraction_id, 0, processed)
    })
}

pub(super) fn add_counts(
    tx: &rusqlite::Connection,
    id: &str,
    found: i64,
    processed: i64,
) -> anyhow::Result<()> {
    tx.prepare_cached(
        "UPDATE extractions SET invoices_found = invoices_found + ?2,
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
            Kind::ExtractionUpdate,
            &ext.id,
            &serde_json::value::to_raw_value(&object)?,
            None,
            &ctx.first_attempt_at(),
        )?;
        also(tx, &ext)
    });
    // The event's deliveries are due now: wake a worker rather than wait for this job to end.
    ctx.waker.wake();
    committed
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
/// run's invoice events go first, in chunks; the final transaction takes any left, so
/// the run never ends with its changes unannounced.
fn finish(
    ctx: &Context,
    id: &str,
    reason: Option<FailedReason>,
    refused: Refused,
) -> anyhow::Result<()> {
    events::invoices::flush_all(&ctx.db, id, &ctx.first_attempt_at())?;
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
            events::invoices::flush(tx, id, i64::MAX, &ctx.first_attempt_at())?;
            match refused {
                Refused::Nothing => Ok(()),
                Refused::Ciec => match db::entities::get_any(tx, &ext.entity_id)? {
                    Some(mut entity) if entity.credential_status != CredentialStatus::Invalid => {
                        super::credential::set_status(
                            tx,
                            ctx,
                            &mut entity,
                            CredentialStatus::Invalid,
                        )
                    }
                    _ => Ok(()),
                },
                Refused::Efirma(sealed) => super::credential::set_efirma_status(
                    tx,
                    ctx,
                    &ext.entity_id,
                    sealed,
                    EfirmaStatus::Invalid,
                ),
            }
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 1, d).expect("date")
    }

    #[test]
    fn windows_cover_the_period_exactly_once() {
        let w = windows(Period {
            from: day(1),
            to: day(31),
        });
        assert_eq!(w.len(), 5);
        assert_eq!(
            w[0],
            Period {
                from: day(1),
                to: day(7)
            }
        );
        assert_eq!(
            w[4],
            Period {
                from: day(29),
                to: day(31)
            }
        );
        for pair in w.windows(2) {
            assert_eq!(pair[0].to.succ_opt(), Some(pair[1].from));
        }
        assert_eq!(
            windows(Period {
                from: day(5),
                to: day(5)
            }),
            vec![Period {
                from: day(5),
                to: day(5)
            }]
        );
    }
}
