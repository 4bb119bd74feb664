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
        let currency = cfdi.currency.as_deref();
        let money = |d: Decimal| crate::format::money(d, currency);
        assert!(contains(&pdf, &money(cfdi.total)), "{name}: total");
        assert!(contains(&pdf, &money(cfdi.subtotal)), "{name}: subtotal");
        for item in &cfdi.items {
            let pesos = |d: Decimal| crate::format::money(d, None);
            assert!(contains(&pdf, &pesos(item.amount)), "{name}: item");
            for tax in item.taxes.iter().filter_map(|t| t.amount) {
                assert!(contains(&pdf, &pesos(tax)), "{name}: concept tax");
            }
        }
    }
}

/// The page with line breaks and blanks removed: a wrapped paragraph reads as one
/// string wherever it was broken.
fn reads(pdf: &[u8], text: &str) -> bool {
    let squeeze = |t: &str| t.chars().filter(|c| !c.is_whitespace()).collect::<String>();
    let shown: String = win_ansi(text).iter().map(|b| char::from(*b)).collect();
    squeeze(&shown_text(pdf)).contains(&squeeze(&shown))
}

/// What each sample's printed CFDI must show, written by hand from the sample and the
/// SAT's catalogs: the total (or each payment's amount) with `$` and separators, in
/// words, and its codes with their descriptions.
const PRINTED: &[(&str, &[&str])] = &[
    (
        "cfdi32-ingreso-real-legacy-tfd10.xml",
        &[
            "Total $4,685.00",
            "Importe con letra: CUATRO MIL SEISCIENTOS OCHENTA Y CINCO PESOS 00/100 M.N.",
            "Forma de pago: 04 - Tarjeta de crédito",
            "Régimen fiscal: Regimen General de Ley Persona Moral",
            "Moneda: MXN - Peso Mexicano",
        ],
    ),
    (
        "cfdi32-ingreso-tfd11-special-chars-rfc.xml",
        &[
            "Total $40,600.00",
            "Importe con letra: CUARENTA MIL SEISCIENTOS PESOS 00/100 M.N.",
            "Forma de pago: No Identificado",
            "Moneda: Pesos",
            "Traslado IVA 16.00%",
        ],
    ),
    (
        "cfdi33-ingreso-ppd-multiples-tasas-tfd.xml",
        &[
            "Total $300.00",
            "Importe con letra: TRESCIENTOS PESOS 00/100 M.N.",
            "Método de pago: PPD - Pago en parcialidades o diferido",
            "Forma de pago: 03 - Transferencia electrónica de fondos",
            "Uso CFDI: G03 - Gastos en general",
            "Régimen fiscal: 601 - General de Ley Personas Morales",
            "Clave de producto o servicio: 47111603 - Máquinas de vapor para planchar",
            "Unidad: H87 - Pieza",
            "Tipo de comprobante: I - Ingreso",
        ],
    ),
    (
        "cfdi33-ingreso-pue-detallista-tfd.xml",
        &[
            "Total $6.90",
            "Importe con letra: SEIS PESOS 90/100 M.N.",
            "Uso CFDI: P01 - Por definir",
            "Forma de pago: 01 - Efectivo",
            "Clave de producto o servicio: 47131806 - Pulidores o ceras para muebles",
        ],
    ),
    (
        "cfdi33-ingreso-pue-real-implocal-tfd.xml",
        &[
            "Total $2,010.01",
            "Importe con letra: DOS MIL DIEZ PESOS 01/100 M.N.",
            "Forma de pago: 04 - Tarjeta de crédito",
            "Método de pago: PUE - Pago en una sola exhibición",
            "Clave de producto o servicio: 90111501 - Hoteles",
            "Unidad: E48 - Unidad de servicio",
        ],
    ),
    (
        "cfdi33-ingreso-pue-tfd-leading-comment.xml",
        &[
            "Total $2,382,870.00",
            "Importe con letra: DOS MILLONES TRESCIENTOS OCHENTA Y DOS MIL OCHOCIENTOS SETENTA PESOS 00/100 M.N.",
            "Uso CFDI: G01 - Adquisición de mercancías",
            "Clave de producto o servicio: 01010101 - No existe en el catálogo",
            "Unidad: F52 - Metro por kelvin",
        ],
    ),
    (
        "cfdi33-pago10-duplicate-docto-bom.xml",
        &[
            "Monto: $201.54",
            "Monto con letra: DOSCIENTOS UN PESOS 54/100 M.N.",
            "Tipo de comprobante: P - Pago",
            "Uso CFDI: P01 - Por definir",
        ],
    ),
    (
        "cfdi33-pago10-errors-pue-no-parcialidad.xml",
        &[
            "Monto: $1,866.12",
            "Monto con letra: MIL OCHOCIENTOS SESENTA Y SEIS PESOS 12/100 M.N.",
        ],
    ),
    (
        "cfdi33-pago10-partial-single-docto.xml",
        &[
            "Monto: $380.00",
            "Monto con letra: TRESCIENTOS OCHENTA PESOS 00/100 M.N.",
        ],
    ),
    (
        "cfdi33-pago10-tfd-usd-docto-mxn-payment.xml",
        &[
            "Monto: $4,000.00",
            "Monto con letra: CUATRO MIL PESOS 00/100 M.N.",
            "Uso CFDI: G01 - Adquisición de mercancías",
        ],
    ),
    (
        "cfdi33-pago10-two-docs-partial.xml",
        &[
            "Monto: $15,000.00",
            "Monto con letra: QUINCE MIL PESOS 00/100 M.N.",
        ],
    ),
    (
        "cfdi33-pago10-usd-docto-parcialidad4.xml",
        &[
            "Monto: $2,000.00",
            "Monto con letra: DOS MIL PESOS 00/100 M.N.",
        ],
    ),
    (
        "cfdi33-pago10-usd-docto-parcialidad5.xml",
        &[
            "Monto: $2,000.00",
            "Monto con letra: DOS MIL PESOS 00/100 M.N.",
        ],
    ),
    (
        "cfdi33-pago10-usd-payment-no-imppagado.xml",
        &[
            "Moneda: USD - Dólar americano",
            "Monto: $100.00 USD",
            "Monto con letra: CIEN DÓLARES 00/100 USD",
        ],
    ),
    (
        "cfdi40-egreso-nota-credito-unstamped.xml",
        &[
            "NOTA DE CRÉDITO",
            "Tipo de comprobante: E - Egreso",
            "Total $1.77",
            "Importe con letra: UN PESO 77/100 M.N.",
            "Forma de pago: 99 - Por definir",
            "Clave de producto o servicio: 84141602 - Proveedores de servicios de tarjetas de crédito",
            "Unidad: ZZ - Mutuamente definido",
        ],
    ),
    (
        "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
        &[
            "Total $1,191.95",
            "Importe con letra: MIL CIENTO NOVENTA Y UN PESOS 95/100 M.N.",
            "Clave de producto o servicio: 84111506 - Servicios de facturación",
            "Retención 001 - ISR",
        ],
    ),
    (
        "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
        &[
            "Total $17,852.75",
            "Importe con letra: DIECISIETE MIL OCHOCIENTOS CINCUENTA Y DOS PESOS 75/100 M.N.",
            "Régimen fiscal: 606 - Arrendamiento",
            "Clave de producto o servicio: 80131502 - Arrendamiento de instalaciones comerciales o industriales",
            "Forma de pago: -",
        ],
    ),
    (
        "cfdi40-ingreso-ppd-usd-unstamped.xml",
        &[
            "Moneda: USD - Dólar americano",
            "Total $232.00 USD",
            "Importe con letra: DOSCIENTOS TREINTA Y DOS DÓLARES 00/100 USD",
            "Clave de producto o servicio: 50211502 - Cigarrillos o cigarros",
        ],
    ),
    (
        "cfdi40-ingreso-pue-descuento-tfd.xml",
        &[
            "Total $3,327.01",
            "Importe con letra: TRES MIL TRESCIENTOS VEINTISIETE PESOS 01/100 M.N.",
            "Clave de producto o servicio: 52161557 - Consola fija de juegos de computador",
        ],
    ),
    (
        "cfdi40-ingreso-pue-real-tfd.xml",
        &[
            "Fecha de emisión: 24/01/2025 10:10:41",
            "Total $1,000.00",
            "Importe con letra: MIL PESOS 00/100 M.N.",
            "Clave de producto o servicio: 80141628 - Servicio de distribuidores por comisión",
            "Régimen fiscal: 612 - Personas Físicas con Actividades Empresariales y Profesionales",
            "Exportación: 01 - No aplica",
            "Objeto de impuesto: 02 - Sí objeto de impuesto",
        ],
    ),
    (
        "cfdi40-ingreso-pue-tfd-ampersand-rfc.xml",
        &[
            "Total $17,852.75",
            "Forma de pago: 03 - Transferencia electrónica de fondos",
            "Método de pago: PUE - Pago en una sola exhibición",
        ],
    ),
    (
        "cfdi40-ingreso-pue-usd-descuento-unstamped.xml",
        &[
            "Total $3,248.00 USD",
            "Importe con letra: TRES MIL DOSCIENTOS CUARENTA Y OCHO DÓLARES 00/100 USD",
        ],
    ),
    (
        "cfdi40-nomina-compensacion-tfd.xml",
        &[
            "RECIBO DE NÓMINA",
            "Total $12,574.40",
            "Importe con letra: DOCE MIL QUINIENTOS SETENTA Y CUATRO PESOS 40/100 M.N.",
            "Uso CFDI: CN01 - Nómina",
            "Tipo de nómina: O - Nómina ordinaria",
            "Periodo: 01/01/2026 al 15/01/2026",
            "Periodicidad de pago: 04 - Quincenal",
            "Entidad federativa: CMX - Ciudad de México",
            "Tipo de contrato: 01 - Contrato de trabajo por tiempo indeterminado",
            "002 - ISR: I.S.R. mes (clave 045)$2,272.25",
            "Total percepciones$15,000.00",
            "Total otros pagos$263.63",
        ],
    ),
    (
        "cfdi40-nomina-tfd-zero-uuid.xml",
        &[
            "Total $4,445.00",
            "Importe con letra: CUATRO MIL CUATROCIENTOS CUARENTA Y CINCO PESOS 00/100 M.N.",
            "Entidad federativa: YUC - Yucatán",
            "Tipo de jornada: 08 - Por turnos",
            "Riesgo de puesto: 3 - Clase III",
            "Clave de producto o servicio: 84111505 - Servicios de contabilidad de sueldos y salarios",
        ],
    ),
    (
        "cfdi40-pago20-43-usd-docs-mxn-payment-no-iddocumento.xml",
        &[
            "Monto: $1,263,997.83",
            "Monto con letra: UN MILLÓN DOSCIENTOS SESENTA Y TRES MIL NOVECIENTOS NOVENTA Y SIETE PESOS 83/100 M.N.",
            "Uso CFDI: CP01 - Pagos",
        ],
    ),
    (
        "cfdi40-pago20-multi-pago-mxn-and-usd.xml",
        &[
            "Monto: $1,840.00",
            "Monto con letra: MIL OCHOCIENTOS CUARENTA PESOS 00/100 M.N.",
            "Forma de pago: 04 - Tarjeta de crédito",
            "Monto: $40.00 USD",
            "Monto con letra: CUARENTA DÓLARES 00/100 USD",
            "Fecha de pago: 09/06/2023 10:31:03",
        ],
    ),
    (
        "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
        &[
            "Monto: $17,852.75",
            "Monto con letra: DIECISIETE MIL OCHOCIENTOS CINCUENTA Y DOS PESOS 75/100 M.N.",
            "Régimen fiscal: 606 - Arrendamiento",
        ],
    ),
    (
        "cfdi40-pago20-two-docs-partial.xml",
        &[
            "Monto: $15,000.00",
            "Monto con letra: QUINCE MIL PESOS 00/100 M.N.",
        ],
    ),
    (
        "cfdi40-pago20-two-pagos-retenciones.xml",
        &[
            "Monto: $14,072.73",
            "Monto con letra: CATORCE MIL SETENTA Y DOS PESOS 73/100 M.N.",
            "Monto: $2,313.60",
            "Monto con letra: DOS MIL TRESCIENTOS TRECE PESOS 60/100 M.N.",
        ],
    ),
    (
        "cfdi40-pago20-usd-docs-retenciones-empty-rfc.xml",
        &[
            "Monto: $168,168.00",
            "Monto con letra: CIENTO SESENTA Y OCHO MIL CIENTO SESENTA Y OCHO PESOS 00/100 M.N.",
            "Régimen fiscal: 626 - Régimen Simplificado de Confianza",
        ],
    ),
    (
        "cfdi40-pago20-usd-foreign-receptor-no-iddocumento.xml",
        &[
            "Monto: $50,498.60 USD",
            "Monto con letra: CINCUENTA MIL CUATROCIENTOS NOVENTA Y OCHO DÓLARES 60/100 USD",
        ],
    ),
    (
        "cfdi40-pago20-usd-payments-mxn-docs-no-iddocumento.xml",
        &[
            "Monto: $123.45 USD",
            "Monto con letra: CIENTO VEINTITRÉS DÓLARES 45/100 USD",
        ],
    ),
    (
        "edge-cfdi33-invalid-fake-rfc-bom-no-tfd.xml",
        &[
            "Total $939.98",
            "Importe con letra: NOVECIENTOS TREINTA Y NUEVE PESOS 98/100 M.N.",
            "Forma de pago: 28 - Tarjeta de débito",
            "Régimen fiscal: 612 - Personas Físicas con Actividades Empresariales y Profesionales",
            "Clave de producto o servicio: 60106400 - Equipo de enseñanza de electrónica y suministros",
        ],
    ),
];

