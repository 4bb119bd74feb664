use super::*;
use crate::sat::efirma::credential::tests::fixture;
use std::io::Write;
use zip::write::SimpleFileOptions;

fn zip_of(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    for (name, bytes) in entries {
        writer.start_file(*name, options).expect("entry");
        writer.write_all(bytes).expect("write");
    }
    writer.finish().expect("zip").into_inner()
}

fn all_metadata(package: &mut Package) -> Result<(Vec<Metadata>, MetadataCount), PackageError> {
    let mut rows = Vec::new();
    let count = package.for_each_metadata(|m| {
        rows.push(m);
        Ok::<_, PackageError>(())
    })?;
    Ok((rows, count))
}

/// `metadata.json` beside the packages, as the rows the service should read.
fn expected_metadata() -> Vec<Metadata> {
    let json: serde_json::Value =
        serde_json::from_slice(&fixture("zip/metadata.json")).expect("json");
    let text = |v: &serde_json::Value, k: &str| v[k].as_str().expect(k).to_string();
    let mut rows: Vec<Metadata> = json
        .as_object()
        .expect("object")
        .values()
        .map(|v| Metadata {
            uuid: text(v, "uuid"),
            issuer_tax_id: text(v, "rfcEmisor"),
            issuer_name: Some(text(v, "nombreEmisor")),
            receiver_tax_id: text(v, "rfcReceptor"),
            receiver_name: Some(text(v, "nombreReceptor")),
            issued_at: Some(text(v, "fechaEmision").replace(' ', "T")),
            certified_at: Some(text(v, "fechaCertificacionSat").replace(' ', "T")),
            total: Some(Decimal::from_str(&text(v, "monto")).expect("monto")),
            invoice_type: Some(text(v, "efectoComprobante")),
            cancelled: text(v, "estatus") == "0",
            cancelled_at: None,
        })
        .collect();
    rows.sort_by(|a, b| a.uuid.cmp(&b.uuid));
    rows
}

#[test]
fn the_recorded_metadata_package_gives_the_recorded_rows() {
    let mut package = Package::open(fixture("zip/metadata.zip")).expect("zip");
    let (mut rows, count) = all_metadata(&mut package).expect("rows");
    assert_eq!(
        count,
        MetadataCount {
            rows: 2,
            skipped: 0
        }
    );
    rows.sort_by(|a, b| a.uuid.cmp(&b.uuid));
    assert_eq!(rows, expected_metadata());
    // Exact money: the decimal keeps its text's scale.
    let totals: Vec<String> = rows
        .iter()
        .map(|m| m.total.expect("total").to_string())
        .collect();
    assert_eq!(totals, vec!["1485.17", "1124.11"]);
}

#[test]
fn third_party_data_is_left_out_of_the_rows() {
    let mut package = Package::open(fixture("zip/metadata-terceros.zip")).expect("zip");
    let (rows, count) = all_metadata(&mut package).expect("rows");
    assert_eq!(count.rows, 5);
    assert_eq!(rows[0].uuid, "11111111-AAAA-BBBB-0000-000000000001");
    assert_eq!(rows[0].issuer_name.as_deref(), Some("Empresa Patito"));
    assert_eq!(rows[4].total, Some(Decimal::new(99988765, 2)));
    assert_eq!(rows[3].total.map(|t| t.to_string()), Some("1476.00".into()));
    assert!(rows
        .iter()
        .all(|m| !m.cancelled && m.cancelled_at.is_none()));
}

#[test]
fn the_recorded_cfdi_package_gives_its_xml_files() {
    let mut package = Package::open(fixture("zip/cfdi.zip")).expect("zip");
    let files: Vec<CfdiFile> = package.cfdis().collect::<Result<_, _>>().expect("files");
    let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
    // Not XML, folders, `.txt` and empty files are left out.
    assert_eq!(
        names,
        vec![
            "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee.xml",
            "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee.xml.xml"
        ]
    );
    let expected = fixture("zip/cfdi.xml");
    assert!(files.iter().all(|f| f.xml == expected));
    // A metadata package holds no CFDI, a CFDI package no metadata.
    let mut metadata = Package::open(fixture("zip/metadata.zip")).expect("zip");
    assert_eq!(metadata.cfdis().count(), 0);
    assert_eq!(all_metadata(&mut package).expect("none").0, vec![]);
}

