//! `GET /v1/entities/{id}/summary`: an entity's period summary, hand-computed for the
//! shared samples' payment scenarios (and variants of them written here), as JSON and
//! as the one-sheet XLSX.

use std::io::Cursor;
use std::path::PathBuf;

use calamine::{Data, Reader, Xlsx};
use serde_json::Value;

use crate::common::app::{Client, TestApp};
use crate::common::engine::TestDb;
use crate::common::invoices::*;

const PPD: &str = "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml";
const FULL_PAYMENT: &str = "cfdi40-pago20-tfd-full-payment-of-ppd.xml";
const PPD_UUID: &str = "6d7434a6-e3f2-47ad-9e4c-08849946afa0";
const PAYMENT_UUID: &str = "5b64ada3-aa4c-40b4-a2f5-572ced52be31";

fn summary(client: &Client, entity: &str, query: &str) -> Value {
    let resp = client.get(&format!("/v1/entities/{entity}/summary?{query}"));
    assert_eq!(resp.status, 200, "{query}: {}", resp.text());
    resp.json()
}

/// A line as one comparable text: the named fields' JSON, space separated (amounts
/// keep their exact decimal text).
fn row(line: &Value, fields: &[&str]) -> String {
    let cells: Vec<String> = fields
        .iter()
        .map(|f| match &line[*f] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    cells.join(" ")
}

fn rows(list: &Value, fields: &[&str]) -> Vec<String> {
    let list = list.as_array().expect("an array");
    list.iter().map(|l| row(l, fields)).collect()
}

const TOTALS: &[&str] = &[
    "type",
    "currency",
    "count",
    "subtotal",
    "discount",
    "taxes_transferred",
    "taxes_withheld",
    "total",
];
const NET: &[&str] = &[
    "currency",
    "count",
    "subtotal",
    "discount",
    "taxes_transferred",
    "taxes_withheld",
    "total",
];
const TAX: &[&str] = &[
    "source", "kind", "tax_name", "rate", "currency", "base", "amount", "count",
];

#[test]
fn a_ppd_invoice_paid_in_full_by_a_complement_with_its_own_taxes() {
    let app = TestApp::spawn();
    let mut entities = Default::default();
    import_by_issuer(&app, &mut entities, &[PPD, FULL_PAYMENT]);
    let entity = entities.values().next().expect("the entity").clone();
    let s = summary(
        &app.client(),
        &entity,
        "from=2020-01-01&to=2020-01-31&direction=issued",
    );
    assert_eq!(
        rows(&s["totals"], TOTALS),
        [
            "I MXN 1 15390.30 0 2462.45 0 17852.75",
            // A complement's own amounts are zero.
            "P XXX 1 0 0 0 0 0",
        ]
    );
    assert_eq!(
        rows(&s["taxes"], TAX),
        [
            "invoices transferred IVA 0.160000 MXN 15390.30 2462.45 1",
            "net transferred IVA 0.160000 MXN 15390.30 2462.45 null",
        ]
    );
    // PPD: nothing at issue; the complement's TrasladoDR (Base 15390.30, Importe
    // 2462.45) on FechaPago 2020-01-02.
    assert_eq!(
        rows(&s["cash_basis_iva"], TAX),
        [
            "payments transferred IVA 0.160000 MXN 15390.30 2462.45 1",
            "net transferred IVA 0.160000 MXN 15390.30 2462.45 null",
        ]
    );
    // The payment date is what counts for the cash basis, not the invoice's month.
    let feb = summary(
        &app.client(),
        &entity,
        "from=2020-02-01&to=2020-02-29&direction=issued",
    );
    assert_eq!(feb["totals"], Value::Array(vec![]));
    assert_eq!(feb["cash_basis_iva"], Value::Array(vec![]));
}

/// The PPD sample and its complement rewritten into the documents of one entity's
/// January and February 2020: (file name, XML).
fn variants() -> Vec<(&'static str, String)> {
    let invoice = String::from_utf8(sample_bytes(PPD)).expect("utf-8");
    let payment = String::from_utf8(sample_bytes(FULL_PAYMENT)).expect("utf-8");
    let edit = |text: &str, edits: &[(&str, &str)]| {
        edits.iter().fold(text.to_string(), |t, (from, to)| {
            assert!(t.contains(from), "{from} is in the sample");
            t.replace(from, to)
        })
    };
    let uuid = |n: u32| format!("aaaaaaaa-0000-4000-8000-{n:012}");
    let ppd_date = "Fecha=\"2020-01-01T22:40:38\"";
    let taxes_dr = {
        let start = payment.find("<pago20:ImpuestosDR>").expect("ImpuestosDR");
        let end =
            payment.find("</pago20:ImpuestosDR>").expect("end") + "</pago20:ImpuestosDR>".len();
        payment[start..end].to_string()
    };
    vec![
        ("ppd.xml", invoice.clone()),
        (
            "usd-pue.xml",
            edit(
                &invoice,
                &[
                    (PPD_UUID, &uuid(1)),
                    ("Moneda=\"MXN\"", "Moneda=\"USD\" TipoCambio=\"17.0000\""),
                    ("MetodoPago=\"PPD\"", "MetodoPago=\"PUE\""),
                    (ppd_date, "Fecha=\"2020-01-05T10:00:00\""),
                ],
            ),
        ),
        (
            "credit-note.xml",
            edit(
                &invoice,
                &[
                    (PPD_UUID, &uuid(2)),
                    ("TipoDeComprobante=\"I\"", "TipoDeComprobante=\"E\""),
                    ("MetodoPago=\"PPD\"", "MetodoPago=\"PUE\""),
                    (ppd_date, "Fecha=\"2020-01-08T10:00:00\""),
                    ("15390.30", "1000.00"),
                    ("2462.45", "160.00"),
                    ("17852.75", "1160.00"),
                ],
            ),
        ),
        (
            "cancelled-pue.xml",
            edit(
                &invoice,
                &[
                    (PPD_UUID, &uuid(3)),
                    ("MetodoPago=\"PPD\"", "MetodoPago=\"PUE\""),
                    (ppd_date, "Fecha=\"2020-01-09T10:00:00\""),
                ],
            ),
        ),
        (
            // 10,000.00 of 17,852.75 on January 20, with its own TrasladoDR.
            "payment-jan.xml",
            edit(
                &payment,
                &[
                    (PAYMENT_UUID, &uuid(11)),
                    (ppd_date, "Fecha=\"2020-01-20T13:00:00\""),
                    (
                        "FechaPago=\"2020-01-02T22:40:38\"",
                        "FechaPago=\"2020-01-20T12:00:00\"",
                    ),
                    ("Monto=\"17852.75\"", "Monto=\"10000.00\""),
                    ("ImpPagado=\"17852.75\"", "ImpPagado=\"10000.00\""),
                    ("ImpSaldoInsoluto=\"0.00\"", "ImpSaldoInsoluto=\"7852.75\""),
                    ("BaseDR=\"15390.30\"", "BaseDR=\"8620.69\""),
                    ("ImporteDR=\"2462.45\"", "ImporteDR=\"1379.31\""),
                ],
            ),
        ),
        (
            // The rest, 7,852.75, on February 10, without ImpuestosDR.
            "payment-feb.xml",
            edit(
                &payment,
                &[
                    (PAYMENT_UUID, &uuid(12)),
                    (ppd_date, "Fecha=\"2020-02-10T13:00:00\""),
                    (
                        "FechaPago=\"2020-01-02T22:40:38\"",
                        "FechaPago=\"2020-02-10T12:00:00\"",
                    ),
                    ("NumParcialidad=\"1\"", "NumParcialidad=\"2\""),
                    ("Monto=\"17852.75\"", "Monto=\"7852.75\""),
                    ("ImpSaldoAnt=\"17852.75\"", "ImpSaldoAnt=\"7852.75\""),
                    ("ImpPagado=\"17852.75\"", "ImpPagado=\"7852.75\""),
                    (&taxes_dr, ""),
                ],
            ),
        ),
        (
            // Cancelled below: its payment of January 25 is left out.
            "payment-cancelled.xml",
            edit(
                &payment,
                &[
                    (PAYMENT_UUID, &uuid(13)),
                    (ppd_date, "Fecha=\"2020-01-25T13:00:00\""),
                    (
                        "FechaPago=\"2020-01-02T22:40:38\"",
                        "FechaPago=\"2020-01-25T12:00:00\"",
                    ),
                    ("ImpPagado=\"17852.75\"", "ImpPagado=\"1.00\""),
                ],
            ),
        ),
    ]
}

struct Months {
    app: TestApp,
    entity: String,
}

fn months() -> Months {
    let app = TestApp::spawn();
    let entity = id_of(&app.client().create_entity(&issuer_of(PPD), "sandbox1"));
    let dir = tempfile::TempDir::new().expect("temp dir");
    let paths: Vec<PathBuf> = variants()
        .into_iter()
        .map(|(name, xml)| {
            let path = dir.path().join(name);
            std::fs::write(&path, xml).expect("write");
            path
        })
        .collect();
    let ids: std::collections::BTreeMap<String, String> = import(&app, &entity, "issued", &paths)
        .into_iter()
        .collect();
    // Cancellations come from the tax authority's listing; set them as it would.
    let mut db = TestDb::open(app.data_dir());
    for name in ["cancelled-pue.xml", "payment-cancelled.xml"] {
        db.execute(
            "UPDATE invoices SET status = 'cancelled', cancelled_at = '2020-01-30T00:00:00' WHERE id = ?1",
            &[&ids[name]],
        );
    }
    Months { app, entity }
}

const JANUARY: &str = "from=2020-01-01&to=2020-01-31&direction=issued";

#[test]
fn ppd_paid_across_months_foreign_currency_credit_note_and_cancellations() {
    let m = months();
    let client = m.app.client();
    let jan = summary(&client, &m.entity, JANUARY);
    assert_eq!(jan["from"], "2020-01-01");
    assert_eq!(jan["to"], "2020-01-31");
    assert_eq!(
        rows(&jan["totals"], TOTALS),
        [
            "E MXN 1 1000.00 0 160.00 0 1160.00",
            // The PPD invoice; the cancelled PUE one is not here.
            "I MXN 1 15390.30 0 2462.45 0 17852.75",
            "I USD 1 15390.30 0 2462.45 0 17852.75",
            // January's complement; the cancelled one is not here.
            "P XXX 1 0 0 0 0 0",
        ]
    );
    assert_eq!(
        rows(&jan["net"], NET),
        [
            // 15390.30 − 1000.00, 2462.45 − 160.00, 17852.75 − 1160.00
            "MXN 2 14390.30 0 2302.45 0 16692.75",
            "USD 1 15390.30 0 2462.45 0 17852.75",
        ]
    );
    assert_eq!(
        rows(&jan["taxes"], TAX),
        [
            "invoices transferred IVA 0.160000 MXN 15390.30 2462.45 1",
            "invoices transferred IVA 0.160000 USD 15390.30 2462.45 1",
            "credit_notes transferred IVA 0.160000 MXN 1000.00 160.00 1",
            "net transferred IVA 0.160000 MXN 14390.30 2302.45 null",
            "net transferred IVA 0.160000 USD 15390.30 2462.45 null",
        ]
    );
    assert_eq!(
        rows(&jan["cash_basis_iva"], TAX),
        [
            // The USD invoice is PUE: its IVA counts at issue.
            "pue transferred IVA 0.160000 USD 15390.30 2462.45 1",
            // January's payment, by its own TrasladoDR.
            "payments transferred IVA 0.160000 MXN 8620.69 1379.31 1",
            "credit_notes transferred IVA 0.160000 MXN 1000.00 160.00 1",
            // 8620.69 − 1000.00, 1379.31 − 160.00
            "net transferred IVA 0.160000 MXN 7620.69 1219.31 null",
            "net transferred IVA 0.160000 USD 15390.30 2462.45 null",
        ]
    );
    // The cancelled PUE invoice and the cancelled complement (issued January 25).
    assert_eq!(jan["excluded"]["cancelled_documents"], 2);
    assert_eq!(jan["excluded"]["cancelled_payments"], 1);
    assert_eq!(jan["unresolved_payments"], Value::Array(vec![]));

    let feb = summary(
        &client,
        &m.entity,
        "from=2020-02-01&to=2020-02-29&direction=issued",
    );
    assert_eq!(rows(&feb["totals"], TOTALS), ["P XXX 1 0 0 0 0 0"]);
    assert_eq!(feb["taxes"], Value::Array(vec![]));
    // No ImpuestosDR: the paid proportion of the invoice's IVA, rounded to cents:
    // 2462.45 × 7852.75 / 17852.75 = 1083.1386… → 1083.14
    // 15390.30 × 7852.75 / 17852.75 = 6769.6113… → 6769.61
    assert_eq!(
        rows(&feb["cash_basis_iva"], TAX),
        [
            "payments transferred IVA 0.160000 MXN 6769.61 1083.14 1",
            "net transferred IVA 0.160000 MXN 6769.61 1083.14 null",
        ]
    );
    assert_eq!(feb["excluded"]["cancelled_documents"], 0);

    // Received: none of these.
    let received = summary(
        &client,
        &m.entity,
        "from=2020-01-01&to=2020-01-31&direction=received",
    );
    assert_eq!(received["totals"], Value::Array(vec![]));
}

#[test]
fn the_lists_filters_name_the_invoices_behind_a_line() {
    let m = months();
    let client = m.app.client();
    let period = format!(
        "entity_id={}&direction=issued&issued_from=2020-01-01&issued_to=2020-01-31&status=active",
        m.entity
    );
    let count = |extra: &str| invoices(&client, &format!("{period}&{extra}")).len();
    // cash_basis_iva "pue" USD: type I, not PPD, in USD.
    assert_eq!(count("type=I&payment_method=PUE&currency=USD"), 1);
    // taxes "invoices" MXN and "credit_notes" MXN.
    assert_eq!(count("type=I&currency=MXN"), 1);
    assert_eq!(count("type=E&currency=mxn"), 1);
    // excluded.cancelled_documents.
    let cancelled = format!(
        "entity_id={}&direction=issued&issued_from=2020-01-01&issued_to=2020-01-31&status=cancelled",
        m.entity
    );
    assert_eq!(invoices(&client, &format!("{cancelled}&type=I")).len(), 1);
}

/// The rows of a book's one sheet, named `name`, each cell as text (numbers as exact
/// decimals), trailing empty cells dropped.
pub(crate) fn sheet_rows(bytes: &[u8], name: &str) -> Vec<Vec<String>> {
    let book = Xlsx::new(Cursor::new(bytes.to_vec())).expect("an XLSX");
    assert_eq!(book.sheet_names(), [name], "one sheet");
    named_sheet_rows(bytes, name)
}

/// The rows of the book's sheet `name`, as `sheet_rows` reads them.
pub(crate) fn named_sheet_rows(bytes: &[u8], name: &str) -> Vec<Vec<String>> {
    let mut book = Xlsx::new(Cursor::new(bytes.to_vec())).expect("an XLSX");
    let range = book.worksheet_range(name).expect("sheet");
    range
        .rows()
        .map(|r| {
            let mut cells: Vec<String> = r
                .iter()
                .map(|c| match c {
                    Data::Empty => String::new(),
                    Data::String(s) => s.clone(),
                    Data::Float(x) => {
                        let d: rust_decimal::Decimal = x.to_string().parse().expect("decimal");
                        d.normalize().to_string()
                    }
                    Data::DateTime(d) => format!("date {:.6}", d.as_f64()),
                    other => panic!("unexpected cell {other:?}"),
                })
                .collect();
            while cells.last().is_some_and(String::is_empty) {
                cells.pop();
            }
            cells
        })
        .collect()
}

/// A JSON value as the sheet shows it: text as is (a date field as its date cell's
/// serial), numbers normalized, null empty.
fn shown_field(name: &str, v: &Value) -> String {
    match v {
        Value::String(s)
            if ["from", "to", "paid_at", "definitive_sat", "definitive_dof"].contains(&name) =>
        {
            format!("date {:.6}", excel_serial(s).expect("a date"))
        }
        other => shown(other),
    }
}

fn shown(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => {
            let d: rust_decimal::Decimal = other.to_string().parse().expect("decimal");
            d.normalize().to_string()
        }
    }
}

