//! `GET /v1/invoices/{id}/cfdi`: the original XML byte for byte, the PDF (the SAT's; 404
//! without one, as the spec says, unless `render=true` asks for one printed from the
//! XML), or the invoice JSON, negotiated on `Accept` or `?format=`.

use crate::common::app::{Client, Resp, TestApp};
use crate::common::invoices::*;
use cfdi_extract::sandbox::docs as sandbox_docs;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const PDF: &[u8] =
    b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog >>\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n";

fn cfdi(client: &Client, id: &str, query: &str, accept: Option<&str>) -> Resp {
    let path = format!("/v1/invoices/{id}/cfdi{query}");
    match accept {
        Some(a) => client.request("GET", &path, None, &[("Accept", a)]),
        None => client.get(&path),
    }
}

#[track_caller]
fn assert_xml(resp: &Resp, expected: &[u8], what: &str) {
    assert_eq!(resp.status, 200, "{what}: {}", resp.text());
    let ct = resp.header("content-type").unwrap_or("");
    assert!(ct.contains("xml"), "{what}: content-type {ct:?}");
    assert!(
        resp.body == expected,
        "{what}: the original XML byte for byte ({} bytes served, {} expected)",
        resp.body.len(),
        expected.len()
    );
}

/// A PDF response: the stored one (`original`) or one rendered from the XML.
#[track_caller]
fn assert_pdf_from(resp: &Resp, expected: &[u8], source: &str, what: &str) {
    assert_eq!(resp.status, 200, "{what}: {}", resp.text());
    let ct = resp.header("content-type").unwrap_or("");
    assert!(
        ct.starts_with("application/pdf"),
        "{what}: content-type {ct:?}"
    );
    assert_eq!(resp.header("x-cfdi-pdf"), Some(source), "{what}");
    assert!(resp.body == expected, "{what}: the {source} PDF");
}

#[track_caller]
fn assert_pdf(resp: &Resp, expected: &[u8], what: &str) {
    assert_pdf_from(resp, expected, "original", what);
}

/// The spec's 404 `{ "message": ... }` for a PDF when `has_pdf` is false.
#[track_caller]
fn assert_no_pdf(resp: &Resp, what: &str) {
    assert_eq!(resp.status, 404, "{what}: {}", resp.text());
    let body: Value = serde_json::from_slice(&resp.body).expect("a JSON body");
    let message = body["message"].as_str().unwrap_or("");
    assert!(message.contains("render=true"), "{what}: {body}");
}

/// The PDF the service renders for a sample without one (rendering is deterministic).
fn rendered(name: &str) -> Vec<u8> {
    let cfdi = cfdi_extract::cfdi::Cfdi::parse(&sample_bytes(name)).expect("parses");
    cfdi_extract::pdf::invoice::render(&cfdi)
}

#[track_caller]
fn assert_json_invoice(resp: &Resp, invoice: &Value, what: &str) {
    let body = resp.expect(200);
    let ct = resp.header("content-type").unwrap_or("");
    assert!(
        ct.starts_with("application/json"),
        "{what}: content-type {ct:?}"
    );
    assert_eq!(&body, invoice, "{what}: the invoice object");
}

const STAMPED: &[&str] = &[
    "cfdi32-ingreso-real-legacy-tfd10.xml",
    "cfdi32-ingreso-tfd11-special-chars-rfc.xml",
    "cfdi33-ingreso-ppd-multiples-tasas-tfd.xml",
    "cfdi33-ingreso-pue-detallista-tfd.xml",
    "cfdi33-ingreso-pue-real-implocal-tfd.xml",
    "cfdi33-ingreso-pue-tfd-leading-comment.xml",
    "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
    "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
    "cfdi40-ingreso-pue-descuento-tfd.xml",
    "cfdi40-ingreso-pue-real-tfd.xml",
    "cfdi40-ingreso-pue-tfd-ampersand-rfc.xml",
    "cfdi40-nomina-compensacion-tfd.xml",
    "cfdi40-nomina-tfd-zero-uuid.xml",
    "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
];

