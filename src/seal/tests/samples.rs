use std::path::Path;

use super::super::*;
use crate::samples::xml_files;

const CADENAS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/seal/cadenas");

fn recorded(name: &str) -> Option<String> {
    std::fs::read_to_string(Path::new(CADENAS).join(name)).ok()
}

fn all_samples() -> Vec<(String, Vec<u8>)> {
    let mut all = xml_files("cfdi-samples");
    all.extend(xml_files("retenciones-samples"));
    all
}

/// Every sample's original strings (the document's and its stamp's) match libxslt's.
#[test]
fn original_strings_match_libxslt_on_every_sample() {
    let mut compared = 0;
    for (name, bytes) in all_samples() {
        let Some(expected) = recorded(&format!("{name}.txt")) else {
            continue;
        };
        crate::cfdi::xml::with_tree(&bytes, |root| {
            let kind = Kind::of(root).unwrap();
            assert_eq!(original_string(kind, root).unwrap(), expected, "{name}");
            compared += 1;
            if let Some(tfd_expected) = recorded(&format!("{name}.tfd.txt")) {
                let tfd = root
                    .descendants()
                    .find(|n| n.tag_name().name() == "TimbreFiscalDigital")
                    .unwrap();
                let tfd_kind = Kind::of(tfd).unwrap();
                assert_eq!(
                    original_string(tfd_kind, tfd).unwrap(),
                    tfd_expected,
                    "{name} stamp"
                );
                compared += 1;
            }
            Ok(())
        })
        .unwrap();
    }
    assert!(compared >= 60, "only {compared} strings compared");
}
