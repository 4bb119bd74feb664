//! The verification QR payload of a CFDI, in the SAT's format.
//!
//! CFDI 3.3 and 4.0 (Anexo 20): `https://verificacfdi.facturaelectronica.sat.gob.mx/
//! default.aspx?id=UUID&re=ISSUER&rr=RECEIVER&tt=TOTAL&fe=LAST8`, where TOTAL has at
//! most six decimals without trailing zeros (at least one decimal stays) and LAST8 is
//! the last eight characters of the issuer's seal. CFDI 3.2 used a bare query string
//! `?re=..&rr=..&tt=..&id=..` with the total as ten integer digits and six decimals,
//! zero padded. RFCs are percent-encoded (an `&` or `Ñ` in an RFC would otherwise
//! break the query).
//!
//! A CFDI de Retenciones is verified on its own site: RET 2.0 prints
//! `https://prodretencionverificacion.clouda.sat.gob.mx/?id=UUID&re=ISSUER&rr=RECEIVER&tt=TOTAL&fe=LAST8`
//! and RET 1.0 the bare `?re=ISSUER&rr=RECEIVER&tt=TOTAL&id=UUID` with the 3.2-style
//! total; TOTAL is the operation's total (montoTotOperacion). A foreign receiver is
//! `nr=` with its tax id cut or left padded with zeros to 20 characters instead of
//! `rr=`.

use crate::cfdi::printed::{legacy_total, seal_tail, total as total_text};
use crate::cfdi::{Cfdi, Version};
use crate::retention::{self, Retention};

const VERIFY_URL: &str = "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx";
const RETENTION_VERIFY_URL: &str = "https://prodretencionverificacion.clouda.sat.gob.mx/";

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

/// The QR payload of a stamped retention; None without a stamp UUID.
pub fn retention_payload(r: &Retention) -> Option<String> {
    let uuid = r.uuid().ok()?;
    let re = encode(&r.issuer.tax_id);
    let receiver = r.receiver.as_ref();
    let to = match (
        receiver.and_then(|x| x.national.as_ref()),
        receiver.and_then(|x| x.foreign.as_ref()),
    ) {
        (None, Some(foreign)) => format!("nr={}", foreign_tax_id(foreign.tax_id.as_deref())),
        (national, _) => format!("rr={}", encode(national.map_or("", |n| n.tax_id.as_str()))),
    };
    let total = r.totals.operation;
    Some(match r.version {
        retention::Version::V10 => {
            format!("?re={re}&{to}&tt={}&id={uuid}", legacy_total(total))
        }
        retention::Version::V20 => format!(
            "{RETENTION_VERIFY_URL}?id={uuid}&re={re}&{to}&tt={}&fe={}",
            total_text(total),
            encode(seal_tail(r.seal.as_deref().unwrap_or("")))
        ),
    })
}

/// A foreign receiver's tax id as `nr=` carries it: its first 20 characters, left
/// padded with zeros to 20.
fn foreign_tax_id(id: Option<&str>) -> String {
    let id: String = id.unwrap_or("").chars().take(20).collect();
    encode(&format!("{id:0>20}"))
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
            "{}/tests/fixtures/cfdi-samples/{name}",
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

    fn retention(name: &str) -> Retention {
        let path = format!(
            "{}/tests/fixtures/retenciones-samples/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        Retention::parse(&std::fs::read(path).unwrap()).unwrap()
    }

    /// The SAT's expressions for the shared fakes (sat-status-fixtures/FACTS.md §3), up
    /// to the UUID's case (stamps' UUIDs are upper-cased) and percent-encoding.
    #[test]
    fn retention_payloads_match_the_published_expressions() {
        let decoded = |p: String| {
            url::form_urlencoded::parse(p.split_once('?').unwrap().1.as_bytes())
                .map(|(k, v)| format!("{k}={}", v.to_uppercase()))
                .collect::<Vec<_>>()
        };
        let v1 = retention_payload(&retention("ret10-fake-extranjero-minimal.xml")).unwrap();
        assert!(v1.starts_with("?re="), "{v1}");
        assert_eq!(
            decoded(v1),
            decoded("?re=AAA010101AAA&nr=00000000001234567890&tt=0002000000.000000&id=fc1b47b2-42f3-4ca2-8587-36e0a216c4d5".into())
        );
        let v2 = retention_payload(&retention("ret20-fake-nacional-minimal.xml")).unwrap();
        assert!(v2.starts_with(RETENTION_VERIFY_URL), "{v2}");
        assert_eq!(
            decoded(v2),
            decoded("https://prodretencionverificacion.clouda.sat.gob.mx/?id=4E3DD8EA-5220-8C42-85A8-E37F9D7502F8&re=AAA010101AAA&rr=SUL010720JN8&tt=4076.73&fe=qsIe6w%3D%3D".into())
        );
        let national = retention_payload(&retention("ret10-fake-nacional-minimal.xml")).unwrap();
        assert!(national.contains("&rr=SUL010720JN8&"), "{national}");
        assert!(retention_payload(&retention("ret20-min-extranjero-unstamped.xml")).is_none());
    }

    #[test]
    fn unstamped_documents_have_no_payload() {
        assert!(payload(&sample("cfdi40-egreso-nota-credito-unstamped.xml")).is_none());
    }
}