#[test]
fn cfdi_serves_the_original_xml_byte_for_byte_for_every_imported_sample() {
    let app = TestApp::spawn();
    let client = app.client();
    let ids = import_by_issuer(&app, &mut Default::default(), STAMPED);
    assert_eq!(ids.len(), STAMPED.len());
    for (file, id) in &ids {
        let original = sample_bytes(file);
        assert_xml(
            &cfdi(&client, id, "", Some("application/xml")),
            &original,
            &format!("{file} Accept: application/xml"),
        );
        assert_xml(
            &cfdi(&client, id, "?format=xml", None),
            &original,
            &format!("{file} ?format=xml"),
        );
        // Stored compressed: what is served above was decoded.
        let (codec, len) = stored_document(app.data_dir(), id, "xml").expect("stored");
        assert_eq!(codec, "zstd-cfdi1", "{file}");
        assert!(
            len < original.len(),
            "{file}: {len} of {} bytes",
            original.len()
        );
    }
    // Each issuer's certificate is kept once, however many samples carry it: documents
    // with the same `Certificado` share a row, and each is still served whole (above).
    let mut by_certificate: BTreeMap<String, BTreeSet<i64>> = BTreeMap::new();
    for (file, id) in &ids {
        let xml = String::from_utf8_lossy(&sample_bytes(file)).into_owned();
        // The attribute's value, if it has one (`certificado` in 3.2; `NoCertificado` is
        // another attribute).
        let lower = xml.to_ascii_lowercase();
        let value = lower
            .match_indices("certificado=\"")
            .find(|(at, _)| xml[..*at].ends_with(char::is_whitespace))
            .and_then(|(at, name)| xml[at + name.len()..].split_once('"'))
            .map(|(value, _)| value.to_string())
            .unwrap_or_default();
        let row = stored_certificate(app.data_dir(), id);
        if value.is_empty() {
            assert_eq!(row, None, "{file}: nothing to keep apart");
            continue;
        }
        let row = row.unwrap_or_else(|| panic!("{file}: its certificate kept apart"));
        by_certificate.entry(value).or_default().insert(row);
    }
    assert!(
        by_certificate.len() < ids.len(),
        "some samples share an issuer"
    );
    let rows: BTreeSet<i64> = by_certificate.values().flatten().copied().collect();
    assert!(
        by_certificate.values().all(|rows| rows.len() == 1) && rows.len() == by_certificate.len(),
        "one row per distinct certificate: {by_certificate:?}"
    );
}

#[test]
fn cfdi_negotiates_xml_json_and_pdf_on_accept_and_format() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("ISD950921HE5", "sandbox1"));
    let file = "cfdi40-ingreso-pue-real-tfd.xml";
    let id = import_samples(&app, &entity, "issued", &[file])
        .remove(file)
        .expect("imported");
    let original = sample_bytes(file);
    let invoice = client.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(invoice["has_pdf"], false);

    assert_xml(
        &cfdi(&client, &id, "", Some("application/xml")),
        &original,
        "application/xml",
    );
    assert_xml(
        &cfdi(&client, &id, "", Some("text/xml")),
        &original,
        "text/xml",
    );
    assert_xml(
        &cfdi(&client, &id, "", Some("text/html, application/xml;q=0.9")),
        &original,
        "a list with application/xml",
    );
    assert_xml(
        &cfdi(&client, &id, "?format=xml", None),
        &original,
        "?format=xml",
    );
    assert_xml(
        &cfdi(&client, &id, "?format=xml", Some("application/json")),
        &original,
        "?format=xml wins over Accept",
    );
    assert_json_invoice(&cfdi(&client, &id, "", None), &invoice, "no Accept");
    assert_json_invoice(
        &cfdi(&client, &id, "", Some("application/json")),
        &invoice,
        "Accept: application/json",
    );
    assert_json_invoice(
        &cfdi(&client, &id, "?format=json", None),
        &invoice,
        "?format=json",
    );
    assert_json_invoice(
        &cfdi(&client, &id, "?format=json", Some("application/xml")),
        &invoice,
        "?format=json wins over Accept",
    );

    // No stored PDF: the spec's 404, whichever way it is asked for; `render=true` asks
    // for one printed from the XML.
    let pdf = rendered(file);
    for (query, accept) in [
        ("?format=pdf", None),
        ("", Some("application/pdf")),
        ("?format=pdf", Some("application/xml")),
        ("?render=false", Some("application/pdf")),
    ] {
        assert_no_pdf(
            &cfdi(&client, &id, query, accept),
            &format!("{query} {accept:?}"),
        );
    }
    for (query, accept) in [
        ("?format=pdf&render=true", None),
        ("?render=1", Some("application/pdf")),
        ("?format=pdf&render=true", Some("application/xml")),
    ] {
        let resp = cfdi(&client, &id, query, accept);
        assert_pdf_from(&resp, &pdf, "rendered", &format!("{query} {accept:?}"));
    }
    // Printed as Mexico prints it: amounts with `$` and separators, dates day first,
    // codes with their descriptions, the total in words.
    let printed = cfdi(&client, &id, "?format=pdf&render=true", None).body;
    for text in [
        "Fecha de emisión: 24/01/2025 10:10:41    Versión CFDI: 4.0",
        "Forma de pago: 04 - Tarjeta de crédito",
        "Método de pago: PUE - Pago en una sola exhibición",
        "Uso CFDI: G03 - Gastos en general",
        "Unidad: E48 - Unidad de servicio",
        "$1,000.00",
        "$862.07",
        "Importe con letra: MIL PESOS 00/100 M.N.",
    ] {
        assert!(pdf_shows(&printed, text), "{text}");
    }
    assert!(
        !pdf_shows(&printed, "1000.00"),
        "no amount as the XML writes it"
    );
    // `render` only matters for a PDF; a bad value is a 422 on it, before any 404.
    assert_xml(
        &cfdi(&client, &id, "?format=xml&render=true", None),
        &original,
        "render with XML",
    );
    cfdi(&client, &id, "?format=pdf&render=yes", None).expect_field_error("render");
    cfdi(&client, "not-a-uuid", "?render=yes", None).expect_field_error("render");

    // An unknown format: 422 on `format`, before any 404.
    cfdi(&client, &id, "?format=docx", None).expect_field_error("format");
    cfdi(&client, "not-a-uuid", "?format=docx", None).expect_field_error("format");
    cfdi(&client, "not-a-uuid", "?format=xml", None).expect_not_found();
}

