//! Copies of genuine samples changed after sealing (each invalid for its own reason),
//! changed only where the original string does not look (each still valid), and
//! re-sealed and stamped by a test authority (the sandbox's keys).

use std::collections::HashMap;

use chrono::{DateTime, TimeZone, Utc};

use super::super::*;
use crate::samples::xml_files;

const AUTHORITY_KEY: &[u8] = include_bytes!("../../sandbox/docs/keys/authority.der");
const ISSUER_KEY: &[u8] = include_bytes!("../../sandbox/docs/keys/issuer0.der");
const SAT_KEY: &[u8] = include_bytes!("../../sandbox/docs/keys/sat.der");

const REAL_40: &str = "cfdi40-ingreso-pue-real-tfd.xml";

fn sample(folder: &str, name: &str) -> String {
    let (_, bytes) = xml_files(folder)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap();
    String::from_utf8(bytes).unwrap()
}

fn year(y: i32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, 1, 1, 0, 0, 0).unwrap()
}

fn authority() -> Signer {
    Signer::self_signed(
        AUTHORITY_KEY,
        &Subject {
            name: "CN=Autoridad de pruebas,O=Pruebas,OU=Sellos",
            number: "00000000000000000001",
            valid_from: year(2000),
            valid_to: year(2099),
        },
    )
    .unwrap()
}

fn issuer(authority: &Signer, rfc: &str, from: i32, to: i32) -> Signer {
    authority
        .issue(
            ISSUER_KEY,
            &Subject {
                name: &format!("CN=EMISOR DE PRUEBA,OU=Matriz,2.5.4.45={rfc}"),
                number: "30001000000500000042",
                valid_from: year(from),
                valid_to: year(to),
            },
        )
        .unwrap()
}

fn sat(authority: &Signer) -> Signer {
    authority
        .issue(
            SAT_KEY,
            &Subject {
                name: "CN=SAT de pruebas,OU=Timbrado,2.5.4.45=SAT970701NN3",
                number: "00001000000000000099",
                valid_from: year(2000),
                valid_to: year(2099),
            },
        )
        .unwrap()
}

struct Store(HashMap<String, Certificate>);

impl SatCertificates for Store {
    fn lookup(&self, number: &str) -> Lookup {
        match self.0.get(number) {
            Some(c) => Lookup::Found(Box::new(c.clone())),
            None => Lookup::Missing("not stored".into()),
        }
    }
}

fn check(xml: &str, trust: &Trust, store: &dyn SatCertificates) -> Seal {
    verify(xml.as_bytes(), trust, store).unwrap().unwrap()
}

/// The checks that are not `valid`, by name.
fn failing(seal: &Seal) -> Vec<(&'static str, Status)> {
    let c = &seal.checks;
    [
        ("issuer_seal", &c.issuer_seal),
        ("certificate_number", &c.certificate_number),
        ("certificate_rfc", &c.certificate_rfc),
        ("certificate_validity", &c.certificate_validity),
        ("certificate_issuer", &c.certificate_issuer),
        ("stamp_seal_cfd", &c.stamp_seal_cfd),
        ("sat_seal", &c.sat_seal),
    ]
    .into_iter()
    .filter(|(_, c)| c.status != Status::Valid)
    .map(|(n, c)| (n, c.status))
    .collect()
}

fn real(xml: &str) -> Seal {
    check(xml, &Trust::sat(), &NoSatCertificates)
}

const STAMP_WAITS: (&str, Status) = ("sat_seal", Status::Unverified);

#[test]
fn changes_the_original_string_sees_invalidate_the_seal() {
    let original = sample("cfdi-samples", REAL_40);
    assert_eq!(failing(&real(&original)), vec![STAMP_WAITS]);
    for (what, from, to) in [
        (
            "an amount changed by a cent",
            "Total=\"1000.00\"",
            "Total=\"1000.01\"",
        ),
        (
            "the receiver's name",
            "Nombre=\"CARLOS CORTES SOTO\"",
            "Nombre=\"CARLOS CORTES SOTA\"",
        ),
    ] {
        assert!(original.contains(from), "{what}");
        let seal = real(&original.replacen(from, to, 1));
        assert_eq!(
            failing(&seal),
            vec![("issuer_seal", Status::Invalid), STAMP_WAITS],
            "{what}"
        );
        assert!(seal
            .checks
            .issuer_seal
            .reason
            .unwrap()
            .contains("changed after it was sealed"));
    }
}

