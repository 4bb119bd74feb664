//! Whom a certificate must be issued by: the SAT's authorities (bundled, `roots/`), and
//! in the sandbox the sandbox's own authority, never trusted otherwise.

use std::sync::LazyLock;

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

/// The authorities a verification accepts.
#[derive(Debug, Clone)]
pub struct Trust {
    anchors: Vec<Certificate>,
}

impl Trust {
    /// The SAT's authorities.
    pub fn sat() -> Self {
        Trust {
            anchors: SAT.clone(),
        }
    }

    /// These authorities alone (the sandbox's).
    pub fn only(anchors: Vec<Certificate>) -> Self {
        Trust { anchors }
    }

    pub fn and(mut self, anchor: Certificate) -> Self {
        self.anchors.push(anchor);
        self
    }

    /// Whether one of the authorities issued `cert` (signed it, under its own name).
    pub fn issued(&self, cert: &Certificate) -> bool {
        self.anchors.iter().any(|a| cert.issued_by(a))
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
}
