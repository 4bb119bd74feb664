//! `GET /v1/entities/{id}/diot` and `/v1/entities/{id}/suppliers`: the DIOT of a month
//! of documents written here (the IVA determination's received October plus a foreign
//! supplier, an 8% south-border supplier with exempt acts and no tax effects, a PPD
//! paid by a complement, a base that rounds half up) and of the shared real samples,
//! worked by hand field by field, in both layouts; the supplier settings that change
//! it, remembered across months; the TXT and the XLSX.

use std::path::PathBuf;

use serde_json::{json, Value};

use super::iva::{
    cfdi, list_69b, october, payment, text, uuid, DEFINITIVE, IVA16, IVA_TWO_THIRDS, SERVICES,
    TAXPAYER, USD_SUPPLIER,
};
use crate::common::app::{Client, TestApp};
use crate::common::invoices::*;

const FOREIGN: &str = "XEXX010101000";
const BORDER: &str = "BOR010101AB5";
const PPD: &str = "PPD010101AB6";
const ROUNDS: &str = "ROU010101AB7";

/// Received documents beside October's: (file name, XML).
fn extras() -> Vec<(&'static str, String)> {
    let mxn = r#"Moneda="MXN""#;
    let to = |issuer| (issuer, TAXPAYER);
    vec![
        // A foreign supplier: 2,000.00 + 320.00.
        (
            "foreign.xml",
            cfdi(
                20,
                to(FOREIGN),
                "I",
                "PUE",
                mxn,
                "2026-10-14T10:00:00",
                ("2000.00", "2320.00"),
                &[("Traslado", "002", IVA16, "2000.00", "320.00")],
            ),
        ),
        // 1,000.00 at 8% (80.00) and 500.00 exempt.
        (
            "border.xml",
            cfdi(
                21,
                to(BORDER),
                "I",
                "PUE",
                mxn,
                "2026-10-16T10:00:00",
                ("1500.00", "1580.00"),
                &[
                    ("Traslado", "002", "0.080000", "1000.00", "80.00"),
                    ("Traslado", "002", "Exento", "500.00", ""),
                ],
            ),
        ),
        // September's PPD (2,000.00 + 320.00), half paid on October 15.
        (
            "ppd.xml",
            cfdi(
                22,
                to(PPD),
                "I",
                "PPD",
                mxn,
                "2026-09-20T10:00:00",
                ("2000.00", "2320.00"),
                &[("Traslado", "002", IVA16, "2000.00", "320.00")],
            ),
        ),
        (
            "ppd-payment.xml",
            payment(
                23,
                to(PPD),
                "2026-10-15T12:00:00",
                &uuid(22),
                ("2320.00", "1160.00", "1160.00"),
            ),
        ),
        // 100.50 + 16.08: the base rounds half away from zero to 101.
        (
            "rounds.xml",
            cfdi(
                24,
                to(ROUNDS),
                "I",
                "PUE",
                mxn,
                "2026-10-17T10:00:00",
                ("100.50", "116.58"),
                &[("Traslado", "002", IVA16, "100.50", "16.08")],
            ),
        ),
    ]
}

