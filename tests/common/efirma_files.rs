//! The SAT's public test e.firma and CSD (RFC EKU9003173C9) from `shared/sat-ws-fixtures`,
//! as upload bodies for `PUT /v1/entities/{id}/efirma`.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

pub const FIEL_RFC: &str = "EKU9003173C9";
const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/sat-ws-fixtures/");

pub fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}{path}")).expect("fixture")
}

/// The password of `dir`'s key (`fake-fiel` or `fake-csd`).
pub fn password(dir: &str) -> String {
    String::from_utf8(fixture(&format!("{dir}/EKU9003173C9-password.txt")))
        .expect("utf-8")
        .trim()
        .to_string()
}

/// An upload of `cer_dir`'s certificate and `key_dir`'s key.
pub fn upload(cer_dir: &str, key_dir: &str, password: &str) -> Value {
    json!({
        "certificate": STANDARD.encode(fixture(&format!("{cer_dir}/EKU9003173C9.cer"))),
        "private_key": STANDARD.encode(fixture(&format!("{key_dir}/EKU9003173C9.key"))),
        "password": password,
    })
}

/// The test e.firma, as it should be uploaded.
pub fn fiel_upload() -> Value {
    upload("fake-fiel", "fake-fiel", &password("fake-fiel"))
}
