//! The checks of one document: the issuer's seal over the original string, the
//! certificate's number, holder, validity and issuer, and the SAT's stamp.

use base64::Engine;
use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use roxmltree::Node;

use super::cadena::original_string;
use super::certificate::Certificate;
use super::document::{Kind, Signed, Stamp};
use super::trust::Trust;
use super::verdict::{CertificateSummary, Check, Checks, Seal, Status, Verified};
use super::xslt::normalize_space;
use parking_lot::Mutex;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

/// What a SAT certificate lookup found.
#[derive(Debug, Clone)]
pub enum Lookup {
    Found(Box<Certificate>),
    /// Not available (not stored, the repository unreachable...): why, in words.
    Missing(String),
}

/// Where the SAT's stamping certificates come from (`NoCertificadoSAT` → certificate).
pub trait SatCertificates {
    fn lookup(&self, number: &str) -> Lookup;
}

/// No store: every stamp stays unverified.
pub struct NoSatCertificates;

impl SatCertificates for NoSatCertificates {
    fn lookup(&self, _number: &str) -> Lookup {
        Lookup::Missing("no store of SAT certificates was given".into())
    }
}

/// What a verification needs besides the document: the authorities it trusts and
/// where the SAT's certificates come from.
#[derive(Clone, Copy)]
pub struct Verifier<'a> {
    pub trust: &'a Trust,
    pub sat: &'a (dyn SatCertificates + Sync),
}

/// The SAT's authorities, for `Verifier::offline`.
static SAT_TRUST: LazyLock<Trust> = LazyLock::new(Trust::sat);

impl Verifier<'static> {
    /// Offline: the SAT's authorities, no SAT certificate (every stamp unverified).
    pub fn offline() -> Self {
        Verifier {
            trust: &SAT_TRUST,
            sat: &NoSatCertificates,
        }
    }
}

impl Verifier<'_> {
    /// Verifies a parsed document (the tree the ingest parses once); `None` when its
    /// root is no class the SAT seals.
    pub fn tree(&self, root: Node<'_, '_>) -> Option<Verified> {
        let sat = Missed {
            inner: self.sat,
            missed: RefCell::new(None),
        };
        let seal = verify_tree(root, self.trust, &sat)?.bounded();
        let awaits = sat
            .missed
            .into_inner()
            .filter(|_| seal.checks.sat_seal.status == Status::Unverified);
        Some(Verified { seal, awaits })
    }

    /// Verifies a document's bytes: always an answer, `unreadable` when they are no
    /// sealed document this service reads.
    pub fn bytes(&self, bytes: &[u8]) -> Verified {
        let verified = crate::cfdi::xml::with_tree(bytes, |root| Ok(self.tree(root)));
        match verified {
            Ok(Some(verified)) => verified,
            Ok(None) => Verified {
                seal: Seal::unreadable(
                    "the document is no CFDI nor CFDI de Retenciones the SAT seals",
                ),
                awaits: None,
            },
            Err(e) => Verified {
                seal: Seal::unreadable(&format!("the stored XML could not be read: {e}")).bounded(),
                awaits: None,
            },
        }
    }
}

/// Remembers the number of a SAT certificate that was not at hand.
struct Missed<'a> {
    inner: &'a (dyn SatCertificates + Sync),
    missed: RefCell<Option<String>>,
}

impl SatCertificates for Missed<'_> {
    fn lookup(&self, number: &str) -> Lookup {
        let found = self.inner.lookup(number);
        if let Lookup::Missing(_) = found {
            *self.missed.borrow_mut() = Some(number.to_string());
        }
        found
    }
}

const UNSTAMPED: &str = "the document has no TimbreFiscalDigital: it is not stamped";

