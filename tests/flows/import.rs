//! `invoices import`: bounded parsing outside the write transaction, the entity's
//! party check, and the CFDI field rules, through the binary.

use crate::common::app::TestApp;
use crate::common::invoices::*;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tempfile::TempDir;

pub const REAL_40: &str = "cfdi40-ingreso-pue-real-tfd.xml";
pub const REAL_40_ISSUER: &str = "ISD950921HE5";
pub const REAL_40_UUID: &str = "C2832671-DA6D-11EF-A83D-00155D012007";

/// A sample with `edits` applied (each `from` must occur), written to `dir/name`.
pub fn edited_sample(dir: &TempDir, name: &str, sample: &str, edits: &[(&str, &str)]) -> PathBuf {
    let mut text = String::from_utf8(sample_bytes(sample)).expect("utf8 sample");
    for (from, to) in edits {
        assert!(text.contains(from), "{sample} has no {from:?}");
        text = text.replacen(from, to, 1);
    }
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write sample");
    path
}

/// Runs `invoices import` expecting failure; returns the `skipped` reason of `file`.
#[track_caller]
pub fn import_refused(app: &TestApp, entity: &str, direction: &str, file: &Path) -> String {
    let path = file.to_string_lossy().to_string();
    let out = app.cli(
        &[
            "invoices",
            "import",
            "--entity",
            entity,
            "--direction",
            direction,
            &path,
        ],
        None,
    );
    assert!(!out.status.success(), "should fail: {}", out.stdout);
    assert_eq!(
        out.stderr.trim().lines().count(),
        1,
        "one line: {:?}",
        out.stderr
    );
    let prefix = format!("skipped\t{path}\t");
    let line = out.stdout.lines().find(|l| l.starts_with(&prefix));
    line.map(|l| l[prefix.len()..].to_string())
        .unwrap_or_else(|| panic!("no skipped line for {path}: {}", out.stdout))
}

#[test]
fn a_hostile_document_is_refused_fast_while_the_api_keeps_writing() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let dir = TempDir::new().expect("tmp");
    // ~1 MB: one element with 100,000 attributes (cost roxmltree ~20 s of CPU).
    let attributes: String = (0..100_000).map(|i| format!(" a{i}=\"1\"")).collect();
    let hostile = format!("<x:h xmlns:x=\"urn:x\"{attributes}/><cfdi:Complemento>");
    let file = edited_sample(
        &dir,
        "hostile.xml",
        REAL_40,
        &[("<cfdi:Complemento>", &hostile)],
    );

    let started = Instant::now();
    let importing = {
        let (app_dir, entity, file) = (app.data_dir().to_path_buf(), entity.clone(), file.clone());
        std::thread::spawn(move || {
            let path = file.to_string_lossy().to_string();
            let args = [
                "invoices",
                "import",
                "--entity",
                &entity,
                "--direction",
                "issued",
                &path,
            ];
            crate::common::app::cli_on(&app_dir, &args, None)
        })
    };
    let mut writes = 0;
    while !importing.is_finished() || writes == 0 {
        let created = client.post_json(
            "/v1/entities",
            &json!({"tax_id": crate::common::app::tax_id("WRT"), "name": "W", "ciec_password": "sandbox1"}),
        );
        assert_eq!(created.status, 201, "{}", created.text());
        writes += 1;
    }
    let out = importing.join().expect("import thread");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    assert!(!out.status.success());
    assert_eq!(out.stderr.trim().lines().count(), 1, "{:?}", out.stderr);
    assert!(
        out.stdout.starts_with("skipped\t") && out.stdout.contains("more than 256 attributes"),
        "{}",
        out.stdout
    );
    assert!(invoices(&client, "").is_empty());
}

#[test]
fn a_file_over_20_mib_is_refused() {
    let app = TestApp::spawn();
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let dir = TempDir::new().expect("tmp");
    let padding = format!("{}<cfdi:Complemento>", " ".repeat(21 * 1024 * 1024));
    let file = edited_sample(
        &dir,
        "big.xml",
        REAL_40,
        &[("<cfdi:Complemento>", &padding)],
    );
    let reason = import_refused(&app, &entity, "issued", &file);
    assert!(reason.contains("larger than 20 MiB"), "{reason}");
}

#[test]
fn import_refuses_a_document_of_another_taxpayer() {
    let app = TestApp::spawn();
    let client = app.client();
    let other = id_of(&client.create_entity("EKU9003173C9", "sandbox1"));
    let issuer = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let receiver = id_of(&client.create_entity("COSC8001137NA", "sandbox1"));
    let file = sample_path(REAL_40);
    let reason = import_refused(&app, &other, "issued", &file);
    assert!(
        reason.contains("issuer RFC is \"ISD950921HE5\"") && reason.contains("EKU9003173C9"),
        "{reason}"
    );
    // The issuer cannot import it as received, nor the receiver as issued.
    assert!(import_refused(&app, &issuer, "received", &file).contains("receiver RFC"));
    assert!(import_refused(&app, &receiver, "issued", &file).contains("issuer RFC"));
    assert!(invoices(&client, "").is_empty());
    import(&app, &issuer, "issued", std::slice::from_ref(&file));
    import(&app, &receiver, "received", &[file]);
    assert_eq!(invoices(&client, "").len(), 2);
}

