//! What an accountant finds and totals, through the binary: the lists' search (`q`),
//! the count and totals of what a filter matches (`GET /v1/invoices/totals`,
//! `/v1/retentions/totals`), and the accountant's layout of the exports
//! (`layout=accountant`) read back cell by cell against the API's figures.

use std::collections::BTreeMap;
use std::io::{Cursor, Read};
use std::path::Path;

use calamine::{Data, Reader, Xlsx};
use cfdi_extract::catalogs::{Catalog, Edition};
use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde_json::Value;

use crate::common::app::{eventually, tax_id, Client, TestApp};
use crate::common::invoices::*;

const SPECIAL: &str = "cfdi32-ingreso-tfd11-special-chars-rfc.xml";
const NOMINA: &str = "cfdi40-nomina-compensacion-tfd.xml";
const PAGO: &str = "cfdi33-pago10-tfd-usd-docto-mxn-payment.xml";
const REAL: &str = "cfdi40-ingreso-pue-real-tfd.xml";

// The SAT demo retentions: issued by AAA010101AAA to XAXX010101000, period 2014-06.
use crate::flows::retentions::{DEMO as RETENTIONS, SAMPLES as RETENTION_SAMPLES};

fn amount(v: &Value) -> Decimal {
    dec(v)
}

/// The ids (in list order) a list query returns.
fn listed(client: &Client, path: &str, query: &str) -> Vec<String> {
    client
        .list_all(&format!("{path}?{query}"), 500)
        .iter()
        .map(id_of)
        .collect()
}

/// What the list's own data adds up to per currency: count and each amount, exactly.
fn sums(documents: &[Value], currency: &str, names: &[&str]) -> BTreeMap<String, Vec<Decimal>> {
    let mut out: BTreeMap<String, Vec<Decimal>> = BTreeMap::new();
    for d in documents {
        let key = d
            .pointer(currency)
            .and_then(Value::as_str)
            .unwrap_or("MXN")
            .to_uppercase();
        let line = out
            .entry(key)
            .or_insert_with(|| vec![Decimal::ZERO; names.len() + 1]);
        line[0] += Decimal::ONE;
        for (i, name) in names.iter().enumerate() {
            if let Some(v) = d.pointer(name).filter(|v| v.is_number()) {
                line[i + 1] += amount(v);
            }
        }
    }
    out
}

/// `GET .../totals` as the same map: currency -> [count, amounts...].
fn api_totals(totals: &Value, names: &[&str]) -> BTreeMap<String, Vec<Decimal>> {
    totals["currencies"]
        .as_array()
        .expect("currencies")
        .iter()
        .map(|line| {
            let mut values = vec![amount(&line["count"])];
            values.extend(names.iter().map(|n| amount(&line[*n])));
            (line["currency"].as_str().unwrap_or("").to_string(), values)
        })
        .collect()
}

// ---------------------------------------------------------------------------------------
// Search and totals on the samples