/// What the accountant's sheet writes for a JSON field the API gives as a code or an
/// English word: its description, or its Spanish (the values these months hold).
fn spanish(field: &str, v: &Value) -> String {
    let Some(text) = v.as_str() else {
        return shown_field(field, v);
    };
    let words = match (field, text) {
        ("type", "I") => "I - Ingreso",
        ("type", "E") => "E - Egreso",
        ("type", "P") => "P - Pago",
        ("tax", "001") => "001 - ISR",
        ("tax", "002") => "002 - IVA",
        ("source", "invoices") => "Facturas",
        ("source", "pue") => "Facturas PUE",
        ("source", "payments") => "Pagos (complementos)",
        ("source", "credit_notes") => "Notas de crédito",
        ("source", "net") => "Neto",
        ("source", "total") => "Total",
        ("kind", "transferred") => "Trasladado",
        ("kind", "withheld") => "Retenido",
        ("reason", "invoice_not_found") => "No se encontró el documento pagado",
        ("reason", "currency_mismatch") => "El pago está en otra moneda que el documento pagado",
        ("reason", "invoice_cancelled") => "El documento pagado está cancelado",
        // A local tax is named, not coded: as written.
        ("tax", other) if !other.starts_with("00") => other,
        ("type" | "tax" | "source" | "kind" | "reason", other) => {
            panic!("{field} {other}: what does the sheet say?")
        }
        _ => return shown_field(field, v),
    };
    words.to_owned()
}

