//! The original string (cadena original) of a document or a stamp: the SAT's own
//! stylesheet for its kind, bundled and compiled once, run by `seal::xslt`.

use std::sync::LazyLock;

use include_dir::{include_dir, Dir};
use roxmltree::Node;

use super::document::Kind;
use super::xslt::{self, Stylesheet};

/// The SAT's XSLT files (from satcfdi, MIT; `stylesheets/SOURCE.md`).
static FILES: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/src/seal/stylesheets");

fn file(path: &str) -> Option<&'static str> {
    FILES.get_file(path).and_then(|f| f.contents_utf8())
}

type Compiled = LazyLock<Result<Stylesheet, String>>;

macro_rules! compiled {
    ($kind:expr) => {
        LazyLock::new(|| xslt::compile(&file, $kind.stylesheet()))
    };
}

static CFDI32: Compiled = compiled!(Kind::Cfdi32);
static CFDI33: Compiled = compiled!(Kind::Cfdi33);
static CFDI40: Compiled = compiled!(Kind::Cfdi40);
static RETENCIONES10: Compiled = compiled!(Kind::Retenciones10);
static RETENCIONES20: Compiled = compiled!(Kind::Retenciones20);
static TFD10: Compiled = compiled!(Kind::Tfd10);
static TFD11: Compiled = compiled!(Kind::Tfd11);

fn stylesheet(kind: Kind) -> Result<&'static Stylesheet, String> {
    let compiled = match kind {
        Kind::Cfdi32 => &CFDI32,
        Kind::Cfdi33 => &CFDI33,
        Kind::Cfdi40 => &CFDI40,
        Kind::Retenciones10 => &RETENCIONES10,
        Kind::Retenciones20 => &RETENCIONES20,
        Kind::Tfd10 => &TFD10,
        Kind::Tfd11 => &TFD11,
    };
    compiled.as_ref().map_err(Clone::clone)
}

/// The original string of `root` (a document's root element, or a stamp on its own)
/// as the SAT's stylesheet for `kind` builds it.
pub fn original_string(kind: Kind, root: Node<'_, '_>) -> Result<String, String> {
    xslt::run(stylesheet(kind)?, root)
}
