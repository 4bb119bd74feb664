//! CFDI de Retenciones through the binary: `invoices import` picks the class by the
//! root element, the shared samples are stored or refused with the contract's reasons,
//! and `/v1/retentions` lists, filters, reads and serves their documents, scoped to the
//! organization, with their events.

use crate::common::app::{Client, TestApp};
use crate::common::invoices::{id_of, import, pdf_shows};
use crate::flows::import::import_refused;
use serde_json::Value;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

pub(crate) const SAMPLES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/retenciones-samples/"
);

/// The SAT demo family: issued by AAA010101AAA to XAXX010101000, period 2014-06.
pub(crate) const DEMO: [&str; 7] = [
    "ret10-arrendamientoenfideicomiso-tfd10.xml",
    "ret10-dividendos-nacional-tfd10.xml",
    "ret10-enajenaciondeacciones-tfd10.xml",
    "ret10-intereses-tfd10.xml",
    "ret10-operacionesconderivados-tfd10.xml",
    "ret10-planesderetiro-tfd10.xml",
    "ret10-sin-complemento-tfd10.xml",
];
/// RET 2.0 with every complement, also received by XAXX010101000 (period 2027).
const ALL_COMPLEMENTS: &str = "ret20-todos-complementos-relacionado-tfd11.xml";
const PLATFORMS: &str = "ret10-plataformastecnologicas-tfd10.xml";
const DIVIDENDS: &str = "ret10-dividendos-nacional-tfd10.xml";

fn sample(name: &str) -> PathBuf {
    Path::new(SAMPLES).join(name)
}

fn retentions(client: &Client, query: &str) -> Vec<Value> {
    client.list_all(&format!("/v1/retentions?{query}"), 500)
}

/// An entity whose national receiver RFC is XAXX010101000, with every document it
/// received imported; returns (entity id, file name -> retention id).
fn received(app: &TestApp) -> (String, Vec<(String, String)>) {
    let entity = id_of(&app.client().create_entity("XAXX010101000", "sandbox1"));
    let mut files: Vec<PathBuf> = DEMO.iter().map(|n| sample(n)).collect();
    files.push(sample(ALL_COMPLEMENTS));
    let imported = import(app, &entity, "received", &files);
    (entity, imported)
}

#[test]
fn every_sample_is_stored_or_refused_with_its_reason() {
    let app = TestApp::spawn();
    let client = app.client();
    let (receiver, imported) = received(&app);
    assert_eq!(imported.len(), 8);
    // The import names the class it stored.
    let out = app.cli(
        &[
            "invoices",
            "import",
            "--entity",
            &receiver,
            "--direction",
            "received",
            &sample(DIVIDENDS).to_string_lossy(),
        ],
        None,
    );
    let out = out.expect_success("import again");
    let line = out.lines().find(|l| l.starts_with("imported\t"));
    assert!(
        line.is_some_and(|l| l.trim_end().ends_with("\tretention")),
        "{out}"
    );
    // Then whether its seal verified: this sample was sealed with a test certificate.
    assert!(
        out.contains("\tinvalid\tthe certificate was issued by A.C. de pruebas"),
        "{out}"
    );

    // The demo issuer files the foreign-receiver payment as issued and the platform's
    // constancia as received.
    let company = id_of(&client.create_entity("AAA010101AAA", "sandbox1"));
    import(
        &app,
        &company,
        "issued",
        &[sample("ret10-pagosaextranjeros-extranjero-tfd10.xml")],
    );
    import(&app, &company, "received", &[sample(PLATFORMS)]);

    // Unstamped documents, and stamped fakes without a date of issue, are refused.
    for (file, reason) in [
        ("ret20-min-extranjero-unstamped.xml", "not stamped"),
        (
            "ret10-dividendos-extranjero-eku-unstamped.xml",
            "not stamped",
        ),
        ("ret10-fake-nacional-minimal.xml", "missing FechaExp"),
        ("ret10-fake-extranjero-minimal.xml", "missing FechaExp"),
        ("ret20-fake-nacional-minimal.xml", "missing FechaExp"),
        ("ret20-fake-sin-receptor-taxid.xml", "missing FechaExp"),
    ] {
        let why = import_refused(&app, &company, "issued", &sample(file));
        assert!(why.contains(reason), "{file}: {why}");
    }
    // A document of another taxpayer is refused like an invoice.
    let why = import_refused(&app, &company, "received", &sample(DIVIDENDS));
    assert!(why.contains("receiver RFC is \"XAXX010101000\""), "{why}");

    assert_eq!(retentions(&client, "").len(), 10);
    assert_eq!(
        retentions(&client, &format!("entity_id={company}")).len(),
        2
    );
    // Retentions are not invoices.
    assert!(client.list_all("/v1/invoices", 500).is_empty());
}