#[test]
fn the_xlsx_holds_the_json_cell_by_cell_in_spanish() {
    let m = months();
    let client = m.app.client();
    let json = summary(&client, &m.entity, JANUARY);
    let entity = client.get(&format!("/v1/entities/{}", m.entity)).json();
    let resp = client.get(&format!(
        "/v1/entities/{}/summary?{JANUARY}&format=xlsx",
        m.entity
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.header("content-type"),
        Some("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    );
    assert_eq!(
        resp.header("content-disposition"),
        Some("attachment; filename=\"summary-2020-01-01-2020-01-31-issued.xlsx\"")
    );
    let sheet = sheet_rows(&resp.body, "Resumen");
    let tax_id = entity["tax_id"].as_str().expect("tax_id");
    let mut expected: Vec<Vec<String>> = vec![
        vec!["Resumen fiscal del periodo".into()],
        vec!["RFC".into(), tax_id.into()],
        vec!["Nombre".into(), format!("Entity {tax_id}")],
        vec!["Comprobantes".into(), "Emitidos".into()],
        vec!["Desde".into(), shown_field("from", &json["from"])],
        vec!["Hasta".into(), shown_field("to", &json["to"])],
    ];
    let totals: &[(&str, &str)] = &[
        ("Tipo de comprobante", "type"),
        ("Moneda", "currency"),
        ("Comprobantes", "count"),
        ("Subtotal", "subtotal"),
        ("Descuento", "discount"),
        ("Impuestos trasladados", "taxes_transferred"),
        ("Impuestos retenidos", "taxes_withheld"),
        ("Total", "total"),
        ("Impuestos locales trasladados", "local_taxes_transferred"),
        ("Impuestos locales retenidos", "local_taxes_withheld"),
    ];
    let sections: [(&str, &str, Columns); 9] = [
        ("Totales por tipo de comprobante y moneda", "totals", totals),
        (
            "Neto: facturas (I) menos notas de crédito (E)",
            "net",
            &totals[1..],
        ),
        ("Impuestos por impuesto y tasa", "taxes", TAX_ALL),
        ("IVA en flujo de efectivo", "cash_basis_iva", TAX_ALL),
        (
            "Pagos que no entran al IVA en flujo de efectivo",
            "unresolved_payments",
            &[
                ("Complemento de pago (id)", "payment_invoice_id"),
                ("UUID del documento pagado", "related_uuid"),
                ("Fecha de pago", "paid_at"),
                ("Moneda", "currency"),
                ("Importe pagado", "amount_paid"),
                ("Motivo", "reason"),
            ],
        ),
        ("Impuestos locales", "local_taxes", TAX_ALL),
        ("ISR retenido en nómina", "payroll_taxes", TAX_ALL),
        (
            "Retenido a la entidad (facturas emitidas y retenciones recibidas, en pesos)",
            "withholdings",
            &[
                ("Origen", "source"),
                ("Impuesto", "tax"),
                ("Tipo de pago", "payment_type"),
                ("Comprobantes", "count"),
                ("Importe en pesos", "amount_mxn"),
            ],
        ),
        (
            "Recibidos de emisores definitivos en la lista 69-B (no deducibles)",
            "definitive_69b_issuers",
            &[
                ("RFC", "tax_id"),
                ("Nombre", "name"),
                ("Definitivo (SAT)", "definitive_sat"),
                ("Definitivo (DOF)", "definitive_dof"),
                ("Versión de la lista", "list_version"),
                ("Moneda", "currency"),
                ("Comprobantes", "count"),
                ("Subtotal", "subtotal"),
                ("Total", "total"),
            ],
        ),
    ];
    let mut lines = 0;
    for (title, key, columns) in sections {
        expected.push(vec![]);
        expected.push(vec![title.to_string()]);
        expected.push(columns.iter().map(|(h, _)| h.to_string()).collect());
        for line in json[key].as_array().expect("lines") {
            lines += 1;
            let mut cells: Vec<String> = columns
                .iter()
                .map(|(_, field)| spanish(field, &line[*field]))
                .collect();
            while cells.last().is_some_and(String::is_empty) {
                cells.pop();
            }
            expected.push(cells);
        }
    }
    assert!(lines > 10, "the month fills the sections: {lines} lines");
    expected.push(vec![]);
    expected.push(vec!["Excluidos".into()]);
    for (label, k) in [
        ("Comprobantes cancelados", "cancelled_documents"),
        ("Pagos de complementos cancelados", "cancelled_payments"),
    ] {
        expected.push(vec![label.into(), shown(&json["excluded"][k])]);
    }
    assert_eq!(sheet, expected);
    // No UUID names the taxpayer: the entity's id appears nowhere.
    assert!(!sheet.iter().flatten().any(|c| c.contains(&m.entity)));
    // Amounts are numbers, not text, with a currency format; rates are percentages;
    // dates are date cells written day first.
    let mut book = Xlsx::new(Cursor::new(resp.body.clone())).expect("xlsx");
    let range = book.worksheet_range("Resumen").expect("sheet");
    assert_eq!(range.get((9, 7)), Some(&Data::Float(1160.0)), "E's total");
    // 2020-01-01 is Excel's day 43831.
    assert!(matches!(range.get((4, 1)), Some(Data::DateTime(d)) if d.as_f64() == 43831.0));
    let mut zip = zip::ZipArchive::new(Cursor::new(resp.body.clone())).expect("a zip");
    let mut styles = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("xl/styles.xml").expect("styles"),
        &mut styles,
    )
    .expect("styles text");
    for format in [
        "$#,##0.00",
        "$#,##0.00 &quot;USD&quot;",
        "0.00##%",
        "dd/mm/yyyy",
    ] {
        assert!(styles.contains(format), "{format} in {styles}");
    }
}

/// A section's columns: header, and the JSON field it shows.
type Columns = &'static [(&'static str, &'static str)];

const TAX_ALL: Columns = &[
    ("Origen", "source"),
    ("Tipo", "kind"),
    ("Impuesto", "tax"),
    ("Tipo factor", "factor"),
    ("Tasa o cuota", "rate"),
    ("Moneda", "currency"),
    ("Base", "base"),
    ("Importe", "amount"),
    ("Comprobantes", "count"),
    ("Base en pesos", "base_mxn"),
    ("Importe en pesos", "amount_mxn"),
];

#[test]
fn bad_parameters_are_422_and_another_organizations_entity_is_404() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("AAA010101AAA", "sandbox1"));
    let get = |c: &Client, q: &str| c.get(&format!("/v1/entities/{entity}/summary?{q}"));
    for (query, field) in [
        ("to=2020-01-31&direction=issued", "from"),
        ("from=2020-01-01&direction=issued", "to"),
        ("from=2020-01-01&to=2020-01-31", "direction"),
        ("from=2020-02-30&to=2020-03-31&direction=issued", "from"),
        ("from=2020-02-01&to=2020-01-31&direction=issued", "to"),
        ("from=2020-01-01&to=2021-01-01&direction=issued", "to"),
        ("from=2020-01-01&to=2020-01-31&direction=both", "direction"),
        (
            "from=2020-01-01&to=2020-01-31&direction=issued&format=pdf",
            "format",
        ),
    ] {
        get(&client, query).expect_field_error(field);
    }
    // A leap year's 366 days are one period.
    assert_eq!(
        get(&client, "from=2020-01-01&to=2020-12-31&direction=issued").status,
        200
    );
    let ok = "from=2020-01-01&to=2020-01-31&direction=issued";
    let stranger = app.client_as(&app.create_user_in_new_org());
    get(&stranger, ok).expect_not_found();
    client
        .get(&format!("/v1/entities/not-an-id/summary?{ok}"))
        .expect_not_found();
    app.anonymous()
        .get(&format!("/v1/entities/{entity}/summary?{ok}"))
        .expect_unauthorized("");
}

