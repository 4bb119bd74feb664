//! The sandbox's CIEC portal (`ciec::Authority`). Its rules (documented in
//! `/docs/sandbox`):
//! - every call takes `--sim-latency`;
//! - a password starting `bad` is refused; one starting `chg` passes validation and is
//!   refused at every extraction login;
//! - a tax_id starting `OFF` is unreachable; one starting `UNA` logs in but its invoice
//!   service is down; one starting `BIG` has about 500 invoices a day;
//! - invoices come from `sandbox_docs`, the same for a (tax_id, direction, day) every time;
//! - withheld XML and late cancellations depend on whether the extraction asking is the
//!   one that first listed the invoice, recorded in the sandbox's store.

use super::docs::{self as sandbox_docs, SandboxInvoice};
use crate::db::sandbox::{listings, SandboxStore};
use crate::domain::extraction::{Direction, Period};
use crate::sat::ciec::Credential;
use crate::sat::ciec::{Authority, Session};
use crate::sat::{Document, Metadata, RunContext, SatError};
use std::collections::HashMap;
use std::time::Duration;

pub struct SandboxPortal {
    db: SandboxStore,
    latency: Duration,
}

impl SandboxPortal {
    pub fn new(db: SandboxStore, latency: Duration) -> Self {
        Self { db, latency }
    }

    fn call(&self) {
        simulate_latency(self.latency);
    }
}

/// Every sandbox call, in either channel, takes `--sim-latency`.
pub(crate) fn simulate_latency(latency: Duration) {
    if !latency.is_zero() {
        std::thread::sleep(latency);
    }
}

pub(crate) fn unreachable(tax_id: &str) -> bool {
    tax_id.starts_with("OFF")
}

impl Authority for SandboxPortal {
    fn validate(&self, credential: &Credential) -> Result<(), SatError> {
        self.call();
        if unreachable(&credential.tax_id) {
            return Err(SatError::Unavailable(
                "sandbox: OFF tax ids are unreachable".into(),
            ));
        }
        if credential.password.starts_with("bad") {
            return Err(SatError::InvalidCredentials);
        }
        Ok(())
    }

    fn login(
        &self,
        credential: &Credential,
        run: &RunContext,
    ) -> Result<Box<dyn Session>, SatError> {
        self.validate(credential)?;
        if credential.password.starts_with("chg") {
            return Err(SatError::InvalidCredentials);
        }
        Ok(Box::new(SandboxSession {
            db: self.db.clone(),
            latency: self.latency,
            tax_id: credential.tax_id.clone(),
            run: run.clone(),
            listed: HashMap::new(),
        }))
    }
}

struct SandboxSession {
    db: SandboxStore,
    latency: Duration,
    tax_id: String,
    run: RunContext,
    /// uuid -> (invoice, listed first by this run)
    listed: HashMap<String, (SandboxInvoice, bool)>,
}

pub(crate) fn docs_direction(d: Direction) -> sandbox_docs::Direction {
    match d {
        Direction::Issued => sandbox_docs::Direction::Issued,
        Direction::Received => sandbox_docs::Direction::Received,
    }
}

impl SandboxSession {
    fn call(&self) {
        simulate_latency(self.latency);
    }

    /// Records which run first listed each invoice; returns the uuids this run was first for.
    fn record_listing(
        &self,
        direction: Direction,
        invoices: &[SandboxInvoice],
    ) -> anyhow::Result<HashMap<String, bool>> {
        self.db.tx(|tx| {
            listings::record(
                tx,
                &self.run.entity_id,
                direction.as_str(),
                &self.run.extraction_id,
                invoices.iter().map(|inv| inv.uuid.as_str()),
            )
        })
    }
}

impl Session for SandboxSession {
    fn list(&mut self, direction: Direction, period: Period) -> Result<Vec<Metadata>, SatError> {
        self.call();
        if self.tax_id.starts_with("UNA") {
            return Err(SatError::Unavailable(
                "sandbox: the invoice service is down for UNA tax ids".into(),
            ));
        }
        let invoices = sandbox_docs::invoices_for_period(
            &self.tax_id,
            docs_direction(direction),
            period.from,
            period.to,
        );
        let first = self.record_listing(direction, &invoices)?;
        // Downloads name invoices of the latest listing only; keep memory to one window.
        self.listed.clear();
        let mut out = Vec::with_capacity(invoices.len());
        for inv in invoices {
            let first_listing = first.get(&inv.uuid).copied().unwrap_or(false);
            out.push(metadata(&inv, first_listing));
            self.listed.insert(inv.uuid.clone(), (inv, first_listing));
        }
        Ok(out)
    }

    /// The portal's search by folio fiscal: the invoice the sandbox generated under that
    /// UUID on the direction's side, issued from 120 days before the run's period to its
    /// end (`/docs/sandbox#by-uuid`), as a listing shows it.
    fn find(&mut self, direction: Direction, uuid: &str) -> Result<Option<Metadata>, SatError> {
        self.call();
        let Some(period) = self.run.period else {
            return Ok(None);
        };
        let from = sandbox_docs::uuid_search_start(period.from);
        let dir = docs_direction(direction);
        let Some(inv) = sandbox_docs::find_invoice(&self.tax_id, dir, from, period.to, uuid) else {
            return Ok(None);
        };
        let first = self.record_listing(direction, std::slice::from_ref(&inv))?;
        let first_listing = first.get(&inv.uuid).copied().unwrap_or(false);
        let row = metadata(&inv, first_listing);
        self.listed.insert(inv.uuid.clone(), (inv, first_listing));
        Ok(Some(row))
    }