/// October 2024 (the 24-field layout): the services supplier with its credit note, the
/// USD supplier, the border supplier and the foreign one.
fn october_2024() -> Vec<(&'static str, String)> {
    let mxn = r#"Moneda="MXN""#;
    let to = |issuer| (issuer, TAXPAYER);
    vec![
        (
            "2024-services.xml",
            cfdi(
                30,
                to(SERVICES),
                "I",
                "PUE",
                mxn,
                "2024-10-08T10:00:00",
                ("5000.00", "4766.67"),
                &[
                    ("Traslado", "002", IVA16, "5000.00", "800.00"),
                    ("Retencion", "002", IVA_TWO_THIRDS, "5000.00", "533.33"),
                ],
            ),
        ),
        (
            "2024-credit-note.xml",
            cfdi(
                31,
                to(SERVICES),
                "E",
                "PUE",
                mxn,
                "2024-10-25T10:00:00",
                ("200.00", "232.00"),
                &[("Traslado", "002", IVA16, "200.00", "32.00")],
            ),
        ),
        (
            "2024-usd.xml",
            cfdi(
                32,
                to(USD_SUPPLIER),
                "I",
                "PUE",
                r#"Moneda="USD" TipoCambio="18.50""#,
                "2024-10-03T10:00:00",
                ("1000.00", "1160.00"),
                &[("Traslado", "002", IVA16, "1000.00", "160.00")],
            ),
        ),
        (
            "2024-border.xml",
            cfdi(
                33,
                to(BORDER),
                "I",
                "PUE",
                mxn,
                "2024-10-16T10:00:00",
                ("1500.00", "1580.00"),
                &[
                    ("Traslado", "002", "0.080000", "1000.00", "80.00"),
                    ("Traslado", "002", "Exento", "500.00", ""),
                ],
            ),
        ),
        (
            "2024-foreign.xml",
            cfdi(
                34,
                to(FOREIGN),
                "I",
                "PUE",
                mxn,
                "2024-10-14T10:00:00",
                ("2000.00", "2320.00"),
                &[("Traslado", "002", IVA16, "2000.00", "320.00")],
            ),
        ),
    ]
}

fn app_with_months() -> (TestApp, String) {
    let app = TestApp::spawn();
    let entity = id_of(&app.client().create_entity(TAXPAYER, "sandbox1"));
    let dir = tempfile::TempDir::new().expect("temp dir");
    let received = (october().into_iter())
        .filter(|(d, _, _)| *d == "received")
        .map(|(_, name, xml)| (name, xml))
        .chain(extras())
        .chain(october_2024());
    let paths: Vec<PathBuf> = received
        .map(|(name, xml)| {
            let path = dir.path().join(name);
            std::fs::write(&path, xml).expect("write");
            path
        })
        .collect();
    import(&app, &entity, "received", &paths);
    list_69b(&app);
    (app, entity)
}

/// What a CFDI cannot say, saved once and used by every month.
fn save_settings(client: &Client, entity: &str) {
    for (rfc, body) in [
        (SERVICES, json!({"operation_type": "03"})),
        (
            BORDER,
            json!({"border_region": "south", "tax_effects": false}),
        ),
        (
            FOREIGN,
            json!({"foreign_tax_id": "98-7654321", "foreign_name": "Acme Cloud Inc.",
                   "country": "USA", "legacy_country": "US",
                   "legacy_nationality": "Estadounidense"}),
        ),
    ] {
        let resp = client.put_json(&format!("/v1/entities/{entity}/suppliers/{rfc}"), &body);
        assert_eq!(resp.status, 200, "{rfc}: {}", resp.text());
    }
}

fn diot(client: &Client, entity: &str, month: &str) -> Value {
    let resp = client.get(&format!("/v1/entities/{entity}/diot?month={month}"));
    assert_eq!(resp.status, 200, "{month}: {}", resp.text());
    resp.json()
}

/// Each record as `RFC: n=value ...`, its non-empty fields.
fn filled(d: &Value) -> Vec<String> {
    (d["records"].as_array().expect("records").iter())
        .map(|r| {
            let fields: Vec<String> = (r["fields"].as_array().expect("fields").iter())
                .filter(|f| f["value"] != "")
                .map(|f| format!("{}={}", f["number"], text(&f["value"])))
                .collect();
            format!("{}: {}", text(&r["tax_id"]), fields.join(" "))
        })
        .collect()
}

