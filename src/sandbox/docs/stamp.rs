//! The stamp's data of an invoice (when, by which PAC) and its issuer's certificate.
//! The seals drawn here are placeholders of the right size: `sealing` replaces them
//! with real ones once the XML is rendered.

use chrono::{NaiveDateTime, TimeDelta};
use rand::Rng;

use super::catalog::PACS;
use super::seed::{base64, choose, random_bytes};
use super::SandboxInvoice;

pub(super) use super::sealing::SAT_CERTIFICATE_NUMBER;

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

/// The issuer's CSD (`sealing`): its number and base64, the same for every invoice.
pub(super) fn certificate(rfc: &str) -> (String, String) {
    let signer = super::sealing::issuer(rfc);
    let cert = signer.certificate();
    (cert.number(), base64(cert.der()))
}