#[test]
fn the_search_finds_by_uuid_folio_series_rfc_and_name_and_totals_add_up_what_it_matches() {
    let app = TestApp::spawn();
    let mut entities = BTreeMap::new();
    let ids = import_by_issuer(&app, &mut entities, &[SPECIAL, NOMINA, PAGO, REAL]);
    let client = app.client();
    let aaa = &entities["AAA010101AAA"];
    for (q, expected) in [
        ("c2832671-da6d-11ef-a83d-00155d012007", vec![REAL]),
        ("C2832671-DA6D", vec![REAL]),
        ("52375239", vec![REAL]),
        ("O-52375239", vec![REAL]),
        ("O52375239", vec![REAL]),
        ("pase", vec![REAL]),
        ("Servicios%20Electronicos", vec![REAL]),
        ("cosc8001137na", vec![REAL, PAGO]),
        ("holstein", vec![SPECIAL]),
        ("E%26%C3%91831019M53", vec![SPECIAL]),
        ("%25", vec![]),
        ("_", vec![]),
        ("no%20such%20name", vec![]),
        ("%20%20", vec![NOMINA, REAL, PAGO, SPECIAL]),
    ] {
        let expected: Vec<String> = expected.iter().map(|f| ids[*f].clone()).collect();
        assert_eq!(
            listed(&client, "/v1/invoices", &format!("q={q}")),
            expected,
            "q={q}"
        );
    }
    // With the other filters.
    assert_eq!(
        listed(
            &client,
            "/v1/invoices",
            &format!("q=COSC8001137NA&entity_id={aaa}")
        ),
        [ids[PAGO].clone()]
    );

    // Totals: what the filter matches, per currency, equal to the list's own figures.
    const NAMES: [&str; 7] = [
        "subtotal",
        "discount",
        "taxes_transferred",
        "taxes_withheld",
        "total",
        "paid_amount",
        "due_amount",
    ];
    let pointers: Vec<String> = NAMES.iter().map(|n| format!("/{n}")).collect();
    let pointers: Vec<&str> = pointers.iter().map(String::as_str).collect();
    for query in [
        "",
        "q=cosc8001137na",
        "type=I",
        "issued_from=2025-01-01&issued_to=2026-12-31",
        "q=nadie",
    ] {
        let totals = client
            .get(&format!("/v1/invoices/totals?{query}"))
            .expect(200);
        let documents = client.list_all(&format!("/v1/invoices?{query}"), 500);
        assert_eq!(
            totals["count"].as_u64(),
            Some(documents.len() as u64),
            "{query}"
        );
        assert_eq!(
            api_totals(&totals, &NAMES),
            sums(&documents, "/currency", &pointers),
            "{query}: {totals}"
        );
    }
    let both = client
        .get("/v1/invoices/totals?q=COSC8001137NA")
        .expect(200);
    assert_eq!(both["count"], 2);
    let real = &both["currencies"][0];
    assert_eq!(
        (real["currency"].as_str(), real["count"].as_u64()),
        (Some("MXN"), Some(1))
    );
    assert_amount(&real["total"], "1000.00", "REAL's total");
    assert_amount(&real["taxes_transferred"], "137.93", "REAL's IVA");

    // The exports take the search like any filter.
    let csv = client.get("/v1/invoices/export?q=holstein").text();
    assert_eq!(csv.lines().count(), 2, "{csv}");
    assert!(csv.contains(&ids[SPECIAL]), "{csv}");

    // Another organization matches nothing; bad values are 422 on their name.
    let other = app.client_as(&app.create_user_in_new_org());
    let none = other.get("/v1/invoices/totals").expect(200);
    assert_eq!(none["count"], 0);
    assert_eq!(none["currencies"], serde_json::json!([]));
    assert!(listed(&other, "/v1/invoices", "q=pase").is_empty());
    let long = "x".repeat(101);
    client
        .get(&format!("/v1/invoices?q={long}"))
        .expect_field_error("q");
    for (query, field) in [
        ("type=X", "type"),
        (&format!("q={long}") as &str, "q"),
        ("issued_from=2026-02-30", "issued_from"),
        ("entity_id=nope", "entity_id"),
    ] {
        client
            .get(&format!("/v1/invoices/totals?{query}"))
            .expect_field_error(field);
    }
    app.anonymous()
        .get("/v1/invoices/totals")
        .expect_unauthorized("");
    client
        .get("/v1/invoices/export?layout=fancy")
        .expect_field_error("layout");
}

// ---------------------------------------------------------------------------------------
// The accountant's XLSX, read back

/// A workbook: each sheet's name and rows (calamine), and its parts' XML.
struct Book {
    sheets: Vec<(String, Vec<Vec<Data>>)>,
    parts: BTreeMap<String, String>,
}

