//! The shared public samples (`tests/fixtures/cfdi-samples`, `tests/fixtures/retenciones-samples`)
//! as unit tests read them: every XML file of a folder, by name, in name order.

/// `(file name, bytes)` of every `.xml` file in `tests/fixtures/<folder>`, sorted by name.
pub(crate) fn xml_files(folder: &str) -> Vec<(String, Vec<u8>)> {
    let dir = format!("{}/tests/fixtures/{folder}", env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "xml"))
        .map(|path| {
            let name = path
                .file_name()
                .expect("a name")
                .to_string_lossy()
                .into_owned();
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
            (name, bytes)
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}
