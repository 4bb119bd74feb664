//! The original string of a TimbreFiscalDigital (cadena original del complemento de
//! certificación), as the SAT's XSLT builds it (cadenaoriginal_TFD_1_1.xslt and
//! cadenaoriginal_TFD_1_0.xslt): `||`, then each attribute in the SAT's order
//! separated by `|`, then `||`. Each value goes through XPath `normalize-space` (blanks
//! trimmed, runs of blanks made one space); a required attribute that is missing
//! leaves its field empty; the optional Leyenda appears only when the attribute does
//! (an empty one leaves an empty field, as the XSLT's `test="$valor"` on a present
//! attribute does). Values are taken as written: a lower-case UUID stays lower case.

use roxmltree::Node;

/// TFD 1.1: Version, UUID, FechaTimbrado, RfcProvCertif, [Leyenda], SelloCFD,
/// NoCertificadoSAT. TFD 1.0: version, UUID, FechaTimbrado, selloCFD, noCertificadoSAT.
pub(super) fn original_string(tfd: Node<'_, '_>) -> String {
    // 1.0 spells its version `version`; a stamp that names neither is read as 1.1.
    let legacy = tfd.attribute("Version").is_none() && tfd.attribute("version").is_some();
    let fields: Vec<Option<&str>> = if legacy {
        [
            "version",
            "UUID",
            "FechaTimbrado",
            "selloCFD",
            "noCertificadoSAT",
        ]
        .iter()
        .map(|name| Some(tfd.attribute(*name).unwrap_or("")))
        .collect()
    } else {
        let required = |name: &str| Some(tfd.attribute(name).unwrap_or(""));
        vec![
            required("Version"),
            required("UUID"),
            required("FechaTimbrado"),
            required("RfcProvCertif"),
            tfd.attribute("Leyenda"),
            required("SelloCFD"),
            required("NoCertificadoSAT"),
        ]
    };
    let mut out = String::from("|");
    for value in fields.into_iter().flatten() {
        out.push('|');
        out.push_str(&normalize_space(value));
    }
    out.push_str("||");
    out
}

/// XPath `normalize-space`: XML blanks (space, tab, CR, LF) trimmed and collapsed.
fn normalize_space(value: &str) -> String {
    value
        .split([' ', '\t', '\r', '\n'])
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn of(xml: &str) -> String {
        let doc = roxmltree::Document::parse(xml).unwrap();
        original_string(doc.root_element())
    }

    #[test]
    fn version_1_1_in_the_sat_order_without_leyenda() {
        let xml = r#"<t SelloSAT="x" NoCertificadoSAT="300" SelloCFD="ab/c=" RfcProvCertif="SAT970701NN3"
            FechaTimbrado="2020-01-11T00:00:00" UUID="6d7434a6-e3f2-47ad-9e4c-08849946afa0" Version="1.1"/>"#;
        assert_eq!(
            of(xml),
            "||1.1|6d7434a6-e3f2-47ad-9e4c-08849946afa0|2020-01-11T00:00:00|SAT970701NN3|ab/c=|300||"
        );
    }

    #[test]
    fn leyenda_is_a_field_only_when_present_and_blanks_are_normalized() {
        let with = r#"<t Version="1.1" UUID="U" FechaTimbrado="F" RfcProvCertif="R"
            Leyenda="  una   leyenda&#10;larga " SelloCFD="S" NoCertificadoSAT="N"/>"#;
        assert_eq!(of(with), "||1.1|U|F|R|una leyenda larga|S|N||");
        let empty = r#"<t Version="1.1" UUID="U" FechaTimbrado="F" RfcProvCertif="R"
            Leyenda="" SelloCFD="S" NoCertificadoSAT="N"/>"#;
        assert_eq!(of(empty), "||1.1|U|F|R||S|N||");
    }

    #[test]
    fn version_1_0_has_no_provider_and_lower_camel_names() {
        let xml = r#"<t version="1.0" UUID="U" FechaTimbrado="F" selloCFD="S" noCertificadoSAT="N" selloSAT="x"/>"#;
        assert_eq!(of(xml), "||1.0|U|F|S|N||");
        // Missing required attributes leave empty fields.
        assert_eq!(of(r#"<t version="1.0"/>"#), "||1.0||||||");
    }
}