fn read_book(bytes: &[u8]) -> Book {
    let mut book = Xlsx::new(Cursor::new(bytes.to_vec())).expect("an XLSX");
    let sheets = book
        .sheet_names()
        .iter()
        .map(|n| {
            let range = book.worksheet_range(n).expect("sheet");
            assert_eq!(range.start(), Some((0, 0)), "{n} starts at A1");
            (n.clone(), range.rows().map(<[Data]>::to_vec).collect())
        })
        .collect();
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes.to_vec())).expect("a zip");
    let mut parts = BTreeMap::new();
    for name in ["xl/styles.xml", "xl/worksheets/sheet1.xml"] {
        let mut text = String::new();
        zip.by_name(name)
            .expect(name)
            .read_to_string(&mut text)
            .expect("read");
        parts.insert(name.to_string(), text);
    }
    Book { sheets, parts }
}

/// `A`, `B`, ..., `AA` for a 0-based column.
fn column_letters(mut col: usize) -> String {
    let mut out = Vec::new();
    loop {
        out.push(b'A' + (col % 26) as u8);
        if col < 26 {
            break;
        }
        col = col / 26 - 1;
    }
    out.reverse();
    String::from_utf8(out).expect("ascii")
}

impl Book {
    /// The number format code of a cell of the first sheet (0-based row and column).
    fn format_of(&self, row: usize, col: usize) -> String {
        let styles = roxmltree::Document::parse(&self.parts["xl/styles.xml"]).expect("styles.xml");
        let sheet = roxmltree::Document::parse(&self.parts["xl/worksheets/sheet1.xml"])
            .expect("sheet1.xml");
        let reference = format!("{}{}", column_letters(col), row + 1);
        let style: usize = sheet
            .descendants()
            .find(|n| n.has_tag_name("c") && n.attribute("r") == Some(reference.as_str()))
            .and_then(|c| c.attribute("s"))
            .map_or(0, |s| s.parse().expect("a style index"));
        let xfs = styles
            .descendants()
            .find(|n| n.has_tag_name("cellXfs"))
            .expect("cellXfs");
        let xf = xfs
            .children()
            .filter(|n| n.has_tag_name("xf"))
            .nth(style)
            .expect("the cell's xf");
        let id = xf.attribute("numFmtId").unwrap_or("0");
        styles
            .descendants()
            .find(|n| n.has_tag_name("numFmt") && n.attribute("numFmtId") == Some(id))
            .and_then(|n| n.attribute("formatCode"))
            .unwrap_or(id)
            .to_string()
    }
}

fn text(cell: &Data) -> String {
    match cell {
        Data::String(s) => s.clone(),
        Data::Empty => String::new(),
        other => panic!("not text: {other:?}"),
    }
}

/// A number cell as the decimal it holds.
fn number(cell: &Data) -> Option<Decimal> {
    match cell {
        Data::Float(x) => Some(x.to_string().parse().expect("a decimal")),
        Data::Int(n) => Some(Decimal::from(*n)),
        Data::Empty => None,
        other => panic!("not a number: {other:?}"),
    }
}

/// A header's column.
fn col(headers: &[String], name: &str) -> usize {
    headers
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name:?} in {headers:?}"))
}

fn sat_words(state: Option<&str>) -> &'static str {
    match state {
        None => "Sin consultar",
        Some("active") => "Vigente",
        Some("cancelled") => "Cancelada",
        Some("not_found") => "No encontrada (aún)",
        Some("not_registered") => "No registrada en el SAT",
        Some(other) => panic!("state {other}"),
    }
}

fn situation_words(situation: Option<&str>) -> &'static str {
    match situation {
        None => "No está en la lista",
        Some("definitive") => "Definitivo",
        Some("presumed") => "Presunto",
        Some(other) => panic!("situation {other}"),
    }
}

/// The catalogs' description an accountant reads beside a code.
fn described(catalog: Catalog, code: Option<&str>, version: &str) -> String {
    let edition = if version == "4.0" {
        Edition::Cfdi40
    } else {
        Edition::Cfdi33
    };
    code.and_then(|c| catalog.describe(c, edition))
        .unwrap_or_default()
        .to_string()
}