#[test]
fn a_swapped_certificate_is_named_for_what_it_is() {
    let original = sample("cfdi-samples", REAL_40);
    let other = sample("cfdi-samples", "cfdi33-ingreso-pue-real-implocal-tfd.xml");
    let cert_of = |xml: &str| {
        let start = xml.find(" Certificado=\"").unwrap() + 14;
        let end = start + xml[start..].find('"').unwrap();
        xml[start..end].to_string()
    };
    let swapped = original.replacen(&cert_of(&original), &cert_of(&other), 1);
    let seal = real(&swapped);
    let names: Vec<_> = failing(&seal).into_iter().map(|(n, _)| n).collect();
    // That certificate expired before the document's date, too.
    assert_eq!(
        names,
        [
            "issuer_seal",
            "certificate_number",
            "certificate_rfc",
            "certificate_validity",
            "sat_seal"
        ]
    );
    let reason = seal.checks.certificate_number.reason.unwrap();
    assert!(
        reason.contains("names certificate 00001000000510877575"),
        "{reason}"
    );
}

#[test]
fn changes_outside_the_original_string_keep_the_seal_valid() {
    let original = sample("cfdi-samples", REAL_40);
    let reordered = original.replacen(
        " Version=\"4.0\" Serie=\"O\" Folio=\"52375239\"",
        " Folio=\"52375239\" Serie=\"O\" Version=\"4.0\"",
        1,
    );
    let spaced = original.replacen(
        "Nombre=\"CARLOS CORTES SOTO\"",
        "Nombre=\"  CARLOS \t CORTES&#10;SOTO \"",
        1,
    );
    let addenda = original.replacen(
        "</cfdi:Comprobante>",
        "<cfdi:Addenda><a:Pedido xmlns:a=\"urn:addenda\" Numero=\"77\">entregar en almacén</a:Pedido></cfdi:Addenda></cfdi:Comprobante>",
        1,
    );
    let prefixed = original
        .replace("cfdi:", "c4:")
        .replace("xmlns:cfdi=", "xmlns:c4=");
    for (what, xml) in [
        ("attributes reordered", reordered),
        ("blanks inside a value", spaced),
        ("an addenda added", addenda),
        ("another namespace prefix", prefixed),
    ] {
        assert_ne!(xml, original, "{what}");
        assert_eq!(failing(&real(&xml)), vec![STAMP_WAITS], "{what}");
    }
}

#[test]
fn a_certificate_of_another_rfc_or_out_of_date_is_named_so() {
    let authority = authority();
    let trust = Trust::only(vec![authority.certificate().clone()]);
    let original = sample("cfdi-samples", REAL_40);
    // The issuer is ISD950921HE5; `Fecha` is 2025-01-24.
    let resealed = issuer(&authority, "ISD950921HE5", 2024, 2028)
        .seal_document(&original)
        .unwrap();
    assert_eq!(
        failing(&check(&resealed, &trust, &NoSatCertificates)),
        [
            ("stamp_seal_cfd", Status::Invalid), // the stamp carries the old seal
            ("sat_seal", Status::Unverified)
        ]
    );
    let other_rfc = issuer(&authority, "XAXX010101000", 2024, 2028)
        .seal_document(&original)
        .unwrap();
    let seal = check(&other_rfc, &trust, &NoSatCertificates);
    assert_eq!(failing(&seal)[0], ("certificate_rfc", Status::Invalid));
    let reason = seal.checks.certificate_rfc.reason.unwrap();
    assert!(
        reason.contains("RFC XAXX010101000, not to the issuer ISD950921HE5"),
        "{reason}"
    );
    let expired = issuer(&authority, "ISD950921HE5", 2020, 2024)
        .seal_document(&original)
        .unwrap();
    let seal = check(&expired, &trust, &NoSatCertificates);
    assert_eq!(failing(&seal)[0], ("certificate_validity", Status::Invalid));
    assert!(seal
        .checks
        .certificate_validity
        .reason
        .unwrap()
        .contains("after the certificate expired"));
    // The production trust does not know the test authority.
    let seal = real(&resealed);
    assert!(seal
        .checks
        .certificate_issuer
        .reason
        .unwrap()
        .contains("Autoridad de pruebas, not by the SAT"));
}

#[test]
fn a_retenciones_1_0_total_changed_is_invalid() {
    let original = sample("retenciones-samples", "ret10-intereses-tfd10.xml");
    let before = real(&original);
    assert_eq!(before.checks.issuer_seal.status, Status::Valid);
    let changed = original.replacen(
        "montoTotOperacion=\"14000.00\"",
        "montoTotOperacion=\"14000.01\"",
        1,
    );
    assert_ne!(changed, original);
    let seal = real(&changed);
    assert_eq!(seal.checks.issuer_seal.status, Status::Invalid);
    assert_eq!(seal.checks.certificate_number.status, Status::Valid);
}