    fn download(
        &mut self,
        direction: Direction,
        items: &[Metadata],
    ) -> Result<Vec<Document>, SatError> {
        self.call();
        let dir = docs_direction(direction);
        let mut docs = Vec::with_capacity(items.len());
        for item in items {
            let Some((inv, first_listing)) = self.listed.get(&item.uuid) else {
                return Err(SatError::Unavailable(format!(
                    "sandbox: {} was not listed in this session",
                    item.uuid
                )));
            };
            if inv.xml_withheld_first && *first_listing {
                docs.push(Document {
                    uuid: item.uuid.clone(),
                    xml: None,
                    pdf: None,
                });
                continue;
            }
            docs.push(Document {
                uuid: item.uuid.clone(),
                xml: Some(
                    sandbox_docs::render_xml(&self.tax_id, dir, inv)
                        .map_err(anyhow::Error::from)?,
                ),
                pdf: sandbox_docs::render_pdf(&self.tax_id, dir, inv),
            });
        }
        Ok(docs)
    }
}

const LOCAL_TIME: &str = "%Y-%m-%dT%H:%M:%S";

/// Whether a listing shows the invoice cancelled: half of the cancelled invoices were
/// cancelled after the first listing saw them.
pub(crate) fn listed_cancelled(inv: &SandboxInvoice, first_listing: bool) -> bool {
    inv.cancelled_at.is_some() && !(inv.cancellation_seen_late && first_listing)
}

/// The listing row of an invoice, as the run that sees it (first or not) gets it.
pub(crate) fn metadata(inv: &SandboxInvoice, first_listing: bool) -> Metadata {
    let cancelled = listed_cancelled(inv, first_listing);
    Metadata {
        uuid: inv.uuid.clone(),
        issuer_tax_id: inv.issuer_tax_id.clone(),
        issuer_name: Some(inv.issuer_name.clone()),
        receiver_tax_id: inv.receiver_tax_id.clone(),
        receiver_name: Some(inv.receiver_name.clone()),
        issued_at: Some(inv.issued_at.format(LOCAL_TIME).to_string()),
        certified_at: None,
        total: Some(inv.total),
        invoice_type: Some(inv.invoice_type.to_string()),
        cancelled,
        cancelled_at: inv
            .cancelled_at
            .filter(|_| cancelled)
            .map(|t| t.format(LOCAL_TIME).to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfdi::Cfdi;
    use chrono::NaiveDate;

    #[test]
    fn every_generated_document_parses_with_the_real_parser_and_matches_its_listing() {
        let from = NaiveDate::from_ymd_opt(2026, 1, 1).expect("date");
        let to = NaiveDate::from_ymd_opt(2026, 4, 30).expect("date");
        for dir in [
            sandbox_docs::Direction::Issued,
            sandbox_docs::Direction::Received,
        ] {
            let invoices = sandbox_docs::invoices_for_period("AAA010101AAA", dir, from, to);
            assert!(invoices.len() > 300, "about 5 a day plus complements");
            for inv in &invoices {
                let xml = sandbox_docs::render_xml("AAA010101AAA", dir, inv).expect("renders");
                let cfdi =
                    Cfdi::parse_stamped(&xml).unwrap_or_else(|e| panic!("{}: {e}", inv.uuid));
                assert_eq!(cfdi.uuid().ok(), Some(inv.uuid.as_str()));
                assert_eq!(
                    cfdi.invoice_type.as_str().chars().next(),
                    Some(inv.invoice_type)
                );
                assert_eq!(cfdi.total, inv.total, "{}", inv.uuid);
                let own = match dir {
                    sandbox_docs::Direction::Issued => &cfdi.issuer.tax_id,
                    sandbox_docs::Direction::Received => &cfdi.receiver.tax_id,
                };
                assert_eq!(own, "AAA010101AAA");
                if let Some(pdf) = sandbox_docs::render_pdf("AAA010101AAA", dir, inv) {
                    assert!(pdf.starts_with(b"%PDF-"));
                }
            }
        }
    }

    #[test]
    fn credentials_follow_the_sandbox_rules() {
        let dir = tempfile::tempdir().expect("tmp");
        let store = SandboxStore::open(dir.path()).expect("store");
        let sandbox = SandboxPortal::new(store, Duration::ZERO);
        let cred = |tax_id: &str, password: &str| Credential {
            tax_id: tax_id.into(),
            password: password.into(),
        };
        let run = RunContext {
            entity_id: "e".into(),
            extraction_id: "x".into(),
            period: None,
        };
        assert!(sandbox.validate(&cred("AAA010101AAA", "12345678")).is_ok());
        assert!(matches!(
            sandbox.validate(&cred("AAA010101AAA", "badpass1")),
            Err(SatError::InvalidCredentials)
        ));
        assert!(matches!(
            sandbox.validate(&cred("OFF010101AAA", "12345678")),
            Err(SatError::Unavailable(_))
        ));
        assert!(sandbox.validate(&cred("AAA010101AAA", "chgpass1")).is_ok());
        assert!(matches!(
            sandbox.login(&cred("AAA010101AAA", "chgpass1"), &run),
            Err(SatError::InvalidCredentials)
        ));
        let mut session = sandbox
            .login(&cred("UNA010101AAA", "12345678"), &run)
            .expect("logs in");
        let day = NaiveDate::from_ymd_opt(2026, 1, 1).expect("date");
        let period = Period { from: day, to: day };
        assert!(matches!(
            session.list(Direction::Issued, period),
            Err(SatError::Unavailable(_))
        ));
    }
}
