//! e.firma files for `PUT /v1/entities/{id}/efirma`. Tests through the binary upload the
//! long-lived test e.firma in `tests/fixtures/efirma` (the server checks certificates
//! against the real clock, and the SAT's public test e.firma expires in 2027); the SAT's
//! own files in `tests/fixtures/sat-ws-fixtures` serve for refusals (its CSD, a foreign key), and,
//! checked at a fixed instant, for the tests that drive the web-service client directly.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use cfdi_extract::sat::efirma::Efirma;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

pub const FIEL_RFC: &str = "EKU9003173C9";
/// The long-lived test e.firma's serial, as the SAT writes serials.
pub const FIEL_SERIAL: &str = "30001000000500009999";
const OWN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/efirma/");
const SAT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sat-ws-fixtures/"
);

/// A file of the long-lived test e.firma (`own("EKU9003173C9.key")`).
pub fn own(name: &str) -> Vec<u8> {
    std::fs::read(format!("{OWN}{name}")).expect("fixture")
}

/// A file of the SAT's fixtures (`sat("fake-csd/EKU9003173C9.cer")`).
pub fn sat(path: &str) -> Vec<u8> {
    std::fs::read(format!("{SAT}{path}")).expect("fixture")
}

/// An instant inside the validity of the SAT's public test e.firma (2023-05-18 to
/// 2027-05-17).
pub fn instant() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2025-03-04T05:06:07Z")
        .expect("time")
        .with_timezone(&Utc)
}

/// The SAT's public test e.firma (`fake-fiel/`), checked at `instant()`.
pub fn sat_efirma() -> Efirma {
    Efirma::parse(
        &sat("fake-fiel/EKU9003173C9.cer"),
        &sat("fake-fiel/EKU9003173C9.key"),
        &text(sat("fake-fiel/EKU9003173C9-password.txt")),
        FIEL_RFC,
        instant(),
    )
    .expect("test e.firma")
}

fn text(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).expect("utf-8").trim().to_string()
}

pub fn efirma_password() -> String {
    text(own("EKU9003173C9-password.txt"))
}

pub fn csd_password() -> String {
    text(sat("fake-csd/EKU9003173C9-password.txt"))
}

/// An upload body of these files.
pub fn upload(certificate: &[u8], private_key: &[u8], password: &str) -> Value {
    json!({
        "certificate": STANDARD.encode(certificate),
        "private_key": STANDARD.encode(private_key),
        "password": password,
    })
}

/// The long-lived test e.firma, as it should be uploaded.
pub fn efirma_upload() -> Value {
    upload(
        &own("EKU9003173C9.cer"),
        &own("EKU9003173C9.key"),
        &efirma_password(),
    )
}

/// The long-lived test e.firma's key, re-encrypted (PBES2: PBKDF2-SHA256, AES-256-CBC)
/// with `rounds` PBKDF2 rounds and the same password.
pub fn key_with_rounds(rounds: u32) -> Vec<u8> {
    use pkcs8::pkcs5::pbes2;
    use pkcs8::{EncryptedPrivateKeyInfo, PrivateKeyInfo};
    let key = own("EKU9003173C9.key");
    let password = efirma_password();
    let encrypted = EncryptedPrivateKeyInfo::try_from(key.as_slice()).expect("the .key parses");
    let plain = encrypted
        .decrypt(password.as_bytes())
        .expect("the password opens it");
    let info = PrivateKeyInfo::try_from(plain.as_bytes()).expect("PKCS#8");
    let params = pbes2::Parameters::pbkdf2_sha256_aes256cbc(rounds, b"salt-of-a-test", &[7; 16])
        .expect("parameters");
    info.encrypt_with_params(params, password.as_bytes())
        .expect("encrypts")
        .as_bytes()
        .to_vec()
}
