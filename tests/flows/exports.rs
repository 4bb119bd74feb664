//! `GET /v1/invoices/export` and `/v1/invoices/export/items`, and `cfdi-extract
//! invoices export`: spreadsheets of the list's filters, through the real binary.

use std::collections::BTreeMap;
use std::io::Cursor;

use calamine::{Data, Reader, Xlsx};
use rust_decimal::Decimal;

use crate::common::app::{Client, Resp, TestApp};
use crate::common::invoices::*;

const SPECIAL: &str = "cfdi32-ingreso-tfd11-special-chars-rfc.xml";
const NOMINA: &str = "cfdi40-nomina-compensacion-tfd.xml";
const PAGO: &str = "cfdi33-pago10-tfd-usd-docto-mxn-payment.xml";
const REAL: &str = "cfdi40-ingreso-pue-real-tfd.xml";

/// Two entities of one organization: AAA010101AAA issued three, ISD950921HE5 one.
struct Fixture {
    app: TestApp,
    ids: BTreeMap<String, String>,
    entities: BTreeMap<String, String>,
}

fn fixture() -> Fixture {
    let app = TestApp::spawn();
    let mut entities = BTreeMap::new();
    let ids = import_by_issuer(&app, &mut entities, &[SPECIAL, NOMINA, PAGO, REAL]);
    Fixture { app, ids, entities }
}

impl Fixture {
    fn client(&self) -> Client {
        self.app.client()
    }

    /// The expected CSV text with `{NAME}` placeholders replaced by real ids.
    fn fill(&self, template: &str) -> String {
        template
            .replace("{SPECIAL}", &self.ids[SPECIAL])
            .replace("{NOMINA}", &self.ids[NOMINA])
            .replace("{PAGO}", &self.ids[PAGO])
            .replace("{REAL}", &self.ids[REAL])
            .replace("{AAA}", &self.entities["AAA010101AAA"])
            .replace("{ISD}", &self.entities["ISD950921HE5"])
    }
}

fn export(client: &Client, path: &str, query: &str) -> Resp {
    client.get(&format!("/v1/invoices/{path}?{query}"))
}

const INVOICES_HEADER: &str = "id,entity_id,uuid,direction,type,version,series,folio,issued_at,certified_at,issuer_tax_id,issuer_name,issuer_tax_regime,receiver_tax_id,receiver_name,receiver_cfdi_use,currency,exchange_rate,subtotal,discount,taxes_transferred,taxes_withheld,total,payment_method,payment_form,status,cancelled_at,paid_amount,due_amount,last_payment_date,fully_paid_at,payment_conflicts,has_pdf,items_count\r\n";

const INVOICES_ROWS: &[&str] = &[
    "{NOMINA},{AAA},22222222-2222-2222-2222-222222222222,issued,N,4.0,2026,1,2026-01-21T16:42:35,2026-01-21T16:42:49,AAA010101AAA,EMPRESA DEMO PRUEBAS,601,XAXX010101000,EMPLEADO DEMO PRUEBAS,CN01,MXN,,15263.63,2689.23,,,12574.40,PUE,,active,,0.00,0.00,,,false,false,1\r\n",
    "{REAL},{ISD},C2832671-DA6D-11EF-A83D-00155D012007,issued,I,4.0,O,52375239,2025-01-24T10:10:41,2025-01-24T10:10:42,ISD950921HE5,\"PASE, SERVICIOS ELECTRONICOS\",601,COSC8001137NA,CARLOS CORTES SOTO,G03,MXN,1,862.07,,137.93,,1000.00,PUE,04,active,,1000.00,0.00,,,false,false,2\r\n",
    "{PAGO},{AAA},9FB6ED1A-5F37-4FEF-980A-7F8C83B51894,issued,P,3.3,CP,432,2019-11-09T13:29:24,2017-06-05T09:09:37,AAA010101AAA,ACCEM SERVICIOS EMPRESARIALES SC,601,COSC8001137NA,CARLOS CORTES SOTO,G01,XXX,,0,,,,0,,,active,,0,0,,,false,false,1\r\n",
    "{SPECIAL},{AAA},11111111-2222-3333-4444-000000000001,issued,I,3.2,C,38,2015-02-25T13:50:00,2019-07-24T11:58:36,AAA010101AAA,Empresa de Pruebas SA,Regimen General de Ley Personas Morales de Prueba,E&Ñ831019M53,Exportadora de Ganado HOLSTEIN S.A.,,Pesos,,35000.00,0.00,5600.00,0.00,40600.00,,No Identificado,active,,40600.00,0.00,,,false,false,1\r\n",
];

