//! `GET /v1/entities/{id}/iva`: the month's IVA determination from both directions on
//! the cash basis, worked by hand for a month of documents written here (withholdings
//! both ways, a credit note each way, a PPD paid by a complement, a USD supplier, a 0%
//! supplier, a definitive 69-B supplier, a payment whose invoice is not stored) and
//! for the shared real samples; as JSON and as the XLSX.

use std::path::PathBuf;

use serde_json::Value;

use crate::common::app::{Client, TestApp};
use crate::common::invoices::*;

pub(crate) const TAXPAYER: &str = "AAA010101AAA";
const CLIENT: &str = "CLI010101AB3";
pub(crate) const USD_SUPPLIER: &str = "SUP010101AB1";
pub(crate) const SERVICES: &str = "SVC010101AB4";
pub(crate) const DEFINITIVE: &str = "DEF010101AB2";

pub(crate) fn uuid(n: u32) -> String {
    format!("cccccccc-0000-4000-8000-{n:012}")
}

/// A tax entry: (Traslado or Retencion, Impuesto, TasaOCuota or `Exento`, Base,
/// Importe).
pub(crate) type Tax<'a> = (&'a str, &'a str, &'a str, &'a str, &'a str);

/// A CFDI 4.0 I or E of one concept of `base` with `taxes`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn cfdi(
    n: u32,
    (issuer, receiver): (&str, &str),
    kind: &str,
    method: &str,
    currency: &str,
    date: &str,
    (base, total): (&str, &str),
    taxes: &[Tax],
) -> String {
    let of = |which: &str| -> String {
        taxes
            .iter()
            .filter(|t| t.0 == which)
            .map(|(w, tax, rate, base, amount)| match *rate {
                "Exento" => {
                    format!(r#"<cfdi:{w} Base="{base}" Impuesto="{tax}" TipoFactor="Exento"/>"#)
                }
                _ => format!(
                    r#"<cfdi:{w} Base="{base}" Impuesto="{tax}" TipoFactor="Tasa" TasaOCuota="{rate}" Importe="{amount}"/>"#
                ),
            })
            .collect()
    };
    let (transfers, withholdings) = (of("Traslado"), of("Retencion"));
    let block = |tag: &str, inner: &str| {
        if inner.is_empty() {
            String::new()
        } else {
            format!("<cfdi:{tag}>{inner}</cfdi:{tag}>")
        }
    };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" Version="4.0" Fecha="{date}" SubTotal="{base}"
    Total="{total}" {currency} TipoDeComprobante="{kind}" MetodoPago="{method}" FormaPago="99" Exportacion="01" LugarExpedicion="01000">
  <cfdi:Emisor Rfc="{issuer}" Nombre="EMISOR {issuer}" RegimenFiscal="601"/>
  <cfdi:Receptor Rfc="{receiver}" Nombre="RECEPTOR {receiver}" DomicilioFiscalReceptor="01000" RegimenFiscalReceptor="601" UsoCFDI="G03"/>
  <cfdi:Conceptos><cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="E48" Descripcion="Servicio"
    ValorUnitario="{base}" Importe="{base}" ObjetoImp="02"><cfdi:Impuestos>{}{}</cfdi:Impuestos></cfdi:Concepto></cfdi:Conceptos>
  <cfdi:Complemento>{}</cfdi:Complemento>
</cfdi:Comprobante>"#,
        block("Traslados", &transfers),
        block("Retenciones", &withholdings),
        stamp(n),
    )
}

fn stamp(n: u32) -> String {
    format!(
        r#"<tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital"
            Version="1.1" UUID="{}" FechaTimbrado="2026-10-01T00:00:00" RfcProvCertif="SAT970701NN3"/>"#,
        uuid(n)
    )
}

