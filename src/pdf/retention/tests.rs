#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::pdf::{check_structure, win_ansi};

fn samples() -> Vec<(String, Retention)> {
    crate::samples::xml_files("retenciones-samples")
        .into_iter()
        .map(|(name, bytes)| {
            let r = Retention::parse(&bytes).unwrap();
            (name, r)
        })
        .collect()
}

/// Whether the PDF shows `text` inside one string: pdf-writer writes a string as is
/// (a literal) when its bytes are plain ASCII, else in hexadecimal (a line with an
/// accented name), so both spellings are looked for.
fn shows(pdf: &[u8], text: &str) -> bool {
    let bytes = win_ansi(text);
    let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
    let found = |needle: &[u8]| pdf.windows(needle.len()).any(|w| w == needle);
    found(&bytes) || found(hex.as_bytes()) || found(hex.to_lowercase().as_bytes())
}

#[test]
fn every_sample_renders_with_its_uuid_parties_totals_and_withholdings() {
    let samples = samples();
    assert_eq!(samples.len(), 16);
    for (name, r) in &samples {
        let pdf = render(r);
        check_structure(&pdf);
        assert_eq!(pdf, render(r), "{name}: deterministic");
        if let Ok(uuid) = r.uuid() {
            assert!(shows(&pdf, uuid), "{name}: uuid");
        }
        assert!(shows(&pdf, &r.issuer.tax_id), "{name}: issuer");
        if let Some(rfc) = r.receiver.as_ref().and_then(|x| x.tax_id()) {
            assert!(shows(&pdf, rfc), "{name}: receiver {rfc}");
        }
        assert!(
            shows(&pdf, &r.totals.operation.to_string()),
            "{name}: operation"
        );
        if let Some(withheld) = r.totals.withheld {
            assert!(shows(&pdf, &withheld.to_string()), "{name}: withheld");
        }
        for t in &r.withheld_taxes {
            assert!(shows(&pdf, &t.amount.to_string()), "{name}: entry");
        }
    }
}

#[test]
fn a_stamped_retention_prints_its_stamp_and_the_retenciones_verification_qr() {
    let (_, r) = samples()
        .into_iter()
        .find(|(n, _)| n == "ret10-plataformastecnologicas-tfd10.xml")
        .unwrap();
    let pdf = render(&r);
    let stamp = r.stamp.as_ref().unwrap();
    assert!(shows(&pdf, &stamp.original_string[..40]));
    assert!(shows(&pdf, "Monto total retenido"));
    assert!(shows(&pdf, "ServiciosPlataformasTecnologicas"));
    assert!(shows(&pdf, "TotalISRRetenido"));
    // The QR code is drawn (filled squares) only when there is a payload.
    let payload = verification::retention_payload(&r).unwrap();
    assert!(payload.contains("&tt=0000008092.240000&"), "{payload}");
    let unstamped = samples()
        .into_iter()
        .find(|(n, _)| n == "ret20-min-extranjero-unstamped.xml")
        .unwrap()
        .1;
    assert!(shows(
        &render(&unstamped),
        "Documento sin timbre fiscal digital."
    ));
}
