//! Tests against the shared sample set (the facts of EXPECTED.md) and
//! against hostile or broken inputs.

mod expected;
mod rules;

use super::*;

const SAMPLES_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cfdi-samples/");

const EMPTY_FILE: &str = "edge-empty-file.xml";
const DIRTY_32: &str = "edge-cfdi32-dirty-no-attributes-tfd-without-uuid.xml";
const REAL_40: &str = "cfdi40-ingreso-pue-real-tfd.xml";

/// Expected header facts of one sample file.
pub(super) struct Sample {
    file: &'static str,
    tfd: Option<Tfd>,
    version: Version,
    invoice_type: InvoiceType,
    series: Option<&'static str>,
    folio: Option<&'static str>,
    issued_at: &'static str,
    /// (Rfc, Nombre)
    issuer: (&'static str, Option<&'static str>),
    receiver: (&'static str, Option<&'static str>),
    currency: Option<&'static str>,
    exchange_rate: Option<&'static str>,
    subtotal: &'static str,
    discount: Option<&'static str>,
    total: &'static str,
    payment_method: Option<&'static str>,
    payment_form: Option<&'static str>,
    /// (TipoRelacion, UUID)
    related: &'static [(Option<&'static str>, &'static str)],
    payments: &'static [Pago],
}

pub(super) struct Tfd {
    uuid: Option<&'static str>,
    version: Option<&'static str>,
    certified_at: Option<&'static str>,
    provider: Option<&'static str>,
}

pub(super) struct Pago {
    paid_at: &'static str,
    form: Option<&'static str>,
    currency: &'static str,
    rate: Option<&'static str>,
    amount: &'static str,
    docs: &'static [Dr],
}

/// One DoctoRelacionado row of an EXPECTED.md table.
pub(super) struct Dr {
    uuid: Option<&'static str>,
    series: Option<&'static str>,
    folio: Option<&'static str>,
    currency: Option<&'static str>,
    equivalence: Option<&'static str>,
    method: Option<&'static str>,
    installment: Option<u32>,
    previous: Option<&'static str>,
    paid: Option<&'static str>,
    outstanding: Option<&'static str>,
}

/// Positional constructor so that each table row fits on one line.
#[allow(clippy::too_many_arguments)]
pub(super) const fn dr(
    uuid: Option<&'static str>,
    series: Option<&'static str>,
    folio: Option<&'static str>,
    currency: Option<&'static str>,
    equivalence: Option<&'static str>,
    method: Option<&'static str>,
    installment: Option<u32>,
    previous: Option<&'static str>,
    paid: Option<&'static str>,
    outstanding: Option<&'static str>,
) -> Dr {
    Dr {
        uuid,
        series,
        folio,
        currency,
        equivalence,
        method,
        installment,
        previous,
        paid,
        outstanding,
    }
}