#[test]
fn a_retention_reads_as_written_and_its_documents_come_back() {
    let app = TestApp::spawn();
    let client = app.client();
    let (_, imported) = received(&app);
    let id = |name: &str| {
        imported
            .iter()
            .find(|(f, _)| f == name)
            .map(|(_, id)| id.clone())
            .expect("imported")
    };
    let dividends = client
        .get(&format!("/v1/retentions/{}", id(DIVIDENDS)))
        .expect(200);
    assert_eq!(dividends["uuid"], "A6D77767-7FA2-4ACD-A8A0-F3126AFF9FBE");
    assert_eq!(dividends["direction"], "received");
    assert_eq!(dividends["version"], "1.0");
    assert_eq!(dividends["retention_key"], "14");
    assert_eq!(dividends["retention_description"], "Dividendos");
    assert_eq!(dividends["issuer"]["tax_id"], "AAA010101AAA");
    assert_eq!(
        dividends["receiver"]["national"]["name"],
        "PÚBLICO EN GENERAL S DE TST"
    );
    assert_eq!(
        dividends["period"],
        serde_json::json!({"year": 2014, "start_month": 6, "end_month": 6})
    );
    // Totals as written (exact JSON numbers), not "corrected" to the entries' 500.00.
    assert_eq!(dividends["totals"]["withheld"].to_string(), "3500.00");
    assert_eq!(dividends["totals"]["operation"].to_string(), "14000.00");
    let taxes = dividends["withheld_taxes"].as_array().expect("taxes");
    assert_eq!(taxes.len(), 1);
    assert_eq!(taxes[0]["tax"], "01");
    assert_eq!(taxes[0]["payment_type"], "Pago definitivo");
    assert_eq!(taxes[0]["amount"].to_string(), "500.00");
    let complement = &dividends["complements"][0];
    assert_eq!(complement["code"], "dividendos");
    assert_eq!(
        complement["amounts"]["DividOUtil@MontISRAcredRetMexico"].to_string(),
        "35.00"
    );
    assert_eq!(dividends["status"], "active");
    assert_eq!(dividends["has_pdf"], false);

    let all = client
        .get(&format!("/v1/retentions/{}", id(ALL_COMPLEMENTS)))
        .expect(200);
    assert_eq!(all["complements"].as_array().map(Vec::len), Some(11));
    assert_eq!(all["related"][0]["relation_type"], "09");
    assert_eq!(all["totals"]["isr_due"].to_string(), "11.2");

    // The document: the XML byte for byte, JSON, and a PDF printed from the XML.
    let path = format!("/v1/retentions/{}/cfdi", id(DIVIDENDS));
    let xml = client.get(&format!("{path}?format=xml"));
    assert_eq!(xml.status, 200);
    assert!(xml.content_type().contains("xml"), "{}", xml.content_type());
    assert_eq!(xml.body, std::fs::read(sample(DIVIDENDS)).expect("sample"));
    let json = client.get(&path).expect(200);
    assert_eq!(json, dividends);
    let pdf = client.get(&format!("{path}?format=pdf"));
    assert_eq!(pdf.status, 200, "{}", pdf.text());
    assert_eq!(pdf.content_type(), "application/pdf");
    assert_eq!(pdf.header("x-cfdi-pdf"), Some("rendered"));
    assert!(pdf.body.starts_with(b"%PDF-"));
    let shown = String::from_utf8_lossy(&pdf.body);
    assert!(shown.contains("A6D77767-7FA2-4ACD-A8A0-F3126AFF9FBE"));
    for text in [
        "Monto total retenido",
        "$3,500.00",
        "$14,000.00",
        "Clave de retención: 14 - Dividendos o utilidades distribuidas",
        "Periodo: Junio de 2014",
        "Monto total retenido con letra: TRES MIL QUINIENTOS PESOS 00/100 M.N.",
    ] {
        assert!(pdf_shows(&pdf.body, text), "{text} in {shown}");
    }
    client
        .get(&format!("{path}?format=docx"))
        .expect_field_error("format");
}

