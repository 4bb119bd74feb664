//! Whom a certificate must be issued by: the SAT's authorities (bundled, `roots/`), and
//! in the sandbox the sandbox's own authority, never trusted otherwise.
//!
//! The answer is kept per certificate: checking a 2048-bit signature is most of a
//! verification's time (61% in `cargo bench --bench seal`), and an issuer seals
//! thousands of documents with one certificate.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock};

use parking_lot::RwLock;

use include_dir::{include_dir, Dir};

use super::certificate::Certificate;

static ROOTS: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/src/seal/roots");

static SAT: LazyLock<Vec<Certificate>> = LazyLock::new(|| {
    ROOTS
        .files()
        .filter(|f| f.path().extension().is_some_and(|e| e == "cer"))
        .filter_map(|f| Certificate::from_der(f.contents()).ok())
        .collect()
});

/// Certificates whose answer is kept; past it the cache starts again (a bound, not an
/// eviction policy: an organization's issuers are far fewer).
const REMEMBERED: usize = 4096;

/// The authorities a verification accepts, and the answers already found (shared by
/// the clones).
#[derive(Debug, Clone)]
pub struct Trust {
    anchors: Vec<Certificate>,
    issued: Arc<RwLock<HashMap<Vec<u8>, bool>>>,
}

impl Trust {
    /// The SAT's authorities.
    pub fn sat() -> Self {
        Trust::only(SAT.clone())
    }

    /// These authorities alone (the sandbox's).
    pub fn only(anchors: Vec<Certificate>) -> Self {
        Trust {
            anchors,
            issued: Arc::default(),
        }
    }

    pub fn and(mut self, anchor: Certificate) -> Self {
        self.anchors.push(anchor);
        self.issued = Arc::default();
        self
    }

    /// Whether one of the authorities issued `cert` (signed it, under its own name);
    /// checked once per certificate (its DER, byte for byte).
    pub fn issued(&self, cert: &Certificate) -> bool {
        if let Some(known) = self.issued.read().get(cert.der()) {
            return *known;
        }
        let issued = self.anchors.iter().any(|a| cert.issued_by(a));
        let mut cache = self.issued.write();
        if cache.len() >= REMEMBERED {
            cache.clear();
        }
        cache.insert(cert.der().to_vec(), issued);
        issued
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bundled_authorities_are_read() {
        // Six SAT authorities (AC0..AC5) and four Banco de México roots.
        assert_eq!(SAT.len(), 10);
    }

    #[test]
    fn an_answer_is_kept_per_certificate() {
        let trust = Trust::sat();
        // The Banco de México roots sign themselves: the first answer is computed, the
        // second read.
        let root = SAT
            .iter()
            .find(|c| trust.issued(c))
            .expect("a bundled root issued by a bundled authority")
            .clone();
        assert_eq!(trust.issued.read().get(root.der()), Some(&true));
        assert!(trust.clone().issued(&root));
        let other = Trust::only(Vec::new());
        assert!(!other.issued(&root), "no authority: not issued");
    }
}