#[test]
fn each_sample_prints_as_mexico_prints_it() {
    let samples = samples();
    assert_eq!(
        PRINTED.len(),
        samples.len(),
        "an expectation for every sample that parses"
    );
    for (name, expected) in PRINTED {
        let cfdi = sample(name);
        let pdf = render(&cfdi);
        for text in *expected {
            assert!(
                reads(&pdf, text),
                "{name}: {text:?} in\n{}",
                shown_text(&pdf)
            );
        }
        // A payment complement's total (XXX, no currency) is not put in words: each
        // payment is.
        let words = reads(&pdf, "Importe con letra");
        assert_eq!(words, cfdi.invoice_type != InvoiceType::P, "{name}");
        // Amounts never print as the XML writes them: `1000.00` is `$1,000.00`.
        if cfdi.total >= Decimal::ONE_THOUSAND {
            assert!(!contains(&pdf, &format!("\n{}\n", cfdi.total)), "{name}");
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
        let paid = crate::format::money(doc.amount_paid.unwrap(), doc.currency.as_deref());
        assert!(contains(&pdf, &format!("Importe pagado: {paid}")), "{name}");
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
    let certified = crate::format::date_time(stamp.certified_at.as_deref().unwrap());
    assert_eq!(certified, "24/01/2025 10:10:42");
    for text in [
        certified.as_str(),
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
    // Each amount is drawn right after its label (same row).
    for row in [
        "Retención 001 - ISR\n$125.03\n",
        "Retención 002 - IVA\n$133.37\n",
        "Total impuestos retenidos\n$258.40\n",
    ] {
        // Latin-1 text reads back as the same characters.
        assert!(text.contains(row), "{row:?} in {text}");
    }
    // CFDI 3.2 names its taxes and gives the rate as a percentage.
    let pdf = render(&sample("cfdi32-ingreso-tfd11-special-chars-rfc.xml"));
    for label in ["Retención ISR", "Retención IVA", "Traslado IVA 16.00%"] {
        assert!(contains(&pdf, label), "{label}");
    }
}

#[test]
fn place_of_issue_export_receiver_and_tax_object_are_printed() {
    let cfdi = sample("cfdi40-ingreso-pue-real-tfd.xml");
    let pdf = render(&cfdi);
    let place = cfdi.place_of_issue.as_deref().unwrap();
    for text in [
        format!("Lugar de expedición (C.P.): {place}    Exportación: 01 - No aplica"),
        "Régimen fiscal: 612 - Personas Físicas".to_owned(),
        "Domicilio fiscal (C.P.): 52176".to_owned(),
        "Objeto de impuesto: 02 - Sí objeto de impuesto".to_owned(),
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
        "Traslado 002 - IVA Tasa 16%  Base $12,131.6600    Importe: $1,941.0656",
        "Retención 001 - ISR    Importe: $242.6950",
        "Retención 002 - IVA    Importe: $258.9556",
        "Totales del complemento de pago (MXN)",
    ] {
        assert!(contains(&pdf, text), "{text}");
    }
    let text = shown_text(&pdf);
    for row in [
        "Total retenciones ISR\n$242.70\n",
        "Total retenciones IVA\n$258.96\n",
        "Total traslados base IVA 16%\n$14,558.61\n",
        "Total traslados impuesto IVA 16%\n$2,329.38\n",
        "Monto total de pagos\n$16,386.33\n",
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