#[test]
fn the_sats_stamp_verifies_with_its_certificate_and_waits_without_it() {
    let authority = authority();
    let sat = sat(&authority);
    let trust = Trust::only(vec![authority.certificate().clone()]);
    let original = sample("cfdi-samples", REAL_40);
    let sealed = issuer(&authority, "ISD950921HE5", 2024, 2028)
        .seal_document(&original)
        .unwrap();
    let stamped = sat.stamp_document(&sealed).unwrap();
    let store = Store(HashMap::from([(
        sat.certificate().number(),
        sat.certificate().clone(),
    )]));
    let seal = check(&stamped, &trust, &store);
    assert_eq!(failing(&seal), []);
    assert_eq!(seal.status, Status::Valid);
    assert_eq!(
        seal.sat_certificate_number.as_deref(),
        Some("00001000000000000099")
    );
    // Without the SAT's certificate the stamp is not checked: never invalid.
    let seal = check(&stamped, &trust, &NoSatCertificates);
    assert_eq!(failing(&seal), [("sat_seal", Status::Unverified)]);
    assert_eq!(seal.status, Status::Unverified);
    // The stamp's date changed after the SAT signed it.
    let moved = stamped.replacen(
        "FechaTimbrado=\"2025-01-24T10:10:42\"",
        "FechaTimbrado=\"2025-01-24T10:10:43\"",
        1,
    );
    assert_ne!(moved, stamped);
    let seal = check(&moved, &trust, &store);
    assert_eq!(failing(&seal), [("sat_seal", Status::Invalid)]);
    // A certificate the authorities did not issue is not the SAT's.
    let stranger = Signer::self_signed(
        SAT_KEY,
        &Subject {
            name: "CN=Otro,OU=X,2.5.4.45=SAT970701NN3",
            number: "00001000000000000099",
            valid_from: year(2000),
            valid_to: year(2099),
        },
    )
    .unwrap();
    let store = Store(HashMap::from([(
        sat.certificate().number(),
        stranger.certificate().clone(),
    )]));
    let seal = check(&stamped, &trust, &store);
    assert_eq!(failing(&seal), [("sat_seal", Status::Invalid)]);
}

#[test]
fn set_attribute_replaces_in_place_or_adds() {
    let xml = "<?xml version=\"1.0\"?><!-- c --><r a=\"1\" b='x>y' c=\"3\"><r a=\"9\"/></r>";
    let root = xml.find("<r").unwrap();
    assert_eq!(
        set_attribute(xml, root, "b", "2").unwrap(),
        "<?xml version=\"1.0\"?><!-- c --><r a=\"1\" b='2' c=\"3\"><r a=\"9\"/></r>"
    );
    assert_eq!(
        set_attribute(xml, root, "d", "4").unwrap(),
        "<?xml version=\"1.0\"?><!-- c --><r a=\"1\" b='x>y' c=\"3\" d=\"4\"><r a=\"9\"/></r>"
    );
    let inner = xml.rfind("<r").unwrap();
    assert!(set_attribute(xml, inner, "e", "5")
        .unwrap()
        .ends_with("<r a=\"9\" e=\"5\"/></r>"));
}

#[test]
fn sealing_and_stamping_in_one_parse_writes_what_the_two_steps_write() {
    let authority = authority();
    let sat = sat(&authority);
    let issuer = issuer(&authority, "ISD950921HE5", 2024, 2028);
    let original = sample("cfdi-samples", REAL_40);
    let two_steps = |xml: &str| sat.stamp_document(&issuer.seal_document(xml).unwrap());
    // A document naming another certificate takes the two steps.
    assert_eq!(issuer.seal_and_stamp(&sat, &original), two_steps(&original));
    // One that names the issuer's (as the sandbox writes them) is parsed once.
    let named = issuer.seal_document(&original).unwrap();
    let once = issuer.seal_and_stamp(&sat, &named).unwrap();
    assert_eq!(once, two_steps(&named).unwrap());
    let trust = Trust::only(vec![authority.certificate().clone()]);
    let store = Store(HashMap::from([(
        sat.certificate().number(),
        sat.certificate().clone(),
    )]));
    assert_eq!(check(&once, &trust, &store).status, Status::Valid);
}
