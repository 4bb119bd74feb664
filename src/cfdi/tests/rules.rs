//! The parsing limits, trimmed values and stamp rules.

use super::{edit, parse_text, read_text, REAL_40};
use crate::cfdi::limits::{self, Exceeded, Limits, LIMITS};
use crate::cfdi::{Cfdi, CfdiError, Version, MAX_DOCUMENT_BYTES};
use std::time::{Duration, Instant};

const STAMP_UUID: &str = "C2832671-DA6D-11EF-A83D-00155D012007";

/// The real 4.0 sample with `extra` inserted before its Complemento.
fn with_addenda(extra: &str) -> String {
    edit(
        &read_text(REAL_40),
        "<cfdi:Complemento>",
        &format!("{extra}<cfdi:Complemento>"),
    )
}

#[track_caller]
fn assert_refused_fast(text: &str, needle: &str) {
    let started = Instant::now();
    let result = parse_text(text);
    assert!(
        matches!(&result, Err(CfdiError::OverLimit(m)) if m.contains(needle)),
        "{result:?}"
    );
    // Refused before the work a hostile document asks for, which would take minutes:
    // a bound generous enough for a busy machine (speed is bench/run's to measure).
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn an_element_with_100k_attributes_is_refused_at_once() {
    let attributes: String = (0..100_000).map(|i| format!(" a{i}=\"1\"")).collect();
    let doc = with_addenda(&format!("<x:h xmlns:x=\"urn:x\"{attributes}/>"));
    assert_refused_fast(&doc, "more than 256 attributes");
}

#[test]
fn documents_over_the_size_limit_are_refused_before_parsing() {
    let padding = " ".repeat(MAX_DOCUMENT_BYTES);
    let doc = with_addenda(&padding);
    assert_refused_fast(&doc, "larger than 20 MiB");
}

#[test]
fn more_nodes_than_the_limit_are_refused() {
    let nodes = "<x:a/>".repeat(limits::MAX_NODES as usize + 1);
    let doc = with_addenda(&format!("<x:h xmlns:x=\"urn:x\">{nodes}</x:h>"));
    assert_refused_fast(&doc, "XML nodes");
}

#[test]
fn the_scan_counts_attributes_and_namespaces_in_all() {
    let small = Limits {
        depth: 10,
        element_attributes: 3,
        attributes: 5,
        namespaces: 2,
    };
    let scan = |text: &str| limits::scan(text, &small);
    assert_eq!(scan(r#"<a x="1" y='2' z="a=b"/>"#), Ok(()));
    assert_eq!(
        scan(r#"<a w="1" x="1" y="2" z="3"/>"#),
        Err(Exceeded::ElementAttributes(3))
    );
    assert_eq!(
        scan(r#"<a x="1" y="2"><b x="1" y="2"/><c x="1" y="2"/></a>"#),
        Err(Exceeded::Attributes(5))
    );
    assert_eq!(
        scan(r#"<a xmlns="u"><b xmlns:p="u"/><c xmlns:q="u"/></a>"#),
        Err(Exceeded::Namespaces(2))
    );
    // '=' in comments, text and quoted values is not an attribute.
    assert_eq!(
        scan(r#"<a x="=="><!-- a=b c=d e=f g=h -->a=b c=d</a>"#),
        Ok(())
    );
}

#[test]
fn a_real_invoice_with_thousands_of_concepts_fits_the_limits() {
    let text = read_text(REAL_40);
    let start = text.find("<cfdi:Concepto ").expect("Concepto");
    let end = text.find("</cfdi:Concepto>").expect("end") + "</cfdi:Concepto>".len();
    let many = text[start..end].repeat(30_000);
    let doc = edit(&text, &text[start..end], &many);
    assert!(doc.len() > 12_000_000, "{}", doc.len());
    let cfdi = parse_text(&doc).expect("parses");
    assert_eq!(cfdi.items.len(), 30_001);
}

#[test]
fn attribute_values_are_trimmed_everywhere() {
    let doc = edit(
        &edit(
            &edit(
                &read_text(REAL_40),
                r#"Rfc="ISD950921HE5""#,
                "Rfc=\" ISD950921HE5\t\"",
            ),
            r#"FormaPago="04""#,
            r#"FormaPago=" 04 ""#,
        ),
        r#"Descripcion="RECARGA IDMX""#,
        r#"Descripcion="  RECARGA  IDMX ""#,
    );
    let cfdi = parse_text(&doc).expect("parses");
    assert_eq!(cfdi.issuer.tax_id, "ISD950921HE5");
    assert_eq!(cfdi.payment_form.as_deref(), Some("04"));
    // Inner blanks of free text stay.
    assert_eq!(cfdi.items[1].description, "RECARGA  IDMX");
}

#[test]
fn cfdi32_payment_form_is_metodo_de_pago_and_there_is_no_product_key() {
    let cfdi = parse_text(&read_text("cfdi32-ingreso-real-legacy-tfd10.xml")).expect("parses");
    assert_eq!(cfdi.version, Version::V32);
    assert_eq!(cfdi.payment_form.as_deref(), Some("04"));
    assert_eq!(cfdi.payment_method, None);
    assert!(cfdi.items.iter().all(|i| i.product_code.is_none()));
}

#[test]
fn a_malformed_stamp_uuid_is_refused() {
    for bad in [
        "not-a-uuid",
        "C2832671DA6D11EFA83D00155D012007",
        "C2832671-DA6D-11EF-A83D-00155D01200G",
        "C2832671-DA6D-11EF-A83D00-155D012007",
        "C2832671-DA6D-11EF-A83D-00155D012007-1",
        "C2832671-DA6D-11EF-A83D-00155D012007\"; rm x",
    ] {
        let doc = edit(&read_text(REAL_40), STAMP_UUID, &bad.replace('"', "&quot;"));
        let result = parse_text(&doc);
        assert!(
            matches!(
                &result,
                Err(CfdiError::Invalid {
                    field: "TimbreFiscalDigital@UUID",
                    ..
                })
            ),
            "{bad}: {result:?}"
        );
    }
    // Lower case, blanks around and the all-zero placeholder are well formed.
    for good in [
        " c2832671-da6d-11ef-a83d-00155d012007 ",
        "00000000-0000-0000-0000-000000000000",
    ] {
        let doc = edit(&read_text(REAL_40), STAMP_UUID, good);
        let cfdi = Cfdi::parse_stamped(doc.as_bytes()).expect(good);
        assert_eq!(cfdi.uuid(), Ok(good.trim().to_uppercase().as_str()));
    }
}

#[test]
fn two_stamps_must_name_the_same_uuid() {
    let text = read_text(REAL_40);
    let start = text.find("<tfd:TimbreFiscalDigital").expect("tfd");
    let end = text.find("</cfdi:Complemento>").expect("end");
    let tfd = &text[start..end];
    let twice = edit(
        &text,
        "</cfdi:Complemento>",
        &format!("{tfd}</cfdi:Complemento>"),
    );
    assert_eq!(
        parse_text(&twice).map(|c| c.uuid().map(str::to_owned)),
        Ok(Ok(STAMP_UUID.into()))
    );
    let other = tfd.replace(STAMP_UUID, "11111111-2222-3333-4444-000000000001");
    let conflicting = edit(
        &text,
        "</cfdi:Complemento>",
        &format!("{other}</cfdi:Complemento>"),
    );
    let result = parse_text(&conflicting);
    assert!(
        matches!(&result, Err(CfdiError::ConflictingStamps(..))),
        "{result:?}"
    );
    let message = result.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        message.contains(STAMP_UUID) && message.contains("11111111-"),
        "{message}"
    );
}

#[test]
fn error_messages_quote_at_most_80_characters() {
    let long = "9".repeat(10_000);
    let doc = edit(
        &read_text(REAL_40),
        r#"Total="1000.00""#,
        &format!(r#"Total="{long}x""#),
    );
    let message = parse_text(&doc)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        message.starts_with("invalid Total:") && message.len() < 120,
        "{message}"
    );
    assert_eq!(LIMITS.depth, 128);
}

#[test]
fn seals_and_certificate_numbers_are_read_in_both_spellings() {
    let modern = Cfdi::parse(read_text(REAL_40).as_bytes()).expect("parses");
    assert_eq!(
        modern.certificate_number.as_deref(),
        Some("00001000000510877575")
    );
    assert!(modern.seal.as_deref().is_some_and(|s| s.len() > 100));
    let stamp = modern.stamp.expect("stamped");
    assert_eq!(
        stamp.sat_certificate_number.as_deref(),
        Some("00001000000708361114")
    );
    assert!(stamp
        .sat_seal
        .as_deref()
        .is_some_and(|s| s.starts_with("tJNXo2HSCL/I4CAPgVHm")));

    let legacy = Cfdi::parse(&super::read("cfdi32-ingreso-real-legacy-tfd10.xml")).expect("parses");
    assert_eq!(
        legacy.certificate_number.as_deref(),
        Some("00001000000403543235")
    );
    assert!(legacy.seal.is_some());
    let stamp = legacy.stamp.expect("stamped");
    assert_eq!(
        stamp.sat_certificate_number.as_deref(),
        Some("00001000000404477432")
    );
    assert!(stamp
        .sat_seal
        .as_deref()
        .is_some_and(|s| s.starts_with("bQcopGo0H9dpnwKWRjZU")));
}

#[test]
fn concept_taxes_are_read_with_kind_factor_rate_base_and_amount() {
    use crate::cfdi::TaxKind::{Transferred, Withheld};
    let taxes = |file: &str| -> Vec<Vec<(crate::cfdi::TaxKind, String, String)>> {
        let cfdi = Cfdi::parse(&super::read(file)).expect("parses");
        cfdi.items
            .iter()
            .map(|item| {
                item.taxes
                    .iter()
                    .map(|t| {
                        let d = |v: Option<crate::cfdi::Decimal>| {
                            v.map_or("-".to_string(), |d| d.to_string())
                        };
                        let factor = t.factor.clone().unwrap_or_default();
                        let text = format!("{factor} {} {} {}", d(t.rate), d(t.base), d(t.amount));
                        (t.kind, t.tax.clone(), text)
                    })
                    .collect()
            })
            .collect()
    };
    let s = |v: &str| v.to_string();
    assert_eq!(
        taxes("cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"),
        vec![vec![
            (Transferred, s("002"), s("Tasa 0.160000 1250.30 200.05")),
            (Withheld, s("001"), s("Tasa 0.100000 1250.30 125.03")),
            (Withheld, s("002"), s("Tasa 0.106667 1250.30 133.37")),
        ]]
    );
    assert_eq!(
        taxes("cfdi33-ingreso-ppd-multiples-tasas-tfd.xml"),
        vec![
            vec![(Transferred, s("002"), s("Exento - 100.00 -"))],
            vec![(Transferred, s("002"), s("Tasa 0.000000 100.00 0.00"))],
            vec![(Transferred, s("002"), s("Tasa 0.160000 86.21 13.79"))],
        ]
    );
    // CFDI 3.2 has no concept taxes.
    assert!(taxes("cfdi32-ingreso-real-legacy-tfd10.xml")
        .iter()
        .all(Vec::is_empty));
    // A tax decimal that does not parse is None; the document still reads.
    let text = edit(
        &read_text("cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"),
        "TasaOCuota=\"0.160000\" Importe=\"200.05\"",
        "TasaOCuota=\"16%\" Importe=\"200.05\"",
    );
    let cfdi = parse_text(&text).expect("parses");
    assert_eq!(cfdi.items[0].taxes[0].rate, None);
    assert_eq!(
        cfdi.items[0].taxes[0].amount.map(|d| d.to_string()),
        Some(s("200.05"))
    );
}

#[test]
fn fecha_must_be_a_date_and_time_with_a_four_digit_year() {
    let original = read_text(REAL_40);
    let fecha = original
        .split("Fecha=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the sample has a Fecha");
    for bad in [
        "mañana",
        "2026-02-30T10:00:00",
        "+10000-01-01T00:00:00",
        "2026-01-31",
        "",
    ] {
        let text = edit(
            &original,
            &format!("Fecha=\"{fecha}\""),
            &format!("Fecha=\"{bad}\""),
        );
        assert!(
            matches!(
                parse_text(&text),
                Err(CfdiError::Invalid { field: "Fecha", .. })
            ),
            "{bad:?} was accepted"
        );
    }
    for good in [
        "2026-01-31T18:00:00",
        " 2026-01-31T18:00:00.123 ",
        "2026-01-31T18:00:00-06:00",
    ] {
        let text = edit(
            &original,
            &format!("Fecha=\"{fecha}\""),
            &format!("Fecha=\"{good}\""),
        );
        let cfdi = parse_text(&text).expect("a date and time");
        assert_eq!(cfdi.issued_at, good.trim());
    }
}