/// A Pagos 2.0 complement paying `amount` MXN of `paid` (no ImpuestosDR: the cash
/// basis takes the paid proportion of the invoice's IVA).
pub(crate) fn payment(
    n: u32,
    (issuer, receiver): (&str, &str),
    date: &str,
    paid: &str,
    amounts: (&str, &str, &str),
) -> String {
    let (before, amount, after) = amounts;
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" Version="4.0" Fecha="{date}" SubTotal="0" Total="0"
    Moneda="XXX" TipoDeComprobante="P" Exportacion="01" LugarExpedicion="01000">
  <cfdi:Emisor Rfc="{issuer}" Nombre="EMISOR {issuer}" RegimenFiscal="601"/>
  <cfdi:Receptor Rfc="{receiver}" Nombre="RECEPTOR {receiver}" DomicilioFiscalReceptor="01000" RegimenFiscalReceptor="601" UsoCFDI="CP01"/>
  <cfdi:Conceptos><cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="ACT" Descripcion="Pago"
    ValorUnitario="0" Importe="0" ObjetoImp="01"/></cfdi:Conceptos>
  <cfdi:Complemento><pago20:Pagos xmlns:pago20="http://www.sat.gob.mx/Pagos20" Version="2.0">
    <pago20:Totales MontoTotalPagos="{amount}"/>
    <pago20:Pago FechaPago="{date}" FormaDePagoP="03" MonedaP="MXN" TipoCambioP="1" Monto="{amount}">
    <pago20:DoctoRelacionado IdDocumento="{paid}" MonedaDR="MXN" EquivalenciaDR="1" NumParcialidad="1"
        ImpSaldoAnt="{before}" ImpPagado="{amount}" ImpSaldoInsoluto="{after}" ObjetoImpDR="01"/>
    </pago20:Pago></pago20:Pagos>{}</cfdi:Complemento>
</cfdi:Comprobante>"#,
        stamp(n)
    )
}

pub(crate) const IVA16: &str = "0.160000";
pub(crate) const IVA_TWO_THIRDS: &str = "0.106667";

/// The taxpayer's October 2026: (direction, file name, XML).
pub(crate) fn october() -> Vec<(&'static str, &'static str, String)> {
    let issued = (TAXPAYER, CLIENT);
    let mxn = r#"Moneda="MXN""#;
    vec![
        // 10,000.00 at 16% (1,600.00); the client withheld two thirds (1,066.67).
        (
            "issued",
            "pue-withheld.xml",
            cfdi(
                1,
                issued,
                "I",
                "PUE",
                mxn,
                "2026-10-05T10:00:00",
                ("10000.00", "10533.33"),
                &[
                    ("Traslado", "002", IVA16, "10000.00", "1600.00"),
                    ("Retencion", "002", IVA_TWO_THIRDS, "10000.00", "1066.67"),
                ],
            ),
        ),
        // A credit note to the client: 500.00 at 16% (80.00).
        (
            "issued",
            "credit-note.xml",
            cfdi(
                2,
                issued,
                "E",
                "PUE",
                mxn,
                "2026-10-20T10:00:00",
                ("500.00", "580.00"),
                &[("Traslado", "002", IVA16, "500.00", "80.00")],
            ),
        ),
        // September's PPD invoice (2,000.00 + 320.00), half paid in October.
        (
            "issued",
            "september-ppd.xml",
            cfdi(
                3,
                issued,
                "I",
                "PPD",
                mxn,
                "2026-09-15T10:00:00",
                ("2000.00", "2320.00"),
                &[("Traslado", "002", IVA16, "2000.00", "320.00")],
            ),
        ),
        (
            "issued",
            "payment.xml",
            payment(
                4,
                issued,
                "2026-10-10T12:00:00",
                &uuid(3),
                ("2320.00", "1160.00", "1160.00"),
            ),
        ),
        // A USD supplier at 18.50: 1,000.00 USD + 160.00 USD.
        (
            "received",
            "usd.xml",
            cfdi(
                6,
                (USD_SUPPLIER, TAXPAYER),
                "I",
                "PUE",
                r#"Moneda="USD" TipoCambio="18.50""#,
                "2026-10-03T10:00:00",
                ("1000.00", "1160.00"),
                &[("Traslado", "002", IVA16, "1000.00", "160.00")],
            ),
        ),
        // Professional services: 5,000.00 + 800.00; the taxpayer withheld two thirds
        // of the IVA (533.33) and 10% ISR (not IVA).
        (
            "received",
            "services.xml",
            cfdi(
                7,
                (SERVICES, TAXPAYER),
                "I",
                "PUE",
                mxn,
                "2026-10-08T10:00:00",
                ("5000.00", "4766.67"),
                &[
                    ("Traslado", "002", IVA16, "5000.00", "800.00"),
                    ("Retencion", "002", IVA_TWO_THIRDS, "5000.00", "533.33"),
                    ("Retencion", "001", "0.100000", "5000.00", "500.00"),
                ],
            ),
        ),
        // A definitive 69-B supplier: 3,000.00 + 480.00, left out.
        (
            "received",
            "definitive.xml",
            cfdi(
                8,
                (DEFINITIVE, TAXPAYER),
                "I",
                "PUE",
                mxn,
                "2026-10-09T10:00:00",
                ("3000.00", "3480.00"),
                &[("Traslado", "002", IVA16, "3000.00", "480.00")],
            ),
        ),
        // A 0% purchase from the USD supplier's RFC, in pesos.
        (
            "received",
            "zero.xml",
            cfdi(
                9,
                (USD_SUPPLIER, TAXPAYER),
                "I",
                "PUE",
                mxn,
                "2026-10-11T10:00:00",
                ("1000.00", "1000.00"),
                &[("Traslado", "002", "0.000000", "1000.00", "0.00")],
            ),
        ),
        // A credit note from the services supplier: 200.00 + 32.00.
        (
            "received",
            "received-credit-note.xml",
            cfdi(
                10,
                (SERVICES, TAXPAYER),
                "E",
                "PUE",
                mxn,
                "2026-10-25T10:00:00",
                ("200.00", "232.00"),
                &[("Traslado", "002", IVA16, "200.00", "32.00")],
            ),
        ),
        // A complement paying an invoice that is not stored.
        (
            "received",
            "unresolved-payment.xml",
            payment(
                11,
                (USD_SUPPLIER, TAXPAYER),
                "2026-10-12T12:00:00",
                &uuid(99),
                ("580.00", "580.00", "0.00"),
            ),
        ),
    ]
}

