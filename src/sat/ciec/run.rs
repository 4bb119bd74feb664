//! The CIEC channel's run: log in, list the period's metadata window by window (stage
//! 1), then download the XML still missing in batches (stage 2), downloading ahead on a
//! thread of its own while one thread per core parses and compresses. A run cut short
//! (stop, crash) starts again from its listing: stage 1 is repeatable and stage 2 only
//! fetches what the sink has not stored.

use super::conversation::{Authority, Session, DOWNLOAD_BATCH};
use super::vault;
use crate::crypto::Cipher;
use crate::db::{entities::Entity, Conn};
use crate::domain::class::DocumentClass;
use crate::domain::extraction::{Direction, FailedReason, Period};
use crate::ingest;
use crate::sat::{
    Channel, Document, Due, Fetched, Metadata, Readiness, Run, SatError, Secret, Sink, Step,
    Verdict,
};
use crate::seal::Verifier;
use parking_lot::Mutex;
use std::sync::mpsc::sync_channel;
use std::sync::Arc;
use std::time::Duration;

/// Days listed at a time: keeps memory bounded for long periods of busy taxpayers
/// (the portal answers per day anyway).
const WINDOW_DAYS: u64 = 7;

/// Batches already downloaded are stored together until they hold this many documents
/// (the last one taken may go past it): each commit writes the index pages its
/// documents share once, so fewer, larger commits write less, while the write lock is
/// held some tens of ms.
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
    fn name(&self) -> &'static str {
        "ciec"
    }

    /// The portal serves invoices only (not CFDI de Retenciones).
    fn offers(&self, class: DocumentClass) -> bool {
        class == DocumentClass::Invoices
    }

    /// An invoice by UUID is the portal's search by folio fiscal.
    fn fetches_by_uuid(&self) -> bool {
        true
    }

    fn readiness(&self, entity: &Entity) -> Readiness {
        vault::readiness(entity)
    }

    fn open(&self, _: &Conn, cipher: &Cipher, entity: &Entity) -> anyhow::Result<Option<Secret>> {
        vault::open(cipher, entity).map(Some)
    }

    fn due(&self, _: &Conn, cipher: &Cipher, entity: &Entity) -> anyhow::Result<Due> {
        vault::due(cipher, entity)
    }

    fn validate(&self, secret: &Secret) -> Result<(), SatError> {
        self.authority.validate(&vault::opened(secret)?.credential)
    }

    fn record(
        &self,
        tx: &Conn,
        entity_id: &str,
        secret: &Secret,
        verdict: Verdict,
    ) -> anyhow::Result<bool> {
        vault::record(tx, entity_id, secret, verdict)
    }

    fn advance(&self, run: &Run, sink: &dyn Sink) -> anyhow::Result<Step> {
        let credential = &vault::opened(run.secret)?.credential;
        let result = (|| -> Result<Step, SatError> {
            let mut session = self.authority.login(credential, &run.context)?;
            // A run that restarts recounts what it lists; processed documents are not
            // fetched again, so invoices_processed carries on.
            sink.recount()?;
            if !run.uuids.is_empty() {
                // A run by UUID: one search per UUID, then the downloads still missing.
                let mut listing = Vec::new();
                for uuid in run.uuids {
                    listing.extend(session.find(run.direction, uuid)?);
                }
                let pending = sink.listed(&listing, &mut |_| Ok(()))?;
                let todo: Vec<_> = pending.into_iter().map(|i| listing[i].clone()).collect();
                let stopped = store_window(sink, run.direction, &mut *session, &todo)?;
                return Ok(stopped.unwrap_or(Step::Done));
            }
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

/// Downloads `todo` in batches on a thread of its own (the authority's latency, or the
/// sandbox's rendering), parses and compresses them on `preparers()` more, and stores
/// them here, so the three overlap; the batches waiting when the sink is free go to it
/// together. Returns a retry when the service is stopping: what is stored stays, the
/// rest is fetched on restart.
fn store_window(
    sink: &dyn Sink,
    direction: Direction,
    session: &mut dyn Session,
    todo: &[Metadata],
) -> Result<Option<Step>, SatError> {
    let workers = preparers();
    std::thread::scope(|scope| {
        // Bounded both ways: at most `workers` downloaded batches wait to be prepared,
        // and a store's worth of prepared ones to be stored. Each side stops when the
        // other's end is dropped (this one returning early drops `to_store`).
        let (downloaded, to_prepare) = sync_channel(workers);
        let (prepared, to_store) = sync_channel(STORE_BATCH / DOWNLOAD_BATCH);
        let to_prepare = Arc::new(Mutex::new(to_prepare));
        scope.spawn(move || {
            for batch in todo.chunks(DOWNLOAD_BATCH) {
                let docs = session.download(direction, batch).map(|docs| (batch, docs));
                let failed = docs.is_err();
                // A closed channel means the storing side stopped: so do we.
                if downloaded.send(docs).is_err() || failed {
                    break;
                }
            }
        });
        for _ in 0..workers {
            let (to_prepare, prepared) = (to_prepare.clone(), prepared.clone());
            scope.spawn(move || {
                loop {
                    // The lock is held while waiting (so each batch goes to one worker),
                    // not while preparing.
                    let Ok(docs) = to_prepare.lock().recv() else {
                        break;
                    };
                    if prepared
                        .send(docs.map(|d| prepare(d, sink.verifier())))
                        .is_err()
                    {
                        break;
                    }
                }
            });
        }
        // The workers hold the only senders and receivers: the channels close when
        // they are done, or when they stop.
        drop((prepared, to_prepare));
        let (batches, mut received) = (todo.len().div_ceil(DOWNLOAD_BATCH), 0);
        let mut failed = None;
        while let Ok(first) = to_store.recv() {
            if sink.stopping() {
                return Ok(Some(Step::Retry {
                    after: Duration::ZERO,
                    error: "service stopping".into(),
                }));
            }
            let (mut docs, mut next) = (vec![], Some(first));
            while let Some(batch) = next {
                received += 1;
                match batch {
                    Ok(more) => docs.extend(more),
                    // The first failure is returned once what arrived is stored: batches
                    // prepared beside it still arrive, and are stored too.
                    Err(e) => {
                        failed.get_or_insert(e);
                    }
                }
                next = (docs.len() < STORE_BATCH)
                    .then(|| to_store.try_recv().ok())
                    .flatten();
            }
            if !docs.is_empty() {
                sink.documents(&docs, &mut |_| Ok(()))?;
            }
        }
        match failed {
            Some(e) => Err(e),
            None if received < batches => {
                Err(anyhow::anyhow!("the download thread ended early").into())
            }
            None => Ok(None),
        }
    })
}

/// Threads that parse and compress a window's downloads: one per core, as parsing and
/// compressing is the CPU-bound part of ingest and the download thread mostly waits.
fn preparers() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// A downloaded batch parsed, verified and compressed; a document the authority does
/// not provide yet stays listed only.
fn prepare<'a>(
    (batch, docs): (&'a [Metadata], Vec<Document>),
    verifier: Verifier<'_>,
) -> Vec<Fetched<'a>> {
    batch
        .iter()
        .zip(docs)
        .filter_map(|(meta, doc)| {
            let xml = doc.xml?;
            Some(Fetched {
                listed: Some(meta),
                name: format!("invoice {}", meta.uuid),
                prepared: ingest::prepare(&xml, doc.pdf.as_deref(), verifier).map(Into::into),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sat::Resume;
    use chrono::NaiveDate;
    use std::sync::atomic::{AtomicBool, Ordering};

    fn listed(n: usize) -> Vec<Metadata> {
        (0..n)
            .map(|i| Metadata {
                uuid: format!("u{i}"),
                ..Metadata::default()
            })
            .collect()
    }

    /// Every tenth document is not provided yet; download call `fail_at` fails.
    struct FakeSession {
        calls: usize,
        fail_at: Option<usize>,
    }

    impl Session for FakeSession {
        fn list(&mut self, _: Direction, _: Period) -> Result<Vec<Metadata>, SatError> {
            unreachable!("store_window never lists")
        }

        fn find(&mut self, _: Direction, _: &str) -> Result<Option<Metadata>, SatError> {
            unreachable!("store_window never searches")
        }

        fn download(
            &mut self,
            _: Direction,
            items: &[Metadata],
        ) -> Result<Vec<Document>, SatError> {
            self.calls += 1;
            if self.fail_at == Some(self.calls) {
                return Err(SatError::Unavailable("down".into()));
            }
            Ok(items
                .iter()
                .map(|m| Document {
                    uuid: m.uuid.clone(),
                    xml: (!m.uuid.ends_with('9')).then(|| b"<not-a-cfdi/>".to_vec()),
                    pdf: None,
                })
                .collect())
        }
    }

    /// Records the listed UUID of each document handed to it, and each call's size.
    #[derive(Default)]
    struct FakeSink {
        stopping: AtomicBool,
        stored: parking_lot::Mutex<Vec<String>>,
        calls: parking_lot::Mutex<Vec<usize>>,
    }

    impl Sink for FakeSink {
        fn stopping(&self) -> bool {
            self.stopping.load(Ordering::Relaxed)
        }
        fn recount(&self) -> anyhow::Result<()> {
            Ok(())
        }
        fn found(&self, _: u64, _: Resume) -> anyhow::Result<()> {
            unreachable!("these tests find nothing by UUID")
        }
        fn listed(&self, _: &[Metadata], _: Resume) -> anyhow::Result<Vec<usize>> {
            unreachable!("store_window never lists")
        }
        fn documents(&self, docs: &[Fetched], _: Resume) -> anyhow::Result<()> {
            self.calls.lock().push(docs.len());
            let mut stored = self.stored.lock();
            stored.extend(docs.iter().map(|d| d.listed.expect("listed").uuid.clone()));
            Ok(())
        }
    }

    fn provided(range: std::ops::Range<usize>) -> Vec<String> {
        let mut uuids: Vec<String> = range.map(|i| format!("u{i}")).collect();
        uuids.retain(|u| !u.ends_with('9'));
        uuids.sort();
        uuids
    }

    #[test]
    fn a_window_is_stored_once_in_batches_of_at_most_a_store() {
        let (sink, todo) = (FakeSink::default(), listed(1037));
        let mut session = FakeSession {
            calls: 0,
            fail_at: None,
        };
        let step = store_window(&sink, Direction::Received, &mut session, &todo).expect("stored");
        assert!(step.is_none());
        assert_eq!(session.calls, 1037usize.div_ceil(DOWNLOAD_BATCH));
        let mut stored = sink.stored.into_inner();
        stored.sort();
        assert_eq!(stored, provided(0..1037), "each provided document once");
        let most = STORE_BATCH + DOWNLOAD_BATCH - 1;
        assert!(sink.calls.into_inner().iter().all(|&n| n > 0 && n <= most));
    }

    #[test]
    fn a_failed_download_is_returned_after_what_came_before_it_is_stored() {
        let (sink, todo) = (FakeSink::default(), listed(1000));
        let mut session = FakeSession {
            calls: 0,
            fail_at: Some(4),
        };
        let error = store_window(&sink, Direction::Received, &mut session, &todo)
            .expect_err("the download failed");
        assert!(matches!(error, SatError::Unavailable(_)), "{error}");
        assert_eq!(session.calls, 4, "no download after the failed one");
        let mut stored = sink.stored.into_inner();
        stored.sort();
        assert_eq!(stored, provided(0..3 * DOWNLOAD_BATCH));
    }

    #[test]
    fn a_stopping_service_gets_a_retry_without_waiting_for_the_window() {
        let (sink, todo) = (FakeSink::default(), listed(5000));
        sink.stopping.store(true, Ordering::Relaxed);
        let mut session = FakeSession {
            calls: 0,
            fail_at: None,
        };
        let step = store_window(&sink, Direction::Received, &mut session, &todo).expect("step");
        assert!(matches!(step, Some(Step::Retry { .. })), "{step:?}");
        assert!(sink.stored.into_inner().is_empty());
        assert!(
            session.calls < 100,
            "stopped early: {} downloads",
            session.calls
        );
    }

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
