//! The seal verifier: a thread of its own that verifies, a batch at a time, the
//! documents stored before the service verified seals (once: their `seal_status` is
//! NULL until it does, so a restart resumes where it stopped), and verifies again the
//! documents whose stamp waited for a SAT certificate once that certificate is at hand
//! (fetched by the store, at its rate, or loaded from a file), emitting their
//! `<class>.updated` with the answer in the same transaction.
//!
//! Paced: the XML is read and verified outside any transaction, each batch's answers
//! are written in one short one, and after a batch the thread rests as long as the
//! batch took, so it takes at most half of one core and never holds the write lock
//! for more than a batch's updates. Several instances may run it: an answer is written
//! only where none was (or the same certificate is still awaited), so doing a batch
//! twice changes nothing.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::db::classes::Stored;
use crate::db::{self, Db};
use crate::domain::class::{InvoiceClass, RetentionClass};
use crate::periodic::{Periodic, Stopping};
use crate::seal::{Lookup, SatCertificates, Trust, Verified, Verifier};

/// Documents per batch (read, verified, then written in one transaction).
const BATCH: i64 = 100;
/// Awaited certificates looked up per round.
const NUMBERS: i64 = 20;
/// The rest after a failed round.
const FAILED: Duration = Duration::from_secs(60);
/// How often an idle verifier looks for new work (documents stored unverified, a SAT
/// certificate newly awaited), at most: a certificate the ingest did not have is
/// fetched soon after, so few documents wait for it.
const POLL: Duration = Duration::from_secs(5);

/// What the verifier verifies with: the service's trust and SAT certificates (which
/// fetches a missing one), and when a certificate that could not be had is tried again.
pub struct Seals {
    trust: Trust,
    sat: Arc<dyn SatCertificates + Send + Sync>,
    recheck: Duration,
    /// The certificates not found, and when: not asked for again before `recheck`.
    missing: Mutex<HashMap<String, Instant>>,
}

impl Seals {
    pub fn new(
        trust: Trust,
        sat: Arc<dyn SatCertificates + Send + Sync>,
        recheck: Duration,
    ) -> Self {
        Seals {
            trust,
            sat,
            recheck,
            missing: Mutex::default(),
        }
    }

    /// Whether certificate `number` is at hand now (fetched if need be), unless it was
    /// missing less than `recheck` ago.
    fn at_hand(&self, number: &str) -> bool {
        if let Some(at) = self.missing.lock().get(number) {
            if at.elapsed() < self.recheck {
                return false;
            }
        }
        match self.sat.lookup(number) {
            Lookup::Found(_) => {
                self.missing.lock().remove(number);
                true
            }
            Lookup::Missing(_) => {
                self.missing
                    .lock()
                    .insert(number.to_string(), Instant::now());
                false
            }
        }
    }

    fn verifier(&self) -> Verifier<'_> {
        Verifier {
            trust: &self.trust,
            sat: &*self.sat,
        }
    }
}

/// Starts the thread.
pub fn start(db: Db, seals: Seals) -> anyhow::Result<Periodic> {
    let idle = POLL.min(seals.recheck);
    Periodic::spawn_watching("seal-verifier", Duration::ZERO, move |stopping| {
        let started = Instant::now();
        match round(&db, &seals, stopping) {
            Ok(0) => idle,
            // Rest as long as the work took: at most half of one core.
            Ok(_) => started.elapsed(),
            Err(e) => {
                log::error!("seal verifier: {e:#}");
                FAILED
            }
        }
    })
}

/// One round: a batch of never verified documents of each class, and the documents
/// waiting for each SAT certificate now at hand. How many documents it verified.
pub fn round(db: &Db, seals: &Seals, stopping: &Stopping) -> anyhow::Result<usize> {
    let mut done = first::<InvoiceClass>(db, seals)?;
    done += first::<RetentionClass>(db, seals)?;
    if done == 0 && !stopping.is_set() {
        done += arrived::<InvoiceClass>(db, seals, stopping)?;
        done += arrived::<RetentionClass>(db, seals, stopping)?;
    }
    Ok(done)
}

/// Reads `ids`' XML, then verifies it outside any transaction and with the connection
/// given back: a verification may fetch a SAT certificate, which can take its timeout.
fn verify<C: Stored>(db: &Db, seals: &Seals, ids: &[String]) -> anyhow::Result<Vec<Verified>> {
    let xmls = {
        let conn = db.conn()?;
        ids.iter()
            .map(|id| db::documents::get_of(&conn, C::FILES, id, "xml"))
            .collect::<anyhow::Result<Vec<_>>>()?
    };
    Ok(xmls
        .into_iter()
        .map(|xml| match xml {
            Some(xml) => seals.verifier().bytes(&xml),
            None => Verified {
                seal: crate::seal::Seal::unreadable("the document's XML is not stored"),
                awaits: None,
            },
        })
        .collect())
}

/// A batch of documents never verified: their first answer, without an event.
fn first<C: Stored>(db: &Db, seals: &Seals) -> anyhow::Result<usize> {
    let ids = db::seals::unverified::<C>(&db.conn()?, BATCH)?;
    if ids.is_empty() {
        return Ok(0);
    }
    let answers = verify::<C>(db, seals, &ids)?;
    db.tx(|tx| {
        for (id, answer) in ids.iter().zip(&answers) {
            db::seals::first::<C>(tx, id, answer)?;
        }
        Ok(())
    })?;
    Ok(ids.len())
}

/// The documents waiting for a SAT certificate now at hand, verified again: each
/// answer stored with its document's `.updated`, in one transaction per batch.
fn arrived<C: Stored>(db: &Db, seals: &Seals, stopping: &Stopping) -> anyhow::Result<usize> {
    let numbers = db::seals::awaited::<C>(&db.conn()?, NUMBERS)?;
    let mut done = 0;
    for number in numbers {
        if stopping.is_set() {
            break;
        }
        // Fetched here when missing (once, at the store's rate); still missing: later.
        if !seals.at_hand(&number) {
            continue;
        }
        loop {
            let ids = db::seals::awaiting::<C>(&db.conn()?, &number, BATCH)?;
            if ids.is_empty() || stopping.is_set() {
                break;
            }
            let answers = verify::<C>(db, seals, &ids)?;
            let batch = format!("seal-{}", uuid::Uuid::now_v7());
            let now = crate::time::now();
            let stored = db.tx(|tx| {
                let mut stored = 0;
                for (id, answer) in ids.iter().zip(&answers) {
                    db::changes::mark(tx, &C::TRACKED, &batch, id)?;
                    if db::seals::again::<C>(tx, id, &number, answer, &now)? {
                        stored += 1;
                    }
                }
                // The events commit with the answers that cause them.
                crate::events::documents::flush(tx, &batch, BATCH)?;
                Ok(stored)
            })?;
            done += ids.len();
            // Still awaited after a verification with the certificate at hand (it
            // verified nothing): leave it, or this would loop.
            if stored == 0 || answers.iter().any(|a| a.awaits.as_deref() == Some(&number)) {
                break;
            }
        }
    }
    Ok(done)
}