/// The 69-B sample with `DEFINITIVE` listed `Definitivo` (byte edits: the file is
/// Windows-1252).
pub(crate) fn list_69b(app: &TestApp) {
    let sample = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sat-status-fixtures/69b-listado-completo-sample.satcfdi.csv"
    ))
    .expect("the 69-B sample");
    let replace = |bytes: &[u8], from: &str, to: &str| -> Vec<u8> {
        let at = bytes
            .windows(from.len())
            .position(|w| w == from.as_bytes())
            .unwrap_or_else(|| panic!("{from} is in the sample"));
        [&bytes[..at], to.as_bytes(), &bytes[at + from.len()..]].concat()
    };
    let list = replace(&sample, "AAA292929HHH", DEFINITIVE);
    let list = replace(
        &list,
        "Desvirtuado,500-05-2017-38736",
        "Definitivo,500-05-2017-38736",
    );
    let dir = tempfile::TempDir::new().expect("temp dir");
    let file = dir.path().join("Listado_Completo_69-B.csv");
    std::fs::write(&file, list).expect("write");
    app.cli(&["list-69b", "load", &file.to_string_lossy()], None)
        .expect_success("list-69b load");
}

fn iva(client: &Client, entity: &str, query: &str) -> Value {
    let resp = client.get(&format!("/v1/entities/{entity}/iva?{query}"));
    assert_eq!(resp.status, 200, "{query}: {}", resp.text());
    resp.json()
}

