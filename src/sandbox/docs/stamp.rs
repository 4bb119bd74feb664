//! The fake seals, certificates and fiscal stamp of an invoice. They only
//! need to look real (base64 of the right size, 20-digit certificate
//! numbers); nothing verifies them.

use chrono::{NaiveDateTime, TimeDelta};
use rand::Rng;

use super::catalog::PACS;
use super::seed::{base64, choose, hash_seed, random_bytes, stream};
use super::SandboxInvoice;

/// The SAT certificate that signs every sandbox stamp.
pub(super) const SAT_CERTIFICATE_NUMBER: &str = "00001000000705250068";

pub(super) struct Stamp {
    /// `Sello` of the CFDI (also the stamp's `SelloCFD`).
    pub seal: String,
    pub certificate_number: String,
    pub certificate: String,
    /// `FechaTimbrado`: a few seconds after `Fecha`.
    pub stamped_at: NaiveDateTime,
    pub pac: &'static str,
    pub sat_seal: String,
}

impl Stamp {
    pub fn new(invoice: &SandboxInvoice) -> Self {
        let details = &invoice.details;
        let mut rng = details.seed.stream(details.render_stream);
        let seal = base64(&random_bytes(&mut rng, 256));
        let delay = TimeDelta::seconds(rng.random_range(1..=20));
        let pac = choose(&mut rng, PACS);
        let sat_seal = base64(&random_bytes(&mut rng, 256));
        let (certificate_number, certificate) = certificate(&invoice.issuer_tax_id);
        Stamp {
            seal,
            certificate_number,
            certificate,
            stamped_at: invoice
                .issued_at
                .checked_add_signed(delay)
                .unwrap_or(invoice.issued_at),
            pac,
            sat_seal,
        }
    }
}

/// The issuer's signing certificate: the same for every invoice it issues.
pub(super) fn certificate(rfc: &str) -> (String, String) {
    let hash = hash_seed(&format!("{rfc}|certificate"));
    let serial = u32::from_le_bytes([hash[0], hash[1], hash[2], hash[3]]) % 1_000_000_000;
    let mut der = random_bytes(&mut stream(&hash, 0), 1_200);
    // A DER SEQUENCE header, so the base64 starts with "MII" like real ones.
    der[..4].copy_from_slice(&[0x30, 0x82, 0x04, 0xac]);
    (format!("00001000000{serial:09}"), base64(&der))
}
