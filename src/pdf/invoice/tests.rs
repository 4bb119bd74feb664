#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::pdf::{check_structure, win_ansi, Font, LEFT, RIGHT};

fn samples() -> Vec<(String, Cfdi)> {
    crate::samples::xml_files("cfdi-samples")
        .into_iter()
        .filter_map(|(name, bytes)| Cfdi::parse(&bytes).ok().map(|cfdi| (name, cfdi)))
        .collect()
}

/// The text of every string the PDF shows, one line per string: hex strings decoded,
/// literal strings unescaped (`\(`, `\)`, `\\`, octal, balanced parentheses) and decoded from WinAnsi (Latin-1 here).
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
        // Balanced parentheses may stand unescaped inside a literal string.
        let mut depth = 0;
        while i < pdf.len() && (pdf[i] != b')' || depth > 0) {
            match pdf[i] {
                b'(' => depth += 1,
                b')' => depth -= 1,
                _ => {}
            }
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

fn sample(name: &str) -> Cfdi {
    samples()
        .into_iter()
        .find(|(n, _)| n == name)
        .map(|(_, cfdi)| cfdi)
        .unwrap()
}

/// The shown text with line breaks removed: a wrapped paragraph reads as one string.
fn joined_text(pdf: &[u8]) -> String {
    shown_text(pdf).replace('\n', "")
}

/// A string the page shows: its font size, baseline, left and right edges (measured
/// with the same Helvetica metrics).
struct Placed {
    size: f32,
    y: f32,
    left: f32,
    right: f32,
    text: String,
}

/// Every string the pages show, read from the content streams.
fn placed_strings(pdf: &[u8]) -> Vec<Placed> {
    let text = String::from_utf8_lossy(pdf);
    let mut placed = Vec::new();
    let (mut font, mut size, mut x, mut y) = (Font::Regular, 0.0, 0.0, 0.0);
    for line in text.lines() {
        let words: Vec<&str> = line.split(' ').collect();
        if line.ends_with(" Tf") {
            font = if words[0] == "/F2" {
                Font::Bold
            } else {
                Font::Regular
            };
            size = words[1].parse().unwrap();
        } else if line.ends_with(" Td") {
            x = words[0].parse().unwrap();
            y = words[1].parse().unwrap();
        } else if line.ends_with(" Tj") {
            let shown = shown_text(line.as_bytes());
            let shown = shown.trim_end_matches('\n');
            placed.push(Placed {
                size,
                y,
                left: x,
                right: x + font.width(size, shown),
                text: shown.to_owned(),
            });
        }
    }
    placed
}

/// A copy of `cfdi` with long unbroken strings wherever free text is printed.
fn with_long_strings(mut cfdi: Cfdi) -> Cfdi {
    let long = "W".repeat(255);
    cfdi.issuer.name = Some(long.clone());
    cfdi.receiver.name = Some(format!("NOMBRE {long} FIN"));
    cfdi.place_of_issue = Some(long.clone());
    cfdi.series = Some("S".repeat(25));
    cfdi.folio = Some("9".repeat(40));
    for item in &mut cfdi.items {
        item.description = long.clone();
        item.unit = Some("KILOGRAMOSPORMETROCUADRADO".to_owned());
        item.product_code = Some("9".repeat(30));
    }
    cfdi
}

#[test]
fn no_string_runs_past_the_right_margin() {
    for (name, cfdi) in samples() {
        for cfdi in [cfdi.clone(), with_long_strings(cfdi)] {
            let pdf = render(&cfdi);
            check_structure(&pdf);
            let placed = placed_strings(&pdf);
            assert!(placed.len() > 10, "{name}: strings found");
            for p in &placed {
                let (left, right, text) = (p.left, p.right, &p.text);
                assert!(left >= LEFT - 0.01, "{name}: {text:?} starts at {left}");
                assert!(right <= RIGHT + 0.01, "{name}: {text:?} ends at {right}");
            }
            // The series and folio never overlap the title: beside it or below it.
            let (title, number) = (&placed[0], &placed[1]);
            assert!(number.text.starts_with("Serie "), "{}", number.text);
            assert!(
                number.left > title.right || number.y < title.y - title.size,
                "{name}: {} over the title",
                number.text
            );
        }
    }
}

#[test]
fn item_cells_stay_inside_their_columns() {
    for (name, cfdi) in samples() {
        let pdf = render(&with_long_strings(cfdi.clone()));
        for p in placed_strings(&pdf).into_iter().filter(|p| p.size == 8.0) {
            // Quantities share the left margin with other text; they are short numbers.
            for (x, width) in [COL_KEY, COL_UNIT, COL_DESCRIPTION] {
                if p.left == x {
                    let (text, right) = (&p.text, p.right);
                    assert!(
                        right <= x + width + 0.01,
                        "{name}: {text:?} ends at {right}"
                    );
                }
            }
        }
    }
    // The 3.2 unit that ran into its description.
    let cfdi = sample("cfdi32-ingreso-real-legacy-tfd10.xml");
    let pdf = render(&cfdi);
    let units: Vec<Placed> = placed_strings(&pdf)
        .into_iter()
        .filter(|p| p.left == COL_UNIT.0 && p.text == "SERVICIO")
        .collect();
    assert_eq!(units.len(), 1);
    assert!(units[0].right < COL_DESCRIPTION.0, "{}", units[0].right);
}

#[test]
fn the_stamp_original_string_is_printed_as_the_sat_builds_it() {
    // TFD 1.1, from the sample's TimbreFiscalDigital attributes in the SAT's order.
    let cfdi = sample("cfdi40-ingreso-pue-real-tfd.xml");
    let seal = cfdi.seal.clone().unwrap();
    let expected = format!(
        "||1.1|C2832671-DA6D-11EF-A83D-00155D012007|2025-01-24T10:10:42|TBN040609RKA|{seal}|00001000000708361114||"
    );
    assert_eq!(cfdi.stamp.as_ref().unwrap().original_string, expected);
    let pdf = render(&cfdi);
    assert!(contains(
        &pdf,
        "Cadena original del complemento de certificación digital del SAT"
    ));
    assert!(joined_text(&pdf).contains(&expected));

    // TFD 1.0 (CFDI 3.2): version, UUID, FechaTimbrado, selloCFD, noCertificadoSAT.
    let cfdi = sample("cfdi32-ingreso-real-legacy-tfd10.xml");
    let seal = cfdi.seal.clone().unwrap();
    let expected = format!(
        "||1.0|80824F3B-323E-407B-8F8E-40D83FE2E69F|2017-03-21T08:18:08|{seal}|00001000000404477432||"
    );
    assert_eq!(cfdi.stamp.as_ref().unwrap().original_string, expected);
    assert!(joined_text(&render(&cfdi)).contains(&expected));

    // A lower-case UUID is kept as the stamp writes it.
    let cfdi = sample("cfdi40-ingreso-pue-tfd-ampersand-rfc.xml");
    let original = &cfdi.stamp.as_ref().unwrap().original_string;
    assert!(
        original.starts_with(
            "||1.1|6e546729-960a-4505-8e81-2d2952145bd9|2020-01-11T00:00:00|SAT970701NN3|"
        ),
        "{original}"
    );
}

#[test]
fn withheld_taxes_are_printed_one_line_per_tax() {
    let pdf = render(&sample("cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"));
    let text = shown_text(&pdf);
    // Each amount is drawn right before its label (same row).
    for row in [
        "125.03\nRetención 001 ISR\n",
        "133.37\nRetención 002 IVA\n",
        "258.40\nTotal impuestos retenidos\n",
    ] {
        // Latin-1 text reads back as the same characters.
        assert!(text.contains(row), "{row:?} in {text}");
    }
    // CFDI 3.2 names its taxes and gives the rate as a percentage.
    let pdf = render(&sample("cfdi32-ingreso-tfd11-special-chars-rfc.xml"));
    for label in ["Retención ISR", "Retención IVA", "Traslado IVA 16.00"] {
        assert!(contains(&pdf, label), "{label}");
    }
}

#[test]
fn place_of_issue_export_receiver_and_tax_object_are_printed() {
    let cfdi = sample("cfdi40-ingreso-pue-real-tfd.xml");
    let pdf = render(&cfdi);
    let place = cfdi.place_of_issue.as_deref().unwrap();
    for text in [
        format!("Lugar de expedición: {place}    Exportación: 01"),
        "Régimen fiscal: 612".to_owned(),
        "Domicilio fiscal (C.P.): 52176".to_owned(),
        "Objeto de impuesto: 02".to_owned(),
    ] {
        assert!(contains(&pdf, &text), "{text}");
    }
}

#[test]
fn a_payment_prints_its_taxes_equivalence_and_the_totals() {
    let pdf = render(&sample("cfdi40-pago20-two-pagos-retenciones.xml"));
    for text in [
        "Equivalencia 1",
        "Impuestos del pago",
        "Traslado 002 IVA Tasa 0.160000  Base 12131.6600    Importe: 1941.0656",
        "Retención 001 ISR    Importe: 242.6950",
        "Retención 002 IVA    Importe: 258.9556",
        "Totales del complemento de pago (MXN)",
    ] {
        assert!(contains(&pdf, text), "{text}");
    }
    let text = shown_text(&pdf);
    for row in [
        "242.70\nTotal retenciones ISR\n",
        "258.96\nTotal retenciones IVA\n",
        "14558.61\nTotal traslados base IVA 16%\n",
        "2329.38\nTotal traslados impuesto IVA 16%\n",
        "16386.33\nMonto total de pagos\n",
    ] {
        assert!(text.contains(row), "{row:?}");
    }
}

#[test]
fn fit_breaks_at_spaces_and_inside_long_words() {
    let font = Font::Regular;
    // Helvetica: "W" is 944/1000 em, a space 278: at 10 points "WW" is 18.88 wide.
    assert_eq!(font.width(10.0, "WW"), 18.88);
    assert_eq!(font.fit(10.0, "WW WW", 40.54), vec!["WW WW"]);
    assert_eq!(font.fit(10.0, "WW WW", 30.0), vec!["WW", "WW"]);
    assert_eq!(font.fit(10.0, "WWWWW", 20.0), vec!["WW", "WW", "W"]);
    // A column narrower than one letter still advances a letter a line.
    assert_eq!(font.fit(10.0, "WW", 1.0), vec!["W", "W"]);
    assert_eq!(font.fit(10.0, "", 10.0), vec![""]);
    let seal = "A".repeat(344);
    let lines = font.fit(6.0, &seal, RIGHT - LEFT);
    assert_eq!(lines.concat(), seal);
    assert!(lines.iter().all(|l| font.width(6.0, l) <= RIGHT - LEFT));
}

/// Writes every sample's PDF, and the sandbox's invoices for a month, to the folder
/// `CFDI_PDF_DIR` names, to look at: `CFDI_PDF_DIR=/tmp/pdfs cargo test --lib
/// pdf::invoice::tests::write_sample_pdfs -- --ignored`.
#[test]
#[ignore]
fn write_sample_pdfs() {
    use crate::sandbox::docs::{self as sandbox_docs, Direction};
    let dir = std::env::var("CFDI_PDF_DIR").expect("CFDI_PDF_DIR");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, cfdi) in samples() {
        std::fs::write(format!("{dir}/{name}.pdf"), render(&cfdi)).unwrap();
        if name == "cfdi32-ingreso-real-legacy-tfd10.xml" {
            let long = render(&with_long_strings(cfdi));
            std::fs::write(format!("{dir}/long-strings-{name}.pdf"), long).unwrap();
        }
    }
    let from = chrono::NaiveDate::from_ymd_opt(2026, 3, 1).unwrap();
    let to = chrono::NaiveDate::from_ymd_opt(2026, 3, 31).unwrap();
    for direction in [Direction::Issued, Direction::Received] {
        let mut written = std::collections::HashMap::new();
        let invoices = sandbox_docs::invoices_for_period("BIGA010101AAA", direction, from, to);
        for invoice in &invoices {
            let xml = sandbox_docs::render_xml("BIGA010101AAA", direction, invoice).unwrap();
            let cfdi = Cfdi::parse_stamped(&xml).unwrap();
            // A few of each type are enough to look at.
            let n = written.entry(cfdi.invoice_type.as_str()).or_insert(0);
            *n += 1;
            if *n <= 3 {
                let path = format!("{dir}/sandbox-{direction:?}-{}-{n}.pdf", cfdi.invoice_type);
                std::fs::write(path, render(&cfdi)).unwrap();
            }
        }
    }
}