/// Verifies a parsed document; `None` when its root is no class the SAT seals.
pub fn verify_tree(root: Node<'_, '_>, trust: &Trust, sat: &dyn SatCertificates) -> Option<Seal> {
    let doc = Signed::read(root)?;
    let certificate = read_certificate(&doc);
    let summary = certificate.as_ref().ok().map(|c| CertificateSummary {
        number: c.number(),
        rfc: c.rfc(),
        name: c.name(),
        valid_from: crate::time::format(c.valid_from()),
        valid_to: crate::time::format(c.valid_to()),
    });
    let (issuer_seal, algorithm) = issuer_seal(&doc, certificate.as_deref());
    let (number, rfc, validity, issuer) = match &certificate {
        Ok(cert) => (
            certificate_number(&doc, cert),
            certificate_rfc(&doc, cert),
            certificate_validity(&doc, cert),
            certificate_issuer(cert, trust),
        ),
        Err(why) => {
            let not = || Check::unverified(format!("the certificate {why}"));
            (not(), not(), not(), not())
        }
    };
    let stamp = doc.stamp.map(Stamp::read);
    let sat_number = stamp
        .as_ref()
        .and_then(|s| s.sat_certificate_number)
        .map(normalize_space);
    let checks = Checks {
        issuer_seal,
        certificate_number: number,
        certificate_rfc: rfc,
        certificate_validity: validity,
        certificate_issuer: issuer,
        stamp_seal_cfd: stamp
            .as_ref()
            .map_or_else(|| Check::unverified(UNSTAMPED), |s| stamp_seal_cfd(&doc, s)),
        sat_seal: stamp
            .as_ref()
            .map_or_else(|| Check::unverified(UNSTAMPED), |s| sat_seal(s, trust, sat)),
    };
    Some(Seal::new(algorithm, checks, summary, sat_number))
}

/// Certificates by their text: an issuer seals many documents with one certificate,
/// and decoding and parsing it was a good part of verifying each (the ingest verifies
/// every document it stores). Bounded; emptied when full, as a month's issuers fit.
static PARSED: LazyLock<Mutex<HashMap<String, Arc<Certificate>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
const PARSED_MAX: usize = 1024;

fn read_certificate(doc: &Signed<'_, '_>) -> Result<Arc<Certificate>, String> {
    let Some(text) = doc.certificate.filter(|c| !c.trim().is_empty()) else {
        return Err("is missing (the document's certificate attribute is empty)".into());
    };
    if let Some(parsed) = PARSED.lock().get(text) {
        return Ok(parsed.clone());
    }
    let parsed = Arc::new(Certificate::from_base64(text)?);
    let mut cache = PARSED.lock();
    if cache.len() >= PARSED_MAX {
        cache.clear();
    }
    cache.insert(text.to_string(), parsed.clone());
    Ok(parsed)
}

