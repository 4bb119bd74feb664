//! Which class a document is: its root element decides (a `Comprobante` is an
//! invoice, a `Retenciones` a retention), read from one tree built under the same
//! limits for both.

use super::{Prepared, PreparedRetention};
use crate::cfdi::{xml, Cfdi, CfdiError};
use crate::retention::Retention;

/// A stamped document of either class, parsed and encoded for storing.
#[derive(Debug)]
pub enum AnyPrepared {
    /// Both boxed: the two parsed documents differ in size by hundreds of bytes.
    Invoice(Box<Prepared>),
    Retention(Box<PreparedRetention>),
}

impl From<Prepared> for AnyPrepared {
    fn from(doc: Prepared) -> Self {
        AnyPrepared::Invoice(Box::new(doc))
    }
}

impl From<PreparedRetention> for AnyPrepared {
    fn from(doc: PreparedRetention) -> Self {
        AnyPrepared::Retention(Box::new(doc))
    }
}

enum Parsed {
    Invoice(Box<Cfdi>),
    Retention(Box<Retention>),
}

/// Parses `xml` as whichever class its root names, requires what storing needs
/// (a stamp; for a retention also its date and receiver) and compresses the files.
pub fn prepare_any(xml: &[u8], pdf: Option<&[u8]>) -> Result<AnyPrepared, CfdiError> {
    let parsed = xml::with_tree(xml, |root| {
        if Retention::is_root(root) {
            Retention::from_root(root).map(|r| Parsed::Retention(Box::new(r)))
        } else {
            Cfdi::from_root(root).map(|cfdi| Parsed::Invoice(Box::new(cfdi)))
        }
    })?;
    Ok(match parsed {
        Parsed::Invoice(cfdi) => {
            cfdi.uuid()?;
            AnyPrepared::Invoice(Box::new(Prepared::of(*cfdi, xml, pdf)))
        }
        Parsed::Retention(retention) => {
            retention.check_storable()?;
            AnyPrepared::Retention(Box::new(PreparedRetention::of(*retention, xml, pdf)))
        }
    })
}
