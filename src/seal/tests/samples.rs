use std::path::Path;

use super::super::*;
use crate::samples::xml_files;

const CADENAS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/seal/cadenas");

fn recorded(name: &str) -> Option<String> {
    std::fs::read_to_string(Path::new(CADENAS).join(name)).ok()
}

fn all_samples() -> Vec<(String, Vec<u8>)> {
    let mut all = xml_files("cfdi-samples");
    all.extend(xml_files("retenciones-samples"));
    all
}

/// Every sample's original strings (the document's and its stamp's) match libxslt's.
#[test]
fn original_strings_match_libxslt_on_every_sample() {
    let mut compared = 0;
    for (name, bytes) in all_samples() {
        let Some(expected) = recorded(&format!("{name}.txt")) else {
            continue;
        };
        crate::cfdi::xml::with_tree(&bytes, |root| {
            let kind = Kind::of(root).unwrap();
            assert_eq!(original_string(kind, root).unwrap(), expected, "{name}");
            compared += 1;
            if let Some(tfd_expected) = recorded(&format!("{name}.tfd.txt")) {
                let tfd = root
                    .descendants()
                    .find(|n| n.tag_name().name() == "TimbreFiscalDigital")
                    .unwrap();
                let tfd_kind = Kind::of(tfd).unwrap();
                assert_eq!(
                    original_string(tfd_kind, tfd).unwrap(),
                    tfd_expected,
                    "{name} stamp"
                );
                compared += 1;
            }
            Ok(())
        })
        .unwrap();
    }
    assert!(compared >= 60, "only {compared} strings compared");
}

/// What each sample's seal is, and why.
enum Expect {
    /// The issuer's seal verifies; `sat` says whether the certificate is the SAT's own
    /// (else it is one of the SAT's or a library's test authorities).
    Genuine { sat: bool },
    /// Sealed, then edited: the seal no longer matches (the file's source says how).
    Edited,
    /// The certificate is no certificate (a library's placeholder).
    UnreadableCertificate,
    /// Never sealed: empty `Sello` and `Certificado` (converters' output, fakes).
    Unsealed,
}

fn expectation(name: &str) -> Option<Expect> {
    use Expect::*;
    Some(match name {
        "cfdi32-ingreso-real-legacy-tfd10.xml"
        | "cfdi33-ingreso-pue-real-implocal-tfd.xml"
        | "cfdi40-ingreso-pue-real-tfd.xml" => Genuine { sat: true },
        "cfdi33-ingreso-ppd-multiples-tasas-tfd.xml"
        | "cfdi33-ingreso-pue-detallista-tfd.xml"
        | "cfdi33-ingreso-pue-tfd-leading-comment.xml"
        | "cfdi33-pago10-two-docs-partial.xml"
        | "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"
        | "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml"
        | "cfdi40-ingreso-pue-descuento-tfd.xml"
        | "cfdi40-ingreso-pue-usd-descuento-unstamped.xml"
        | "cfdi40-pago20-tfd-full-payment-of-ppd.xml"
        | "cfdi40-pago20-two-docs-partial.xml"
        | "ret10-arrendamientoenfideicomiso-tfd10.xml"
        | "ret10-dividendos-extranjero-eku-unstamped.xml"
        | "ret10-dividendos-nacional-tfd10.xml"
        | "ret10-enajenaciondeacciones-tfd10.xml"
        | "ret10-intereses-tfd10.xml"
        | "ret10-operacionesconderivados-tfd10.xml"
        | "ret10-pagosaextranjeros-extranjero-tfd10.xml"
        | "ret10-planesderetiro-tfd10.xml" => Genuine { sat: false },
        // phpcfdi/cfditopdf's "manipulated Pagos 1.0 document with a copied TFD".
        "cfdi33-pago10-tfd-usd-docto-mxn-payment.xml" => Edited,
        // satcfdi's PUE variant of its PPD sample: made PUE with FormaPago 03, the seal kept.
        "cfdi40-ingreso-pue-tfd-ampersand-rfc.xml" => Edited,
        // nodecfdi's sample: the issuer's RFC changed to the SAT's test RFC after sealing.
        "ret10-plataformastecnologicas-tfd10.xml" => Edited,
        // satcfdi's base Retenciones 1.0 sample: its stamp's SelloCFD is not its Sello either;
        // the source does not say what changed.
        "ret10-sin-complemento-tfd10.xml" => Edited,
        "cfdi33-pago10-duplicate-docto-bom.xml"
        | "cfdi33-pago10-errors-pue-no-parcialidad.xml"
        | "cfdi33-pago10-partial-single-docto.xml"
        | "cfdi33-pago10-usd-docto-parcialidad4.xml"
        | "cfdi33-pago10-usd-docto-parcialidad5.xml"
        | "cfdi33-pago10-usd-payment-no-imppagado.xml" => UnreadableCertificate,
        "edge-empty-file.xml" => return None,
        _ => Unsealed,
    })
}