/// A sandbox month issued by one taxpayer: every invoice checked at the SAT, and the
/// receiver of one income invoice listed definitive on the 69-B list.
struct Month {
    app: TestApp,
    rfc: String,
    name: String,
    query: String,
    listed_rfc: String,
}

fn sandbox_month() -> Month {
    let app = TestApp::spawn_with(&["--sat-status-rate", "500"]);
    let client = app.client();
    let rfc = tax_id("CON");
    let entity = valid_entity(&client, &rfc, "sandbox1");
    let id = id_of(&entity);
    let day = |d| NaiveDate::from_ymd_opt(2026, 9, d).expect("a day");
    extract(&client, &id, day(1), day(30), "issued");
    let query =
        format!("entity_id={id}&direction=issued&issued_from=2026-09-01&issued_to=2026-09-30");
    let invoices = eventually(
        std::time::Duration::from_secs(60),
        "every invoice of the month checked at the SAT",
        || {
            let all = client.list_all(&format!("/v1/invoices?{query}"), 500);
            all.iter()
                .all(|i| i["sat_status"].is_object())
                .then_some(all)
        },
    );
    assert!(invoices.len() > 50, "a sandbox month: {}", invoices.len());
    let listed_rfc = invoices
        .iter()
        .find(|i| i["type"] == "I")
        .and_then(|i| i["receiver"]["tax_id"].as_str())
        .expect("an income invoice")
        .to_string();
    let list = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/sat-status-fixtures/69b-listado-completo-sample.satcfdi.csv"
    ))
    .expect("the 69-B sample")
    .replace("Informaci\u{FFFD}n", "Información")
    .replace("Situaci\u{FFFD}n", "Situación")
    .replace("Art\u{FFFD}culo", "Artículo")
    .replace("AAA292929HHH", &listed_rfc)
    .replace(
        "Desvirtuado,500-05-2017-38736",
        "Definitivo,500-05-2017-38736",
    );
    let dir = tempfile::TempDir::new().expect("temp dir");
    let file = dir.path().join("Listado_Completo_69-B.csv");
    std::fs::write(&file, list).expect("write");
    app.cli(&["list-69b", "load", &file.to_string_lossy()], None)
        .expect_success("list-69b load");
    Month {
        rfc,
        name: entity["name"].as_str().expect("name").to_string(),
        query,
        listed_rfc,
        app,
    }
}