// ---------------------------------------------------------------------------------------
// Hand-worked figures of synthetic documents (issued by AAA010101AAA in March 2021),
// imported with the CLI and read back through the summary.

const ISSUER: &str = "AAA010101AAA";

fn stamp(uuid: &str) -> String {
    format!(
        r#"<tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital"
            Version="1.1" UUID="{uuid}" FechaTimbrado="2021-03-31T00:00:00" RfcProvCertif="SAT970701NN3"/>"#
    )
}

/// A CFDI 4.0 I or E with one Traslado of IVA 16% per (base, importe) concept.
fn invoice_40(
    uuid: &str,
    kind: &str,
    method: &str,
    currency: &str,
    date: &str,
    (subtotal, iva, total): (&str, &str, &str),
    concepts: &[(&str, &str)],
) -> String {
    let concepts: String = concepts
        .iter()
        .map(|(base, amount)| {
            format!(
                r#"<cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="E48" Descripcion="Servicio"
                    ValorUnitario="{base}" Importe="{base}" ObjetoImp="02"><cfdi:Impuestos><cfdi:Traslados>
                    <cfdi:Traslado Base="{base}" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="{amount}"/>
                    </cfdi:Traslados></cfdi:Impuestos></cfdi:Concepto>"#
            )
        })
        .collect();
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" Version="4.0" Fecha="{date}" SubTotal="{subtotal}"
    Total="{total}" {currency} TipoDeComprobante="{kind}" MetodoPago="{method}" FormaPago="99" Exportacion="01" LugarExpedicion="01000">
  <cfdi:Emisor Rfc="{ISSUER}" Nombre="EMISOR" RegimenFiscal="601"/>
  <cfdi:Receptor Rfc="XAXX010101000" Nombre="PUBLICO" DomicilioFiscalReceptor="01000" RegimenFiscalReceptor="616" UsoCFDI="S01"/>
  <cfdi:Conceptos>{concepts}</cfdi:Conceptos>
  <cfdi:Impuestos TotalImpuestosTrasladados="{iva}"/>
  <cfdi:Complemento>{}</cfdi:Complemento>
</cfdi:Comprobante>"#,
        stamp(uuid)
    )
}

