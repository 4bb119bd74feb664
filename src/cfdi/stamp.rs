//! The TimbreFiscalDigital (1.0 and 1.1) of a CFDI of either class: the Comprobante
//! and the CFDI de Retenciones carry the same stamp among their complements.

use roxmltree::Node;

use super::xml::{self, Attr, Reader, TFD};
use super::{certification, CfdiError, Stamp};

const STAMP_UUID: Attr = Attr::field("UUID", "TimbreFiscalDigital@UUID");
const STAMP_DATE: Attr = Attr::field("FechaTimbrado", "TimbreFiscalDigital@FechaTimbrado");
const STAMP_PROVIDER: Attr = Attr::field("RfcProvCertif", "TimbreFiscalDigital@RfcProvCertif");
// TFD 1.0 spells these in lower camel case, 1.1 in upper.
const STAMP_VERSION: Attr = Attr::new("Version", "version");
const STAMP_SAT_SEAL: Attr = Attr::new("SelloSAT", "selloSAT");
const STAMP_SAT_CERTIFICATE: Attr = Attr::new("NoCertificadoSAT", "noCertificadoSAT");

/// The TimbreFiscalDigital among the complements, wherever it is nested. A UUID must
/// be well formed; repeated stamps must name the same UUID (a UUID-less one differs).
pub(crate) fn parse(complements: &[Node<'_, '_>]) -> Result<Option<Stamp>, CfdiError> {
    let mut stamp: Option<Stamp> = None;
    let tfds = complements
        .iter()
        .filter(|node| xml::is_element(**node, TFD, "TimbreFiscalDigital"));
    for node in tfds {
        let r = Reader::new(*node, false);
        let uuid = r.checked_uuid(STAMP_UUID)?;
        match &stamp {
            Some(first) if first.uuid != uuid => {
                let name = |u: &Option<String>| u.clone().unwrap_or_else(|| "none".into());
                return Err(CfdiError::ConflictingStamps(name(&first.uuid), name(&uuid)));
            }
            Some(_) => {}
            None => {
                let legacy = Reader::new(*node, true);
                let either = |attr| r.string(attr).or_else(|| legacy.string(attr));
                stamp = Some(Stamp {
                    uuid,
                    version: either(STAMP_VERSION),
                    certified_at: r.string(STAMP_DATE),
                    provider_tax_id: r.string(STAMP_PROVIDER),
                    sat_seal: either(STAMP_SAT_SEAL),
                    sat_certificate_number: either(STAMP_SAT_CERTIFICATE),
                    original_string: certification::original_string(*node),
                });
            }
        }
    }
    Ok(stamp)
}
