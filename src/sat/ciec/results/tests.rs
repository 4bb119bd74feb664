//! Results-table parsing against the recorded portal pages and constructed variants.

use super::*;
use rust_decimal::Decimal;

const RECORDED: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sat-portal-pages/"
);

fn recorded(name: &str) -> String {
    let bytes = std::fs::read(format!("{RECORDED}{name}")).expect("recorded page");
    super::super::html::decode(&bytes)
}

fn portal() -> Url {
    Url::parse("https://portalcfdi.facturaelectronica.sat.gob.mx/").expect("url")
}

fn uuids(table: &Table) -> Vec<String> {
    table.rows.iter().map(|r| r.metadata.uuid.clone()).collect()
}

#[test]
fn the_recorded_search_answer_yields_its_rows_with_links() {
    let table = parse(
        &recorded("sample-to-extract-metadata-one-cfdi.html"),
        &portal(),
    )
    .expect("a results table");
    assert!(
        table.unknown_captions.is_empty(),
        "{:?}",
        table.unknown_captions
    );
    assert!(
        table.missing_captions.is_empty(),
        "{:?}",
        table.missing_captions
    );

    let current = table
        .rows
        .iter()
        .find(|r| r.metadata.uuid == "B97262E5-704C-4BF7-AE26-9174FEF04D63")
        .expect("the vigente row");
    assert_eq!(
        current.metadata,
        Metadata {
            uuid: "B97262E5-704C-4BF7-AE26-9174FEF04D63".into(),
            issuer_tax_id: "BSM970519DU8".into(),
            issuer_name: Some(
                "BANCO SANTANDER MEXICO, SA INSTITUCION DE BANCA MULTIPLE, GRUPO FINANCIERO SANTANDER MEXICO"
                    .into()
            ),
            receiver_tax_id: "AUAC920422D38".into(),
            receiver_name: Some("CESAR RENE AGUILERA ARREOLA".into()),
            issued_at: Some("2019-03-31T02:04:46".into()),
            certified_at: Some("2019-03-31T02:05:15".into()),
            total: Some(Decimal::ZERO),
            invoice_type: Some("I".into()),
            cancelled: false,
            cancelled_at: None,
        }
    );
    // The exact links the facts' scraper expects from this page (its own unit test).
    let xml = current.xml_url.as_ref().expect("xml link").as_str();
    assert!(xml.starts_with(
        "https://portalcfdi.facturaelectronica.sat.gob.mx/RecuperaCfdi.aspx?Datos=M1peaCnvSPWnQLHcYL1G+TfX+fycHbwuKHo7GloSoS6fq"
    ), "{xml}");
    assert!(xml.ends_with("AdaV0lTblkDJbw6pZWKY="), "{xml}");
    let pdf = current.pdf_url.as_ref().expect("pdf link").as_str();
    assert!(pdf.starts_with(
        "https://portalcfdi.facturaelectronica.sat.gob.mx/RepresentacionImpresa.aspx?Datos=ckC1j1jyuAA7FvuHrPbmWdDyv3G5UNPVexVxQEf7A77aTR/+k9TaZYH2gJML"
    ), "{pdf}");
    assert!(pdf.ends_with("V1iV2k2KWFAErpA="), "{pdf}");

    let cancelled = table
        .rows
        .iter()
        .find(|r| r.metadata.uuid == "1271B699-21D3-4569-9CD7-F22BD99ED395")
        .expect("the cancelled row");
    assert!(cancelled.metadata.cancelled);
    assert_eq!(cancelled.metadata.invoice_type.as_deref(), Some("N"));
    assert_eq!(cancelled.metadata.total, Some(Decimal::new(1_407_500, 2)));
    assert_eq!(
        cancelled.metadata.issuer_name.as_deref(),
        Some("XXXX & XXX SC")
    );
    assert_eq!(
        cancelled.metadata.cancelled_at.as_deref(),
        Some("2020-12-21T11:49:40")
    );
    assert!(cancelled.xml_url.is_some() && cancelled.pdf_url.is_some());
    assert_eq!(table.rows.len(), table.row_count);
}

#[test]
fn the_recorded_empty_search_answer_has_a_table_and_no_rows() {
    let table = parse(
        &recorded("sample-to-extract-metadata-zero-cfdi.html"),
        &portal(),
    )
    .expect("a results table");
    assert_eq!((table.rows.len(), table.row_count), (0, 0));
}

#[test]
fn the_trimmed_pages_give_zero_one_and_ten_rows_without_links() {
    let zero = parse(
        &recorded("fake-to-extract-metadata-zero-cfdi.html"),
        &portal(),
    )
    .expect("table");
    assert!(zero.rows.is_empty());
    let one = parse(
        &recorded("fake-to-extract-metadata-one-cfdi.html"),
        &portal(),
    )
    .expect("table");
    assert_eq!(uuids(&one), ["B97262E5-704C-4BF7-AE26-9174FEF04D63"]);
    assert_eq!(
        (one.rows[0].xml_url.as_ref(), one.rows[0].pdf_url.as_ref()),
        (None, None)
    );
    let ten = parse(
        &recorded("fake-to-extract-metadata-ten-cfdi.html"),
        &portal(),
    )
    .expect("table");
    let expected: Vec<String> = (1..=10)
        .map(|i| format!("B97262E5-704C-4BF7-AE26-{i:012}"))
        .collect();
    assert_eq!(uuids(&ten), expected);
    assert_eq!(ten.row_count, 10);
}

