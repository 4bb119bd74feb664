//! The SAT's stamping certificates, which verify a stamp's `SelloSAT` (`seal`): kept in
//! the database (`db::sat_certificates`), filled on demand from the SAT's repository
//! (`repository`; the sandbox's own with `--sat sandbox`) or from files
//! (`cfdi-extract sat-certificates load`). Blocking: callers run it off the executor.
//!
//! A certificate is fetched once: concurrent asks for one number wait for one fetch,
//! and once stored it is never fetched again. Fetches take turns at a rate (the SAT's
//! repository is a public service), and a failed one is not tried again for a while
//! (ten turns), so a document asked about often does not hammer a repository that is down.

pub mod repository;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use crate::db::sat_certificates::{self, Source};
use crate::db::Db;
use crate::seal::{Certificate, Lookup, SatCertificates, Seal, Trust};
pub use repository::{Repository, SAT_REPOSITORY_URL};

/// Failed fetches are not tried again for this many turns of the rate.
const RETRY_TURNS: u32 = 10;

/// The store, and the authorities a verification trusts.
pub struct Store {
    db: Db,
    repository: Arc<dyn Repository>,
    trust: Trust,
    /// The time between two fetches.
    turn: Duration,
    /// When the next fetch may start.
    next: Mutex<Instant>,
    /// One lock per number being fetched, so a second ask waits for the first.
    flights: Mutex<HashMap<String, Arc<Mutex<()>>>>,
    /// The last failure per number: when, and why.
    failures: Mutex<HashMap<String, (Instant, String)>>,
    /// The certificates found, kept in memory (never changed once stored): the ingest
    /// verifies every document's stamp, all with the SAT's few certificates.
    known: RwLock<HashMap<String, Certificate>>,
}

impl Store {
    /// `rate`: fetches a second at most.
    pub fn new(db: Db, repository: Arc<dyn Repository>, trust: Trust, rate: f64) -> Self {
        let turn = Duration::from_secs_f64(1.0 / rate.max(0.001));
        Store {
            db,
            repository,
            trust,
            turn,
            next: Mutex::new(Instant::now()),
            flights: Mutex::new(HashMap::new()),
            failures: Mutex::new(HashMap::new()),
            known: RwLock::new(HashMap::new()),
        }
    }

    pub fn trust(&self) -> &Trust {
        &self.trust
    }

    /// This store's certificates at hand, without fetching (`AtHand`).
    pub fn at_hand(&self) -> AtHand<'_> {
        AtHand(self)
    }

    /// Verifies a document's bytes (`seal::verify`) with this store's certificates.
    pub fn verify(&self, bytes: &[u8]) -> Result<Option<Seal>, String> {
        crate::seal::verify(bytes, &self.trust, self)
    }

    fn stored(&self, number: &str) -> Result<Option<Certificate>, String> {
        let der = self
            .db
            .conn()
            .and_then(|c| sat_certificates::get(&c, number))
            .map_err(|e| format!("the certificate store could not be read ({e})"))?;
        der.map(|d| Certificate::from_der(&d)).transpose()
    }

    /// Why `number` could not be had, if it failed less than `retry` ago.
    fn recent_failure(&self, number: &str, retry: Duration) -> Option<String> {
        let failures = self.failures.lock();
        let (at, why) = failures.get(number)?;
        (at.elapsed() < retry).then(|| why.clone())
    }

    /// Waits for this fetch's turn.
    fn take_turn(&self) {
        let wait = {
            let mut next = self.next.lock();
            let now = Instant::now();
            let start = (*next).max(now);
            *next = start + self.turn;
            start - now
        };
        std::thread::sleep(wait);
    }

    fn fetch(&self, number: &str) -> Result<Certificate, String> {
        self.take_turn();
        let bytes = self.repository.fetch(number)?;
        let cert = Certificate::from_file_bytes(&bytes)
            .map_err(|e| format!("the repository's answer for {number} {e}"))?;
        if cert.number() != number {
            return Err(format!(
                "the repository answered certificate {} for {number}",
                cert.number()
            ));
        }
        self.put(&cert, Source::Repository)?;
        log::info!(number; "SAT certificate fetched");
        Ok(cert)
    }

    fn put(&self, cert: &Certificate, source: Source) -> Result<bool, String> {
        let now = crate::time::now();
        self.db
            .tx(|tx| sat_certificates::put(tx, &cert.number(), cert.der(), source, &now))
            .map_err(|e| format!("the certificate could not be stored ({e})"))
    }
}