#[test]
fn the_list_filters_pages_and_refuses_bad_filters() {
    let app = TestApp::spawn();
    let client = app.client();
    let (entity, _) = received(&app);
    let q = |query: &str| retentions(&client, &format!("entity_id={entity}&{query}"));
    assert_eq!(q("").len(), 8);
    assert_eq!(q("direction=received").len(), 8);
    assert!(q("direction=issued").is_empty());
    let dividends = q("retention_key=14");
    assert_eq!(dividends.len(), 1);
    assert_eq!(dividends[0]["retention_description"], "Dividendos");
    assert_eq!(q("period_from=2014-06&period_to=2014-06").len(), 7);
    assert_eq!(q("period_from=2014-07&period_to=2026-12").len(), 0);
    assert_eq!(q("period_from=2027-05").len(), 1);
    assert_eq!(q("period_to=2014-06").len(), 7);
    assert_eq!(q("counterpart_tax_id=aaa010101aaa").len(), 7);
    assert_eq!(q("counterpart_tax_id=AAAA010101AAA").len(), 1);
    assert_eq!(q("status=active").len(), 8);
    assert!(q("updated_since=2999-01-01T00:00:00Z").is_empty());
    assert_eq!(q("updated_since=2020-01-01T00:00:00Z").len(), 8);

    // Newest FechaExp first; pages of 3 walk every one once, in either order.
    let all = q("");
    let dates: Vec<&str> = all.iter().filter_map(|r| r["issued_at"].as_str()).collect();
    let mut sorted = dates.clone();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    assert_eq!(dates, sorted);
    let paged = client.list_all(&format!("/v1/retentions?entity_id={entity}"), 3);
    assert_eq!(paged, all);
    let synced = client.list_all(
        &format!("/v1/retentions?entity_id={entity}&order=updated_at_asc"),
        3,
    );
    assert_eq!(synced.len(), 8);

    // Each carries its seal's verification, and `seal` filters on its status: the
    // three values split the list.
    let mut by_seal = 0;
    for status in ["valid", "invalid", "unverified"] {
        let matched = q(&format!("seal={status}"));
        assert!(matched.iter().all(|r| r["seal"]["status"] == status));
        by_seal += matched.len();
    }
    assert_eq!(by_seal, 8);
    let interest = all
        .iter()
        .find(|r| r["retention_key"] == "16")
        .expect("the interest retention");
    assert_eq!(
        interest["seal"]["checks"]["issuer_seal"]["status"], "valid",
        "a genuine seal: {}",
        interest["seal"]
    );
    assert_eq!(interest["seal"]["algorithm"], "SHA-1");

    for (query, field) in [
        ("direction=sideways", "direction"),
        ("period_from=2014-13", "period_from"),
        ("period_to=2014", "period_to"),
        ("period_from=2014-06&period_to=2014-05", "period_to"),
        ("retention_key=dividendos", "retention_key"),
        ("entity_id=nope", "entity_id"),
        ("updated_since=yesterday", "updated_since"),
        ("status=gone", "status"),
        ("order=random", "order"),
        ("seal=maybe", "seal"),
        ("limit=0", "limit"),
        ("cursor=garbage", "cursor"),
    ] {
        client
            .get(&format!("/v1/retentions?{query}"))
            .expect_field_error(field);
    }
}