/// A payment complement: `pagos` is the Pagos element (1.0 on CFDI 3.3, 2.0 on 4.0).
fn payment(uuid: &str, version: &str, date: &str, pagos: &str) -> String {
    let ns = if version == "4.0" { "cfd/4" } else { "cfd/3" };
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/{ns}" Version="{version}" Fecha="{date}" SubTotal="0" Total="0"
    Moneda="XXX" TipoDeComprobante="P" Exportacion="01" LugarExpedicion="01000">
  <cfdi:Emisor Rfc="{ISSUER}" Nombre="EMISOR" RegimenFiscal="601"/>
  <cfdi:Receptor Rfc="XAXX010101000" Nombre="PUBLICO" UsoCFDI="CP01"/>
  <cfdi:Conceptos><cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="ACT" Descripcion="Pago"
    ValorUnitario="0" Importe="0"/></cfdi:Conceptos>
  <cfdi:Complemento>{pagos}{}</cfdi:Complemento>
</cfdi:Comprobante>"#,
        stamp(uuid)
    )
}

fn synthetic_uuid(n: u32) -> String {
    format!("bbbbbbbb-0000-4000-8000-{n:012}")
}

/// The documents: (file name, XML).
fn synthetic() -> Vec<(&'static str, String)> {
    let u = synthetic_uuid;
    vec![
        // Two concepts of IVA 16% (592.5888 and 71.9984) on 4,818.26, PPD.
        (
            "ppd.xml",
            invoice_40(
                &u(1),
                "I",
                "PPD",
                r#"Moneda="MXN""#,
                "2021-03-01T10:00:00",
                ("4153.67", "664.59", "4818.26"),
                &[("3703.68", "592.5888"), ("449.99", "71.9984")],
            ),
        ),
        // Paid 2,000.00 by Pagos 1.0 (no taxes of its own).
        (
            "pago10.xml",
            payment(
                &u(2),
                "3.3",
                "2021-03-15T10:00:00",
                &format!(
                    r#"<pago10:Pagos xmlns:pago10="http://www.sat.gob.mx/Pagos" Version="1.0">
                    <pago10:Pago FechaPago="2021-03-15T09:00:00" FormaDePagoP="03" MonedaP="MXN" Monto="2000.00">
                    <pago10:DoctoRelacionado IdDocumento="{}" MonedaDR="MXN" MetodoDePagoDR="PPD" NumParcialidad="1"
                        ImpSaldoAnt="4818.26" ImpPagado="2000.00" ImpSaldoInsoluto="2818.26"/>
                    </pago10:Pago></pago10:Pagos>"#,
                    u(1)
                ),
            ),
        ),
        // A USD PPD invoice, TipoCambio 20.00.
        (
            "usd-ppd.xml",
            invoice_40(
                &u(3),
                "I",
                "PPD",
                r#"Moneda="USD" TipoCambio="20.00""#,
                "2021-03-02T10:00:00",
                ("100.00", "16.00", "116.00"),
                &[("100.00", "16.00")],
            ),
        ),
        // Half of it paid in pesos by Pagos 2.0: 58.00 USD at EquivalenciaDR 0.05 USD
        // per peso is 1,160.00 MXN, with its own TrasladoDR of 8.00 USD on 50.00.
        (
            "pago20.xml",
            payment(
                &u(4),
                "4.0",
                "2021-03-20T10:00:00",
                &format!(
                    r#"<pago20:Pagos xmlns:pago20="http://www.sat.gob.mx/Pagos20" Version="2.0">
                    <pago20:Totales MontoTotalPagos="1160.00" TotalTrasladosBaseIVA16="1000.00" TotalTrasladosImpuestoIVA16="160.00"/>
                    <pago20:Pago FechaPago="2021-03-20T09:00:00" FormaDePagoP="03" MonedaP="MXN" TipoCambioP="1" Monto="1160.00">
                    <pago20:DoctoRelacionado IdDocumento="{}" MonedaDR="USD" EquivalenciaDR="0.05" NumParcialidad="1"
                        ImpSaldoAnt="116.00" ImpPagado="58.00" ImpSaldoInsoluto="58.00" ObjetoImpDR="02">
                      <pago20:ImpuestosDR><pago20:TrasladosDR>
                        <pago20:TrasladoDR BaseDR="50.00" ImpuestoDR="002" TipoFactorDR="Tasa" TasaOCuotaDR="0.160000" ImporteDR="8.00"/>
                      </pago20:TrasladosDR></pago20:ImpuestosDR>
                    </pago20:DoctoRelacionado></pago20:Pago></pago20:Pagos>"#,
                    u(3)
                ),
            ),
        ),
        // A USD PUE invoice at TipoCambio 20.50.
        (
            "usd-pue.xml",
            invoice_40(
                &u(5),
                "I",
                "PUE",
                r#"Moneda="USD" TipoCambio="20.50""#,
                "2021-03-03T10:00:00",
                ("200.00", "32.00", "232.00"),
                &[("200.00", "32.00")],
            ),
        ),
        // A PPD credit note: no complement ever pays it, it counts by its date.
        (
            "credit-note-ppd.xml",
            invoice_40(
                &u(6),
                "E",
                "PPD",
                r#"Moneda="MXN""#,
                "2021-03-25T10:00:00",
                ("100.00", "16.00", "116.00"),
                &[("100.00", "16.00")],
            ),
        ),
    ]
}