#[test]
fn rfcs_and_codes_are_stored_trimmed_and_rfcs_compared_in_upper_case() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let dir = TempDir::new().expect("tmp");
    let file = edited_sample(
        &dir,
        "spaced.xml",
        REAL_40,
        &[
            ("Rfc=\"ISD950921HE5\"", "Rfc=\" isd950921he5 \""),
            ("FormaPago=\"04\"", "FormaPago=\" 04 \""),
            ("Rfc=\"COSC8001137NA\"", "Rfc=\"\tCOSC8001137NA \""),
        ],
    );
    import(&app, &entity, "issued", &[file]);
    let found = invoices(&client, "receiver_tax_id=COSC8001137NA");
    assert_eq!(found.len(), 1, "the receiver filter finds it");
    assert_eq!(found[0]["payment_form"], "04");
    assert_eq!(found[0]["receiver"]["tax_id"], "COSC8001137NA");
    assert_eq!(found[0]["issuer"]["tax_id"], "isd950921he5");
    // Filters compare RFCs in upper case: the lower-case issuer RFC is found too.
    assert_eq!(invoices(&client, "issuer_tax_id=ISD950921HE5").len(), 1);
    assert_eq!(invoices(&client, "issuer_tax_id=isd950921he5").len(), 1);
}

#[test]
fn malformed_and_conflicting_stamps_are_refused() {
    let app = TestApp::spawn();
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let dir = TempDir::new().expect("tmp");
    let bad = edited_sample(
        &dir,
        "bad.xml",
        REAL_40,
        &[(REAL_40_UUID, "C2832671-DA6D-11EF-A83D\"x")],
    );
    std::fs::write(
        &bad,
        std::fs::read_to_string(&bad)
            .expect("read")
            .replace("A83D\"x", "A83D&quot;x"),
    )
    .expect("write");
    let reason = import_refused(&app, &entity, "issued", &bad);
    assert!(
        reason.contains("invalid TimbreFiscalDigital@UUID"),
        "{reason}"
    );
    let second = format!(
        "<tfd:TimbreFiscalDigital xmlns:tfd=\"http://www.sat.gob.mx/TimbreFiscalDigital\" Version=\"1.1\" UUID=\"{}\"/></cfdi:Complemento>",
        "11111111-2222-3333-4444-000000000001"
    );
    let twice = edited_sample(
        &dir,
        "twice.xml",
        REAL_40,
        &[("</cfdi:Complemento>", &second)],
    );
    let reason = import_refused(&app, &entity, "issued", &twice);
    assert!(
        reason.contains("two TimbreFiscalDigital stamps"),
        "{reason}"
    );
    assert!(invoices(&app.client(), "").is_empty());
}

#[test]
fn cfdi32_payment_form_comes_from_metodo_de_pago() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("CTO021007DZ8", "sandbox1"));
    let file = "cfdi32-ingreso-real-legacy-tfd10.xml";
    let id = import_samples(&app, &entity, "issued", &[file])
        .remove(file)
        .expect("imported");
    let invoice = client.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(invoice["payment_form"], "04", "{invoice}");
    assert!(invoice["payment_method"].is_null(), "{invoice}");
    let items = invoice["items"].as_array().expect("items");
    assert_eq!(items.len(), 7);
    assert!(
        items.iter().all(|i| i["product_code"].is_null()),
        "{invoice}"
    );
}