#[test]
fn a_sandbox_month_in_the_accountants_layout_reads_back_with_the_apis_figures() {
    let m = sandbox_month();
    let client = m.app.client();
    let invoices: BTreeMap<String, Value> = client
        .list_all(&format!("/v1/invoices?{}", m.query), 500)
        .into_iter()
        .map(|i| (i["uuid"].as_str().expect("uuid").to_string(), i))
        .collect();
    let totals = client
        .get(&format!("/v1/invoices/totals?{}", m.query))
        .expect(200);
    assert_eq!(totals["count"].as_u64(), Some(invoices.len() as u64));

    let resp = client.get(&format!(
        "/v1/invoices/export?{}&layout=accountant&format=xlsx",
        m.query
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());
    let file = format!("facturas-{}-emitidas-2026-09.xlsx", m.rfc);
    assert_eq!(
        resp.header("content-disposition"),
        Some(format!("attachment; filename=\"{file}\"").as_str())
    );
    let book = read_book(&resp.body);
    assert_eq!(book.sheets.len(), 1);
    let (sheet_name, rows) = &book.sheets[0];
    assert_eq!(sheet_name, &format!("Emitidas {} 2026-09", m.rfc));
    assert_eq!(
        text(&rows[0][0]),
        format!("Facturas emitidas de {} · {}", m.rfc, m.name)
    );
    assert_eq!(text(&rows[1][0]), "Periodo: del 01/09/2026 al 30/09/2026");
    let headers: Vec<String> = rows[3].iter().map(text).collect();
    for h in [
        "Fecha de emisión",
        "UUID (folio fiscal)",
        "Tipo de comprobante (descripción)",
        "Forma de pago (descripción)",
        "Estado en el SAT",
        "Contraparte en la lista 69-B",
        "Acreditado por notas de crédito",
        "Saldo después de notas de crédito",
    ] {
        assert!(headers.iter().any(|x| x == h), "{h} in {headers:?}");
    }
    assert!(
        !headers.iter().any(|h| h.contains('_')),
        "no API field names: {headers:?}"
    );
    // The header stays in view and filters the rows, not the totals.
    let sheet_xml = &book.parts["xl/worksheets/sheet1.xml"];
    assert!(
        sheet_xml.contains(
            r#"<pane ySplit="4" topLeftCell="A5" activePane="bottomLeft" state="frozen"/>"#
        ),
        "{}",
        &sheet_xml[..sheet_xml.len().min(1500)]
    );
    let last = 4 + invoices.len();
    let filter = format!(
        r#"<autoFilter ref="A4:{}{last}"/>"#,
        column_letters(headers.len() - 1)
    );
    assert!(sheet_xml.contains(&filter), "{filter}");

    let c = |name: &str| col(&headers, name);
    let data = &rows[4..4 + invoices.len()];
    let mut credited_seen = false;
    for (n, row) in data.iter().enumerate() {
        let uuid = text(&row[c("UUID (folio fiscal)")]);
        let inv = &invoices[&uuid];
        let version = inv["version"].as_str().expect("version");
        let at = |name: &str| &row[c(name)];
        assert_eq!(
            text(at("Tipo de comprobante (descripción)")),
            described(Catalog::TipoDeComprobante, inv["type"].as_str(), version)
        );
        assert_eq!(
            text(at("Forma de pago (descripción)")),
            described(Catalog::FormaPago, inv["payment_form"].as_str(), version)
        );
        assert_eq!(
            text(at("Uso CFDI (descripción)")),
            described(
                Catalog::UsoCfdi,
                inv["receiver"]["cfdi_use"].as_str(),
                version
            )
        );
        assert_eq!(
            text(at("Régimen fiscal del emisor (descripción)")),
            described(
                Catalog::RegimenFiscal,
                inv["issuer"]["tax_regime"].as_str(),
                version
            )
        );
        assert_eq!(
            text(at("Estado en el SAT")),
            sat_words(inv["sat_status"]["state"].as_str())
        );
        assert_eq!(
            text(at("Estado")),
            if inv["status"] == "active" {
                "Vigente"
            } else {
                "Cancelada"
            }
        );
        let counterparty = inv["receiver"]["tax_id"].as_str();
        assert_eq!(
            text(at("Contraparte en la lista 69-B")),
            situation_words((counterparty == Some(m.listed_rfc.as_str())).then_some("definitive")),
            "{uuid}"
        );
        for (header, field) in [
            ("Subtotal", "subtotal"),
            ("Total", "total"),
            ("Pagado", "paid_amount"),
            ("Saldo pendiente", "due_amount"),
        ] {
            assert_eq!(
                number(at(header)),
                inv[field].is_number().then(|| amount(&inv[field])),
                "{uuid} {header}"
            );
        }
        assert!(
            matches!(at("Fecha de emisión"), Data::DateTime(_)),
            "{uuid}"
        );
        // The credit notes' columns are the single read's.
        if inv["type"] == "I" {
            let one = client
                .get(&format!("/v1/invoices/{}", id_of(inv)))
                .expect(200);
            assert_eq!(
                number(at("Acreditado por notas de crédito")),
                Some(amount(&one["credited_amount"])),
                "{uuid}"
            );
            assert_eq!(
                number(at("Saldo después de notas de crédito")),
                one["balance_after_credits"]
                    .is_number()
                    .then(|| amount(&one["balance_after_credits"])),
                "{uuid}"
            );
            credited_seen |= amount(&one["credited_amount"]) > Decimal::ZERO;
        }
        // Amounts in the currency's format, dates day first.
        if n == 0 {
            let row_index = 4 + n;
            assert!(
                book.format_of(row_index, c("Total"))
                    .starts_with("$#,##0.00"),
                "{}",
                book.format_of(row_index, c("Total"))
            );
            assert!(book
                .format_of(row_index, c("Fecha de emisión"))
                .starts_with("dd/mm/yyyy"));
        }
    }
    assert!(credited_seen, "the sandbox month has credited invoices");
    assert!(data
        .iter()
        .any(|r| text(&r[c("Contraparte en la lista 69-B")]) == "Definitivo"));

    // The totals, below a blank row: one per currency, equal to the API's.
    assert!(rows[4 + invoices.len()].iter().all(|d| *d == Data::Empty));
    let totals_rows = &rows[5 + invoices.len()..];
    let currencies = totals["currencies"].as_array().expect("currencies");
    assert_eq!(totals_rows.len(), currencies.len());
    for (row, line) in totals_rows.iter().zip(currencies) {
        let currency = line["currency"].as_str().expect("currency");
        assert_eq!(
            text(&row[0]),
            format!("Total {currency} ({} facturas)", line["count"])
        );
        assert_eq!(text(&row[c("Moneda")]), currency);
        for (header, field) in [
            ("Subtotal", "subtotal"),
            ("Descuento", "discount"),
            ("Impuestos trasladados", "taxes_transferred"),
            ("Impuestos retenidos", "taxes_withheld"),
            ("Total", "total"),
            ("Pagado", "paid_amount"),
            ("Saldo pendiente", "due_amount"),
        ] {
            assert_eq!(
                number(&row[c(header)]),
                Some(amount(&line[field])),
                "{currency} {header}"
            );
        }
    }

    // The CSV: the same columns and rows, amounts as the API's digits, dates day first,
    // the totals after an empty line.
    let resp = client.get(&format!(
        "/v1/invoices/export?{}&layout=accountant",
        m.query
    ));
    assert_eq!(
        resp.header("content-disposition"),
        Some(
            format!(
                "attachment; filename=\"facturas-{}-emitidas-2026-09.csv\"",
                m.rfc
            )
            .as_str()
        )
    );
    let body = resp.text();
    let (table, after) = body
        .trim_start_matches('\u{feff}')
        .split_once("\r\n\r\n")
        .expect("the totals after an empty line");
    let mut reader = csv::Reader::from_reader(table.as_bytes());
    let csv_headers: Vec<String> = reader
        .headers()
        .expect("headers")
        .iter()
        .map(String::from)
        .collect();
    assert_eq!(csv_headers, headers);
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("a row")).collect();
    assert_eq!(records.len(), invoices.len());
    for record in &records {
        let inv = &invoices[&record[c("UUID (folio fiscal)")]];
        assert_eq!(&record[c("Total")], inv["total"].to_string());
        let issued =
            NaiveDate::parse_from_str(&inv["issued_at"].as_str().expect("date")[..10], "%Y-%m-%d")
                .expect("a date");
        assert!(
            record[c("Fecha de emisión")].starts_with(&issued.format("%d/%m/%Y ").to_string()),
            "{}",
            &record[c("Fecha de emisión")]
        );
    }
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(after.as_bytes());
    let totals_records: Vec<csv::StringRecord> =
        reader.records().map(|r| r.expect("a totals row")).collect();
    assert_eq!(totals_records.len(), currencies.len());
    for (record, line) in totals_records.iter().zip(currencies) {
        assert_eq!(
            &record[c("Moneda")],
            line["currency"].as_str().expect("currency")
        );
        for (header, field) in [
            ("Subtotal", "subtotal"),
            ("Total", "total"),
            ("Saldo pendiente", "due_amount"),
        ] {
            let written: Decimal = record[c(header)].parse().expect("a decimal");
            assert_eq!(written, amount(&line[field]), "{header}");
        }
    }

    // The concepts: each product and unit code described, the amounts in the format.
    let resp = client.get(&format!(
        "/v1/invoices/export/items?{}&layout=accountant&format=xlsx",
        m.query
    ));
    assert_eq!(
        resp.header("content-disposition"),
        Some(
            format!(
                "attachment; filename=\"conceptos-{}-emitidas-2026-09.xlsx\"",
                m.rfc
            )
            .as_str()
        )
    );
    let book = read_book(&resp.body);
    let rows = &book.sheets[0].1;
    assert_eq!(
        text(&rows[0][0]),
        format!("Conceptos de facturas emitidas de {} · {}", m.rfc, m.name)
    );
    let headers: Vec<String> = rows[3].iter().map(text).collect();
    let c = |name: &str| col(&headers, name);
    let concepts: Vec<&Vec<Data>> = rows[4..]
        .iter()
        .take_while(|r| r.iter().any(|d| *d != Data::Empty))
        .collect();
    assert!(!concepts.is_empty());
    for row in &concepts {
        let code = text(&row[c("Clave de producto o servicio")]);
        assert_eq!(
            text(&row[c("Clave de producto o servicio (descripción)")]),
            described(Catalog::ClaveProdServ, Some(&code), "4.0")
        );
        let unit = text(&row[c("Clave de unidad")]);
        assert_eq!(
            text(&row[c("Clave de unidad (descripción)")]),
            described(Catalog::ClaveUnidad, Some(&unit), "4.0")
        );
    }
    assert!(book.format_of(4, c("Importe")).starts_with("$#,##0.00"));
}