const TAX_MXN: &[&str] = &[
    "source",
    "kind",
    "tax_name",
    "rate",
    "currency",
    "base",
    "amount",
    "count",
    "base_mxn",
    "amount_mxn",
];

#[test]
fn cash_basis_shares_pesos_and_ppd_credit_notes_by_hand() {
    let app = TestApp::spawn();
    let entity = id_of(&app.client().create_entity(ISSUER, "sandbox1"));
    let dir = tempfile::TempDir::new().expect("temp dir");
    let paths: Vec<PathBuf> = synthetic()
        .into_iter()
        .map(|(name, xml)| {
            let path = dir.path().join(name);
            std::fs::write(&path, xml).expect("write");
            path
        })
        .collect();
    import(&app, &entity, "issued", &paths);
    let s = summary(
        &app.client(),
        &entity,
        "from=2021-03-01&to=2021-03-31&direction=issued",
    );
    assert_eq!(
        rows(&s["cash_basis_iva"], TAX_MXN),
        [
            // 32.00 × 20.50 = 656.00; 200.00 × 20.50 = 4100.00.
            "pue transferred IVA 0.160000 USD 200.00 32.00 1 4100.00 656.00",
            // Pagos 1.0: (592.5888 + 71.9984) × 2000.00 ÷ 4818.26 = 275.8619… → 275.86
            // (each entry rounded first gave 245.98 + 29.89 = 275.87);
            // (3703.68 + 449.99) × 2000.00 ÷ 4818.26 = 1724.1369… → 1724.14.
            "payments transferred IVA 0.160000 MXN 1724.14 275.86 1 1724.14 275.86",
            // Pagos 2.0, its own TrasladoDR: 8.00 USD ÷ 0.05 × 1 = 160.00 MXN; 50.00 USD
            // ÷ 0.05 = 1000.00.
            "payments transferred IVA 0.160000 USD 50.00 8.00 1 1000.00 160.00",
            // The PPD credit note.
            "credit_notes transferred IVA 0.160000 MXN 100.00 16.00 1 100.00 16.00",
            // 275.86 − 16.00; 1724.14 − 100.00.
            "net transferred IVA 0.160000 MXN 1624.14 259.86 null 1624.14 259.86",
            // 32.00 + 8.00 USD; 656.00 + 160.00 MXN.
            "net transferred IVA 0.160000 USD 250.00 40.00 null 5100.00 816.00",
        ]
    );
    assert_eq!(s["unresolved_payments"], Value::Array(vec![]));
    // The document basis in pesos: the PPD USD invoice at 20.00, the PUE at 20.50.
    assert_eq!(
        rows(&s["taxes"], TAX_MXN)
            .into_iter()
            .filter(|l| l.contains("USD"))
            .collect::<Vec<_>>(),
        [
            // 16.00 × 20.00 + 32.00 × 20.50 = 320.00 + 656.00
            "invoices transferred IVA 0.160000 USD 300.00 48.00 2 6100.00 976.00",
            "net transferred IVA 0.160000 USD 300.00 48.00 null 6100.00 976.00",
        ]
    );
}