#[test]
fn rows_without_a_uuid_are_skipped_but_counted_for_the_cap() {
    let table = parse(
        &recorded("fake-to-extract-metadata-missing-uuid.html"),
        &portal(),
    )
    .expect("table");
    assert_eq!(
        uuids(&table),
        [
            "B97262E5-704C-4BF7-AE26-000000000001",
            "B97262E5-704C-4BF7-AE26-000000000002"
        ]
    );
    assert_eq!(table.row_count, 3);
}

/// A table the SAT might serve tomorrow: columns reordered, a caption renamed back to its
/// old wording, different case and accents, an extra column, and "Fecha de Cancelación"
/// gone.
const RESHUFFLED: &str = r#"<table id="ctl00_MainContent_tblResult"><tbody>
<tr><th>Total</th><th>ESTADO DEL COMPROBANTE</th><th>Columna Nueva</th><th>RFC Receptor</th>
<th>Folio   Fiscal</th><th>Efecto del comprobante</th><th>RFC Emisor</th>
<th>Fecha de Emision</th><th>Fecha de Proceso de Cancelación</th></tr>
<tr><td>$1,234,567.89</td><td>Cancelado</td><td>x</td><td>xaxx010101000</td>
<td>a1b2c3d4-0000-4000-8000-000000000001</td><td>Pago</td><td>AAA010101AAA</td>
<td>2024-02-29 23:59:59</td><td></td></tr>
</tbody></table>"#;

#[test]
fn captions_map_by_name_whatever_their_order_case_and_accents() {
    let table = parse(RESHUFFLED, &portal()).expect("table");
    assert_eq!(table.unknown_captions, ["Columna Nueva"]);
    assert!(table.missing_captions.contains(&"Fecha de Cancelación"));
    assert!(table
        .missing_captions
        .contains(&"Nombre o Razón Social del Emisor"));
    let m = &table.rows[0].metadata;
    assert_eq!(m.uuid, "A1B2C3D4-0000-4000-8000-000000000001");
    assert_eq!(m.issuer_tax_id, "AAA010101AAA");
    assert_eq!(m.receiver_tax_id, "XAXX010101000");
    assert_eq!(m.total, Some(Decimal::new(123_456_789, 2)));
    assert_eq!(m.invoice_type.as_deref(), Some("P"));
    assert!(m.cancelled);
    assert_eq!(m.cancelled_at, None);
    assert_eq!(m.issued_at.as_deref(), Some("2024-02-29T23:59:59"));
    assert_eq!(
        (m.issuer_name.as_ref(), m.certified_at.as_ref()),
        (None, None)
    );
}

#[test]
fn a_table_without_the_required_columns_or_no_table_is_an_error() {
    let no_uuid = RESHUFFLED.replace("Folio   Fiscal", "Identificador");
    assert_eq!(
        parse(&no_uuid, &portal()).err(),
        Some(TableError::MissingColumns(vec!["Folio Fiscal"]))
    );
    assert_eq!(
        parse("<html><body><p>Mantenimiento</p></body></html>", &portal()).err(),
        Some(TableError::NoTable)
    );
    let empty = r#"<table id="ctl00_MainContent_tblResult"></table>"#;
    assert!(matches!(
        parse(empty, &portal()),
        Err(TableError::MissingColumns(_))
    ));
}

#[test]
fn totals_parse_as_exact_decimals() {
    assert_eq!(parse_total("$390.63"), Some(Decimal::new(39063, 2)));
    assert_eq!(parse_total("$0.00"), Some(Decimal::ZERO));
    assert_eq!(parse_total("$1,234.56"), Some(Decimal::new(123_456, 2)));
    assert_eq!(
        parse_total(" $ 14,075.00 "),
        Some(Decimal::new(1_407_500, 2))
    );
    assert_eq!(parse_total("-$5.10"), Some(Decimal::new(-510, 2)));
    assert_eq!(parse_total("$0.000001"), Some(Decimal::new(1, 6)));
    assert_eq!(parse_total(""), None);
    assert_eq!(parse_total("N/A"), None);
}

#[test]
fn effects_map_to_invoice_type_letters() {
    for (effect, letter) in [
        ("Ingreso", "I"),
        ("Egreso", "E"),
        ("Traslado", "T"),
        ("Nómina", "N"),
        ("NOMINA", "N"),
        ("Pago", "P"),
    ] {
        assert_eq!(invoice_type(effect), Some(letter), "{effect}");
    }
    assert_eq!(invoice_type("Retención"), None);
}

#[test]
fn dates_become_local_time_text() {
    assert_eq!(
        local_time("2019-01-02T04:37:21").as_deref(),
        Some("2019-01-02T04:37:21")
    );
    assert_eq!(
        local_time("2019-01-02T04:37:21.123").as_deref(),
        Some("2019-01-02T04:37:21")
    );
    assert_eq!(
        local_time("21/12/2020 11:49:40").as_deref(),
        Some("2020-12-21T11:49:40")
    );
    assert_eq!(local_time(" "), None);
    assert_eq!(local_time("mañana"), None);
}