// ---------------------------------------------------------------------------------------
// Retentions

#[test]
fn retentions_are_searched_totalled_and_laid_out_for_the_accountant() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("AAA010101AAA", "sandbox1"));
    let files: Vec<_> = RETENTIONS
        .iter()
        .map(|n| Path::new(RETENTION_SAMPLES).join(n))
        .collect();
    let imported: BTreeMap<String, String> = import(&app, &entity, "issued", &files)
        .into_iter()
        .collect();
    let all = client.list_all("/v1/retentions", 500);
    assert_eq!(all.len(), RETENTIONS.len());

    // Search: a UUID in either case, the receiver's RFC, a name.
    let interest = client
        .get(&format!("/v1/retentions/{}", imported[RETENTIONS[3]]))
        .expect(200);
    let uuid = interest["uuid"].as_str().expect("uuid").to_lowercase();
    assert_eq!(
        listed(&client, "/v1/retentions", &format!("q={uuid}")),
        [imported[RETENTIONS[3]].clone()]
    );
    assert_eq!(
        listed(&client, "/v1/retentions", "q=xaxx010101000").len(),
        RETENTIONS.len()
    );
    assert!(listed(&client, "/v1/retentions", "q=nadie%20asi").is_empty());

    // Totals: the retentions' totals added up exactly, in pesos.
    const NAMES: [&str; 4] = ["operation", "taxed", "exempt", "withheld"];
    let totals = client.get("/v1/retentions/totals").expect(200);
    let pointers: Vec<String> = NAMES.iter().map(|n| format!("/totals/{n}")).collect();
    let pointers: Vec<&str> = pointers.iter().map(String::as_str).collect();
    assert_eq!(
        api_totals(&totals, &NAMES),
        sums(&all, "/no-currency", &pointers)
    );
    assert_eq!(totals["count"].as_u64(), Some(RETENTIONS.len() as u64));
    let key16 = client
        .get("/v1/retentions/totals?retention_key=16")
        .expect(200);
    assert_eq!(key16["count"], 1);
    client
        .get("/v1/retentions/totals?period_from=2026-13")
        .expect_field_error("period_from");

    // The accountant's layout: the key described, the totals equal the API's.
    let resp = client.get(&format!(
        "/v1/retentions/export?entity_id={entity}&direction=issued&period_from=2014-06&period_to=2014-06&layout=accountant&format=xlsx"
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.header("content-disposition"),
        Some("attachment; filename=\"retenciones-AAA010101AAA-emitidas-2014-06.xlsx\"")
    );
    let book = read_book(&resp.body);
    let (name, rows) = &book.sheets[0];
    assert_eq!(name, "Emitidas AAA010101AAA 2014-06");
    assert_eq!(text(&rows[1][0]), "Periodo: del 06/2014 al 06/2014");
    let headers: Vec<String> = rows[3].iter().map(text).collect();
    let c = |name: &str| col(&headers, name);
    for row in &rows[4..4 + RETENTIONS.len()] {
        let key = text(&row[c("Clave de retención")]);
        assert_eq!(
            text(&row[c("Clave de retención (descripción)")]),
            Catalog::CveRetenc
                .describe(&key, Edition::Cfdi40)
                .unwrap_or_default()
        );
        assert!(matches!(row[c("Fecha de emisión")], Data::DateTime(_)));
    }
    let total_row = &rows[5 + RETENTIONS.len()];
    assert_eq!(
        text(&total_row[0]),
        format!("Total ({} constancias)", RETENTIONS.len())
    );
    let line = &totals["currencies"][0];
    for (header, field) in [
        ("Monto total de la operación", "operation"),
        ("Monto gravado", "taxed"),
        ("Monto exento", "exempt"),
        ("Monto total retenido", "withheld"),
    ] {
        assert_eq!(
            number(&total_row[c(header)]),
            Some(amount(&line[field])),
            "{header}"
        );
    }
    assert!(book
        .format_of(4, c("Monto total retenido"))
        .starts_with("$#,##0.00"));
}

