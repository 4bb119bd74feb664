#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::pdf::{check_structure, win_ansi};

fn samples() -> Vec<(String, Cfdi)> {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/cfdi-samples");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".xml"))
        .collect();
    names.sort();
    names
        .into_iter()
        .filter_map(|name| {
            let bytes = std::fs::read(format!("{dir}/{name}")).unwrap();
            Cfdi::parse(&bytes).ok().map(|cfdi| (name, cfdi))
        })
        .collect()
}

/// The text of every string the PDF shows, one line per string: hex strings decoded,
/// literal strings unescaped (`\(`, `\)`, `\\`, octal) and decoded from WinAnsi (Latin-1 here).
fn shown_text(pdf: &[u8]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < pdf.len() {
        if pdf[i] == b'<' && pdf.get(i + 1).is_some_and(u8::is_ascii_hexdigit) {
            let end = i + pdf[i..].iter().position(|b| *b == b'>').unwrap();
            let hex = std::str::from_utf8(&pdf[i + 1..end]).unwrap();
            let bytes = (0..hex.len() / 2).map(|n| u8::from_str_radix(&hex[2 * n..2 * n + 2], 16));
            out.extend(bytes.map(|b| char::from(b.unwrap())));
            out.push('\n');
            i = end + 1;
            continue;
        }
        if pdf[i] != b'(' {
            i += 1;
            continue;
        }
        i += 1;
        let mut bytes = Vec::new();
        while i < pdf.len() && pdf[i] != b')' {
            if pdf[i] == b'\\' && i + 1 < pdf.len() {
                let octal: Vec<u8> = pdf[i + 1..]
                    .iter()
                    .take(3)
                    .take_while(|b| (b'0'..=b'7').contains(*b))
                    .copied()
                    .collect();
                if octal.is_empty() {
                    bytes.push(pdf[i + 1]);
                    i += 2;
                } else {
                    let code = octal.iter().fold(0u32, |n, d| n * 8 + u32::from(d - b'0'));
                    bytes.push(code as u8);
                    i += 1 + octal.len();
                }
                continue;
            }
            bytes.push(pdf[i]);
            i += 1;
        }
        out.extend(bytes.iter().map(|b| char::from(*b)));
        out.push('\n');
        i += 1;
    }
    out
}

fn contains(pdf: &[u8], text: &str) -> bool {
    // Round trip through WinAnsi, so the expectation says what the page can show.
    let shown: String = win_ansi(text).iter().map(|b| char::from(*b)).collect();
    shown_text(pdf).contains(&shown)
}

#[test]
fn every_parsable_sample_renders_with_its_uuid_rfcs_and_totals() {
    let samples = samples();
    assert!(samples.len() >= 30, "{} samples parse", samples.len());
    for (name, cfdi) in &samples {
        let pdf = render(cfdi);
        check_structure(&pdf);
        assert_eq!(pdf, render(cfdi), "{name}: deterministic");
        if let Ok(uuid) = cfdi.uuid() {
            assert!(contains(&pdf, uuid), "{name}: uuid");
        }
        for rfc in [&cfdi.issuer.tax_id, &cfdi.receiver.tax_id] {
            // pdf-writer escapes parentheses and backslashes, which RFCs never hold.
            assert!(contains(&pdf, rfc), "{name}: RFC {rfc}");
        }
        assert!(contains(&pdf, &cfdi.total.to_string()), "{name}: total");
        assert!(
            contains(&pdf, &cfdi.subtotal.to_string()),
            "{name}: subtotal"
        );
        for item in &cfdi.items {
            assert!(contains(&pdf, &item.amount.to_string()), "{name}: item");
            for tax in item.taxes.iter().filter_map(|t| t.amount) {
                assert!(contains(&pdf, &tax.to_string()), "{name}: concept tax");
            }
        }
    }
}

#[test]
fn a_payment_complement_lists_its_related_documents() {
    let (name, cfdi) = samples()
        .into_iter()
        .find(|(n, _)| n == "cfdi40-pago20-two-docs-partial.xml")
        .unwrap();
    let pdf = render(&cfdi);
    let docs: Vec<_> = cfdi
        .payments
        .iter()
        .flat_map(|p| &p.related_documents)
        .collect();
    assert!(docs.len() >= 2, "{name}");
    for doc in docs {
        assert!(contains(&pdf, doc.uuid.as_deref().unwrap()), "{name}");
        assert!(
            contains(&pdf, &doc.amount_paid.unwrap().to_string()),
            "{name}"
        );
    }
    assert!(contains(&pdf, "COMPLEMENTO DE PAGO"));
}

#[test]
fn the_stamp_data_and_seals_are_printed() {
    let (_, cfdi) = samples()
        .into_iter()
        .find(|(n, _)| n == "cfdi40-ingreso-pue-real-tfd.xml")
        .unwrap();
    let pdf = render(&cfdi);
    let stamp = cfdi.stamp.as_ref().unwrap();
    for text in [
        stamp.certified_at.as_deref().unwrap(),
        stamp.provider_tax_id.as_deref().unwrap(),
        stamp.sat_certificate_number.as_deref().unwrap(),
        cfdi.certificate_number.as_deref().unwrap(),
        &cfdi.seal.as_deref().unwrap()[..150],
        &stamp.sat_seal.as_deref().unwrap()[..150],
    ] {
        assert!(contains(&pdf, text), "{text}");
    }
}
