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
        let pesos = |d| crate::format::money(d, None);
        assert!(shows(&pdf, &pesos(r.totals.operation)), "{name}: operation");
        if let Some(withheld) = r.totals.withheld {
            assert!(shows(&pdf, &pesos(withheld)), "{name}: withheld");
        }
        for t in &r.withheld_taxes {
            assert!(shows(&pdf, &pesos(t.amount)), "{name}: entry");
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

/// The page's shown text (each string's bytes, literal or hexadecimal, decoded from
/// WinAnsi) without blanks or line breaks, so a wrapped paragraph reads whole.
fn squeezed(pdf: &[u8]) -> String {
    let text = String::from_utf8_lossy(pdf);
    let mut out = String::new();
    for line in text.lines().filter(|l| l.ends_with(" Tj")) {
        let body = line.trim_end_matches(" Tj");
        let bytes: Vec<u8> = if let Some(hex) = body.strip_prefix('<') {
            let hex = hex.trim_end_matches('>');
            (0..hex.len() / 2)
                .map(|n| u8::from_str_radix(&hex[2 * n..2 * n + 2], 16).unwrap())
                .collect()
        } else {
            let inner = &body.as_bytes()[1..body.len() - 1];
            let mut bytes = Vec::new();
            let mut i = 0;
            while i < inner.len() {
                if inner[i] == b'\\' && i + 1 < inner.len() {
                    bytes.push(inner[i + 1]);
                    i += 2;
                } else {
                    bytes.push(inner[i]);
                    i += 1;
                }
            }
            bytes
        };
        out.extend(bytes.iter().map(|b| char::from(*b)));
    }
    out.chars().filter(|c| !c.is_whitespace()).collect()
}

fn reads(pdf: &[u8], text: &str) -> bool {
    let shown: String = win_ansi(text).iter().map(|b| char::from(*b)).collect();
    let shown: String = shown.chars().filter(|c| !c.is_whitespace()).collect();
    squeezed(pdf).contains(&shown)
}

/// What each sample's printed retention must show, written by hand from the sample and
/// the SAT's catalogs.
const PRINTED: &[(&str, &[&str])] = &[
    (
        "ret10-arrendamientoenfideicomiso-tfd10.xml",
        &[
            "Clave de retención: 17 - Arrendamiento en fideicomiso",
            "Descripción de la retención: Arrendamiento en fideicomiso",
            "Fecha de expedición: 24/02/2015 11:02:42 -06:00",
            "Periodo: Junio de 2014",
            "Monto total de la operación$14,000.00",
            "Monto total retenido$3,500.00",
            "Monto total de la operación con letra: CATORCE MIL PESOS 00/100 M.N.",
            "Monto total retenido con letra: TRES MIL QUINIENTOS PESOS 00/100 M.N.",
            "01 - ISR",
            "Tipo de pago: Pago definitivo",
        ],
    ),
    (
        "ret10-dividendos-extranjero-eku-unstamped.xml",
        &[
            "Clave de retención: 14 - Dividendos o utilidades distribuidas",
            "Periodo: Mayo de 2018",
            "Monto total de la operación$55,578,643.00",
            "Monto total de la operación con letra: CINCUENTA Y CINCO MILLONES QUINIENTOS SETENTA Y OCHO MIL SEISCIENTOS CUARENTA Y TRES PESOS 00/100 M.N.",
            "Monto total retenido con letra: CERO PESOS 00/100 M.N.",
            "Tipo de pago: Pago provisional",
        ],
    ),
    (
        "ret10-dividendos-nacional-tfd10.xml",
        &[
            "Clave de retención: 14 - Dividendos o utilidades distribuidas",
            "Monto total retenido$3,500.00",
        ],
    ),
    (
        "ret10-enajenaciondeacciones-tfd10.xml",
        &[
            "Clave de retención: 06 - Enajenación de acciones",
            "Descripción de la retención: Enajenación de Acciones",
        ],
    ),
    (
        "ret10-fake-extranjero-minimal.xml",
        &[
            "Clave de retención: -",
            "Monto total de la operación$2,000,000.00",
            "Monto total de la operación con letra: DOS MILLONES DE PESOS 00/100 M.N.",
        ],
    ),
    (
        "ret10-fake-nacional-minimal.xml",
        &[
            "Monto total de la operación$2,000,000.00",
            "Monto total de la operación con letra: DOS MILLONES DE PESOS 00/100 M.N.",
        ],
    ),
    (
        "ret10-intereses-tfd10.xml",
        &[
            "Clave de retención: 16 - Intereses",
            "Monto total de la operación con letra: CATORCE MIL PESOS 00/100 M.N.",
        ],
    ),
    (
        "ret10-operacionesconderivados-tfd10.xml",
        &["Clave de retención: 24 - Operaciones Financieras Derivadas de Capital"],
    ),
    (
        "ret10-pagosaextranjeros-extranjero-tfd10.xml",
        &["Clave de retención: 18 - Pagos realizados a favor de residentes en el extranjero"],
    ),
    (
        "ret10-planesderetiro-tfd10.xml",
        &["Clave de retención: 22 - Planes personales de retiro"],
    ),
    (
        "ret10-plataformastecnologicas-tfd10.xml",
        &[
            "Clave de retención: 26 - Servicios mediante Plataformas Tecnológicas",
            "Periodo: Agosto de 2020",
            "Monto total de la operación$8,092.24",
            "Monto total retenido$1,294.758400",
            "Monto total de la operación con letra: OCHO MIL NOVENTA Y DOS PESOS 24/100 M.N.",
            "Monto total retenido con letra: MIL DOSCIENTOS NOVENTA Y CUATRO PESOS 76/100 M.N.",
            "02 - IVA",
        ],
    ),
    (
        "ret10-sin-complemento-tfd10.xml",
        &[
            "Clave de retención: 25 - Otro tipo de retenciones",
            "Descripción de la retención: Otro tipo de retención",
            "Fecha de expedición: 29/12/2014 14:29:16 -06:00",
        ],
    ),
    (
        "ret20-fake-nacional-minimal.xml",
        &[
            "Monto total de la operación$4,076.73",
            "Monto total de la operación con letra: CUATRO MIL SETENTA Y SEIS PESOS 73/100 M.N.",
        ],
    ),
    (
        "ret20-fake-sin-receptor-taxid.xml",
        &["Monto total de la operación con letra: CUATRO MIL SETENTA Y SEIS PESOS 73/100 M.N."],
    ),
    (
        "ret20-min-extranjero-unstamped.xml",
        &[
            "Clave de retención: 01 - Servicios profesionales",
            "Régimen fiscal: 630 - Enajenación de acciones en bolsa de valores",
            "Fecha de expedición: 12/12/2021 12:45:29",
            "Periodo: Enero a Diciembre de 2027",
            "Tipo de pago: 02 - Pago definitivo IEPS",
            "Monto total retenido$1.00",
            "Monto total retenido con letra: UN PESO 00/100 M.N.",
        ],
    ),
    (
        "ret20-todos-complementos-relacionado-tfd11.xml",
        &[
            "001 - ISR",
            "002 - IVA",
            "003 - IEPS",
            "Tipo de pago: 03 - Pago definitivo ISR",
            "Tipo de pago: 04 - Pago provisional ISR",
            "Monto total de la operación con letra: UN PESO 00/100 M.N.",
        ],
    ),
];

#[test]
fn each_sample_prints_as_mexico_prints_it() {
    assert_eq!(
        PRINTED.len(),
        samples().len(),
        "an expectation for every sample"
    );
    for (name, r) in samples() {
        let (_, expected) = PRINTED.iter().find(|(n, _)| *n == name).unwrap();
        let pdf = render(&r);
        for text in *expected {
            assert!(reads(&pdf, text), "{name}: {text:?} in {}", squeezed(&pdf));
        }
    }
}