#[test]
fn genuine_samples_verify_and_edited_ones_do_not() {
    for (name, bytes) in all_samples() {
        let verdict = verify(&bytes, &Trust::sat(), &NoSatCertificates);
        let Some(expect) = expectation(&name) else {
            assert!(verdict.is_err(), "{name}");
            continue;
        };
        let seal = verdict
            .unwrap()
            .unwrap_or_else(|| panic!("{name}: not a sealed class"));
        let c = &seal.checks;
        match expect {
            Expect::Genuine { sat } => {
                assert_eq!(c.issuer_seal.status, Status::Valid, "{name}");
                assert_eq!(c.certificate_number.status, Status::Valid, "{name}");
                assert_eq!(c.certificate_rfc.status, Status::Valid, "{name}");
                let issuer = &c.certificate_issuer;
                if sat {
                    assert_eq!(issuer.status, Status::Valid, "{name}");
                    // Nothing invalid: the SAT's stamp waits for its certificate.
                    assert_eq!(seal.status, Status::Unverified, "{name}");
                    assert_eq!(c.stamp_seal_cfd.status, Status::Valid, "{name}");
                    assert!(c
                        .sat_seal
                        .reason
                        .as_deref()
                        .unwrap()
                        .contains("not at hand"));
                } else {
                    assert_eq!(issuer.status, Status::Invalid, "{name}");
                    let reason = issuer.reason.as_deref().unwrap();
                    assert!(
                        reason.contains("not by the SAT") || reason.contains("e.firma"),
                        "{name}: {reason}"
                    );
                }
            }
            Expect::Edited => {
                assert_eq!(c.issuer_seal.status, Status::Invalid, "{name}");
                let reason = c.issuer_seal.reason.as_deref().unwrap();
                assert!(
                    reason.contains("does not match the document"),
                    "{name}: {reason}"
                );
                assert_eq!(seal.status, Status::Invalid);
            }
            Expect::UnreadableCertificate => {
                let reason = c.issuer_seal.reason.as_deref().unwrap();
                assert!(reason.contains("not a readable X.509"), "{name}: {reason}");
                assert_eq!(c.certificate_number.status, Status::Unverified, "{name}");
            }
            Expect::Unsealed => {
                assert_eq!(c.issuer_seal.status, Status::Invalid, "{name}");
                let reason = c.issuer_seal.reason.as_deref().unwrap();
                assert!(
                    reason.contains("no seal") || reason.contains("certificate is missing"),
                    "{name}: {reason}"
                );
            }
        }
    }
}

#[test]
fn the_3_2_and_retenciones_1_0_samples_are_signed_with_sha1_the_others_sha256() {
    for (name, bytes) in all_samples() {
        let Ok(Some(seal)) = verify(&bytes, &Trust::sat(), &NoSatCertificates) else {
            continue;
        };
        if let Some(algorithm) = seal.algorithm {
            let legacy = name.starts_with("cfdi32") || name.starts_with("ret10");
            assert_eq!(
                algorithm,
                if legacy { "SHA-1" } else { "SHA-256" },
                "{name}"
            );
        }
    }
}
