//! The sandbox's documents are sealed and stamped for real, so they verify (`seal`):
//! a sandbox certification authority (its own root, trusted only with `--sat sandbox`)
//! issues each issuer's CSD and the sandbox SAT's stamping certificate, which the
//! sandbox's certificate repository serves (`sandbox::rccf`).
//!
//! The keys are bundled (`keys/`, PKCS#8 DER, generated once with openssl; public by
//! design, like the SAT's test CSDs): the authority's is 2048 bits (it signs a
//! certificate per issuer, once); the stamping key and the issuers' are 512 bits, since
//! every generated document is signed twice and generation feeds every extraction:
//! a 1024-bit signature costs 0.63 ms here (bench/seal.rs), a 512-bit one about a
//! fifth. Nothing in the sandbox is secret, so the key size protects nothing. Issuers
//! share a pool of four keys (picked by a hash of the RFC), each with its own
//! certificate, built once per RFC and kept for the process.

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, LazyLock};

use chrono::{DateTime, TimeZone, Utc};
use parking_lot::Mutex;

use super::seed::hash_seed;
use crate::seal::{Certificate, Signer, Subject};

const AUTHORITY_KEY: &[u8] = include_bytes!("keys/authority.der");
const SAT_KEY: &[u8] = include_bytes!("keys/sat.der");
const ISSUER_KEYS: [&[u8]; 4] = [
    include_bytes!("keys/issuer0.der"),
    include_bytes!("keys/issuer1.der"),
    include_bytes!("keys/issuer2.der"),
    include_bytes!("keys/issuer3.der"),
];

/// The sandbox SAT's stamping certificate (`NoCertificadoSAT` of every sandbox stamp).
pub const SAT_CERTIFICATE_NUMBER: &str = "00001000000705250068";

/// Sandbox documents are dated anywhere in this century.
fn century() -> (DateTime<Utc>, DateTime<Utc>) {
    let at = |y| {
        Utc.with_ymd_and_hms(y, 1, 1, 0, 0, 0)
            .single()
            .unwrap_or_default()
    };
    (at(2000), at(2100))
}

static AUTHORITY: LazyLock<Signer> = LazyLock::new(|| {
    let (valid_from, valid_to) = century();
    Signer::self_signed(
        AUTHORITY_KEY,
        &Subject {
            name: "CN=AC del SAT simulado (sandbox de cfdi-extract),O=Sandbox de cfdi-extract,OU=Sandbox,2.5.4.45=SAT970701NN3",
            number: "00000000000000000001",
            valid_from,
            valid_to,
        },
    )
    .expect("the bundled sandbox authority key")
});

static SAT: LazyLock<Signer> = LazyLock::new(|| {
    let (valid_from, valid_to) = century();
    AUTHORITY
        .issue(
            SAT_KEY,
            &Subject {
                name: "CN=SAT simulado (sandbox),O=Sandbox de cfdi-extract,OU=Timbrado,2.5.4.45=SAT970701NN3",
                number: SAT_CERTIFICATE_NUMBER,
                valid_from,
                valid_to,
            },
        )
        .expect("the bundled sandbox SAT key")
});

static ISSUERS: LazyLock<Mutex<HashMap<String, Arc<Signer>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// The sandbox authority's certificate: the root the sandbox's documents chain to.
pub fn authority_certificate() -> &'static Certificate {
    AUTHORITY.certificate()
}

/// The sandbox SAT's stamping certificate.
pub fn sat_certificate() -> &'static Certificate {
    SAT.certificate()
}

/// The issuer's CSD signer, made on first use.
pub(super) fn issuer(rfc: &str) -> Arc<Signer> {
    if let Some(signer) = ISSUERS.lock().get(rfc) {
        return signer.clone();
    }
    let hash = hash_seed(&format!("{rfc}|certificate"));
    let serial = u32::from_le_bytes([hash[0], hash[1], hash[2], hash[3]]) % 1_000_000_000;
    let key = ISSUER_KEYS[usize::from(hash[4]) % ISSUER_KEYS.len()];
    let (valid_from, valid_to) = century();
    let signer = AUTHORITY
        .issue(
            key,
            &Subject {
                name: &format!("CN={rfc},O={rfc},OU=Sandbox,2.5.4.45={rfc}"),
                number: &format!("00001000000{serial:09}"),
                valid_from,
                valid_to,
            },
        )
        .expect("a sandbox CSD");
    let signer = Arc::new(signer);
    ISSUERS.lock().insert(rfc.to_string(), signer.clone());
    signer
}

/// A document's two seals, as its PDF prints them.
#[derive(Debug, Clone)]
pub(super) struct Seals {
    /// `Sello` (also the stamp's `SelloCFD`).
    pub seal: String,
    pub sat_seal: String,
}

/// The seals of the documents sealed last, by UUID: an extraction asks for a document's
/// PDF right after its XML, and the PDF prints the XML's seals. Signatures are
/// deterministic, so this only saves sealing twice.
static RECENT: LazyLock<Mutex<HashMap<String, Seals>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
const RECENT_MAX: usize = 4096;

/// Seals a rendered document as its issuer and stamps it as the sandbox SAT.
pub(super) fn seal_and_stamp(uuid: &str, issuer_rfc: &str, xml: Vec<u8>) -> io::Result<Vec<u8>> {
    let broken = |e: String| io::Error::other(format!("sealing a sandbox document: {e}"));
    let text = String::from_utf8(xml).map_err(|e| broken(e.to_string()))?;
    let stamped = issuer(issuer_rfc)
        .seal_and_stamp(&SAT, &text)
        .map_err(broken)?;
    if let Some(seals) = read_seals(&stamped) {
        let mut recent = RECENT.lock();
        if recent.len() >= RECENT_MAX {
            recent.clear();
        }
        recent.insert(uuid.to_string(), seals);
    }
    Ok(stamped.into_bytes())
}

/// The seals of a sandbox document: from those sealed last, else by rendering it.
pub(super) fn seals_of(uuid: &str, render: impl FnOnce() -> io::Result<Vec<u8>>) -> Option<Seals> {
    if let Some(seals) = RECENT.lock().get(uuid) {
        return Some(seals.clone());
    }
    let xml = render().ok()?;
    read_seals(std::str::from_utf8(&xml).ok()?)
}

/// `Sello` and `SelloSAT` of a document the sandbox wrote (one root start tag, one stamp).
fn read_seals(xml: &str) -> Option<Seals> {
    let value = |from: usize, name: &str| -> Option<String> {
        let at = from + xml[from..].find(&format!(" {name}=\""))? + name.len() + 3;
        Some(xml[at..at + xml[at..].find('"')?].to_string())
    };
    let stamp = xml.find("<tfd:TimbreFiscalDigital")?;
    Some(Seals {
        seal: value(0, "Sello")?,
        sat_seal: value(stamp, "SelloSAT")?,
    })
}
