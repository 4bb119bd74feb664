//! The verification QR payload of a CFDI, in the SAT's format.
//!
//! CFDI 3.3 and 4.0 (Anexo 20): `https://verificacfdi.facturaelectronica.sat.gob.mx/
//! default.aspx?id=UUID&re=ISSUER&rr=RECEIVER&tt=TOTAL&fe=LAST8`, where TOTAL has at
//! most six decimals without trailing zeros (at least one decimal stays) and LAST8 is
//! the last eight characters of the issuer's seal. CFDI 3.2 used a bare query string
//! `?re=..&rr=..&tt=..&id=..` with the total as ten integer digits and six decimals,
//! zero padded. RFCs are percent-encoded (an `&` or `Ñ` in an RFC would otherwise
//! break the query).

use crate::cfdi::printed::{legacy_total, seal_tail, total as total_text};
use crate::cfdi::{Cfdi, Version};

const VERIFY_URL: &str = "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx";

/// The QR payload of a stamped `cfdi`; None without a stamp UUID.
pub fn payload(cfdi: &Cfdi) -> Option<String> {
    let uuid = cfdi.uuid().ok()?;
    let re = encode(&cfdi.issuer.tax_id);
    let rr = encode(&cfdi.receiver.tax_id);
    let total = cfdi.total;
    if cfdi.version == Version::V32 {
        let tt = legacy_total(total);
        return Some(format!("?re={re}&rr={rr}&tt={tt}&id={uuid}"));
    }
    let tt = total_text(total);
    let fe = seal_tail(cfdi.seal.as_deref().unwrap_or(""));
    Some(format!(
        "{VERIFY_URL}?id={uuid}&re={re}&rr={rr}&tt={tt}&fe={}",
        encode(fe)
    ))
}

fn encode(value: &str) -> String {
    url::form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn sample(name: &str) -> Cfdi {
        let path = format!(
            "{}/../shared/cfdi-samples/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        Cfdi::parse(&std::fs::read(path).unwrap()).unwrap()
    }

    #[test]
    fn a_4_0_payload_names_uuid_rfcs_total_and_seal_tail() {
        let cfdi = sample("cfdi40-ingreso-pue-real-tfd.xml");
        assert_eq!(
            payload(&cfdi).unwrap(),
            "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx\
             ?id=C2832671-DA6D-11EF-A83D-00155D012007&re=ISD950921HE5&rr=COSC8001137NA\
             &tt=1000.0&fe=hNjeNw%3D%3D"
        );
    }

    #[test]
    fn an_ampersand_in_an_rfc_is_percent_encoded() {
        let cfdi = sample("cfdi40-ingreso-pue-tfd-ampersand-rfc.xml");
        let p = payload(&cfdi).unwrap();
        assert!(cfdi.issuer.tax_id.contains('&') || cfdi.receiver.tax_id.contains('&'));
        assert_eq!(p.matches('&').count(), 4, "{p}");
        assert!(p.contains("%26"), "{p}");
    }

    #[test]
    fn a_3_2_payload_is_the_legacy_query() {
        let cfdi = sample("cfdi32-ingreso-real-legacy-tfd10.xml");
        let p = payload(&cfdi).unwrap();
        assert!(
            p.starts_with(&format!("?re={}&rr=", cfdi.issuer.tax_id)),
            "{p}"
        );
        assert!(p.ends_with(&format!("&id={}", cfdi.uuid().unwrap())), "{p}");
        let tt = p.split("&tt=").nth(1).unwrap().split('&').next().unwrap();
        assert_eq!(tt.len(), 17);
    }

    #[test]
    fn unstamped_documents_have_no_payload() {
        assert!(payload(&sample("cfdi40-egreso-nota-credito-unstamped.xml")).is_none());
    }
}