#[test]
fn cfdi32_local_and_payroll_taxes_from_real_samples() {
    let app = TestApp::spawn();
    let mut entities = Default::default();
    let implocal = "cfdi33-ingreso-pue-real-implocal-tfd.xml";
    let legacy = "cfdi32-ingreso-real-legacy-tfd10.xml";
    let payroll = "cfdi40-nomina-compensacion-tfd.xml";
    import_by_issuer(&app, &mut entities, &[implocal, legacy, payroll]);
    let client = app.client();
    let of = |name: &str| entities[&issuer_of(name)].clone();

    // The hotel invoice: SubTotal 1709.12 + IVA 273.46 + lodging tax (IH 2.5%) 27.43
    // = 2010.01.
    let s = summary(
        &client,
        &of(implocal),
        "from=2018-01-01&to=2018-01-31&direction=issued",
    );
    let mut totals = TOTALS.to_vec();
    totals.extend(["local_taxes_transferred", "local_taxes_withheld"]);
    assert_eq!(
        rows(&s["totals"], &totals),
        ["I MXN 1 1709.12 0 273.46 0 2010.01 27.43 0"]
    );
    assert_eq!(
        rows(
            &s["local_taxes"],
            &["source", "kind", "tax", "rate", "amount", "count"]
        ),
        [
            "invoices transferred IH 0.025000 27.43 1",
            "net transferred IH 0.025000 27.43 null",
        ]
    );

    // CFDI 3.2: impuesto="IVA" tasa="16" importe="646.21" on the IVA 16% line; 3.2 has
    // no MetodoPago, so the cash basis counts it at issue. 3.2 states no base.
    let s = summary(
        &client,
        &of(legacy),
        "from=2017-03-01&to=2017-03-31&direction=issued",
    );
    let tax = &[
        "source", "kind", "tax", "tax_name", "factor", "rate", "base", "amount", "count",
    ];
    assert_eq!(
        rows(&s["taxes"], tax),
        [
            "invoices transferred 002 IVA Tasa 0.160000 0 646.21 1",
            "net transferred 002 IVA Tasa 0.160000 0 646.21 null",
        ]
    );
    assert_eq!(
        rows(&s["cash_basis_iva"], tax)[0],
        "pue transferred 002 IVA Tasa 0.160000 0 646.21 1"
    );

    // Payroll: ISR withheld 2272.25 (nomina12 Deduccion TipoDeduccion 002).
    let s = summary(
        &client,
        &of(payroll),
        "from=2026-01-01&to=2026-01-31&direction=issued",
    );
    assert_eq!(
        rows(&s["payroll_taxes"], TAX_MXN),
        ["payroll withheld ISR null MXN 0 2272.25 1 0.00 2272.25"]
    );
}