/// A PDF is stored compressed against its XML. When the XML is stored again with other
/// bytes (the same invoice, written out again) and no PDF, the PDF stays readable.
#[test]
fn a_pdf_outlives_its_xml_being_replaced_with_other_bytes() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("EKU9003173C9", "sandbox1"));
    let file = "cfdi40-ingreso-pue-descuento-tfd.xml";
    let original = sample_bytes(file);
    // A printed CFDI repeats its XML's text, which is what compresses against it.
    let printed = [PDF, &original[..]].concat();
    let dir = tempfile::TempDir::new().expect("temp dir");
    let xml_path = dir.path().join(file);
    std::fs::write(&xml_path, &original).expect("xml");
    std::fs::write(xml_path.with_extension("pdf"), &printed).expect("pdf");
    let id = import(&app, &entity, "issued", std::slice::from_ref(&xml_path))
        .remove(0)
        .1;
    let stored = stored_document(app.data_dir(), &id, "pdf").expect("stored");
    assert_eq!(stored.0, "zstd-xml");
    assert!(stored.1 < PDF.len() + 200, "{stored:?}");

    std::fs::remove_file(xml_path.with_extension("pdf")).expect("no pdf this time");
    let again = [&original[..], b"\n"].concat();
    std::fs::write(&xml_path, &again).expect("xml again");
    assert_eq!(import(&app, &entity, "issued", &[xml_path]).remove(0).1, id);
    assert_xml(
        &cfdi(&client, &id, "?format=xml", None),
        &again,
        "the new XML",
    );
    assert_pdf(
        &cfdi(&client, &id, "?format=pdf", None),
        &printed,
        "the PDF",
    );
}

