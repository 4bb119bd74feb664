//! The TimbreFiscalDigital (1.0 and 1.1) of a CFDI of either class: the Comprobante
//! and the CFDI de Retenciones carry the same stamp among their complements.

use roxmltree::Node;

use super::xml::{self, Attr, Reader, TFD};
use super::{CfdiError, Stamp};
use crate::seal::{self, Kind};

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
                    original_string: original_string(*node),
                });
            }
        }
    }
    Ok(stamp)
}

/// The stamp's original string (cadena original del complemento de certificación), by
/// the SAT's own stylesheet for its version (`seal`, the one implementation the seal's
/// verification uses too). A stamp that names neither version is read as 1.1, unless
/// it spells `version` in 1.0's lower case.
fn original_string(tfd: Node<'_, '_>) -> String {
    let kind = Kind::of(tfd).unwrap_or(
        if tfd.attribute("Version").is_none() && tfd.attribute("version").is_some() {
            Kind::Tfd10
        } else {
            Kind::Tfd11
        },
    );
    // The bundled stylesheets compile (their tests say so), so this cannot fail.
    seal::original_string(kind, tfd).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn of(attributes: &str) -> String {
        let xml = format!(
            r#"<tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" {attributes}/>"#
        );
        let doc = roxmltree::Document::parse(&xml).unwrap();
        original_string(doc.root_element())
    }

    #[test]
    fn version_1_1_in_the_sat_order_without_leyenda() {
        let attributes = r#"SelloSAT="x" NoCertificadoSAT="300" SelloCFD="ab/c=" RfcProvCertif="SAT970701NN3"
            FechaTimbrado="2020-01-11T00:00:00" UUID="6d7434a6-e3f2-47ad-9e4c-08849946afa0" Version="1.1""#;
        assert_eq!(
            of(attributes),
            "||1.1|6d7434a6-e3f2-47ad-9e4c-08849946afa0|2020-01-11T00:00:00|SAT970701NN3|ab/c=|300||"
        );
    }

    #[test]
    fn leyenda_is_a_field_only_when_present_and_blanks_are_normalized() {
        let with = r#"Version="1.1" UUID="U" FechaTimbrado="F" RfcProvCertif="R"
            Leyenda="  una   leyenda&#10;larga " SelloCFD="S" NoCertificadoSAT="N""#;
        assert_eq!(of(with), "||1.1|U|F|R|una leyenda larga|S|N||");
        // A present but empty Leyenda is a non-empty node-set to `test="$valor"`.
        let empty = r#"Version="1.1" UUID="U" FechaTimbrado="F" RfcProvCertif="R"
            Leyenda="" SelloCFD="S" NoCertificadoSAT="N""#;
        assert_eq!(of(empty), "||1.1|U|F|R||S|N||");
    }

    #[test]
    fn version_1_0_has_no_provider_and_lower_camel_names() {
        let attributes = r#"version="1.0" UUID="U" FechaTimbrado="F" selloCFD="S" noCertificadoSAT="N" selloSAT="x""#;
        assert_eq!(of(attributes), "||1.0|U|F|S|N||");
        // Missing required attributes leave empty fields.
        assert_eq!(of(r#"version="1.0""#), "||1.0||||||");
        // A stamp without a version is read as 1.1.
        assert_eq!(of(r#"UUID="U""#), "|||U||||||");
    }
}