/// Every `*_mxn` figure of a summary's JSON text, as written: (field, digits).
fn peso_figures(body: &str) -> Vec<(String, String)> {
    let re = regex::Regex::new(r#""(\w+_mxn)":(-?[0-9][0-9.eE+-]*)"#).expect("regex");
    re.captures_iter(body)
        .map(|c| (c[1].to_string(), c[2].to_string()))
        .collect()
}

fn two_decimals(n: &str) -> bool {
    regex::Regex::new(r"^-?[0-9]+\.[0-9]{2}$")
        .expect("regex")
        .is_match(n)
}

/// CFDI 3.2's free-text Moneda: the real sample's `Moneda="Pesos"` (no TipoCambio) and
/// a 3.2 payroll in `Pesos Mexicanos` are pesos at rate 1; their lines keep the
/// currency as written, and so does the invoice.
#[test]
fn cfdi32_pesos_spelled_out_are_pesos_and_every_peso_figure_has_two_decimals() {
    let app = TestApp::spawn();
    let client = app.client();
    let mut entities = Default::default();
    let pesos = "cfdi32-ingreso-tfd11-special-chars-rfc.xml";
    let ids = import_by_issuer(&app, &mut entities, &[pesos]);
    let entity = entities[&issuer_of(pesos)].clone();
    // Payroll in 3.2 was an egreso with the Nómina 1.1 complement: ISR 90.00 taxed +
    // 10.00 exempt withheld.
    let payroll = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/3" version="3.2" fecha="2015-02-15T10:00:00"
    tipoDeComprobante="egreso" subTotal="1000.00" descuento="100.00" total="900.00" Moneda="Pesos Mexicanos"
    formaDePago="En una sola exhibicion" metodoDePago="Transferencia" LugarExpedicion="Monterrey">
  <cfdi:Emisor rfc="{ISSUER}" nombre="EMISOR"/>
  <cfdi:Receptor rfc="XAXX010101000" nombre="EMPLEADO"/>
  <cfdi:Conceptos><cfdi:Concepto cantidad="1" unidad="Servicio" descripcion="Pago de nomina" valorUnitario="1000.00" importe="1000.00"/></cfdi:Conceptos>
  <cfdi:Impuestos/>
  <cfdi:Complemento>
    <nomina:Nomina xmlns:nomina="http://www.sat.gob.mx/nomina" Version="1.1">
      <nomina:Deducciones TotalGravado="90.00" TotalExento="10.00">
        <nomina:Deduccion TipoDeduccion="002" Clave="1" Concepto="ISR" ImporteGravado="90.00" ImporteExento="10.00"/>
      </nomina:Deducciones>
    </nomina:Nomina>
    {}
  </cfdi:Complemento>
</cfdi:Comprobante>"#,
        stamp("cccccccc-0000-4000-8000-000000000001")
    );
    let dir = tempfile::TempDir::new().expect("temp dir");
    let path = dir.path().join("nomina32.xml");
    std::fs::write(&path, payroll).expect("write");
    import(&app, &entity, "issued", &[path]);

    let resp = client.get(&format!(
        "/v1/entities/{entity}/summary?from=2015-02-01&to=2015-02-28&direction=issued"
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let body = resp.text();
    let s: Value = resp.json();
    // 3.2 states IVA 16% of 5,600.00 (and ISR and IVA withheld of 0.00) and no Base:
    // in pesos as is, nothing null.
    assert_eq!(
        rows(&s["taxes"], TAX_MXN),
        [
            "invoices transferred IVA 0.160000 Pesos 0 5600.00 1 0.00 5600.00",
            "invoices withheld ISR null Pesos 0 0.00 1 0.00 0.00",
            "invoices withheld IVA null Pesos 0 0.00 1 0.00 0.00",
            "net transferred IVA 0.160000 Pesos 0 5600.00 null 0.00 5600.00",
            "net withheld ISR null Pesos 0 0 null 0.00 0.00",
            "net withheld IVA null Pesos 0 0 null 0.00 0.00",
        ]
    );
    assert_eq!(
        rows(&s["cash_basis_iva"], TAX_MXN),
        [
            "pue transferred IVA 0.160000 Pesos 0 5600.00 1 0.00 5600.00",
            "pue withheld IVA null Pesos 0 0.00 1 0.00 0.00",
            "net transferred IVA 0.160000 Pesos 0 5600.00 null 0.00 5600.00",
            "net withheld IVA null Pesos 0 0 null 0.00 0.00",
        ]
    );
    assert_eq!(
        rows(&s["payroll_taxes"], TAX_MXN),
        ["payroll withheld ISR null Pesos Mexicanos 0 100.00 1 0.00 100.00"]
    );
    let figures = peso_figures(&body);
    assert!(figures.len() >= 10, "{figures:?}");
    let bad: Vec<_> = figures.iter().filter(|(_, n)| !two_decimals(n)).collect();
    assert!(bad.is_empty(), "peso figures without two decimals: {bad:?}");
    // The invoice keeps Moneda as written, and no TipoCambio.
    let invoice = client
        .get(&format!("/v1/invoices/{}", ids[pesos]))
        .expect(200);
    assert_eq!(invoice["currency"], "Pesos");
    assert!(invoice["exchange_rate"].is_null(), "{invoice}");
}

/// Net lines that come to zero pesos are written `0.00` too: the real implocal hotel
/// invoice (local tax without base) and the real 3.2 invoice (IVA without base) have
/// zero `base_mxn` on their net lines of `local_taxes`, `taxes` and `cash_basis_iva`.
#[test]
fn zero_peso_figures_on_net_lines_have_two_decimals() {
    let app = TestApp::spawn();
    let mut entities = Default::default();
    let implocal = "cfdi33-ingreso-pue-real-implocal-tfd.xml";
    let legacy = "cfdi32-ingreso-real-legacy-tfd10.xml";
    import_by_issuer(&app, &mut entities, &[implocal, legacy]);
    let client = app.client();
    for (name, period) in [
        (implocal, "from=2018-01-01&to=2018-01-31"),
        (legacy, "from=2017-03-01&to=2017-03-31"),
    ] {
        let entity = &entities[&issuer_of(name)];
        let resp = client.get(&format!(
            "/v1/entities/{entity}/summary?{period}&direction=issued"
        ));
        assert_eq!(resp.status, 200, "{}", resp.text());
        let body = resp.text();
        let s: Value = resp.json();
        let nets: Vec<String> = ["taxes", "cash_basis_iva", "local_taxes"]
            .iter()
            .flat_map(|section| rows(&s[*section], TAX_MXN))
            .filter(|l| l.starts_with("net "))
            .collect();
        assert!(
            nets.iter().any(|l| l.contains(" null 0.00 ")),
            "{name}: a net line with zero base in pesos: {nets:?}"
        );
        let figures = peso_figures(&body);
        let bad: Vec<_> = figures.iter().filter(|(_, n)| !two_decimals(n)).collect();
        assert!(
            bad.is_empty(),
            "{name}: peso figures without two decimals: {bad:?}"
        );
    }
}