#[test]
fn cfdi_serves_a_pdf_imported_beside_its_xml() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity("EKU9003173C9", "sandbox1"));
    let dir = tempfile::TempDir::new().expect("temp dir");
    let file = "cfdi40-ingreso-pue-descuento-tfd.xml";
    let xml_path = dir.path().join(file);
    std::fs::copy(sample_path(file), &xml_path).expect("copy the sample");
    std::fs::write(dir.path().join("cfdi40-ingreso-pue-descuento-tfd.pdf"), PDF).expect("pdf");
    // A second file without a PDF beside it, in the same import.
    let plain = dir
        .path()
        .join("cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml");
    std::fs::copy(
        sample_path("cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"),
        &plain,
    )
    .expect("copy");
    let ids: std::collections::BTreeMap<String, String> =
        import(&app, &entity, "issued", &[xml_path, plain])
            .into_iter()
            .collect();
    let id = &ids[file];
    let invoice = client.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(invoice["has_pdf"], true, "{invoice}");
    assert_pdf(&cfdi(&client, id, "?format=pdf", None), PDF, "?format=pdf");
    assert_pdf(
        &cfdi(&client, id, "", Some("application/pdf")),
        PDF,
        "Accept: application/pdf",
    );
    assert_pdf(
        &cfdi(&client, id, "?format=pdf", Some("application/xml")),
        PDF,
        "?format=pdf wins",
    );
    assert_xml(
        &cfdi(&client, id, "", Some("application/xml")),
        &sample_bytes(file),
        "the XML is still there",
    );
    assert_json_invoice(&cfdi(&client, id, "", None), &invoice, "JSON by default");

    let other = &ids["cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"];
    let plain_invoice = client.get(&format!("/v1/invoices/{other}")).expect(200);
    assert_eq!(plain_invoice["has_pdf"], false);
    assert_no_pdf(
        &cfdi(&client, other, "?format=pdf", None),
        "no PDF beside it",
    );
    assert_no_pdf(
        &cfdi(&client, other, "", Some("application/pdf")),
        "no PDF beside it, Accept",
    );
    assert_pdf_from(
        &cfdi(&client, other, "?format=pdf&render=true", None),
        &rendered("cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"),
        "rendered",
        "no PDF beside it, render=true",
    );
    // With the SAT's PDF, `render=true` still serves it.
    assert_pdf(
        &cfdi(&client, id, "?format=pdf&render=true", None),
        PDF,
        "render=true with a stored PDF",
    );

    // Another organization sees none of it.
    let stranger = app.create_user_in_new_org();
    let client_b = app.client_as(&stranger);
    cfdi(&client_b, id, "?format=pdf", None).expect_not_found();
    cfdi(&client_b, other, "?format=pdf", None).expect_not_found();
    cfdi(&client_b, id, "", Some("application/xml")).expect_not_found();
}

#[test]
fn every_imported_sample_without_a_pdf_gets_a_rendered_one_when_asked() {
    let app = TestApp::spawn();
    let client = app.client();
    let ids = import_by_issuer(&app, &mut Default::default(), STAMPED);
    for (file, id) in &ids {
        assert_no_pdf(&cfdi(&client, id, "?format=pdf", None), file);
        let resp = cfdi(&client, id, "?format=pdf&render=true", None);
        assert_pdf_from(&resp, &rendered(file), "rendered", file);
        let disposition = resp.header("content-disposition").unwrap_or("");
        let uuid = client.get(&format!("/v1/invoices/{id}")).expect(200)["uuid"].clone();
        let uuid = uuid.as_str().expect("uuid");
        assert!(
            disposition.contains(&format!("{uuid}.pdf")),
            "{disposition}"
        );
        // The uuid is printed as text (the library's tests read every field back).
        let hex: String = uuid.bytes().map(|b| format!("{b:02X}")).collect();
        let body = String::from_utf8_lossy(&resp.body);
        assert!(
            body.contains(uuid) || body.contains(&hex),
            "{file}: uuid printed"
        );
        // A complete printed CFDI: the stamp's original string, and taxes by tax.
        let parsed = cfdi_extract::cfdi::Cfdi::parse(&sample_bytes(file)).expect("parses");
        let original = &parsed.stamp.as_ref().expect("stamp").original_string;
        assert!(original.starts_with("||1."), "{file}: {original}");
        for text in [
            "Cadena original del complemento de certificación digital del SAT",
            &original[..40],
        ] {
            assert!(printed(&resp.body, text), "{file}: {text} printed");
        }
        if *file == "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml" {
            for text in ["Retención 001 - ISR", "Retención 002 - IVA"] {
                assert!(printed(&resp.body, text), "{file}: {text} printed");
            }
        }
    }
}