#[test]
fn cancelled_rows_and_malformed_rows() {
    let txt = "\u{feff}Uuid~RfcEmisor~NombreEmisor~RfcReceptor~NombreReceptor~RfcPac~FechaEmision~FechaCertificacionSat~Monto~EfectoComprobante~Estatus~FechaCancelacion\n\
        aaaaaaaa-0000-0000-0000-000000000001~aaa010101aaa~~BBB010101BBB~Receptor~SAT970701NN3~2024-02-01 10:00:00~2024-02-01 10:00:05~-0.10~e~0~2024-03-01 12:00:00\n\
        too~few~fields\n\
        \n\
        ~AAA010101AAA~X~BBB010101BBB~Y~Z~2024-02-01 10:00:00~~1~I~1~\n";
    let bytes = zip_of(&[("REQ_01.txt", txt.as_bytes())]);
    let (rows, count) = all_metadata(&mut Package::open(bytes).expect("zip")).expect("rows");
    assert_eq!(
        count,
        MetadataCount {
            rows: 1,
            skipped: 2
        }
    );
    let m = &rows[0];
    assert_eq!(m.uuid, "AAAAAAAA-0000-0000-0000-000000000001");
    assert_eq!(m.issuer_tax_id, "AAA010101AAA");
    assert_eq!(m.issuer_name, None);
    assert_eq!(m.total, Some(Decimal::new(-10, 2)));
    assert_eq!(m.invoice_type.as_deref(), Some("E"));
    assert!(m.cancelled);
    assert_eq!(m.cancelled_at.as_deref(), Some("2024-03-01T12:00:00"));
}

#[test]
fn a_callback_error_stops_the_reading() {
    let mut package = Package::open(fixture("zip/metadata-terceros.zip")).expect("zip");
    let mut seen = 0;
    let result = package.for_each_metadata(|_| {
        seen += 1;
        if seen == 2 {
            Err(PackageError::NotZip("stop".into()))
        } else {
            Ok(())
        }
    });
    assert!(result.is_err());
    assert_eq!(seen, 2);
}

#[test]
fn a_zip_bomb_is_refused_entry_by_entry() {
    let big = vec![b' '; 2048];
    let mut huge_line = b"Uuid~RfcEmisor\n".to_vec();
    huge_line.extend(std::iter::repeat_n(b'x', 4096));
    let bytes = zip_of(&[
        ("bomb.xml", &big),
        ("ok.xml", b"<cfdi/>"),
        ("long.txt", &huge_line),
    ]);
    let limits = Limits {
        max_entries: 10,
        max_xml_bytes: 1024,
        max_line_bytes: 1024,
    };
    let mut package = Package::open_with(bytes.clone(), limits).expect("zip");
    let results: Vec<_> = package.cfdis().collect();
    assert!(matches!(
        &results[0],
        Err(PackageError::EntryTooLarge { name, limit: 1024 }) if name == "bomb.xml"
    ));
    assert_eq!(results[1].as_ref().expect("small entry").name, "ok.xml");
    assert!(matches!(
        all_metadata(&mut package),
        Err(PackageError::Unreadable { name, .. }) if name == "long.txt"
    ));
    let few = Limits {
        max_entries: 2,
        ..limits
    };
    assert!(matches!(
        Package::open_with(bytes, few),
        Err(PackageError::TooManyEntries { found: 3, limit: 2 })
    ));
}

#[test]
fn garbage_is_not_a_package() {
    assert!(matches!(
        Package::open(b"not a zip".to_vec()),
        Err(PackageError::NotZip(_))
    ));
    assert!(matches!(
        Package::open(Vec::new()),
        Err(PackageError::NotZip(_))
    ));
}

#[test]
fn the_downloaded_recorded_package_opens() {
    let xml = String::from_utf8(fixture("download/response-with-package.xml")).expect("utf-8");
    let answer = super::super::responses::download(&xml).expect("answer");
    let mut package = Package::open(answer.package.expect("package")).expect("zip");
    let files: Vec<CfdiFile> = package.cfdis().collect::<Result<_, _>>().expect("files");
    assert!(!files.is_empty());
    assert!(files
        .iter()
        .all(|f| f.name.ends_with(".xml") && looks_like_xml(&f.xml)));
}