fn read(file: &str) -> Vec<u8> {
    let path = format!("{SAMPLES_DIR}{file}");
    std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

fn read_text(file: &str) -> String {
    String::from_utf8(read(file)).expect("sample is UTF-8")
}

fn parse_file(file: &str) -> Cfdi {
    Cfdi::parse(&read(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn parse_text(text: &str) -> Result<Cfdi, CfdiError> {
    Cfdi::parse(text.as_bytes())
}

/// Decimals are compared through Display, which keeps the written scale.
fn text(value: Option<Decimal>) -> Option<String> {
    value.map(|d| d.to_string())
}

fn owned(value: Option<&str>) -> Option<String> {
    value.map(str::to_owned)
}

/// `text` with the first occurrence of `from` replaced, asserting it exists.
fn edit(text: &str, from: &str, to: &str) -> String {
    assert!(text.contains(from), "{from:?} not in sample");
    text.replacen(from, to, 1)
}

// ---------------------------------------------------------------------------
// EXPECTED.md facts, file by file
// ---------------------------------------------------------------------------

#[test]
fn every_sample_file_is_covered() {
    let mut files: Vec<String> = std::fs::read_dir(SAMPLES_DIR)
        .expect("samples dir")
        .filter_map(|entry| entry.ok())
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".xml"))
        .collect();
    files.sort();
    let covered = |name: &String| {
        name == EMPTY_FILE || name == DIRTY_32 || expected::SAMPLES.iter().any(|s| s.file == name)
    };
    let uncovered: Vec<&String> = files.iter().filter(|f| !covered(f)).collect();
    assert!(uncovered.is_empty(), "no expectations for {uncovered:?}");
    assert_eq!(files.len(), expected::SAMPLES.len() + 2);
}

#[test]
fn samples_match_expected_facts() {
    for sample in expected::SAMPLES {
        check_sample(sample);
    }
}

fn check_sample(s: &Sample) {
    let f = s.file;
    let cfdi = parse_file(f);
    assert_eq!(cfdi.version, s.version, "{f}: version");
    assert_eq!(cfdi.invoice_type, s.invoice_type, "{f}: type");
    assert_eq!(cfdi.series, owned(s.series), "{f}: series");
    assert_eq!(cfdi.folio, owned(s.folio), "{f}: folio");
    assert_eq!(cfdi.issued_at, s.issued_at, "{f}: fecha");
    assert_eq!(cfdi.issuer.tax_id, s.issuer.0, "{f}: emisor rfc");
    assert_eq!(cfdi.issuer.name, owned(s.issuer.1), "{f}: emisor nombre");
    assert_eq!(cfdi.receiver.tax_id, s.receiver.0, "{f}: receptor rfc");
    assert_eq!(
        cfdi.receiver.name,
        owned(s.receiver.1),
        "{f}: receptor nombre"
    );
    assert_eq!(cfdi.currency, owned(s.currency), "{f}: moneda");
    assert_eq!(
        text(cfdi.exchange_rate),
        owned(s.exchange_rate),
        "{f}: tipo cambio"
    );
    assert_eq!(cfdi.subtotal.to_string(), s.subtotal, "{f}: subtotal");
    assert_eq!(text(cfdi.discount), owned(s.discount), "{f}: descuento");
    assert_eq!(cfdi.total.to_string(), s.total, "{f}: total");
    assert_eq!(cfdi.payment_method, owned(s.payment_method), "{f}: metodo");
    assert_eq!(cfdi.payment_form, owned(s.payment_form), "{f}: forma");
    let related: Vec<(Option<&str>, &str)> = cfdi
        .related
        .iter()
        .map(|r| (r.relation_type.as_deref(), r.uuid.as_str()))
        .collect();
    assert_eq!(related, s.related, "{f}: related");
    check_stamp(f, &cfdi, s.tfd.as_ref());
    check_payments(f, &cfdi.payments, s.payments);
}

fn check_stamp(f: &str, cfdi: &Cfdi, expected: Option<&Tfd>) {
    let Some(tfd) = expected else {
        assert_eq!(cfdi.stamp, None, "{f}: stamp");
        assert_eq!(cfdi.uuid(), Err(CfdiError::Unstamped), "{f}: uuid()");
        return;
    };
    let stamp = cfdi.stamp.as_ref().expect("stamp");
    assert_eq!(stamp.uuid.as_deref(), tfd.uuid, "{f}: uuid");
    assert_eq!(stamp.version.as_deref(), tfd.version, "{f}: tfd version");
    assert_eq!(
        stamp.certified_at.as_deref(),
        tfd.certified_at,
        "{f}: fecha timbrado"
    );
    assert_eq!(
        stamp.provider_tax_id.as_deref(),
        tfd.provider,
        "{f}: rfc prov"
    );
    match tfd.uuid {
        Some(uuid) => assert_eq!(cfdi.uuid(), Ok(uuid), "{f}: uuid()"),
        None => assert_eq!(cfdi.uuid(), Err(CfdiError::Unstamped), "{f}: uuid()"),
    }
}

fn check_payments(f: &str, actual: &[Payment], expected: &[Pago]) {
    assert_eq!(actual.len(), expected.len(), "{f}: number of Pago");
    for (n, (payment, pago)) in actual.iter().zip(expected).enumerate() {
        let at = format!("{f}: Pago #{}", n + 1);
        assert_eq!(payment.paid_at, pago.paid_at, "{at}: FechaPago");
        assert_eq!(payment.payment_form, owned(pago.form), "{at}: FormaDePagoP");
        assert_eq!(payment.currency, pago.currency, "{at}: MonedaP");
        assert_eq!(
            text(payment.exchange_rate),
            owned(pago.rate),
            "{at}: TipoCambioP"
        );
        assert_eq!(payment.amount.to_string(), pago.amount, "{at}: Monto");
        assert_eq!(
            payment.related_documents.len(),
            pago.docs.len(),
            "{at}: number of DoctoRelacionado"
        );
        for (i, (doc, want)) in payment.related_documents.iter().zip(pago.docs).enumerate() {
            check_doc(&format!("{at}, DR #{}", i + 1), doc, want);
        }
    }
}

fn check_doc(at: &str, doc: &RelatedDocument, want: &Dr) {
    assert_eq!(doc.uuid.as_deref(), want.uuid, "{at}: IdDocumento");
    assert_eq!(doc.series.as_deref(), want.series, "{at}: Serie");
    assert_eq!(doc.folio.as_deref(), want.folio, "{at}: Folio");
    assert_eq!(doc.currency.as_deref(), want.currency, "{at}: MonedaDR");
    assert_eq!(
        text(doc.equivalence),
        owned(want.equivalence),
        "{at}: equivalence"
    );
    assert_eq!(
        doc.payment_method.as_deref(),
        want.method,
        "{at}: MetodoDePagoDR"
    );
    assert_eq!(doc.installment, want.installment, "{at}: NumParcialidad");
    assert_eq!(
        text(doc.previous_balance),
        owned(want.previous),
        "{at}: ImpSaldoAnt"
    );
    assert_eq!(text(doc.amount_paid), owned(want.paid), "{at}: ImpPagado");
    assert_eq!(
        text(doc.outstanding_balance),
        owned(want.outstanding),
        "{at}: ImpSaldoInsoluto"
    );
}

#[test]
fn stamped_samples_pass_parse_stamped_and_unstamped_ones_do_not() {
    for sample in expected::SAMPLES {
        let bytes = read(sample.file);
        let stamped = Cfdi::parse_stamped(&bytes);
        match sample.tfd.as_ref().and_then(|t| t.uuid) {
            Some(uuid) => {
                let cfdi = stamped.unwrap_or_else(|e| panic!("{}: {e}", sample.file));
                assert_eq!(cfdi.uuid(), Ok(uuid));
                assert_eq!(Ok(cfdi), Cfdi::parse(&bytes));
            }
            None => assert_eq!(stamped, Err(CfdiError::Unstamped), "{}", sample.file),
        }
    }
}

#[test]
fn dirty_32_skeleton_is_missing_required_data() {
    let result = Cfdi::parse(&read(DIRTY_32));
    assert!(matches!(result, Err(CfdiError::Missing(_))), "{result:?}");
    assert!(matches!(
        Cfdi::parse_stamped(&read(DIRTY_32)),
        Err(CfdiError::Missing(_))
    ));
}

#[test]
fn empty_inputs_are_empty() {
    assert_eq!(Cfdi::parse(&read(EMPTY_FILE)), Err(CfdiError::Empty));
    assert_eq!(Cfdi::parse(b""), Err(CfdiError::Empty));
    assert_eq!(Cfdi::parse(b"\xEF\xBB\xBF"), Err(CfdiError::Empty));
    assert_eq!(Cfdi::parse(b" \r\n\t"), Err(CfdiError::Empty));
    assert_eq!(Cfdi::parse_stamped(b""), Err(CfdiError::Empty));
}

// ---------------------------------------------------------------------------
// Details not in the EXPECTED.md header tables, checked against the XML
// ---------------------------------------------------------------------------

#[test]
fn cfdi32_legacy_details() {
    let cfdi = parse_file("cfdi32-ingreso-real-legacy-tfd10.xml");
    assert_eq!(
        cfdi.issuer.regime.as_deref(),
        Some("Regimen General de Ley Persona Moral")
    );
    assert_eq!(cfdi.receiver.regime, None);
    assert_eq!(cfdi.receiver.cfdi_use, None);
    assert_eq!(text(cfdi.taxes_transferred).as_deref(), Some("646.21"));
    assert_eq!(cfdi.taxes_withheld, None);
    assert_eq!(cfdi.items.len(), 7);
    let first = &cfdi.items[0];
    // noIdentificacion is the seller's code, not a SAT product key.
    assert_eq!(first.product_code, None);
    assert_eq!(first.description, "ACEITE");
    assert_eq!(first.quantity.to_string(), "5");
    assert_eq!(first.unit.as_deref(), Some("PIEZA"));
    assert_eq!(first.unit_price.to_string(), "61.86");
    assert_eq!(first.discount, None);
    assert_eq!(first.amount.to_string(), "309.30");
    assert!(cfdi.payments.is_empty());

    let special = parse_file("cfdi32-ingreso-tfd11-special-chars-rfc.xml");
    assert_eq!(text(special.taxes_withheld).as_deref(), Some("0.00"));
    assert_eq!(text(special.taxes_transferred).as_deref(), Some("5600.00"));
    assert_eq!(
        special.items[0].description,
        "Módulo de embarque serie A-6743-Ñ"
    );
    assert_eq!(special.items[0].unit.as_deref(), Some("LTE"));
    assert_eq!(special.items[0].product_code, None);
}

#[test]
fn cfdi40_details() {
    let cfdi = parse_file("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml");
    assert_eq!(cfdi.issuer.regime.as_deref(), Some("606"));
    assert_eq!(cfdi.issuer.cfdi_use, None);
    assert_eq!(cfdi.receiver.cfdi_use.as_deref(), Some("G03"));
    // 4.0 states the receiver's regime and tax address (RegimenFiscalReceptor,
    // DomicilioFiscalReceptor); the issuer has no postal code of its own.
    assert_eq!(cfdi.receiver.regime.as_deref(), Some("601"));
    assert_eq!(cfdi.receiver.postal_code.as_deref(), Some("59820"));
    assert_eq!(cfdi.issuer.postal_code, None);
    assert_eq!(text(cfdi.taxes_transferred).as_deref(), Some("2462.45"));
    let item = &cfdi.items[0];
    assert_eq!(item.product_code.as_deref(), Some("80131502"));
    assert_eq!(item.unit.as_deref(), Some("E48"));
    assert_eq!(item.quantity.to_string(), "1.00");
    assert_eq!(item.amount.to_string(), "15390.30");

    let nomina = parse_file("cfdi40-nomina-tfd-zero-uuid.xml");
    assert_eq!(text(nomina.items[0].discount).as_deref(), Some("741.10"));

    let retenciones = parse_file("cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml");
    assert_eq!(text(retenciones.taxes_withheld).as_deref(), Some("258.40"));
}

#[test]
fn cfdi33_details() {
    let cfdi = parse_file("cfdi33-ingreso-pue-detallista-tfd.xml");
    assert_eq!(cfdi.issuer.name, None);
    assert_eq!(cfdi.total.to_string(), "6.9");
    assert_eq!(cfdi.total.scale(), 1);
    let integers = parse_file("cfdi33-ingreso-pue-tfd-leading-comment.xml");
    assert_eq!(integers.total.scale(), 0);
    assert_eq!(integers.receiver.cfdi_use.as_deref(), Some("G01"));
}

#[test]
fn egreso_relates_to_its_invoice() {
    let cfdi = parse_file("cfdi40-egreso-nota-credito-unstamped.xml");
    assert_eq!(cfdi.invoice_type, InvoiceType::E);
    assert_eq!(
        cfdi.related,
        vec![Related {
            relation_type: Some("01".into()),
            uuid: "1FAC4464-1111-0000-1111-CD37179DB12E".into(),
        }]
    );
    assert_eq!(cfdi.items.len(), 2);
    assert_eq!(cfdi.items[1].unit_price.to_string(), "0.0087");
}

#[test]
fn duplicate_doctos_are_kept_verbatim() {
    let cfdi = parse_file("cfdi33-pago10-duplicate-docto-bom.xml");
    let docs = &cfdi.payments[0].related_documents;
    assert_eq!(docs.len(), 2);
    assert_eq!(docs[0], docs[1]);
}

#[test]
fn pagos_20_doctos_carry_their_own_taxes_and_pagos_10_none() {
    let cfdi = parse_file("cfdi40-pago20-tfd-full-payment-of-ppd.xml");
    let taxes = &cfdi.payments[0].related_documents[0].taxes;
    assert_eq!(
        taxes,
        &vec![ItemTax {
            kind: TaxKind::Transferred,
            tax: "002".into(),
            factor: Some("Tasa".into()),
            rate: Some("0.160000".parse().expect("decimal")),
            base: Some("15390.30".parse().expect("decimal")),
            amount: Some("2462.45".parse().expect("decimal")),
        }]
    );
    let withheld = parse_file("cfdi40-pago20-two-pagos-retenciones.xml");
    let kinds: Vec<TaxKind> = withheld
        .payments
        .iter()
        .flat_map(|p| &p.related_documents)
        .flat_map(|d| &d.taxes)
        .map(|t| t.kind)
        .collect();
    assert!(kinds.contains(&TaxKind::Withheld), "{kinds:?}");
    let v10 = parse_file("cfdi33-pago10-partial-single-docto.xml");
    assert!(v10.payments[0].related_documents[0].taxes.is_empty());
}

// ---------------------------------------------------------------------------
// Structure: namespaces, prefixes, placement
// ---------------------------------------------------------------------------

#[test]
fn prefixes_do_not_matter() {
    let original = read_text("cfdi40-pago20-tfd-full-payment-of-ppd.xml");
    let renamed = original
        .replace("cfdi:", "c:")
        .replace("xmlns:cfdi=", "xmlns:c=")
        .replace("pago20:", "p:")
        .replace("xmlns:pago20=", "xmlns:p=")
        .replace("tfd:", "t:")
        .replace("xmlns:tfd=", "xmlns:t=");
    assert_ne!(original, renamed);
    assert_eq!(parse_text(&renamed), parse_text(&original));
}

#[test]
fn default_namespace_works() {
    let original = read_text(REAL_40);
    let unprefixed = original
        .replace("cfdi:", "")
        .replace("xmlns:cfdi=", "xmlns=");
    assert_eq!(parse_text(&unprefixed), parse_text(&original));
}

#[test]
fn wrong_namespace_elements_are_ignored() {
    // A TFD look-alike in a foreign namespace must not be taken as the stamp.
    let doc = edit(
        &read_text("cfdi40-egreso-nota-credito-unstamped.xml"),
        "</cfdi:Comprobante>",
        r#"<cfdi:Complemento><x:TimbreFiscalDigital xmlns:x="urn:fake" UUID="abc"/></cfdi:Complemento></cfdi:Comprobante>"#,
    );
    assert_eq!(parse_text(&doc).map(|c| c.stamp), Ok(None));
}

#[test]
fn tfd_is_found_when_nested_and_not_last() {
    let doc = edit(
        &read_text("cfdi40-egreso-nota-credito-unstamped.xml"),
        "</cfdi:Comprobante>",
        concat!(
            r#"<cfdi:Complemento><w:Wrapper xmlns:w="urn:w">"#,
            r#"<tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital" Version="1.1" UUID=" 6d7434a6-e3f2-47ad-9e4c-08849946afa0 "/>"#,
            r#"</w:Wrapper><w:Other xmlns:w="urn:w"/></cfdi:Complemento></cfdi:Comprobante>"#
        ),
    );
    let cfdi = parse_text(&doc).expect("parses");
    assert_eq!(cfdi.uuid(), Ok("6D7434A6-E3F2-47AD-9E4C-08849946AFA0"));
}

#[test]
fn several_pagos_complements_are_all_read() {
    let original = read_text("cfdi40-pago20-two-pagos-retenciones.xml");
    let start = original.find("<pago20:Pagos").expect("Pagos start");
    let end_tag = "</pago20:Pagos>";
    let end = original.find(end_tag).expect("Pagos end") + end_tag.len();
    let pagos = &original[start..end];
    let doubled = edit(
        &original,
        "</cfdi:Complemento>",
        &format!("{pagos}</cfdi:Complemento>"),
    );
    let once = parse_text(&original).expect("parses");
    let twice = parse_text(&doubled).expect("parses");
    assert_eq!(once.payments.len(), 2);
    assert_eq!(twice.payments.len(), 4);
    assert_eq!(twice.payments[..2], twice.payments[2..]);
}

#[test]
fn pagos_on_a_non_payment_document_are_ignored() {
    let original = read_text("cfdi40-pago20-two-pagos-retenciones.xml");
    let as_income = edit(
        &original,
        r#"TipoDeComprobante="P""#,
        r#"TipoDeComprobante="I""#,
    );
    assert_eq!(parse_text(&as_income).map(|c| c.payments.len()), Ok(0));
}

#[test]
fn one_line_document_without_declaration_parses() {
    let doc = concat!(
        r#"<Comprobante xmlns="http://www.sat.gob.mx/cfd/4" Total="1.5" SubTotal="1.5" Fecha="2024-01-01T00:00:00" TipoDeComprobante="i" Version="4.0">"#,
        r#"<Receptor Rfc="XAXX010101000"/><Emisor Rfc="AAA010101AAA"/></Comprobante>"#
    );
    let cfdi = parse_text(doc).expect("parses");
    assert_eq!(cfdi.invoice_type, InvoiceType::I);
    assert_eq!(cfdi.issuer.tax_id, "AAA010101AAA");
    assert!(cfdi.items.is_empty());
    assert_eq!(cfdi.stamp, None);
}

// ---------------------------------------------------------------------------
// Errors
// ---------------------------------------------------------------------------

#[test]
fn missing_required_data_is_reported_by_name() {
    let original = read_text(REAL_40);
    let cases = [
        (r#"Version="4.0""#, "Version"),
        (r#"TipoDeComprobante="I""#, "TipoDeComprobante"),
        (r#"Fecha="2025-01-24T10:10:41""#, "Fecha"),
        (r#"SubTotal="862.07""#, "SubTotal"),
        (r#"Total="1000.00""#, "Total"),
        (r#"Rfc="ISD950921HE5""#, "Emisor@Rfc"),
        (r#"Rfc="COSC8001137NA""#, "Receptor@Rfc"),
        ("<cfdi:Emisor ", "Emisor"),
        ("<cfdi:Receptor ", "Receptor"),
        (r#"Descripcion="COMISION"#, "Concepto@Descripcion"),
        (r#"Cantidad="1.000000""#, "Concepto@Cantidad"),
        (r#"ValorUnitario="8.620690""#, "Concepto@ValorUnitario"),
        (r#"Importe="8.620690""#, "Concepto@Importe"),
    ];
    for (attr, name) in cases {
        // Renaming keeps the document well-formed while hiding the attribute or element.
        let hidden = if attr.starts_with('<') {
            edit(&original, attr, &attr.replace(':', ":X"))
        } else {
            edit(&original, attr, &format!("X{attr}"))
        };
        assert_eq!(parse_text(&hidden), Err(CfdiError::Missing(name)), "{attr}");
    }
}

#[test]
fn invalid_values_are_reported() {
    let original = read_text(REAL_40);
    let cases = [
        (
            r#"Total="1000.00""#,
            r#"Total="1,000.00""#,
            "Total",
            "1,000.00",
        ),
        (r#"Total="1000.00""#, r#"Total="""#, "Total", ""),
        (r#"Total="1000.00""#, r#"Total="1_000""#, "Total", "1_000"),
        (r#"Total="1000.00""#, r#"Total="1e3""#, "Total", "1e3"),
        (
            r#"SubTotal="862.07""#,
            r#"SubTotal="NaN""#,
            "SubTotal",
            "NaN",
        ),
        (
            r#"TipoCambio="1""#,
            r#"TipoCambio="uno""#,
            "TipoCambio",
            "uno",
        ),
        (
            r#"TipoDeComprobante="I""#,
            r#"TipoDeComprobante="X""#,
            "TipoDeComprobante",
            "X",
        ),
        (
            r#"Total="1000.00""#,
            r#"Total="123456789012345678901234567890""#,
            "Total",
            "123456789012345678901234567890",
        ),
    ];
    for (from, to, field, value) in cases {
        let broken = edit(&original, from, to);
        let want = CfdiError::Invalid {
            field,
            value: value.into(),
        };
        assert_eq!(parse_text(&broken), Err(want), "{to}");
    }
}

#[test]
fn invalid_payment_values_are_reported() {
    let original = read_text("cfdi33-pago10-partial-single-docto.xml");
    let broken = edit(
        &original,
        r#"NumParcialidad="1""#,
        r#"NumParcialidad="uno""#,
    );
    let want = CfdiError::Invalid {
        field: "DoctoRelacionado@NumParcialidad",
        value: "uno".into(),
    };
    assert_eq!(parse_text(&broken), Err(want));
    let no_amount = edit(&original, r#"Monto="380.00""#, r#"XMonto="380.00""#);
    assert_eq!(
        parse_text(&no_amount),
        Err(CfdiError::Missing("Pago@Monto"))
    );
}

#[test]
fn empty_optional_amounts_are_none() {
    let original = read_text(REAL_40);
    let blank_rate = edit(
        &original,
        r#"TipoCambio="1""#,
        r#"TipoCambio="" Descuento=" ""#,
    );
    let cfdi = parse_text(&blank_rate).expect("parses");
    assert_eq!(cfdi.exchange_rate, None);
    assert_eq!(cfdi.discount, None);
}

#[test]
fn decimal_forms() {
    use super::xml::parse_decimal;
    let ok = [
        "0",
        "6.9",
        "-1.50",
        "+2",
        ".5",
        "5.",
        " 7.25 ",
        "0.0563882216",
    ];
    for value in ok {
        assert!(parse_decimal(value).is_some(), "{value:?}");
    }
    let bad = [
        "", ".", "+", "-", "1_000", "1e3", "1,0", "1.2.3", "0x10", "∞", "12 3",
    ];
    for value in bad {
        assert_eq!(parse_decimal(value), None, "{value:?}");
    }
    assert_eq!(parse_decimal("2382870").map(|d| d.scale()), Some(0));
    assert_eq!(
        parse_decimal("1000.00").map(|d| d.to_string()).as_deref(),
        Some("1000.00")
    );
}

#[test]
fn truncated_documents_are_malformed() {
    let files = [
        REAL_40,
        "cfdi32-ingreso-real-legacy-tfd10.xml",
        "cfdi33-pago10-duplicate-docto-bom.xml",
        "cfdi40-pago20-43-usd-docs-mxn-payment-no-iddocumento.xml",
        "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
    ];
    for file in files {
        let bytes = read(file);
        let half = &bytes[..bytes.len() / 2];
        assert!(
            matches!(Cfdi::parse(half), Err(CfdiError::Malformed(_))),
            "{file}"
        );
    }
}

#[test]
fn truncation_at_every_97th_byte_never_panics() {
    for sample in expected::SAMPLES {
        let bytes = read(sample.file);
        // Cutting anywhere before the root's end tag must fail cleanly.
        let content_end = bytes
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .unwrap_or(0);
        for cut in (0..bytes.len()).step_by(97) {
            let result = Cfdi::parse(&bytes[..cut]);
            if cut <= content_end {
                assert!(
                    matches!(result, Err(CfdiError::Malformed(_) | CfdiError::Empty)),
                    "{} cut at {cut}: {result:?}",
                    sample.file
                );
            }
        }
    }
}

#[test]
fn corrupted_bytes_never_panic() {
    let bytes = read("cfdi40-pago20-multi-pago-mxn-and-usd.xml");
    for position in (0..bytes.len()).step_by(53) {
        for replacement in [b'<', b'"', b'&', 0xFF, b'0', b'x', 0] {
            let mut corrupted = bytes.clone();
            corrupted[position] = replacement;
            let _ = Cfdi::parse(&corrupted);
        }
    }
}

#[test]
fn garbage_and_invalid_utf8_are_malformed() {
    let cases: [&[u8]; 6] = [
        b"garbage",
        b"\x00\x01\x02\x03",
        b"\xFF\xFE<\x00?\x00x\x00m\x00l\x00",
        b"{\"json\": true}",
        b"<a><b></a>",
        b"<?xml version=\"1.0\"?>",
    ];
    for bytes in cases {
        let result = Cfdi::parse(bytes);
        assert!(
            matches!(result, Err(CfdiError::Malformed(_))),
            "{bytes:?}: {result:?}"
        );
    }
    // A valid sample with one invalid UTF-8 byte inside an attribute value.
    let mut bytes = read(REAL_40);
    let at = bytes.windows(4).position(|w| w == b"PASE").expect("name");
    bytes[at] = 0xC3;
    assert!(matches!(Cfdi::parse(&bytes), Err(CfdiError::Malformed(m)) if m.contains("UTF-8")));
}

#[test]
fn doctype_is_rejected_as_malformed() {
    let original = read_text(REAL_40);
    let with_dtd = edit(
        &original,
        "<cfdi:Comprobante",
        "<!DOCTYPE x [<!ENTITY a \"b\">]><cfdi:Comprobante",
    );
    assert!(matches!(
        parse_text(&with_dtd),
        Err(CfdiError::Malformed(_))
    ));
}

#[test]
fn non_cfdi_roots_are_rejected() {
    let cases = [
        ("<html><body/></html>", "html"),
        (
            r#"<Comprobante xmlns="http://example.com/cfd/4" Version="4.0"/>"#,
            "{http://example.com/cfd/4}Comprobante",
        ),
        (
            r#"<cfdi:Factura xmlns:cfdi="http://www.sat.gob.mx/cfd/4" Version="4.0"/>"#,
            "{http://www.sat.gob.mx/cfd/4}Factura",
        ),
        (
            r#"<retenciones:Retenciones xmlns:retenciones="http://www.sat.gob.mx/esquemas/retencionpago/2" Version="2.0"/>"#,
            "{http://www.sat.gob.mx/esquemas/retencionpago/2}Retenciones",
        ),
    ];
    for (doc, root) in cases {
        assert_eq!(
            parse_text(doc),
            Err(CfdiError::NotCfdi(root.into())),
            "{doc}"
        );
    }
}

#[test]
fn unknown_versions_are_unsupported() {
    let cases = [
        ("http://www.sat.gob.mx/cfd/4", r#"Version="5.0""#, "5.0"),
        ("http://www.sat.gob.mx/cfd/4", r#"Version="3.3""#, "3.3"),
        ("http://www.sat.gob.mx/cfd/3", r#"Version="4.0""#, "4.0"),
        ("http://www.sat.gob.mx/cfd/3", r#"version="2.2""#, "2.2"),
        ("http://www.sat.gob.mx/cfd/3", r#"Version="""#, ""),
    ];
    for (ns, version, value) in cases {
        let doc = format!(r#"<c:Comprobante xmlns:c="{ns}" {version}/>"#);
        assert_eq!(
            parse_text(&doc),
            Err(CfdiError::UnsupportedVersion(value.into())),
            "{doc}"
        );
    }
}

#[test]
fn enum_codes() {
    assert_eq!(Version::V32.as_str(), "3.2");
    assert_eq!(Version::V33.to_string(), "3.3");
    assert_eq!(Version::V40.as_str(), "4.0");
    for (code, kind) in [
        ("I", InvoiceType::I),
        ("ingreso", InvoiceType::I),
        ("INGRESO", InvoiceType::I),
        ("Egreso", InvoiceType::E),
        ("traslado", InvoiceType::T),
        ("n", InvoiceType::N),
        ("P", InvoiceType::P),
    ] {
        assert_eq!(InvoiceType::from_code(code), Some(kind), "{code}");
    }
    assert_eq!(InvoiceType::from_code("pago"), None);
    assert_eq!(InvoiceType::P.as_str(), "P");
}

#[test]
fn errors_display() {
    assert_eq!(CfdiError::Missing("Total").to_string(), "missing Total");
    let invalid = CfdiError::Invalid {
        field: "Total",
        value: "x".into(),
    };
    assert_eq!(invalid.to_string(), r#"invalid Total: "x""#);
    assert_eq!(
        CfdiError::UnsupportedVersion("5.0".into()).to_string(),
        r#"unsupported CFDI version "5.0""#
    );
}

#[test]
fn deeply_nested_unknown_elements_are_rejected_not_overflowing() {
    let depth = 100_000;
    let nested = format!("{}{}", "<x:a>".repeat(depth), "</x:a>".repeat(depth));
    let doc = edit(
        &read_text("cfdi40-pago20-two-pagos-retenciones.xml"),
        "<cfdi:Complemento>",
        &format!(r#"<cfdi:Complemento><x:w xmlns:x="urn:x">{nested}</x:w>"#),
    );
    let result = parse_text(&doc);
    assert!(
        matches!(&result, Err(CfdiError::OverLimit(m)) if m.contains("nested")),
        "{result:?}"
    );
    // Unclosed nesting (a truncated bomb) is caught the same way.
    let unclosed = format!("<a>{}", "<b x='>'>".repeat(depth));
    assert!(matches!(
        parse_text(&unclosed),
        Err(CfdiError::OverLimit(_))
    ));
}

#[test]
fn nesting_up_to_the_limit_is_accepted() {
    // The document's own depth plus the wrapper stays within the limit.
    let depth = limits::LIMITS.depth - 8;
    let nested = format!("{}{}", "<x:a>".repeat(depth), "</x:a>".repeat(depth));
    let doc = edit(
        &read_text("cfdi40-pago20-two-pagos-retenciones.xml"),
        "<cfdi:Complemento>",
        &format!(r#"<cfdi:Complemento><x:w xmlns:x="urn:x">{nested}</x:w>"#),
    );
    assert_eq!(parse_text(&doc).map(|c| c.payments.len()), Ok(2));
}

#[test]
fn depth_scan_over_estimates_but_is_not_fooled() {
    let limit = 3;
    let cases = [
        ("<a><b><c/></b></a>", false),
        ("<a><b><c><d/></c></b></a>", false),
        ("<a><b><c><d></d></c></b></a>", true),
        // Markup-like text inside comments, CDATA, PIs and attribute values is not nesting.
        (
            "<a><!-- <b><c><d> --><?pi <b><c><d> ?><![CDATA[<b><c><d>]]></a>",
            false,
        ),
        (r#"<a x="/>"><b y='>'><c/></b></a>"#, false),
        // Siblings do not add up.
        ("<a><b/><b/><b/><b/><b></b><b></b></a>", false),
        // A stray '<' inside a tag counts as another level.
        ("<a><b x='<c><d>'>", true),
        // Unterminated constructs stop the scan.
        ("<a><!-- <b><c><d>", false),
        ("", false),
    ];
    for (text, deeper) in cases {
        let limits = limits::Limits {
            depth: limit,
            ..limits::LIMITS
        };
        assert_eq!(limits::scan(text, &limits).is_err(), deeper, "{text}");
    }
}

#[test]
fn printed_only_fields_are_read_from_the_xml() {
    let cfdi = parse_file("cfdi40-pago20-two-pagos-retenciones.xml");
    assert_eq!(cfdi.place_of_issue.as_deref(), Some("77516"));
    assert_eq!(cfdi.export.as_deref(), Some("01"));
    assert_eq!(cfdi.items[0].tax_object.as_deref(), Some("01"));
    let totals = cfdi.payment_totals.as_ref().expect("Totales");
    assert_eq!(text(totals.total_paid).as_deref(), Some("16386.33"));
    assert_eq!(text(totals.withheld_isr).as_deref(), Some("242.70"));
    assert_eq!(text(totals.withheld_iva).as_deref(), Some("258.96"));
    assert_eq!(text(totals.base_iva16).as_deref(), Some("14558.61"));
    assert_eq!(text(totals.iva16).as_deref(), Some("2329.38"));
    assert_eq!(totals.iva8, None);
    // ImpuestosP: transfers first, then withholdings, as written.
    let second = &cfdi.payments[1].taxes;
    let got: Vec<(TaxKind, &str, Option<String>)> = second
        .iter()
        .map(|t| (t.kind, t.tax.as_str(), text(t.amount)))
        .collect();
    assert_eq!(
        got,
        vec![
            (TaxKind::Transferred, "002", Some("388.3120".to_owned())),
            (TaxKind::Withheld, "001", Some("242.6950".to_owned())),
            (TaxKind::Withheld, "002", Some("258.9556".to_owned())),
        ]
    );
    // The root Impuestos by tax; 3.2 names the tax and gives a percentage.
    let legacy = parse_file("cfdi32-ingreso-tfd11-special-chars-rfc.xml");
    let got: Vec<(TaxKind, &str, Option<String>, Option<String>)> = legacy
        .tax_breakdown
        .iter()
        .map(|t| (t.kind, t.tax.as_str(), text(t.rate), text(t.amount)))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                TaxKind::Transferred,
                "IVA",
                Some("16.00".into()),
                Some("5600.00".into())
            ),
            (TaxKind::Withheld, "ISR", None, Some("0.00".into())),
            (TaxKind::Withheld, "IVA", None, Some("0.00".into())),
        ]
    );
    assert!(legacy.items.iter().all(|i| i.taxes.is_empty()));
    // Not a payment: no Totales even if one were there.
    assert_eq!(legacy.payment_totals, None);
}

/// A stated tax as `kind tax factor rate amount`, for comparison.
fn stated(taxes: &[ItemTax]) -> Vec<String> {
    let opt = |v: Option<Decimal>| v.map_or("-".to_owned(), |v| v.to_string());
    taxes
        .iter()
        .map(|t| {
            format!(
                "{:?} {} {} {} {}",
                t.kind,
                t.tax,
                t.factor.as_deref().unwrap_or("-"),
                opt(t.rate),
                opt(t.amount)
            )
        })
        .collect()
}

#[test]
fn cfdi32_taxes_take_the_33_shape() {
    let c = parse_file("cfdi32-ingreso-real-legacy-tfd10.xml");
    assert_eq!(
        stated(&c.stated_taxes.legacy),
        ["Transferred 002 Tasa 0.160000 646.21"]
    );
    let c = parse_file("cfdi32-ingreso-tfd11-special-chars-rfc.xml");
    assert_eq!(
        stated(&c.stated_taxes.legacy),
        [
            "Transferred 002 Tasa 0.160000 5600.00",
            "Withheld 001 - - 0.00",
            "Withheld 002 - - 0.00",
        ]
    );
    // 3.3 and 4.0 state theirs per concept: nothing here.
    assert!(parse_file("cfdi40-ingreso-pue-real-tfd.xml")
        .stated_taxes
        .is_empty());
}

#[test]
fn local_taxes_are_read_from_the_implocal_complement() {
    let c = parse_file("cfdi33-ingreso-pue-real-implocal-tfd.xml");
    assert_eq!(
        stated(&c.stated_taxes.local),
        ["Transferred IH - 0.025000 27.43"]
    );
    // SubTotal 1709.12 + IVA 273.46 + local 27.43 = Total 2010.01.
    let local: Decimal = c.stated_taxes.local.iter().filter_map(|t| t.amount).sum();
    assert_eq!(
        c.subtotal + c.taxes_transferred.unwrap_or_default() + local,
        c.total
    );
}

#[test]
fn payroll_isr_withheld_is_read_from_the_nomina_complement() {
    let c = parse_file("cfdi40-nomina-compensacion-tfd.xml");
    assert_eq!(
        stated(&c.stated_taxes.payroll),
        ["Withheld 001 - - 2272.25"]
    );
    let c = parse_file("cfdi40-nomina-tfd-zero-uuid.xml");
    assert_eq!(stated(&c.stated_taxes.payroll), ["Withheld 001 - - 122.82"]);
}

#[test]
fn the_payroll_receipt_is_read_from_the_nomina_12_complement() {
    let c = parse_file("cfdi40-nomina-compensacion-tfd.xml");
    assert_eq!(c.payroll.len(), 1);
    let p = &c.payroll[0];
    let d = |v: Option<Decimal>| v.map(|v| v.to_string());
    assert_eq!(p.payroll_type.as_deref(), Some("O"));
    assert_eq!(p.paid_on.as_deref(), Some("2026-01-14"));
    assert_eq!(p.period_from.as_deref(), Some("2026-01-01"));
    assert_eq!(p.period_to.as_deref(), Some("2026-01-15"));
    assert_eq!(d(p.days_paid).as_deref(), Some("15.000"));
    assert_eq!(d(p.total_other_payments).as_deref(), Some("263.63"));
    assert_eq!(p.employer_registration.as_deref(), Some("A0000000000"));
    let e = &p.employee;
    assert_eq!(e.seniority.as_deref(), Some("P63W"));
    assert_eq!(e.state.as_deref(), Some("CMX"));
    assert_eq!(e.payment_frequency.as_deref(), Some("04"));
    assert_eq!(d(e.integrated_daily_salary).as_deref(), Some("1000.00"));
    assert_eq!(e.bank, None);
    let perception = &p.perceptions[0];
    assert_eq!(perception.kind.as_deref(), Some("001"));
    assert_eq!(d(perception.taxed).as_deref(), Some("15000.00"));
    assert_eq!(d(perception.exempt).as_deref(), Some("0.00"));
    let kinds = |lines: &[PayrollLine]| -> Vec<String> {
        lines
            .iter()
            .map(|l| {
                format!(
                    "{} {}",
                    l.kind.as_deref().unwrap_or("-"),
                    d(l.amount).unwrap_or_default()
                )
            })
            .collect()
    };
    assert_eq!(kinds(&p.deductions), ["001 416.98", "002 2272.25"]);
    assert_eq!(
        kinds(&p.other_payments),
        ["999 0.13", "002 0.00", "004 263.50"]
    );
    // Only payroll receipts (type N) carry one.
    assert!(parse_file(REAL_40).payroll.is_empty());
}

#[test]
fn payroll_11_adds_taxed_and_exempt_and_12_falls_back_to_the_stated_total() {
    let doc = |complement: &str| {
        format!(
            r#"<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/3" version="3.2"
                tipoDeComprobante="egreso" fecha="2016-01-15T00:00:00" subTotal="1000" total="900">
              <cfdi:Emisor rfc="AAA010101AAA"/><cfdi:Receptor rfc="XAXX010101000"/>
              <cfdi:Conceptos/>
              <cfdi:Impuestos totalImpuestosRetenidos="100.00">
                <cfdi:Retenciones><cfdi:Retencion impuesto="ISR" importe="100.00"/></cfdi:Retenciones>
              </cfdi:Impuestos>
              <cfdi:Complemento>{complement}</cfdi:Complemento>
            </cfdi:Comprobante>"#
        )
    };
    let v11 = doc(
        r#"<nomina:Nomina xmlns:nomina="http://www.sat.gob.mx/nomina" Version="1.1">
          <nomina:Deducciones TotalGravado="100.00" TotalExento="0">
            <nomina:Deduccion TipoDeduccion="002" Clave="1" Concepto="ISR" ImporteGravado="90.00" ImporteExento="10.00"/>
            <nomina:Deduccion TipoDeduccion="001" Clave="2" Concepto="IMSS" ImporteGravado="5.00" ImporteExento="0"/>
          </nomina:Deducciones></nomina:Nomina>"#,
    );
    let c = parse_text(&v11).expect("parses");
    assert_eq!(stated(&c.stated_taxes.payroll), ["Withheld 001 - - 100.00"]);
    assert_eq!(stated(&c.stated_taxes.legacy), ["Withheld 001 - - 100.00"]);
    let v12 = doc(
        r#"<nomina12:Nomina xmlns:nomina12="http://www.sat.gob.mx/nomina12" Version="1.2">
          <nomina12:Deducciones TotalImpuestosRetenidos="77.70"/></nomina12:Nomina>"#,
    );
    let c = parse_text(&v12).expect("parses");
    assert_eq!(stated(&c.stated_taxes.payroll), ["Withheld 001 - - 77.70"]);
}