const ITEMS_CSV: &str = "\u{feff}invoice_id,uuid,direction,type,issued_at,issuer_tax_id,receiver_tax_id,currency,status,line,product_code,description,quantity,unit,unit_price,discount,amount,iva_transferred_rate,iva_transferred,ieps_transferred_rate,ieps_transferred,iva_withheld_rate,iva_withheld,isr_withheld_rate,isr_withheld,ieps_withheld_rate,ieps_withheld\r
{NOMINA},22222222-2222-2222-2222-222222222222,issued,N,2026-01-21T16:42:35,AAA010101AAA,XAXX010101000,MXN,active,1,84111505,Pago de nómina,1,ACT,15263.63,2689.23,15263.63,,,,,,,,,,\r
{REAL},C2832671-DA6D-11EF-A83D-00155D012007,issued,I,2025-01-24T10:10:41,ISD950921HE5,COSC8001137NA,MXN,active,1,80141628,COMISION RECARGA IDMX,1.000000,E48,8.620690,,8.620690,0.160000,1.379310,,,,,,,,\r
{REAL},C2832671-DA6D-11EF-A83D-00155D012007,issued,I,2025-01-24T10:10:41,ISD950921HE5,COSC8001137NA,MXN,active,2,95111615,RECARGA IDMX,1.000000,E54,853.448276,,853.448276,0.160000,136.551724,,,,,,,,\r
{PAGO},9FB6ED1A-5F37-4FEF-980A-7F8C83B51894,issued,P,2019-11-09T13:29:24,AAA010101AAA,COSC8001137NA,XXX,active,1,84111506,Pago,1,ACT,0,,0,,,,,,,,,,\r
{SPECIAL},11111111-2222-3333-4444-000000000001,issued,I,2015-02-25T13:50:00,AAA010101AAA,E&Ñ831019M53,Pesos,active,1,,Módulo de embarque serie A-6743-Ñ,1,LTE,35000.00,,35000.00,,,,,,,,,,\r
";

/// The invoices CSV holding `rows` (indexes into INVOICES_ROWS), in that order.
fn invoices_csv(f: &Fixture, rows: &[usize]) -> String {
    let body: String = rows.iter().map(|&i| INVOICES_ROWS[i]).collect();
    f.fill(&format!("\u{feff}{INVOICES_HEADER}{body}"))
}

#[test]
fn csv_exports_are_byte_exact_utf8_with_a_bom_and_rfc_4180_quoting() {
    let f = fixture();
    let client = f.client();
    let resp = export(&client, "export", "format=csv");
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(resp.header("content-type"), Some("text/csv; charset=utf-8"));
    assert_eq!(
        resp.header("content-disposition"),
        Some("attachment; filename=\"invoices.csv\"")
    );
    assert!(resp.body.starts_with(b"\xEF\xBB\xBF"), "a UTF-8 BOM");
    assert_eq!(resp.text(), invoices_csv(&f, &[0, 1, 2, 3]));
    // CSV is the default format.
    assert_eq!(export(&client, "export", "").body, resp.body);

    let items = export(&client, "export/items", "");
    assert_eq!(items.status, 200, "{}", items.text());
    assert_eq!(
        items.header("content-disposition"),
        Some("attachment; filename=\"invoice-items.csv\"")
    );
    assert_eq!(items.text(), f.fill(ITEMS_CSV));
}

#[test]
fn line_items_carry_their_concepts_taxes_by_tax_and_kind() {
    let app = TestApp::spawn();
    let file = "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml";
    let ids = import_by_issuer(&app, &mut BTreeMap::new(), &[file]);
    let csv = export(&app.client(), "export/items", "").text();
    let row = csv.lines().nth(1).expect("a concept");
    assert!(row.starts_with(&ids[file]), "{row}");
    // IVA transferred 16%, IVA withheld 10.6667%, ISR withheld 10%, no IEPS.
    assert!(
        row.ends_with(",1250.30,0.160000,200.05,,,0.106667,133.37,0.100000,125.03,,"),
        "{row}"
    );
}