#[test]
fn another_organization_sees_none_of_them() {
    let app = TestApp::spawn();
    let client = app.client();
    let (entity, imported) = received(&app);
    let other = app.client_as(&app.create_user_in_new_org());
    assert!(retentions(&other, "").is_empty());
    assert!(retentions(&other, &format!("entity_id={entity}")).is_empty());
    let id = &imported[0].1;
    for path in [
        format!("/v1/retentions/{id}"),
        format!("/v1/retentions/{id}/cfdi"),
        format!("/v1/retentions/{id}/cfdi?format=xml"),
        format!("/v1/retentions/{id}/cfdi?format=pdf"),
        "/v1/retentions/not-a-uuid".to_owned(),
    ] {
        other.get(&path).expect_not_found();
    }
    // Its events are its own too.
    let events = |c: &Client| {
        c.list_all("/v1/events?resource_type=Retention", 500)
            .into_iter()
            .map(|e| e["event"].as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
    };
    assert!(events(&other).is_empty());
    assert_eq!(events(&client), vec!["retention.created"; 8]);
}

#[test]
fn a_document_seen_again_is_idempotent_and_another_under_its_uuid_is_refused() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("XAXX010101000", "sandbox1"));
    let first = import(&app, &entity, "received", &[sample(DIVIDENDS)]);
    let id = first[0].1.clone();
    let before = client.get(&format!("/v1/retentions/{id}")).expect(200);

    // The same bytes: the same retention, unchanged, no new event.
    let again = import(&app, &entity, "received", &[sample(DIVIDENDS)]);
    assert_eq!(again[0].1, id);
    // The same document written out again (other whitespace): the same retention.
    let dir = TempDir::new().expect("tmp");
    let text = std::fs::read_to_string(sample(DIVIDENDS)).expect("sample");
    let rewritten = dir.path().join("rewritten.xml");
    std::fs::write(
        &rewritten,
        format!("{}\n\n", text.replace("\n    ", "\n  ")),
    )
    .expect("write");
    let same = import(&app, &entity, "received", std::slice::from_ref(&rewritten));
    assert_eq!(same[0].1, id);
    let after = client.get(&format!("/v1/retentions/{id}")).expect(200);
    assert_eq!(
        after, before,
        "updated_at kept: nothing a client sees changed"
    );
    let created = client.list_all("/v1/events?resource_type=Retention", 500);
    assert_eq!(created.len(), 1, "{created:?}");
    assert_eq!(created[0]["event"], "retention.created");
    assert_eq!(created[0]["object"]["id"], id);

    // Another document claiming the stored UUID is refused; the stored one is kept.
    let forged = dir.path().join("forged.xml");
    std::fs::write(
        &forged,
        text.replace("montoTotRet=\"3500.00\"", "montoTotRet=\"9.00\""),
    )
    .expect("write");
    let why = import_refused(&app, &entity, "received", &forged);
    assert!(
        why.contains("another document with UUID A6D77767-7FA2-4ACD-A8A0-F3126AFF9FBE"),
        "{why}"
    );
    let kept = client.get(&format!("/v1/retentions/{id}")).expect(200);
    assert_eq!(kept["totals"]["withheld"].to_string(), "3500.00");
    let xml = client.get(&format!("/v1/retentions/{id}/cfdi?format=xml"));
    assert_eq!(xml.body, std::fs::read(&rewritten).expect("rewritten"));
}

