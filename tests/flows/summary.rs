//! `GET /v1/entities/{id}/summary`: an entity's period summary, hand-computed for the
//! shared samples' payment scenarios (and variants of them written here), as JSON and
//! as the one-sheet XLSX.

use std::io::Cursor;
use std::path::PathBuf;

use calamine::{Data, Reader, Xlsx};
use serde_json::Value;

use crate::common::app::{Client, TestApp};
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
    let db = rusqlite::Connection::open(app.data_dir().join("cfdi-extract.db")).expect("db");
    for name in ["cancelled-pue.xml", "payment-cancelled.xml"] {
        db.execute(
            "UPDATE invoices SET status = 'cancelled', cancelled_at = '2020-01-30T00:00:00' WHERE id = ?1",
            [&ids[name]],
        )
        .expect("cancel");
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

/// The sheet's rows, each cell as text (numbers as exact decimals), trailing empty
/// cells dropped.
fn sheet_rows(bytes: &[u8]) -> Vec<Vec<String>> {
    let mut book = Xlsx::new(Cursor::new(bytes.to_vec())).expect("an XLSX");
    let names = book.sheet_names();
    assert_eq!(names, ["Summary"], "one sheet");
    let range = book.worksheet_range(&names[0]).expect("sheet");
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

/// A JSON value as the sheet shows it: text as is, numbers normalized, null empty.
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

#[test]
fn the_xlsx_holds_the_json_cell_by_cell() {
    let m = months();
    let client = m.app.client();
    let json = summary(&client, &m.entity, JANUARY);
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
    let sheet = sheet_rows(&resp.body);
    let mut expected: Vec<Vec<String>> = ["entity_id", "direction", "from", "to"]
        .iter()
        .map(|k| vec![k.to_string(), shown(&json[*k])])
        .collect();
    let sections: [(&str, &str, &[&str]); 5] = [
        ("Totals by type and currency", "totals", TOTALS),
        ("Net: invoices (I) minus credit notes (E)", "net", NET),
        ("Taxes by tax and rate", "taxes", TAX_ALL),
        ("Cash-basis IVA", "cash_basis_iva", TAX_ALL),
        (
            "Payments left out of the cash basis",
            "unresolved_payments",
            &[
                "payment_invoice_id",
                "related_uuid",
                "paid_at",
                "currency",
                "amount_paid",
                "reason",
            ],
        ),
    ];
    for (title, key, columns) in sections {
        expected.push(vec![]);
        expected.push(vec![title.to_string()]);
        expected.push(columns.iter().map(|c| c.to_string()).collect());
        for line in json[key].as_array().expect("lines") {
            let mut cells: Vec<String> = columns.iter().map(|c| shown(&line[*c])).collect();
            while cells.last().is_some_and(String::is_empty) {
                cells.pop();
            }
            expected.push(cells);
        }
    }
    expected.push(vec![]);
    expected.push(vec!["Excluded".into()]);
    for k in ["cancelled_documents", "cancelled_payments"] {
        expected.push(vec![k.into(), shown(&json["excluded"][k])]);
    }
    assert_eq!(sheet, expected);
    // Amounts are numbers, not text.
    let mut book = Xlsx::new(Cursor::new(resp.body.clone())).expect("xlsx");
    let range = book.worksheet_range("Summary").expect("sheet");
    assert_eq!(range.get((7, 7)), Some(&Data::Float(1160.0)), "E's total");
}

const TAX_ALL: &[&str] = &[
    "source", "kind", "tax", "tax_name", "factor", "rate", "currency", "base", "amount", "count",
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