impl SatCertificates for Store {
    fn lookup(&self, number: &str) -> Lookup {
        self.lookup_within(number, self.turn * RETRY_TURNS)
    }
}

impl Store {
    /// The certificate `number`: in memory, stored, or fetched unless its last fetch
    /// failed less than `retry` ago.
    fn lookup_within(&self, number: &str, retry: Duration) -> Lookup {
        if !repository::is_number(number) {
            return Lookup::Missing(format!("{number:?} is not a SAT certificate number"));
        }
        if let Some(cert) = self.known.read().get(number) {
            return Lookup::Found(Box::new(cert.clone()));
        }
        let found = |c: Certificate| {
            self.known.write().insert(number.to_string(), c.clone());
            Lookup::Found(Box::new(c))
        };
        match self.stored(number) {
            Ok(Some(cert)) => return found(cert),
            Ok(None) => {}
            Err(why) => return Lookup::Missing(why),
        }
        if let Some(why) = self.recent_failure(number, retry) {
            return Lookup::Missing(why);
        }
        let flight = self
            .flights
            .lock()
            .entry(number.to_string())
            .or_default()
            .clone();
        let answer = {
            let _one_at_a_time = flight.lock();
            // Another ask may have fetched it (or failed) while this one waited.
            match self.stored(number) {
                Ok(Some(cert)) => Ok(cert),
                Err(why) => Err(why),
                Ok(None) => match self.recent_failure(number, retry) {
                    Some(why) => Err(why),
                    None => self.fetch(number),
                },
            }
        };
        self.flights.lock().remove(number);
        match answer {
            Ok(cert) => {
                self.failures.lock().remove(number);
                found(cert)
            }
            Err(why) => {
                log::warn!(number, reason = why.as_str(); "SAT certificate not fetched");
                self.failures
                    .lock()
                    .insert(number.to_string(), (Instant::now(), why.clone()));
                Lookup::Missing(why)
            }
        }
    }
}

/// What the ingest verifies with: the certificates at hand, and a missing one fetched
/// once (concurrent asks wait for that fetch), so a month of documents verifies as it
/// is stored. After a failed fetch the ingest asks no more for `INGEST_RETRY`: a slow
/// or unreachable repository costs a run at most one fetch's timeout in that time, and
/// the seal verifier (`ops::seals`) fetches it later and verifies the documents again.
pub struct AtHand<'a>(&'a Store);

/// How long the ingest leaves a certificate whose fetch failed to the seal verifier.
const INGEST_RETRY: Duration = Duration::from_secs(300);

impl AtHand<'_> {
    pub fn trust(&self) -> &Trust {
        &self.0.trust
    }
}

impl SatCertificates for AtHand<'_> {
    fn lookup(&self, number: &str) -> Lookup {
        self.0
            .lookup_within(number, INGEST_RETRY.max(self.0.turn * RETRY_TURNS))
    }
}

/// What loading one file did: the certificate's number and whether it was new, or why
/// it was refused.
pub type Loaded = Result<(String, bool), String>;

/// Loads certificates from files (`.cer`, DER or PEM) into the store: for each, its
/// number and whether it was new. A certificate is stored only when the SAT (or the
/// sandbox's authority, in the sandbox) issued it.
pub fn load(db: &Db, trust: &Trust, files: &[(String, Vec<u8>)]) -> Vec<(String, Loaded)> {
    files
        .iter()
        .map(|(name, bytes)| {
            let outcome = Certificate::from_file_bytes(bytes).and_then(|cert| {
                if !trust.issued(&cert) {
                    return Err(format!(
                        "was issued by {}, not by the SAT",
                        cert.issuer_name()
                    ));
                }
                let number = cert.number();
                if !repository::is_number(&number) {
                    return Err(format!(
                        "is numbered {number}, not as the SAT numbers certificates"
                    ));
                }
                let now = crate::time::now();
                db.tx(|tx| sat_certificates::put(tx, &number, cert.der(), Source::File, &now))
                    .map(|new| (number, new))
                    .map_err(|e| format!("could not be stored ({e})"))
            });
            (name.clone(), outcome)
        })
        .collect()
}