#[test]
fn malformed_and_oversized_retentions_are_refused() {
    let app = TestApp::spawn();
    let entity = id_of(&app.client().create_entity("XAXX010101000", "sandbox1"));
    let dir = TempDir::new().expect("tmp");
    let text = std::fs::read_to_string(sample(DIVIDENDS)).expect("sample");
    let cut = dir.path().join("cut.xml");
    std::fs::write(&cut, &text[..text.len() / 2]).expect("write");
    assert!(import_refused(&app, &entity, "received", &cut).contains("malformed XML"));
    let big = dir.path().join("big.xml");
    let padding = format!("{}<retenciones:Addenda/>", " ".repeat(21 * 1024 * 1024));
    std::fs::write(&big, text.replacen("<retenciones:Addenda/>", &padding, 1)).expect("write");
    assert!(import_refused(&app, &entity, "received", &big).contains("larger than 20 MiB"));
    let bad = dir.path().join("bad.xml");
    std::fs::write(
        &bad,
        text.replacen(
            "montoTotOperacion=\"14000.00\"",
            "montoTotOperacion=\"1e4\"",
            1,
        ),
    )
    .expect("write");
    let why = import_refused(&app, &entity, "received", &bad);
    assert!(
        why.contains("invalid Totales@MontoTotOperacion: \"1e4\""),
        "{why}"
    );
    assert!(retentions(&app.client(), "").is_empty());
}

/// A withholdings line: source, tax, payment type, pesos.
type Line = (String, String, String, String);

/// A copy of a sample with `edits` applied (each must occur), in `dir`.
fn edited(dir: &TempDir, name: &str, sample_name: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = std::fs::read_to_string(sample(sample_name)).expect("sample");
    for (from, to) in edits {
        assert!(text.contains(from), "{sample_name} has no {from:?}");
        text = text.replacen(from, to, 1);
    }
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write");
    path
}