fn signature(text: Option<&str>) -> Option<Vec<u8>> {
    let compact: String = text?.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    if compact.is_empty() {
        return None;
    }
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

fn issuer_seal(
    doc: &Signed<'_, '_>,
    certificate: Result<&Certificate, &String>,
) -> (Check, Option<&'static str>) {
    let Some(seal) = signature(doc.seal) else {
        let why = if doc.seal.is_some_and(|s| !s.trim().is_empty()) {
            "the seal (Sello) is not base64"
        } else {
            "the document has no seal (Sello is missing or empty)"
        };
        return (Check::invalid(why), None);
    };
    let cert = match certificate {
        Ok(c) => c,
        Err(why) => return (Check::invalid(format!("the certificate {why}")), None),
    };
    let cadena = match original_string(doc.kind, doc.root) {
        Ok(c) => c,
        Err(e) => {
            return (
                Check::unverified(format!("the original string could not be built: {e}")),
                None,
            )
        }
    };
    for hash in doc.kind.hashes() {
        if cert.verifies(*hash, cadena.as_bytes(), &seal) {
            return (Check::valid(), Some(hash.label()));
        }
    }
    (
        Check::invalid(
            "the seal does not match the document: it was changed after it was sealed, or sealed with another certificate",
        ),
        None,
    )
}

fn certificate_number(doc: &Signed<'_, '_>, cert: &Certificate) -> Check {
    let written = normalize_space(doc.certificate_number.unwrap_or(""));
    let actual = cert.number();
    if written == actual {
        Check::valid()
    } else if written.is_empty() {
        Check::invalid(format!(
            "the document does not name its certificate's number ({actual})"
        ))
    } else {
        Check::invalid(format!(
            "the document names certificate {written}, but carries certificate {actual}"
        ))
    }
}

fn certificate_rfc(doc: &Signed<'_, '_>, cert: &Certificate) -> Check {
    let issuer = normalize_space(doc.issuer_rfc.unwrap_or("")).to_uppercase();
    match cert.rfc() {
        None => Check::invalid("the certificate names no RFC: it is not a SAT certificate"),
        Some(rfc) if rfc == issuer => Check::valid(),
        Some(rfc) => Check::invalid(format!(
            "the certificate belongs to RFC {rfc}, not to the issuer {issuer}"
        )),
    }
}

/// The document's date as an instant: with its offset when it has one (Retenciones),
/// else as Mexico City's local time (CFDI's `Fecha` is the issuer's local time).
fn instant(date: &str) -> Option<DateTime<Utc>> {
    if let Ok(d) = DateTime::parse_from_rfc3339(date) {
        return Some(d.with_timezone(&Utc));
    }
    let naive = NaiveDateTime::parse_from_str(date, "%Y-%m-%dT%H:%M:%S").ok()?;
    crate::domain::schedule::TIME_ZONE
        .from_local_datetime(&naive)
        .earliest()
        .map(|d| d.with_timezone(&Utc))
}

fn certificate_validity(doc: &Signed<'_, '_>, cert: &Certificate) -> Check {
    let written = normalize_space(doc.date.unwrap_or(""));
    let Some(at) = instant(&written) else {
        return Check::invalid(format!("the document's date {written:?} cannot be read"));
    };
    if at < cert.valid_from() {
        Check::invalid(format!(
            "the document is dated {written}, before the certificate was valid (from {})",
            crate::time::format(cert.valid_from())
        ))
    } else if at > cert.valid_to() {
        Check::invalid(format!(
            "the document is dated {written}, after the certificate expired ({})",
            crate::time::format(cert.valid_to())
        ))
    } else {
        Check::valid()
    }
}

fn certificate_issuer(cert: &Certificate, trust: &Trust) -> Check {
    if !cert.is_csd() {
        Check::invalid(
            "the certificate is an e.firma, not a CSD (certificado de sello digital): documents are sealed with a CSD",
        )
    } else if trust.issued(cert) {
        Check::valid()
    } else {
        Check::invalid(format!(
            "the certificate was issued by {}, not by the SAT",
            cert.issuer_name()
        ))
    }
}

fn compact(text: Option<&str>) -> String {
    text.unwrap_or("")
        .chars()
        .filter(|c| !c.is_ascii_whitespace())
        .collect()
}

fn stamp_seal_cfd(doc: &Signed<'_, '_>, stamp: &Stamp<'_, '_>) -> Check {
    if compact(stamp.seal_cfd) == compact(doc.seal) {
        Check::valid()
    } else {
        Check::invalid(
            "the stamp's SelloCFD is not the document's Sello: the stamp belongs to another document",
        )
    }
}

fn sat_seal(stamp: &Stamp<'_, '_>, trust: &Trust, sat: &dyn SatCertificates) -> Check {
    let Some(kind) = stamp
        .kind
        .filter(|k| matches!(k, Kind::Tfd10 | Kind::Tfd11))
    else {
        return Check::unverified("the stamp's version is not 1.0 or 1.1");
    };
    let Some(seal) = signature(stamp.sat_seal) else {
        return Check::invalid("the stamp has no readable SAT seal (SelloSAT)");
    };
    let number = normalize_space(stamp.sat_certificate_number.unwrap_or(""));
    if number.is_empty() {
        return Check::invalid("the stamp does not name the SAT's certificate (NoCertificadoSAT)");
    }
    let cert = match sat.lookup(&number) {
        Lookup::Found(cert) => cert,
        Lookup::Missing(why) => {
            return Check::unverified(format!(
                "the SAT's certificate {number} is not at hand: {why}"
            ))
        }
    };
    if !trust.issued(&cert) {
        return Check::invalid(format!(
            "the certificate {number} the stamp names was issued by {}, not by the SAT",
            cert.issuer_name()
        ));
    }
    let cadena = match original_string(kind, stamp.node) {
        Ok(c) => c,
        Err(e) => {
            return Check::unverified(format!(
                "the stamp's original string could not be built: {e}"
            ))
        }
    };
    if kind
        .hashes()
        .iter()
        .any(|h| cert.verifies(*h, cadena.as_bytes(), &seal))
    {
        Check::valid()
    } else {
        Check::invalid(
            "the SAT's seal does not match the stamp: the stamp was changed after the SAT signed it",
        )
    }
}
