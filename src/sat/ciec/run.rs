//! The CIEC channel's run: log in, list the period's metadata window by window (stage
//! 1), then download the XML still missing in batches (stage 2), downloading ahead on a
//! thread of its own. A run cut short (stop, crash) starts again from its listing: stage
//! 1 is repeatable and stage 2 only fetches what the sink has not stored.

use super::conversation::{Authority, Session, DOWNLOAD_BATCH};
use crate::domain::extraction::{Direction, FailedReason, Period};
use crate::ingest;
use crate::sat::channel::wrong_secret;
use crate::sat::{Channel, Fetched, Metadata, Run, SatError, Secret, Sink, Step};
use std::sync::Arc;
use std::time::Duration;

/// Days listed at a time: keeps memory bounded for long periods of busy taxpayers
/// (the portal answers per day anyway).
const WINDOW_DAYS: u64 = 7;

/// The most documents one batch handed to the sink holds. Batches already downloaded
/// are stored together: each commit writes the index pages its documents share once,
/// so fewer, larger commits write less, while the write lock is held some tens of ms.
const STORE_BATCH: usize = 4 * DOWNLOAD_BATCH;

/// The CIEC channel over an `Authority`: the SAT's portal, or the sandbox's.
pub struct CiecChannel {
    authority: Arc<dyn Authority>,
}

impl CiecChannel {
    pub fn new(authority: Arc<dyn Authority>) -> Self {
        CiecChannel { authority }
    }
}

impl Channel for CiecChannel {
    fn validate(&self, secret: &Secret) -> Result<(), SatError> {
        let Secret::Ciec(credential) = secret else {
            return Err(wrong_secret("CIEC"));
        };
        self.authority.validate(credential)
    }

    fn advance(&self, run: &Run, sink: &dyn Sink) -> anyhow::Result<Step> {
        let Secret::Ciec(credential) = run.secret else {
            return Err(wrong_secret("CIEC").into());
        };
        let result = (|| -> Result<Step, SatError> {
            let mut session = self.authority.login(credential, &run.context)?;
            // A run that restarts recounts what it lists; processed documents are not
            // fetched again, so invoices_processed carries on.
            sink.recount()?;
            for window in windows(run.period) {
                let listing = session.list(run.direction, window)?;
                let pending = sink.listed(&listing, &mut |_| Ok(()))?;
                let todo: Vec<_> = pending.into_iter().map(|i| listing[i].clone()).collect();
                if let Some(stopped) = store_window(sink, run.direction, &mut *session, &todo)? {
                    return Ok(stopped);
                }
            }
            Ok(Step::Done)
        })();
        match result {
            Ok(step) => Ok(step),
            Err(SatError::InvalidCredentials) => Ok(Step::CredentialRefused),
            Err(SatError::Unavailable(detail)) => {
                log::warn!(
                    "extraction {}: tax authority unavailable: {detail}",
                    run.context.extraction_id
                );
                Ok(Step::Failed(FailedReason::SatUnavailable))
            }
            Err(SatError::Internal(e)) => Err(e),
        }
    }
}

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

/// Downloads `todo` in batches on a thread of its own (up to four batches ahead), so the
/// authority's latency (or the sandbox's rendering), XML parsing and compression overlap
/// with the sink's writes; the batches waiting when the sink is free go to it together.
/// Returns a retry when the service is stopping: what is stored stays, the rest is
/// fetched on restart.
fn store_window(
    sink: &dyn Sink,
    direction: Direction,
    session: &mut dyn Session,
    todo: &[Metadata],
) -> Result<Option<Step>, SatError> {
    std::thread::scope(|scope| {
        let (sender, downloads) = std::sync::mpsc::sync_channel(STORE_BATCH / DOWNLOAD_BATCH);
        scope.spawn(move || {
            for batch in todo.chunks(DOWNLOAD_BATCH) {
                let docs = session.download(direction, batch).map(|docs| {
                    batch
                        .iter()
                        .zip(docs)
                        // A document the authority does not provide yet stays listed only.
                        .filter_map(|(meta, doc)| {
                            let xml = doc.xml?;
                            Some(Fetched {
                                listed: Some(meta),
                                name: format!("invoice {}", meta.uuid),
                                prepared: ingest::prepare(&xml, doc.pdf.as_deref()).map(Into::into),
                            })
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
            if sink.stopping() {
                return Ok(Some(Step::Retry {
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
            sink.documents(&docs, &mut |_| Ok(()))?;
            if let Some(e) = failed {
                return Err(e);
            }
        }
        Ok(None)
    })
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