#[test]
fn exports_and_the_summary_withholdings_match_values_worked_by_hand() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("EKU9003173C9", "sandbox1"));
    // An invoice the entity issued on 2024-06-15 whose client withheld ISR 125.03 and
    // IVA 133.37.
    import(
        &app,
        &entity,
        "issued",
        &[crate::common::invoices::sample_path(
            "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
        )],
    );
    let dir = TempDir::new().expect("tmp");
    // The platform's constancia, received by the entity for June 2024: ISR and IVA
    // 647.379200 each (647.38 in pesos, rounded once).
    let monthly = edited(
        &dir,
        "monthly.xml",
        PLATFORMS,
        &[
            ("RFCRecep=\"AAA010101AAA\"", "RFCRecep=\"EKU9003173C9\""),
            (
                "MesIni=\"08\" MesFin=\"08\" Ejerc=\"2020\"",
                "MesIni=\"06\" MesFin=\"06\" Ejerc=\"2024\"",
            ),
        ],
    );
    // An annual one (January to December 2024): ISR 100.005000 (100.01), IVA 647.379200.
    let annual = edited(
        &dir,
        "annual.xml",
        PLATFORMS,
        &[
            ("RFCRecep=\"AAA010101AAA\"", "RFCRecep=\"EKU9003173C9\""),
            (
                "MesIni=\"08\" MesFin=\"08\" Ejerc=\"2020\"",
                "MesIni=\"01\" MesFin=\"12\" Ejerc=\"2024\"",
            ),
            ("montoRet=\"647.379200\"", "montoRet=\"100.005000\""),
            (
                "F25F9852-6F4C-4782-9D47-3119EB3FAD3A",
                "F25F9852-6F4C-4782-9D47-3119EB3FAD3B",
            ),
        ],
    );
    import(&app, &entity, "received", &[monthly, annual]);

    let summary = |from: &str, to: &str, direction: &str| -> Vec<Line> {
        let body = client
            .get(&format!(
                "/v1/entities/{entity}/summary?from={from}&to={to}&direction={direction}"
            ))
            .expect(200);
        body["withholdings"]
            .as_array()
            .expect("withholdings")
            .iter()
            .map(|l| {
                let text = |v: &Value| match v {
                    Value::String(s) => s.clone(),
                    Value::Null => "-".into(),
                    other => other.to_string(),
                };
                (
                    text(&l["source"]),
                    text(&l["tax"]),
                    text(&l["payment_type"]),
                    text(&l["amount_mxn"]),
                )
            })
            .collect()
    };
    let line = |source: &str, tax: &str, kind: &str, amount: &str| -> Line {
        (source.into(), tax.into(), kind.into(), amount.into())
    };
    // June, read from a summary of received documents: the issued invoice's
    // withholdings count all the same; the annual constancia ends in December.
    let june = vec![
        line("invoices", "001", "-", "125.03"),
        line("invoices", "002", "-", "133.37"),
        line("retentions", "001", "Pago provisional", "647.38"),
        line("retentions", "002", "Pago provisional", "647.38"),
        line("total", "001", "-", "772.41"),
        line("total", "002", "-", "780.75"),
    ];
    assert_eq!(summary("2024-06-01", "2024-06-30", "received"), june);
    assert_eq!(summary("2024-06-01", "2024-06-30", "issued"), june);
    assert_eq!(
        summary("2024-12-01", "2024-12-31", "issued"),
        vec![
            line("retentions", "001", "Pago provisional", "100.01"),
            line("retentions", "002", "Pago provisional", "647.38"),
            line("total", "001", "-", "100.01"),
            line("total", "002", "-", "647.38"),
        ]
    );
    // The whole year: 772.41 + 100.01 and 780.75 + 647.38.
    let year = summary("2024-01-01", "2024-12-31", "issued");
    assert_eq!(year[year.len() - 2], line("total", "001", "-", "872.42"));
    assert_eq!(year[year.len() - 1], line("total", "002", "-", "1428.13"));

    // The export: the list's filters, one row per retention, withholdings by tax.
    let res = client.get(&format!(
        "/v1/retentions/export?entity_id={entity}&format=csv&period_from=2024-01"
    ));
    assert_eq!(res.status, 200, "{}", res.text());
    assert!(res.content_type().starts_with("text/csv"));
    assert_eq!(
        res.header("content-disposition"),
        Some("attachment; filename=\"retentions.csv\"")
    );
    let text = res.text();
    let mut lines = text.trim_start_matches('\u{feff}').lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let rows: Vec<Vec<String>> = lines
        .map(|l| l.split(',').map(str::to_owned).collect())
        .collect();
    assert_eq!(rows.len(), 2);
    let column = |name: &str| header.iter().position(|h| *h == name).expect(name);
    let mut isr: Vec<&str> = rows
        .iter()
        .map(|r| r[column("isr_withheld")].as_str())
        .collect();
    isr.sort_unstable();
    assert_eq!(isr, ["100.005000", "647.379200"]);
    for r in &rows {
        assert_eq!(r[column("iva_withheld")], "647.379200");
        assert_eq!(r[column("receiver_tax_id")], "EKU9003173C9");
        assert_eq!(r[column("retention_key")], "26");
        assert_eq!(
            r[column("complements")],
            "serviciosplataformastecnologicas10"
        );
        assert_eq!(r[column("total_withheld")], "1294.758400");
    }
    // A filter that matches none gives the header alone; a bad one is a 422.
    let none = client.get(&format!(
        "/v1/retentions/export?entity_id={entity}&retention_key=14"
    ));
    assert_eq!(
        none.text().trim_start_matches('\u{feff}').lines().count(),
        1
    );
    client
        .get("/v1/retentions/export?period_to=junio")
        .expect_field_error("period_to");
    let xlsx = client.get(&format!(
        "/v1/retentions/export?entity_id={entity}&format=xlsx"
    ));
    assert_eq!(xlsx.status, 200);
    assert!(xlsx.body.starts_with(b"PK"));
}