pub(crate) fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn rows(list: &Value, fields: &[&str]) -> Vec<String> {
    (list.as_array().expect("an array").iter())
        .map(|l| {
            fields
                .iter()
                .map(|f| text(&l[*f]))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

const LINE: &[&str] = &[
    "source",
    "kind",
    "rate",
    "currency",
    "base",
    "amount",
    "count",
    "base_mxn",
    "amount_mxn",
];

fn october_app() -> (TestApp, String) {
    let app = TestApp::spawn();
    let entity = id_of(&app.client().create_entity(TAXPAYER, "sandbox1"));
    let dir = tempfile::TempDir::new().expect("temp dir");
    for direction in ["issued", "received"] {
        let paths: Vec<PathBuf> = (october().into_iter())
            .filter(|(d, _, _)| *d == direction)
            .map(|(_, name, xml)| {
                let path = dir.path().join(name);
                std::fs::write(&path, xml).expect("write");
                path
            })
            .collect();
        import(&app, &entity, direction, &paths);
    }
    list_69b(&app);
    (app, entity)
}

#[test]
fn a_month_by_hand_from_both_sides() {
    let (app, entity) = october_app();
    let client = app.client();
    let d = iva(&client, &entity, "month=2026-10");
    assert_eq!(
        (
            text(&d["month"]),
            text(&d["from"]),
            text(&d["to"]),
            text(&d["basis"])
        ),
        (
            "2026-10".into(),
            "2026-10-01".into(),
            "2026-10-31".into(),
            "cash".into()
        )
    );
    assert_eq!(
        rows(&d["issued"], LINE),
        [
            "pue transferred 0.160000 MXN 10000.00 1600.00 1 10000.00 1600.00",
            "pue withheld 0.106667 MXN 10000.00 1066.67 1 10000.00 1066.67",
            // 320.00 × 1,160.00 ÷ 2,320.00; 2,000.00 × 1,160.00 ÷ 2,320.00.
            "payments transferred 0.160000 MXN 1000.00 160.00 1 1000.00 160.00",
            "credit_notes transferred 0.160000 MXN 500.00 80.00 1 500.00 80.00",
            // 1,600.00 + 160.00 − 80.00
            "net transferred 0.160000 MXN 10500.00 1680.00 null 10500.00 1680.00",
            "net withheld 0.106667 MXN 10000.00 1066.67 null 10000.00 1066.67",
        ]
    );
    assert_eq!(
        rows(&d["received"], LINE),
        [
            "pue transferred 0.000000 MXN 1000.00 0.00 1 1000.00 0.00",
            "pue transferred 0.160000 MXN 5000.00 800.00 1 5000.00 800.00",
            // 160.00 USD × 18.50 = 2,960.00; 1,000.00 × 18.50 = 18,500.00.
            "pue transferred 0.160000 USD 1000.00 160.00 1 18500.00 2960.00",
            "pue withheld 0.106667 MXN 5000.00 533.33 1 5000.00 533.33",
            "credit_notes transferred 0.160000 MXN 200.00 32.00 1 200.00 32.00",
            // The net in its own currency keeps the digits the sum has; in pesos, two.
            "net transferred 0.000000 MXN 1000.00 0 null 1000.00 0.00",
            "net transferred 0.160000 MXN 4800.00 768.00 null 4800.00 768.00",
            "net transferred 0.160000 USD 1000.00 160.00 null 18500.00 2960.00",
            "net withheld 0.106667 MXN 5000.00 533.33 null 5000.00 533.33",
        ]
    );
    let f = &d["figures"];
    let figures: Vec<String> = [
        "iva_collected",
        "iva_withheld_by_clients",
        "iva_creditable",
        "balance",
        "result",
        "iva_withheld_from_others",
        "total_to_pay",
    ]
    .iter()
    .map(|k| text(&f[*k]))
    .collect();
    // Collected 1,680.00; creditable 0.00 + 768.00 + 2,960.00 = 3,728.00;
    // 1,680.00 − 1,066.67 − 3,728.00 = −3,114.67 in favour; the 533.33 withheld from
    // the services supplier is paid on its own.
    assert_eq!(
        figures,
        ["1680.00", "1066.67", "3728.00", "-3114.67", "in_favor", "533.33", "533.33"]
    );
    assert_eq!(
        rows(
            &d["excluded"],
            &[
                "side",
                "reason",
                "detail",
                "origin",
                "uuid",
                "related_uuid",
                "counterparty_tax_id",
                "iva_transferred",
                "iva_transferred_mxn"
            ]
        ),
        [
            format!(
                "received issuer_definitive_69b null document {} null {DEFINITIVE} 480.00 480.00",
                uuid(8).to_uppercase()
            ),
            format!(
                "received payment_unresolved invoice_not_found payment {} {} {USD_SUPPLIER} 0 null",
                uuid(11).to_uppercase(),
                uuid(99).to_uppercase()
            ),
        ]
    );
    // September: only its PPD invoice, which counts when paid.
    let september = iva(&client, &entity, "month=2026-09");
    assert_eq!(september["issued"], Value::Array(vec![]));
    assert_eq!(text(&september["figures"]["result"]), "zero");
    assert_eq!(text(&september["figures"]["total_to_pay"]), "0.00");
}

#[test]
fn the_xlsx_in_spanish_bad_months_and_other_organizations() {
    let (app, entity) = october_app();
    let client = app.client();
    let resp = client.get(&format!(
        "/v1/entities/{entity}/iva?month=2026-10&format=xlsx"
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.header("content-disposition"),
        Some("attachment; filename=\"iva-2026-10.xlsx\"")
    );
    let rows = crate::flows::summary::sheet_rows(&resp.body, "IVA del mes");
    let find = |label: &str| -> Vec<String> {
        rows.iter()
            .find(|r| r.first().map(String::as_str) == Some(label))
            .unwrap_or_else(|| panic!("{label} in {rows:?}"))
            .clone()
    };
    assert_eq!(find("Mes"), ["Mes", "2026-10"]);
    assert_eq!(
        find("IVA causado (cobrado)"),
        ["IVA causado (cobrado)", "1680"]
    );
    assert_eq!(
        find("(−) IVA acreditable (pagado)"),
        ["(−) IVA acreditable (pagado)", "3728"]
    );
    assert_eq!(find("Saldo"), ["Saldo", "-3114.67"]);
    assert_eq!(find("Resultado"), ["Resultado", "A favor"]);
    assert_eq!(find("Total a pagar"), ["Total a pagar", "533.33"]);
    let definitive = (rows.iter())
        .find(|r| {
            r.get(1)
                .map(String::as_str)
                .is_some_and(|m| m.contains("69-B"))
        })
        .unwrap_or_else(|| panic!("the definitive supplier's row in {rows:?}"));
    assert_eq!(definitive[0], "Recibidos");
    assert_eq!(definitive[7], DEFINITIVE);
    for (bad, field) in [
        ("month=2026-13", "month"),
        ("month=202610", "month"),
        ("month=2026-1", "month"),
        ("month=2026-10-01", "month"),
        ("", "month"),
        ("month=2026-10&format=pdf", "format"),
    ] {
        client
            .get(&format!("/v1/entities/{entity}/iva?{bad}"))
            .expect_field_error(field);
    }
    let stranger = app.client_as(&app.create_user_in_new_org());
    stranger
        .get(&format!("/v1/entities/{entity}/iva?month=2026-10"))
        .expect_not_found();
    app.anonymous()
        .get(&format!("/v1/entities/{entity}/iva?month=2026-10"))
        .expect_unauthorized("");
}

/// The shared samples' PPD invoice paid in full by its complement (the summary's
/// first case): 2,462.45 collected in January 2020, nothing creditable.
#[test]
fn the_real_samples_ppd_paid_by_its_complement() {
    let app = TestApp::spawn();
    let mut entities = Default::default();
    import_by_issuer(
        &app,
        &mut entities,
        &[
            "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
            "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
        ],
    );
    let entity = entities.values().next().expect("the entity").clone();
    let d = iva(&app.client(), &entity, "month=2020-01");
    assert_eq!(
        rows(&d["issued"], LINE),
        [
            "payments transferred 0.160000 MXN 15390.30 2462.45 1 15390.30 2462.45",
            "net transferred 0.160000 MXN 15390.30 2462.45 null 15390.30 2462.45",
        ]
    );
    assert_eq!(d["received"], Value::Array(vec![]));
    assert_eq!(text(&d["figures"]["iva_collected"]), "2462.45");
    assert_eq!(text(&d["figures"]["result"]), "payable");
    assert_eq!(text(&d["figures"]["total_to_pay"]), "2462.45");
    assert_eq!(d["excluded"], Value::Array(vec![]));
}