#[test]
fn filters_are_the_lists_and_another_organization_sees_nothing() {
    let f = fixture();
    let client = f.client();
    let aaa = &f.entities["AAA010101AAA"];
    for (query, rows) in [
        (format!("entity_id={aaa}"), vec![0, 2, 3]),
        ("type=N".to_string(), vec![0]),
        (
            "type=I&issued_from=2015-01-01&issued_to=2025-01-23".into(),
            vec![3],
        ),
        (
            "issued_from=2025-01-24&issued_to=2025-01-24".into(),
            vec![1],
        ),
        ("issuer_tax_id=isd950921he5".into(), vec![1]),
        ("receiver_tax_id=COSC8001137NA&type=P".into(), vec![2]),
        ("uuid=22222222-2222-2222-2222-222222222222".into(), vec![0]),
        ("payment_method=PUE".into(), vec![0, 1]),
        ("status=cancelled".into(), vec![]),
        ("direction=received".into(), vec![]),
        (
            "outstanding=false&direction=issued".into(),
            vec![0, 1, 2, 3],
        ),
        // The list's paging parameters mean nothing here.
        ("limit=1".into(), vec![0, 1, 2, 3]),
    ] {
        let resp = export(&client, "export", &query);
        assert_eq!(resp.status, 200, "{query}: {}", resp.text());
        assert_eq!(resp.text(), invoices_csv(&f, &rows), "{query}");
    }
    let items = export(&client, "export/items", "type=I&issuer_tax_id=ISD950921HE5").text();
    assert_eq!(items.lines().count(), 3, "header and REAL's two concepts");

    let stranger = f.app.create_user_in_new_org();
    let other = f.app.client_as(&stranger);
    for query in ["", &format!("entity_id={aaa}")] {
        assert_eq!(
            export(&other, "export", query).text(),
            invoices_csv(&f, &[])
        );
        let items = export(&other, "export/items", query).text();
        assert_eq!(items.lines().count(), 1, "only the header: {items}");
    }
}

#[test]
fn bad_filter_values_and_formats_are_422_on_their_name() {
    let f = fixture();
    let client = f.client();
    for path in ["export", "export/items"] {
        for (query, field) in [
            ("format=pdf", "format"),
            ("type=X", "type"),
            ("direction=sideways", "direction"),
            ("status=gone", "status"),
            ("payment_method=XYZ", "payment_method"),
            ("issued_from=2026-02-30", "issued_from"),
            ("issued_from=2026-02-01&issued_to=2026-01-01", "issued_to"),
            ("outstanding=maybe", "outstanding"),
            ("entity_id=nope", "entity_id"),
        ] {
            export(&client, path, query).expect_field_error(field);
        }
        f.app
            .anonymous()
            .get(&format!("/v1/invoices/{path}"))
            .expect_unauthorized("");
    }
}

/// The sheets of an XLSX, each as rows of cells.
fn read_xlsx(bytes: &[u8]) -> Vec<Vec<Vec<Data>>> {
    let mut book = Xlsx::new(Cursor::new(bytes.to_vec())).expect("an XLSX");
    let names = book.sheet_names();
    names
        .iter()
        .map(|n| {
            let range = book.worksheet_range(n).expect("sheet");
            range.rows().map(<[Data]>::to_vec).collect()
        })
        .collect()
}

/// Every cell of the sheet equals the CSV's field: text as text, amounts as the same
/// number, booleans as booleans, empty as empty.
#[track_caller]
fn assert_same_cells(xlsx: &[u8], csv: &str) {
    let sheets = read_xlsx(xlsx);
    assert_eq!(sheets.len(), 1);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(csv.trim_start_matches('\u{feff}').as_bytes());
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("csv")).collect();
    assert_eq!(sheets[0].len(), records.len(), "row count");
    for (r, (row, record)) in sheets[0].iter().zip(&records).enumerate() {
        assert_eq!(row.len(), record.len(), "row {r} width");
        for (c, (cell, field)) in row.iter().zip(record.iter()).enumerate() {
            let at = format!("row {r} column {c} ({field:?} vs {cell:?})");
            match cell {
                Data::String(s) => assert_eq!(s, field, "{at}"),
                Data::Float(x) => {
                    let decimal: Decimal = field.parse().expect(&at);
                    let read: Decimal = x.to_string().parse().expect(&at);
                    assert_eq!(read, decimal, "{at}");
                }
                Data::Bool(b) => assert_eq!(b.to_string(), field, "{at}"),
                Data::Empty => assert_eq!(field, "", "{at}"),
                Data::DateTime(d) => {
                    let serial = excel_serial(field).expect(&at);
                    assert!((d.as_f64() - serial).abs() < 1e-8, "{at}");
                }
                other => panic!("{at}: unexpected {other:?}"),
            }
        }
    }
}