/// A stamped CFDI 4.0 invoice from `issuer` to `receiver` on `date` whose stamp carries
/// `uuid` as written (its case too), as `name` in `dir`.
pub(crate) fn invoice_under(
    dir: &TempDir,
    name: &str,
    uuid: &str,
    issuer: &str,
    receiver: &str,
    date: &str,
) -> PathBuf {
    let xml = format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" Version="4.0" Fecha="{date}" SubTotal="100.00"
    Total="116.00" Moneda="MXN" TipoDeComprobante="I" MetodoPago="PUE" FormaPago="03" Exportacion="01" LugarExpedicion="01000">
  <cfdi:Emisor Rfc="{issuer}" Nombre="EMISOR" RegimenFiscal="601"/>
  <cfdi:Receptor Rfc="{receiver}" Nombre="RECEPTOR" DomicilioFiscalReceptor="01000" RegimenFiscalReceptor="601" UsoCFDI="G03"/>
  <cfdi:Conceptos><cfdi:Concepto ClaveProdServ="84111506" Cantidad="1" ClaveUnidad="E48" Descripcion="Servicio"
    ValorUnitario="100.00" Importe="100.00" ObjetoImp="02"><cfdi:Impuestos><cfdi:Traslados>
    <cfdi:Traslado Base="100.00" Impuesto="002" TipoFactor="Tasa" TasaOCuota="0.160000" Importe="16.00"/>
  </cfdi:Traslados></cfdi:Impuestos></cfdi:Concepto></cfdi:Conceptos>
  <cfdi:Impuestos TotalImpuestosTrasladados="16.00"/>
  <cfdi:Complemento><tfd:TimbreFiscalDigital xmlns:tfd="http://www.sat.gob.mx/TimbreFiscalDigital"
    Version="1.1" UUID="{uuid}" FechaTimbrado="{date}" RfcProvCertif="SAT970701NN3"/></cfdi:Complemento>
</cfdi:Comprobante>"#
    );
    let path = dir.path().join(name);
    std::fs::write(&path, xml).expect("write");
    path
}

/// DIVIDENDS' stamp UUID.
const DIVIDENDS_UUID: &str = "A6D77767-7FA2-4ACD-A8A0-F3126AFF9FBE";

/// `/docs/invoices#same-uuid` across the two classes, through `invoices import`: an
/// invoice and then a retention under its stamp UUID (written in lower case in the
/// invoice), and the reverse order in another organization; the second is refused with
/// the rule's reason and nothing of it is stored.
#[test]
fn an_invoice_and_a_retention_never_share_a_stamp_uuid_in_either_order() {
    let app = TestApp::spawn();
    let dir = TempDir::new().expect("tmp");
    let invoice = invoice_under(
        &dir,
        "invoice.xml",
        &DIVIDENDS_UUID.to_ascii_lowercase(),
        "AAA010101AAA",
        "XAXX010101000",
        "2015-02-24T11:02:43",
    );
    let retention = sample(DIVIDENDS);
    let refusal = format!("another document with UUID {DIVIDENDS_UUID} is already stored");

    // The invoice first: the retention is refused, the invoice kept.
    let client = app.client();
    let entity = id_of(&client.create_entity("AAA010101AAA", "sandbox1"));
    let stored = import(&app, &entity, "issued", std::slice::from_ref(&invoice));
    let why = import_refused(&app, &entity, "issued", &retention);
    assert!(why.contains(&refusal), "{why}");
    assert!(retentions(&client, &format!("entity_id={entity}")).is_empty());
    let listed = client.list_all(
        &format!("/v1/invoices?entity_id={entity}&uuid={DIVIDENDS_UUID}"),
        10,
    );
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], stored[0].1.as_str());
    assert_eq!(listed[0]["total"].to_string(), "116.00");
    // The invoice again is the same document: accepted, still one.
    import(&app, &entity, "issued", std::slice::from_ref(&invoice));

    // The retention first (another organization's entity of the same RFC): the invoice
    // is refused, the retention kept.
    let other = app.client_as(&app.create_user_in_new_org());
    let entity = id_of(&other.create_entity("AAA010101AAA", "sandbox1"));
    let stored = import(&app, &entity, "issued", std::slice::from_ref(&retention));
    let why = import_refused(&app, &entity, "issued", &invoice);
    assert!(why.contains(&refusal), "{why}");
    assert!(other
        .list_all(&format!("/v1/invoices?entity_id={entity}"), 10)
        .is_empty());
    let kept = retentions(&other, &format!("entity_id={entity}"));
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(kept[0]["id"], stored[0].1.as_str());
    assert_eq!(kept[0]["uuid"], DIVIDENDS_UUID);
    import(&app, &entity, "issued", std::slice::from_ref(&retention));
}
