//! Offline verification of a sealed document (CFDI 3.2, 3.3, 4.0; CFDI de Retenciones
//! 1.0, 2.0): is this XML what its issuer signed and the SAT stamped?
//!
//! - `xslt`: a small interpreter of the SAT's cadena original stylesheets, which are
//!   bundled (`stylesheets/`), so the original strings are the SAT's own, byte for byte;
//! - `cadena`: the stylesheet of each kind of document and stamp;
//! - `document`: where each class and version writes its seal's fields;
//! - `certificate`, `trust`: X.509 as the SAT issues it, and the authorities accepted
//!   (the SAT's, bundled in `roots/`; the sandbox's only in the sandbox);
//! - `verify`: the checks, answering a `verdict::Seal` (the API's `seal` object).
//!
//! Pure: the SAT's stamping certificates come through `SatCertificates`, which the
//! service backs with its store (`sat::certificates`).

mod cadena;
mod certificate;
mod crt;
mod document;
pub mod names;
mod sign;
mod trust;
mod verdict;
mod verify;
mod xslt;

pub use cadena::original_string;
pub use certificate::Certificate;
pub use document::{Hash, Kind};
pub use sign::{set_attribute, Signer, Subject};
pub use trust::Trust;
pub use verdict::{CertificateSummary, Check, Checks, Seal, Status, Verified, MAX_TEXT};
pub use verify::{verify_tree, Lookup, NoSatCertificates, SatCertificates, Verifier};

/// Verifies a document's bytes: `Err` when they are no XML the service reads, `Ok(None)`
/// when the root is no class the SAT seals.
pub fn verify(
    bytes: &[u8],
    trust: &Trust,
    sat: &dyn SatCertificates,
) -> Result<Option<Seal>, String> {
    crate::cfdi::xml::with_tree(bytes, |root| Ok(verify_tree(root, trust, sat)))
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests;