// ---------------------------------------------------------------------------------------
// Catalogs

#[test]
fn the_catalogs_describe_codes_for_clients_that_show_them() {
    let app = TestApp::spawn();
    let client = app.client();
    let all = client.get("/v1/catalogs").expect(200);
    let names: Vec<&str> = all["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|c| c["catalog"].as_str())
        .collect();
    assert!(
        names.contains(&"c_FormaPago") && names.contains(&"c_CveRetenc"),
        "{all}"
    );

    let forms = client.get("/v1/catalogs/c_FormaPago").expect(200);
    let cash = &forms["data"][0];
    assert_eq!(
        (cash["code"].as_str(), cash["label"].as_str()),
        (Some("01"), Some("01 - Efectivo"))
    );
    // The codes asked for, in their order; one the catalog does not know is left out.
    let some = client
        .get("/v1/catalogs/c_UsoCFDI?codes=G03,%20P01,ZZZ")
        .expect(200);
    let labels: Vec<&str> = some["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|e| e["label"].as_str())
        .collect();
    assert_eq!(labels, ["G03 - Gastos en general", "P01 - Por definir"]);
    let old = client
        .get("/v1/catalogs/c_UsoCFDI?codes=G03&edition=3.3")
        .expect(200);
    assert_eq!(old["data"][0]["description"], "Gastos en general");
    let products = client
        .get("/v1/catalogs/c_ClaveProdServ?codes=84111506")
        .expect(200);
    assert_eq!(
        products["data"][0]["label"],
        "84111506 - Servicios de facturación"
    );
    // Too large to answer whole, too many codes, an unknown name or edition.
    client
        .get("/v1/catalogs/c_ClaveProdServ")
        .expect_field_error("codes");
    let many = vec!["01"; 501].join(",");
    client
        .get(&format!("/v1/catalogs/c_FormaPago?codes={many}"))
        .expect_field_error("codes");
    client
        .get("/v1/catalogs/c_FormaPago?edition=5.0")
        .expect_field_error("edition");
    client.get("/v1/catalogs/c_Nada").expect_not_found();
    app.anonymous()
        .get("/v1/catalogs/c_FormaPago")
        .expect_unauthorized("");
}