#[test]
fn a_month_by_hand_in_the_2025_layout() {
    let (app, entity) = app_with_months();
    let client = app.client();
    save_settings(&client, &entity);
    let d = diot(&client, &entity, "2026-10");
    assert_eq!(
        [&d["month"], &d["from"], &d["to"], &d["basis"], &d["layout"]].map(text),
        ["2026-10", "2026-10-01", "2026-10-31", "cash", "54"]
    );
    assert_eq!(
        filled(&d),
        [
            // South border (its settings): 8% value 10, its IVA 20; exempt 50; no tax
            // effects given, 54 = 02.
            format!("{BORDER}: 1=04 2=85 3={BORDER} 10=1000 20=80 50=500 54=02"),
            // Definitive on the 69-B list: its IVA is not creditable for not meeting
            // the requirements (37).
            format!("{DEFINITIVE}: 1=04 2=85 3={DEFINITIVE} 12=3000 37=480 54=01"),
            // Half of 2,000.00 + 320.00, paid by the complement.
            format!("{PPD}: 1=04 2=85 3={PPD} 12=1000 22=160 54=01"),
            // 100.50 rounds to 101, 16.08 to 16.
            format!("{ROUNDS}: 1=04 2=85 3={ROUNDS} 12=101 22=16 54=01"),
            // 1,000.00 USD × 18.50 and its 160.00 USD of IVA; 1,000.00 at 0% (51).
            format!("{USD_SUPPLIER}: 1=04 2=85 3={USD_SUPPLIER} 12=18500 22=2960 51=1000 54=01"),
            // Professional services (its settings: 03): 5,000.00 paid, 200.00 returned
            // by the credit note (13), 800.00 − 32.00 creditable, 533.33 withheld.
            format!("{SERVICES}: 1=04 2=03 3={SERVICES} 12=5000 13=200 22=768 48=533 54=01"),
            // Foreign (05, operation 07 by default): no RFC, its tax id, name and
            // country; its 16% as an import of services (16, 26).
            format!(
                "{FOREIGN}: 1=05 2=07 4=98-7654321 5=Acme Cloud Inc. 6=USA 16=2000 26=320 54=01"
            ),
        ]
    );
    let records = d["records"].as_array().expect("records");
    let services = &records[5];
    assert_eq!(
        services["operation_type"]["description"],
        "Prestación de servicios profesionales"
    );
    assert_eq!(services["saved"], true);
    let g = &services["amounts"]["general"];
    assert_eq!(
        [&g["paid"], &g["returns"], &g["iva"], &g["iva_returns"]].map(text),
        ["5000.00", "200.00", "800.00", "32.00"]
    );
    assert_eq!(text(&services["amounts"]["withheld"]), "533.33");
    assert_eq!(services["count"], 2);
    let definitive = &records[1];
    assert_eq!(definitive["definitive_69b"], true);
    assert_eq!(definitive["non_creditable"]["code"], "requirements");
    assert_eq!(
        definitive["non_creditable"]["because"],
        "issuer_definitive_69b"
    );
    assert_eq!(definitive["saved"], false);
    let foreign = &records[6];
    assert_eq!(
        foreign["third_party_type"]["description"],
        "Proveedor extranjero"
    );
    assert_eq!(
        foreign["operation_type"]["description"],
        "Importación de bienes o servicios"
    );
    assert!(
        foreign["country"]["description"]
            .as_str()
            .is_some_and(|c| c.contains("Estados Unidos")),
        "{}",
        foreign["country"]
    );
    assert_eq!(records[0]["tax_effects"]["code"], "02");
    assert_eq!(records[0]["border_region"]["code"], "south");
    for r in records {
        assert_eq!(r["fields"].as_array().map(Vec::len), Some(54));
        assert_eq!(text(&r["line"]).split('|').count(), 54, "{}", r["line"]);
        assert_eq!(r["fields"][1]["label"], "Tipo de operación");
    }
    // The complement paying an invoice that is not stored is left out, as the IVA
    // determination leaves it.
    assert_eq!(
        (d["excluded"].as_array().expect("excluded").iter())
            .map(|e| format!(
                "{} {} {}",
                text(&e["reason"]),
                text(&e["detail"]),
                text(&e["counterparty_tax_id"])
            ))
            .collect::<Vec<_>>(),
        [format!(
            "payment_unresolved invoice_not_found {USD_SUPPLIER}"
        )]
    );

    // The TXT: the records' lines, CRLF after each, whole pesos.
    let resp = client.get(&format!(
        "/v1/entities/{entity}/diot?month=2026-10&format=txt"
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    assert_eq!(
        resp.header("content-disposition"),
        Some("attachment; filename=\"diot-2026-10.txt\"")
    );
    let body = resp.text();
    assert!(body.ends_with("\r\n"));
    let lines: Vec<&str> = body.trim_end_matches("\r\n").split("\r\n").collect();
    let expected: Vec<String> = records.iter().map(|r| text(&r["line"])).collect();
    assert_eq!(lines, expected);
    for line in &lines {
        let fields: Vec<&str> = line.split('|').collect();
        assert_eq!(fields.len(), 54, "{line}");
        for amount in &fields[7..53] {
            assert!(
                amount.chars().all(|c| c.is_ascii_digit()),
                "{amount} in {line}"
            );
        }
    }
    assert_eq!(
        lines[5],
        format!(
            "04|03|{SERVICES}|||||||||5000|200|||||||||768||||||||||||||||||||||||||533||||||01"
        )
    );
}

#[test]
fn an_earlier_month_in_the_24_field_layout_with_the_same_settings() {
    let (app, entity) = app_with_months();
    let client = app.client();
    save_settings(&client, &entity);
    let d = diot(&client, &entity, "2024-10");
    assert_eq!(text(&d["layout"]), "24");
    assert_eq!(
        filled(&d),
        [
            // 8% in field 13 (the layout knows no south), exempt in 22.
            format!("{BORDER}: 1=04 2=85 3={BORDER} 13=1000 22=500"),
            format!("{USD_SUPPLIER}: 1=04 2=85 3={USD_SUPPLIER} 8=18500"),
            // The credit note's IVA in 24.
            format!("{SERVICES}: 1=04 2=03 3={SERVICES} 8=5000 23=533 24=32"),
            // The old country catalog and nationality; 85, the layout's default.
            format!(
                "{FOREIGN}: 1=05 2=85 4=98-7654321 5=Acme Cloud Inc. 6=US 7=Estadounidense 16=2000"
            ),
        ]
    );
    let body = client
        .get(&format!(
            "/v1/entities/{entity}/diot?month=2024-10&format=txt"
        ))
        .text();
    for line in body.trim_end_matches("\r\n").split("\r\n") {
        assert_eq!(line.matches('|').count(), 24, "{line}");
        assert!(line.ends_with('|'), "{line}");
    }
    assert!(
        body.contains(&format!(
            "04|03|{SERVICES}|||||5000|||||||||||||||533|32|\r\n"
        )),
        "{body}"
    );
}

#[test]
fn supplier_settings_are_kept_changed_and_forgotten() {
    let (app, entity) = app_with_months();
    let client = app.client();
    let path = |rfc: &str| format!("/v1/entities/{entity}/suppliers/{rfc}");
    client.get(&path(SERVICES)).expect_not_found();
    let saved = client.put_json(
        &path(&SERVICES.to_lowercase()),
        &json!({"operation_type": "03"}),
    );
    assert_eq!(saved.status, 200, "{}", saved.text());
    let saved = saved.json();
    assert_eq!(saved["tax_id"], SERVICES);
    assert_eq!(saved["operation_type"], "03");
    assert_eq!(saved["tax_effects"], Value::Null);
    let read = client.get(&path(SERVICES)).json();
    assert_eq!(read, saved);
    let d = diot(&client, &entity, "2026-10");
    let services = (d["records"].as_array().expect("records").iter())
        .find(|r| r["tax_id"] == SERVICES)
        .expect("the services supplier");
    assert_eq!(services["operation_type"]["code"], "03");
    // Replaced whole: what the body leaves out takes its default again.
    let replaced = client
        .put_json(
            &path(SERVICES),
            &json!({"non_creditable": "exempt_activities"}),
        )
        .json();
    assert_eq!(replaced["operation_type"], Value::Null);
    assert_eq!(replaced["created_at"], saved["created_at"]);
    let d = diot(&client, &entity, "2026-10");
    let line = (d["records"].as_array().expect("records").iter())
        .find(|r| r["tax_id"] == SERVICES)
        .map(|r| text(&r["line"]))
        .expect("the services supplier");
    // Its 768 moves from 22 to 38 (not creditable, exempt activities).
    let fields: Vec<&str> = line.split('|').collect();
    assert_eq!((fields[1], fields[21], fields[37]), ("85", "", "768"));
    client.put_json(&path(BORDER), &json!({"border_region": "south"}));
    let list = client
        .get(&format!("/v1/entities/{entity}/suppliers?limit=1"))
        .json();
    assert_eq!(list["data"][0]["tax_id"], BORDER);
    let cursor = text(&list["next_cursor"]);
    let next = client
        .get(&format!(
            "/v1/entities/{entity}/suppliers?limit=1&cursor={cursor}"
        ))
        .json();
    assert_eq!(next["data"][0]["tax_id"], SERVICES);
    assert_eq!(next["next_cursor"], Value::Null);
    let resp = client.delete(&path(SERVICES));
    assert_eq!(resp.status, 204);
    client.get(&path(SERVICES)).expect_not_found();
    client.delete(&path(SERVICES)).expect_not_found();

    // Bad input, each on its field.
    client
        .put_json(&path("NOT-AN-RFC"), &json!({}))
        .expect_field_error("tax_id");
    for (body, field) in [
        (json!({"operation_type": "99"}), "operation_type"),
        (json!({"tax_effects": "yes"}), "tax_effects"),
        (json!({"border_region": "east"}), "border_region"),
        (json!({"country": "USA"}), "country"),
        (json!({"third_party_type": "09"}), "third_party_type"),
    ] {
        client
            .put_json(&path(SERVICES), &body)
            .expect_field_error(field);
    }
    client
        .put_json(&path(FOREIGN), &json!({"foreign_name": "A | B"}))
        .expect_field_error("foreign_name");
    for (bad, field) in [
        ("month=2026-13", "month"),
        ("", "month"),
        ("month=2026-10&format=pdf", "format"),
    ] {
        client
            .get(&format!("/v1/entities/{entity}/diot?{bad}"))
            .expect_field_error(field);
    }
    let codes = client.get("/v1/diot/codes").json();
    assert_eq!(codes["layouts"]["54"]["05"]["default_operation_type"], "07");

    // Another organization sees none of it.
    client.put_json(&path(BORDER), &json!({"tax_effects": false}));
    let stranger = app.client_as(&app.create_user_in_new_org());
    stranger
        .get(&format!("/v1/entities/{entity}/diot?month=2026-10"))
        .expect_not_found();
    stranger.get(&path(BORDER)).expect_not_found();
    stranger
        .put_json(&path(BORDER), &json!({}))
        .expect_not_found();
    stranger.delete(&path(BORDER)).expect_not_found();
    stranger
        .get(&format!("/v1/entities/{entity}/suppliers"))
        .expect_not_found();
    assert_eq!(client.get(&path(BORDER)).json()["tax_effects"], false);
}

#[test]
fn the_review_xlsx_lists_suppliers_the_69b_and_the_file() {
    let (app, entity) = app_with_months();
    let client = app.client();
    save_settings(&client, &entity);
    let resp = client.get(&format!(
        "/v1/entities/{entity}/diot?month=2026-10&format=xlsx"
    ));
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert_eq!(
        resp.header("content-disposition"),
        Some("attachment; filename=\"diot-2026-10.xlsx\"")
    );
    let rows = crate::flows::summary::named_sheet_rows(&resp.body, "DIOT");
    let find = |rfc: &str, after: usize| -> (usize, Vec<String>) {
        (rows.iter().enumerate().skip(after))
            .find(|(_, r)| r.first().map(String::as_str) == Some(rfc))
            .map(|(i, r)| (i, r.clone()))
            .unwrap_or_else(|| panic!("{rfc} in {rows:?}"))
    };
    let (_, services) = find(SERVICES, 0);
    assert_eq!(services[2], "04 - Proveedor nacional");
    assert_eq!(services[3], "03 - Prestación de servicios profesionales");
    assert_eq!(services[6], "Guardada");
    // Paid, returns, IVA, IVA of returns at 16%.
    assert_eq!(services[8..12], ["5000", "200", "800", "32"]);
    let title = (rows.iter())
        .position(|r| r.first().is_some_and(|c| c.contains("69-B")))
        .expect("the 69-B section");
    let (at, definitive) = find(DEFINITIVE, title);
    assert!(at > title);
    assert_eq!(definitive[2], "480");
    let file = crate::flows::summary::named_sheet_rows(&resp.body, "Archivo");
    assert_eq!(file[0].len(), 54, "{:?}", file[0]);
    assert_eq!(file[0][0], "1. Tipo de tercero");
    assert_eq!(file.len(), 8, "a header and seven records");
}

/// The shared samples: the PPD invoice paid in full by its complement, received by
/// KIJ0906199R1 in January 2020 (the 24-field layout), and a real PUE invoice received
/// in January 2025 (the 2025 layout).
#[test]
fn the_real_samples_received() {
    let app = TestApp::spawn();
    let client = app.client();
    let receiver = id_of(&client.create_entity("KIJ0906199R1", "sandbox1"));
    import_samples(
        &app,
        &receiver,
        "received",
        &[
            "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
            "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
        ],
    );
    let d = diot(&client, &receiver, "2020-01");
    // 15,390.30 paid in full: field 8; the 2,462.45 of IVA is creditable, which the
    // 24-field layout does not report.
    assert_eq!(
        filled(&d),
        ["H&E951128469: 1=04 2=85 3=H&E951128469 8=15390"]
    );
    assert_eq!(
        text(&d["records"][0]["amounts"]["general"]["iva"]),
        "2462.45"
    );
    assert_eq!(
        text(&d["records"][0]["name"]),
        "HERRERIA & ELECTRICOS S DE CV"
    );
    // The RFC with its ampersand, as a path segment.
    let resp = client.put_json(
        &format!("/v1/entities/{receiver}/suppliers/H%26E951128469"),
        &json!({"operation_type": "06"}),
    );
    assert_eq!(resp.status, 200, "{}", resp.text());
    let d = diot(&client, &receiver, "2020-01");
    assert_eq!(
        filled(&d),
        ["H&E951128469: 1=04 2=06 3=H&E951128469 8=15390"]
    );

    // A real CFDI 3.2 (March 2017), which states no base: 646.21 ÷ 16%.
    let legacy = id_of(&client.create_entity("XAXX010101000", "sandbox1"));
    import_samples(
        &app,
        &legacy,
        "received",
        &["cfdi32-ingreso-real-legacy-tfd10.xml"],
    );
    let d = diot(&client, &legacy, "2017-03");
    assert_eq!(
        filled(&d),
        ["CTO021007DZ8: 1=04 2=85 3=CTO021007DZ8 8=4039"]
    );
    assert_eq!(text(&d["records"][0]["amounts"]["not_subject"]), "0.00");

    let pue = id_of(&client.create_entity("COSC8001137NA", "sandbox1"));
    import_samples(&app, &pue, "received", &["cfdi40-ingreso-pue-real-tfd.xml"]);
    let d = diot(&client, &pue, "2025-01");
    // Its concepts' 8.620690 + 853.448276 at 16% (1.379310 + 136.551724), to cents:
    // 862.07 and 137.93.
    assert_eq!(
        filled(&d),
        ["ISD950921HE5: 1=04 2=85 3=ISD950921HE5 12=862 22=138 54=01"]
    );
    assert_eq!(
        text(&d["records"][0]["amounts"]["general"]["paid"]),
        "862.07"
    );
}

/// A sandbox month's received side: the DIOT and the IVA determination of the same
/// month agree to the cent (its creditable IVA is the DIOT's IVA less its credit
/// notes', the 69-B suppliers' apart; its IVA withheld from others the DIOT's withheld;
/// both leave out the same payments and documents), and each record's fields are its
/// amounts rounded to whole pesos.
#[test]
fn a_sandbox_month_agrees_with_the_iva_determination() {
    use rust_decimal::{Decimal, RoundingStrategy};
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&valid_entity(&client, "SBX010101AB1", "sandbox1"));
    extract(
        &client,
        &entity,
        date("2026-09-01"),
        date("2026-09-10"),
        "received",
    );
    let d = diot(&client, &entity, "2026-09");
    let iva = client
        .get(&format!("/v1/entities/{entity}/iva?month=2026-09"))
        .json();
    let records = d["records"].as_array().expect("records");
    assert!(records.len() > 3, "a sandbox month has suppliers: {d}");
    let amount = |v: &Value| -> Decimal { text(v).parse().expect("a decimal") };
    let net = |r: &Value| -> Decimal {
        ["general", "border"]
            .iter()
            .map(|k| amount(&r["amounts"][k]["iva"]) - amount(&r["amounts"][k]["iva_returns"]))
            .sum()
    };
    let (definitive, creditable): (Vec<&Value>, Vec<&Value>) =
        records.iter().partition(|r| r["definitive_69b"] == true);
    let creditable: Decimal = creditable.iter().map(|r| net(r)).sum();
    assert_eq!(creditable, amount(&iva["figures"]["iva_creditable"]));
    let withheld: Decimal = records
        .iter()
        .map(|r| amount(&r["amounts"]["withheld"]))
        .sum();
    assert_eq!(
        withheld,
        amount(&iva["figures"]["iva_withheld_from_others"])
    );
    let excluded = |v: &Value, definitive: bool| -> Vec<String> {
        let mut list: Vec<String> = (v["excluded"].as_array().expect("excluded").iter())
            .filter(|e| e["side"] == "received")
            .filter(|e| (e["reason"] == "issuer_definitive_69b") == definitive)
            .map(|e| format!("{} {}", text(&e["uuid"]), text(&e["related_uuid"])))
            .collect();
        list.sort();
        list
    };
    assert_eq!(excluded(&d, false), excluded(&iva, false));
    let left_out: Decimal = (iva["excluded"].as_array().expect("excluded").iter())
        .filter(|e| e["reason"] == "issuer_definitive_69b")
        .map(|e| amount(&e["iva_transferred_mxn"]))
        .sum();
    assert_eq!(definitive.iter().map(|r| net(r)).sum::<Decimal>(), left_out);
    let whole = |v: Decimal| -> String {
        let v = v.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
        if v.is_zero() {
            String::new()
        } else {
            v.normalize().to_string()
        }
    };
    for r in records {
        let fields: Vec<String> = text(&r["line"]).split('|').map(str::to_owned).collect();
        assert_eq!(fields.len(), 54, "{}", r["line"]);
        let a = &r["amounts"];
        assert_eq!(fields[11], whole(amount(&a["general"]["paid"])), "{r}");
        assert_eq!(fields[12], whole(amount(&a["general"]["returns"])), "{r}");
        let iva_field = if r["definitive_69b"] == true { 36 } else { 21 };
        assert_eq!(fields[iva_field], whole(net(r)), "{r}");
        assert_eq!(fields[47], whole(amount(&a["withheld"])), "{r}");
        assert_eq!(fields[50], whole(amount(&a["zero"])), "{r}");
    }
}