/// Whether a PDF shows `text` (WinAnsi): as a literal string, or as the hex string
/// the writer uses for text with accents.
fn printed(pdf: &[u8], text: &str) -> bool {
    let bytes = cfdi_extract::pdf::win_ansi(text);
    let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
    let body = String::from_utf8_lossy(pdf);
    pdf.windows(bytes.len()).any(|w| w == bytes.as_slice()) || body.contains(&hex)
}

#[test]
fn sandbox_invoices_serve_their_real_pdf_or_a_rendered_one() {
    let tax_id = "EKU9003173C9";
    let (from, to) = month(2026, 2);
    let expected = sandbox(tax_id, "issued", from, to);
    let visible = |i: &&sandbox_docs::SandboxInvoice| !i.xml_withheld_first;
    let with_pdf = expected
        .iter()
        .filter(visible)
        .find(|i| i.invoice_type == 'I' && i.has_pdf)
        .expect("an I invoice with a PDF");
    let without_pdf = expected
        .iter()
        .filter(visible)
        .find(|i| matches!(i.invoice_type, 'I' | 'E' | 'N') && !i.has_pdf)
        .expect("an I/E/N invoice without a PDF");
    let complement = expected
        .iter()
        .filter(visible)
        .find(|i| i.invoice_type == 'P')
        .expect("a complement");

    let app = TestApp::spawn();
    let client = app.client();
    let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    extract(&client, &entity_id, from, to, "issued");
    let dir = docs_direction("issued");

    let listed = invoice_by_uuid(&client, &with_pdf.uuid).expect("listed");
    let id = id_of(&listed);
    assert_eq!(listed["has_pdf"], true, "{listed}");
    let resp = cfdi(&client, &id, "?format=pdf", None);
    assert!(resp.body.starts_with(b"%PDF-"), "a real PDF");
    let rendered = sandbox_docs::render_pdf(tax_id, dir, with_pdf).expect("the sandbox PDF");
    assert_pdf(&resp, &rendered, "the sandbox's PDF");
    // Stored compressed against its XML: the seals, UUID and amounts it prints repeat
    // the XML's, so it takes well under half its size.
    let stored = stored_document(app.data_dir(), &id, "pdf").expect("stored");
    assert!(
        stored.0 == "zstd-xml" && stored.1 < rendered.len() * 2 / 5,
        "{stored:?} of {}",
        rendered.len()
    );
    let xml = sandbox_docs::render_xml(tax_id, dir, with_pdf).expect("the sandbox XML");
    assert_xml(
        &cfdi(&client, &id, "", Some("text/xml")),
        &xml,
        "the sandbox's XML",
    );

    // Without the SAT's PDF, the spec's 404, and one rendered from the stored XML when
    // asked for, for complements too.
    for inv in [without_pdf, complement] {
        let listed = invoice_by_uuid(&client, &inv.uuid).expect("listed");
        assert_eq!(listed["has_pdf"], false, "{listed}");
        let xml = sandbox_docs::render_xml(tax_id, dir, inv).expect("the sandbox XML");
        let cfdi_doc = cfdi_extract::cfdi::Cfdi::parse(&xml).expect("parses");
        let pdf = cfdi_extract::pdf::invoice::render(&cfdi_doc);
        let id = id_of(&listed);
        assert_no_pdf(&cfdi(&client, &id, "", Some("application/pdf")), &inv.uuid);
        let resp = cfdi(&client, &id, "?render=true", Some("application/pdf"));
        assert_pdf_from(&resp, &pdf, "rendered", &inv.uuid);
    }

    let listed = invoice_by_uuid(&client, &complement.uuid).expect("listed");
    let xml = sandbox_docs::render_xml(tax_id, dir, complement).expect("the sandbox XML");
    assert_xml(
        &cfdi(&client, &id_of(&listed), "?format=xml", None),
        &xml,
        "P XML",
    );

    // has_pdf agrees with the sandbox for every listed invoice; no P or T has one.
    let all = invoices_by_uuid(&client, &entity_id);
    for inv in expected.iter().filter(visible) {
        let listed = &all[&inv.uuid];
        assert_eq!(listed["has_pdf"], inv.has_pdf, "{}", inv.uuid);
    }
    for kind in ["P", "T"] {
        let listed = invoices(&client, &format!("entity_id={entity_id}&type={kind}"));
        assert!(listed.iter().all(|i| i["has_pdf"] == false), "{kind}");
    }
}
