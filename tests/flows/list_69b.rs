//! The SAT's 69-B list: loaded from a file with the CLI, screened on every invoice's
//! counterparty, as a field and a filter.

use crate::common::app::TestApp;
use crate::common::invoices::*;
use crate::flows::import::{REAL_40, REAL_40_ISSUER};
use serde_json::json;
use tempfile::TempDir;

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../shared/sat-status-fixtures/69b-listado-completo-sample.satcfdi.csv"
);

/// The sample as the SAT publishes it: Windows-1252 with its accents, and the receiver
/// of `REAL_40` (COSC8001137NA) listed `Definitivo` under a name with `Ñ`.
fn published_list() -> String {
    let text = String::from_utf8(std::fs::read(SAMPLE).expect("sample")).expect("utf-8");
    text.replace("Informaci\u{FFFD}n", "Información")
        .replace("Situaci\u{FFFD}n", "Situación")
        .replace("Art\u{FFFD}culo", "Artículo")
        .replace("AAA292929HHH", "COSC8001137NA")
        .replace("ABC SANTOS", "CONSTRUCCIONES PEÑA")
        .replace(
            "Desvirtuado,500-05-2017-38736",
            "Definitivo,500-05-2017-38736",
        )
}

fn windows_1252(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

#[test]
fn a_published_list_with_accents_flags_counterparties_and_a_broken_one_is_refused() {
    let app = TestApp::spawn();
    let dir = TempDir::new().expect("temp dir");
    let good = dir.path().join("Listado_Completo_69-B.csv");
    std::fs::write(&good, windows_1252(&published_list())).expect("write");
    let out = app.cli(&["list-69b", "load", &good.to_string_lossy()], None);
    let stdout = out.expect_success("list-69b load");
    assert!(
        stdout.starts_with("loaded\tversion 1\t3 taxpayers\tupdated to 2024-03-31"),
        "{stdout}"
    );
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    let invoice = app.get(&format!("/v1/invoices/{id}")).expect(200);
    let flag = &invoice["counterparty_69b"];
    assert_eq!(flag["tax_id"], json!("COSC8001137NA"), "{invoice}");
    assert_eq!(flag["name"], json!("CONSTRUCCIONES PEÑA, S.A. DE C.V."));
    assert_eq!(flag["situation"], json!("definitive"));
    assert_eq!(
        flag["presumed"],
        json!({"sat": "2017-12-01", "dof": "2017-12-26"})
    );
    assert_eq!(flag["list_version"], json!(1));
    let client = app.client();
    assert_eq!(invoices(&client, "counterparty_69b=definitive").len(), 1);
    assert_eq!(invoices(&client, "counterparty_69b=listed").len(), 1);
    assert!(invoices(&client, "counterparty_69b=presumed").is_empty());
    app.get("/v1/invoices?counterparty_69b=maybe")
        .expect_field_error("counterparty_69b");
    // A broken line refuses the file, naming the line; the good list stays.
    let broken = dir.path().join("broken.csv");
    let text = published_list().replace(",02/11/2017,,,,,,,,", ",02/11/2017");
    std::fs::write(&broken, windows_1252(&text)).expect("write");
    let out = app.cli(&["list-69b", "load", &broken.to_string_lossy()], None);
    assert!(!out.status.success(), "refused: {}", out.stdout);
    assert!(out.stderr.contains("line 5"), "{}", out.stderr);
    assert!(
        out.stderr.contains("current list is kept"),
        "{}",
        out.stderr
    );
    let again = app.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(again["counterparty_69b"]["situation"], json!("definitive"));
    let show = app.cli(&["list-69b", "show"], None).expect_success("show");
    assert!(show.starts_with("version 1\t"), "{show}");
    // The same file again changes nothing.
    let out = app.cli(&["list-69b", "load", &good.to_string_lossy()], None);
    assert!(out
        .expect_success("again")
        .starts_with("unchanged\tversion 1"));
}