/// A UUID names one document: another one forged under it is `skipped` with the reason
/// and the stored one is kept whole; the same document again (its bytes, or written out
/// again) is still `imported`.
#[test]
fn a_different_document_under_a_stored_uuid_is_skipped_and_the_first_kept() {
    const PAYROLL: &str = "cfdi40-nomina-compensacion-tfd.xml";
    const PAYROLL_UUID: &str = "22222222-2222-2222-2222-222222222222";
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("AAA010101AAA", "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[PAYROLL])
        .remove(PAYROLL)
        .expect("imported");
    let invoice = client.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(invoice["type"], "N", "{invoice}");
    let xml = client.get(&format!("/v1/invoices/{id}/cfdi?format=xml"));
    assert_eq!(xml.status, 200);
    assert_eq!(xml.body, sample_bytes(PAYROLL));

    // A credit note of the same issuer, its stamp's UUID edited to the payroll's.
    let dir = TempDir::new().expect("tmp");
    let credit_note = edited_sample(
        &dir,
        "credit-note.xml",
        "cfdi32-ingreso-tfd11-special-chars-rfc.xml",
        &[
            (
                "tipoDeComprobante=\"ingreso\"",
                "tipoDeComprobante=\"egreso\"",
            ),
            ("11111111-2222-3333-4444-000000000001", PAYROLL_UUID),
        ],
    );
    let reason = import_refused(&app, &entity, "issued", &credit_note);
    assert_eq!(
        reason,
        format!("another document with UUID {PAYROLL_UUID} is already stored (its content differs); the stored one is kept")
    );
    // Nothing of the payroll changed, and there is still one invoice.
    assert_eq!(
        client.get(&format!("/v1/invoices/{id}")).expect(200),
        invoice
    );
    let again = client.get(&format!("/v1/invoices/{id}/cfdi?format=xml"));
    assert_eq!(again.body, xml.body, "the payroll's XML byte for byte");
    let listed = invoices(&client, &format!("entity_id={entity}"));
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["type"], "N");

    // The same bytes again (now with a PDF beside them), and the same document written
    // out again: imported, one row, the PDF kept.
    let same = edited_sample(&dir, "same.xml", PAYROLL, &[]);
    let pdf = b"%PDF-1.4\n% the payroll, printed\n%%EOF\n";
    std::fs::write(same.with_extension("pdf"), pdf).expect("pdf");
    let rewritten = edited_sample(&dir, "rewritten.xml", PAYROLL, &[("\" ", "\"\n   ")]);
    let imported = import(&app, &entity, "issued", &[same, rewritten.clone()]);
    assert_eq!(imported.len(), 2, "{imported:?}");
    assert!(imported.iter().all(|(_, i)| *i == id), "{imported:?}");
    assert_eq!(invoices(&client, &format!("entity_id={entity}")).len(), 1);
    let stored = client.get(&format!("/v1/invoices/{id}/cfdi?format=pdf"));
    assert_eq!((stored.status, &stored.body[..]), (200, &pdf[..]));
    let xml = client.get(&format!("/v1/invoices/{id}/cfdi?format=xml"));
    assert_eq!(xml.body, std::fs::read(&rewritten).expect("rewritten"));
}

/// Runs `invoices import` of `files` with `extra` options; the output.
fn import_with(
    app: &TestApp,
    entity: &str,
    files: &[&Path],
    extra: &[&str],
) -> crate::common::app::CliOutput {
    let paths: Vec<String> = files
        .iter()
        .map(|f| f.to_string_lossy().to_string())
        .collect();
    let mut args = vec![
        "invoices",
        "import",
        "--entity",
        entity,
        "--direction",
        "issued",
    ];
    args.extend(extra);
    args.extend(paths.iter().map(String::as_str));
    app.cli(&args, None)
}

/// The `seal` line of `file`: its status and reasons, tab-separated.
#[track_caller]
fn seal_line(stdout: &str, file: &Path) -> String {
    let prefix = format!("seal\t{}\t", file.to_string_lossy());
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no seal line for {}: {stdout}", file.display()))
        .to_string()
}

#[test]
fn an_import_says_whether_each_seal_verified_and_can_refuse_invalid_ones() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let dir = TempDir::new().expect("tmp");
    let genuine = edited_sample(&dir, "genuine.xml", REAL_40, &[]);
    // The receiver's name edited after the issuer sealed it.
    let edited = edited_sample(
        &dir,
        "edited.xml",
        REAL_40,
        &[("CARLOS CORTES SOTO", "CARLOS CORTES SOTOS")],
    );

    // Refused with the option: the edited file is skipped and nothing of it stored.
    let out = import_with(&app, &entity, &[&edited], &["--require-valid-seal"]);
    assert!(!out.status.success(), "{}", out.stdout);
    let skipped = format!("skipped\t{}\t", edited.to_string_lossy());
    let reason = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(&skipped))
        .unwrap_or_else(|| panic!("no skipped line: {}", out.stdout));
    assert!(reason.contains("--require-valid-seal"), "{reason}");
    assert!(
        seal_line(&out.stdout, &edited).starts_with("invalid\t"),
        "{}",
        out.stdout
    );
    let listed = client
        .get(&format!("/v1/invoices?uuid={REAL_40_UUID}"))
        .expect(200);
    assert_eq!(listed["data"], json!([]), "{listed}");

    // Without it the file is imported, and the line says why its seal is invalid.
    let out = import_with(&app, &entity, &[&edited], &[]);
    let stdout = out.expect_success("import of an edited file");
    let line = seal_line(&stdout, &edited);
    assert!(line.starts_with("invalid\t"), "{line}");
    assert!(line.contains("changed after it was sealed"), "{line}");

    // The genuine file's own seal and certificate verify; the SAT's stamp waits for
    // its certificate, which an import does not fetch.
    // (In another organization: the edited copy holds this UUID in the first.)
    let other = crate::common::app::provision(app.data_dir(), "Otra");
    let other = id_of(
        &app.client_as(&other)
            .create_entity(REAL_40_ISSUER, "sandbox1"),
    );
    let out = import_with(&app, &other, &[&genuine], &["--require-valid-seal"]);
    let stdout = out.expect_success("import of a genuine file");
    let line = seal_line(&stdout, &genuine);
    assert!(line.starts_with("unverified\t"), "{line}");
    assert!(line.contains("sat-certificates load"), "{line}");
}