#[test]
fn xlsx_exports_hold_the_csv_values_cell_by_cell_with_amounts_as_numbers() {
    let f = fixture();
    let client = f.client();
    for (path, csv) in [
        ("export", invoices_csv(&f, &[0, 1, 2, 3])),
        ("export/items", f.fill(ITEMS_CSV)),
    ] {
        let resp = export(&client, path, "format=xlsx");
        assert_eq!(resp.status, 200, "{}", resp.text());
        assert_eq!(
            resp.header("content-type"),
            Some("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
        );
        assert_same_cells(&resp.body, &csv);
        // Every date or timestamp column holds date cells.
        let sheet = &read_xlsx(&resp.body)[0];
        let mut dates = 0;
        for (c, name) in sheet[0].iter().enumerate() {
            let Data::String(name) = name else { continue };
            let date_column = name.ends_with("_at") || name.ends_with("_date");
            for row in &sheet[1..] {
                match &row[c] {
                    Data::DateTime(_) if date_column => dates += 1,
                    Data::Empty => {}
                    other if date_column => panic!("{path} {name}: {other:?}"),
                    _ => {}
                }
            }
        }
        assert!(dates > 0, "{path}: some date cells");
    }
    let sheets = read_xlsx(&export(&client, "export", "format=XLSX&type=N").body);
    assert_eq!(sheets[0][1][22], Data::Float(12574.4), "total is a number");
    assert_eq!(sheets[0][1][32], Data::Bool(false), "has_pdf is a boolean");
    // issued_at is a date cell (a month filter works), holding the time as written.
    match &sheets[0][1][8] {
        Data::DateTime(d) => {
            let serial = excel_serial("2026-01-21T16:42:35").expect("a timestamp");
            assert!((d.as_f64() - serial).abs() < 1e-8, "{d:?}");
        }
        other => panic!("issued_at is not a date cell: {other:?}"),
    }
}

#[test]
fn the_cli_writes_one_entitys_period_as_the_api_does() {
    let f = fixture();
    let client = f.client();
    let aaa = &f.entities["AAA010101AAA"];
    let dir = tempfile::TempDir::new().expect("temp dir");
    let run = |extra: &[&str], file: &str| {
        let out = dir.path().join(file);
        let out_text = out.to_string_lossy().to_string();
        let mut args = vec![
            "invoices",
            "export",
            "--entity",
            aaa,
            "--from",
            "2015-01-01",
            "--to",
            "2026-01-21",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", &out_text]);
        let stdout = f.app.cli(&args, None).expect_success("invoices export");
        (stdout, std::fs::read(&out).expect("the file"))
    };
    let (stdout, csv) = run(&[], "a.csv");
    assert!(stdout.starts_with("exported\t"), "{stdout}");
    assert!(stdout.trim_end().ends_with("\t3"), "three rows: {stdout}");
    let api = export(
        &client,
        "export",
        &format!("entity_id={aaa}&issued_from=2015-01-01&issued_to=2026-01-21"),
    );
    assert_eq!(csv, api.body);
    assert_eq!(
        String::from_utf8(csv).expect("utf-8"),
        invoices_csv(&f, &[0, 2, 3])
    );

    let (_, csv) = run(&["--direction", "received"], "b.csv");
    assert_eq!(
        String::from_utf8(csv).expect("utf-8"),
        invoices_csv(&f, &[])
    );

    let (_, xlsx) = run(&["--items", "--format", "xlsx"], "c.xlsx");
    let items = export(&client, "export/items", &format!("entity_id={aaa}")).text();
    assert_same_cells(&xlsx, &items);

    let out = dir.path().join("bad.csv").to_string_lossy().to_string();
    for (entity, from, to, needle) in [
        (aaa.as_str(), "2026-13-01", "2026-01-21", "--from"),
        (aaa.as_str(), "2015-01-01", "2014-12-31", "--to"),
        ("nope", "2015-01-01", "2026-01-21", "no entity"),
    ] {
        let args = [
            "invoices", "export", "--entity", entity, "--from", from, "--to", to, "--out", &out,
        ];
        let result = f.app.cli(&args, None);
        assert!(!result.status.success(), "{args:?} fails");
        assert!(
            result.stderr.contains(needle),
            "{args:?}: {}",
            result.stderr
        );
    }
}

/// REAL with an issuer, a receiver and two concepts that a spreadsheet would take for
/// formulas (the parser trims values, so a leading tab or CR cannot reach an export
/// from a CFDI; the unit test covers them).
fn formula_like_real(app: &TestApp) -> (String, String) {
    let xml = String::from_utf8(sample_bytes(REAL))
        .expect("utf-8")
        .replace(
            "Nombre=\"PASE, SERVICIOS ELECTRONICOS\"",
            "Nombre=\"=HYPERLINK(&quot;http://evil&quot;,&quot;x&quot;)\"",
        )
        .replace("Nombre=\"CARLOS CORTES SOTO\"", "Nombre=\"@SUM(1+1)\"")
        .replace(
            "Descripcion=\"COMISION RECARGA IDMX\"",
            "Descripcion=\"-2+3\"",
        )
        .replace("Descripcion=\"RECARGA IDMX\"", "Descripcion=\"+1 PLUS\"");
    let dir = tempfile::TempDir::new().expect("temp dir");
    let path = dir.path().join("formulas.xml");
    std::fs::write(&path, xml).expect("write");
    let entity = id_of(&app.client().create_entity(&issuer_of(REAL), "sandbox1"));
    let (_, id) = import(app, &entity, "issued", &[path]).remove(0);
    (entity, id)
}

#[test]
fn text_a_spreadsheet_would_run_as_a_formula_is_defused_and_amounts_stay_numbers() {
    let app = TestApp::spawn();
    let (entity, id) = formula_like_real(&app);
    let client = app.client();
    let csv = export(&client, "export", "").text();
    let row = format!(
        "{id},{entity},C2832671-DA6D-11EF-A83D-00155D012007,issued,I,4.0,O,52375239,2025-01-24T10:10:41,2025-01-24T10:10:42,ISD950921HE5,\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\",601,COSC8001137NA,'@SUM(1+1),G03,MXN,1,862.07,,137.93,,1000.00,PUE,04,active,,1000.00,0.00,,,false,false,2\r\n"
    );
    assert_eq!(csv, format!("\u{feff}{INVOICES_HEADER}{row}"));
    let items = export(&client, "export/items", "").text();
    let lines: Vec<&str> = items.split("\r\n").collect();
    let prefix = format!("{id},C2832671-DA6D-11EF-A83D-00155D012007,issued,I,2025-01-24T10:10:41,ISD950921HE5,COSC8001137NA,MXN,active");
    assert_eq!(
        lines[1],
        format!(
            "{prefix},1,80141628,'-2+3,1.000000,E48,8.620690,,8.620690,0.160000,1.379310,,,,,,,,"
        )
    );
    assert_eq!(
        lines[2],
        format!("{prefix},2,95111615,'+1 PLUS,1.000000,E54,853.448276,,853.448276,0.160000,136.551724,,,,,,,,")
    );

    // XLSX: the same text as string cells, as written, and no formula anywhere.
    let xlsx = export(&client, "export", "format=xlsx").body;
    let sheets = read_xlsx(&xlsx);
    assert_eq!(
        sheets[0][1][11],
        Data::String("=HYPERLINK(\"http://evil\",\"x\")".into())
    );
    assert_eq!(sheets[0][1][14], Data::String("@SUM(1+1)".into()));
    let mut zip = zip::ZipArchive::new(Cursor::new(xlsx)).expect("a zip");
    let mut sheet_xml = String::new();
    std::io::Read::read_to_string(
        &mut zip.by_name("xl/worksheets/sheet1.xml").expect("sheet1"),
        &mut sheet_xml,
    )
    .expect("read");
    assert!(!sheet_xml.contains("<f>"), "no formula cells: {sheet_xml}");
}
