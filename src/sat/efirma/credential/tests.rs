use super::*;

pub(crate) const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sat-ws-fixtures/"
);

pub(crate) fn fixture(path: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}{path}")).expect("fixture")
}

fn password(dir: &str) -> String {
    String::from_utf8(fixture(&format!("{dir}/EKU9003173C9-password.txt")))
        .expect("utf-8")
        .trim()
        .to_string()
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .expect("time")
        .with_timezone(&Utc)
}

/// A moment inside the test e.firma's validity (2023-05-18 .. 2027-05-17).
pub(crate) fn valid_now() -> DateTime<Utc> {
    at("2025-01-01T00:00:00Z")
}

pub(crate) fn test_efirma() -> Efirma {
    Efirma::parse(
        &fixture("fake-fiel/EKU9003173C9.cer"),
        &fixture("fake-fiel/EKU9003173C9.key"),
        &password("fake-fiel"),
        "EKU9003173C9",
        valid_now(),
    )
    .expect("the public test e.firma is valid")
}

fn parse_with(cer: &str, key: &str, pass: &str, rfc: &str, now: DateTime<Utc>) -> EfirmaErrors {
    Efirma::parse(&fixture(cer), &fixture(key), pass, rfc, now).expect_err("refused")
}

const CER: &str = "fake-fiel/EKU9003173C9.cer";
const KEY: &str = "fake-fiel/EKU9003173C9.key";

#[test]
fn the_public_test_efirma_parses_with_its_summary() {
    let efirma = test_efirma();
    let s = efirma.summary();
    assert_eq!(s.rfc, "EKU9003173C9");
    assert_eq!(s.serial_number, "30001000000500003415");
    assert_eq!(s.holder_name, "ESCUELA KEMPER URGATE SA DE CV");
    assert_eq!(s.issuer, "AC UAT");
    assert_eq!(s.valid_from, "2023-05-18T04:37:14.000000Z");
    assert_eq!(s.valid_to, "2027-05-17T04:37:14.000000Z");
    assert_eq!(
        efirma.serial_decimal(),
        "292233162870206001759766198462772978647764840757"
    );
    assert!(efirma
        .issuer_name()
        .starts_with("CN=AC UAT,O=SERVICIO DE ADMINISTRACION"));
    assert!(!efirma.expired_at(valid_now()));
    assert!(efirma.expired_at(at("2027-05-17T04:37:15Z")));
}

#[test]
fn the_rfc_comparison_ignores_case_and_spaces() {
    let efirma = Efirma::parse(
        &fixture(CER),
        &fixture(KEY),
        &password("fake-fiel"),
        " eku9003173c9 ",
        valid_now(),
    );
    assert!(efirma.is_ok());
}

#[test]
fn debug_output_never_shows_the_key() {
    let text = format!("{:?}", test_efirma());
    assert!(text.contains("<redacted>"));
    assert!(text.contains("EKU9003173C9"));
    assert!(!text.contains("RsaPrivateKey"), "{text}");
    assert!(!text.to_lowercase().contains("prime"), "{text}");
}

#[test]
fn a_wrong_password_is_reported_on_the_password() {
    let errors = parse_with(CER, KEY, "not-the-password", "EKU9003173C9", valid_now());
    assert_eq!(
        errors.messages(EfirmaField::Password),
        vec!["does not decrypt the private key"]
    );
    assert_eq!(errors.iter().count(), 1, "{errors}");
    let empty = parse_with(CER, KEY, "", "EKU9003173C9", valid_now());
    assert!(!empty.messages(EfirmaField::Password).is_empty());
}

#[test]
fn a_csd_is_refused_as_not_an_efirma() {
    let errors = parse_with(
        "fake-csd/EKU9003173C9.cer",
        "fake-csd/EKU9003173C9.key",
        &password("fake-csd"),
        "EKU9003173C9",
        valid_now(),
    );
    let messages = errors.messages(EfirmaField::Certificate);
    assert_eq!(messages.len(), 1, "{errors}");
    assert!(messages[0].contains("CSD"), "{errors}");
    assert!(
        errors.messages(EfirmaField::PrivateKey).is_empty(),
        "{errors}"
    );
}

#[test]
fn another_taxpayers_certificate_is_refused() {
    let errors = parse_with(
        CER,
        KEY,
        &password("fake-fiel"),
        "AAA010101AAA",
        valid_now(),
    );
    assert_eq!(
        errors.messages(EfirmaField::Certificate),
        vec!["belongs to RFC EKU9003173C9, not to this entity's tax_id AAA010101AAA"]
    );
}

#[test]
fn validity_dates_are_checked_against_the_given_clock() {
    let pass = password("fake-fiel");
    let expired = parse_with(CER, KEY, &pass, "EKU9003173C9", at("2027-05-18T00:00:00Z"));
    assert_eq!(
        expired.messages(EfirmaField::Certificate),
        vec!["expired on 2027-05-17T04:37:14Z"]
    );
    let early = parse_with(CER, KEY, &pass, "EKU9003173C9", at("2023-05-18T04:37:13Z"));
    assert_eq!(
        early.messages(EfirmaField::Certificate),
        vec!["is not valid yet: valid from 2023-05-18T04:37:14Z"]
    );
    // The edges themselves are inside the validity.
    for edge in ["2023-05-18T04:37:14Z", "2027-05-17T04:37:14Z"] {
        assert!(Efirma::parse(
            &fixture(CER),
            &fixture(KEY),
            &pass,
            "EKU9003173C9",
            at(edge)
        )
        .is_ok());
    }
}

#[test]
fn the_key_of_another_certificate_is_refused() {
    let errors = parse_with(
        CER,
        "fake-csd/EKU9003173C9.key",
        &password("fake-csd"),
        "EKU9003173C9",
        valid_now(),
    );
    let messages = errors.messages(EfirmaField::PrivateKey);
    assert_eq!(messages.len(), 1, "{errors}");
    assert!(messages[0].starts_with("does not belong to this certificate"));
    assert!(errors.messages(EfirmaField::Certificate).is_empty());
}

#[test]
fn garbage_is_refused_on_each_field_at_once() {
    let errors = Efirma::parse(
        b"not a certificate",
        b"\x30\x03garbage",
        "x",
        "EKU9003173C9",
        valid_now(),
    )
    .expect_err("garbage");
    assert_eq!(errors.messages(EfirmaField::Certificate).len(), 1);
    assert_eq!(errors.messages(EfirmaField::PrivateKey).len(), 1);
    // The key in PEM (text) form is not the .key file either.
    let pem = parse_with(
        CER,
        "fake-fiel/EKU9003173C9.key.pem",
        "x",
        "EKU9003173C9",
        valid_now(),
    );
    assert!(pem.messages(EfirmaField::PrivateKey)[0].starts_with("is not an encrypted private key"));
    // A certificate given as the key, and the key as the certificate.
    let swapped = parse_with(KEY, CER, "x", "EKU9003173C9", valid_now());
    assert_eq!(swapped.messages(EfirmaField::Certificate).len(), 1);
    assert_eq!(swapped.messages(EfirmaField::PrivateKey).len(), 1);
}

#[test]
fn errors_convert_to_the_api_field_errors() {
    let errors = parse_with(CER, KEY, "wrong", "AAA010101AAA", valid_now());
    let api: crate::domain::FieldErrors = errors.into();
    assert!(api.contains("certificate"));
    assert!(api.contains("password"));
    assert!(!api.contains("private_key"));
}

#[test]
fn a_key_with_more_pbkdf2_rounds_than_the_cap_is_refused_before_any_is_computed() {
    let pass = password("fake-fiel");
    let key = fixture(KEY);
    let encrypted = EncryptedPrivateKeyInfo::try_from(key.as_slice()).expect("key");
    let plain = encrypted.decrypt(pass.as_bytes()).expect("opens");
    let info = PrivateKeyInfo::try_from(plain.as_bytes()).expect("PKCS#8");
    let with_rounds = |rounds: u32| {
        let params =
            pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(rounds, b"salt", &[1; 16])
                .expect("params");
        let der = info
            .encrypt_with_params(params, pass.as_bytes())
            .expect("encrypts");
        der.as_bytes().to_vec()
    };
    let cer = fixture(CER);
    let over = Efirma::parse(
        &cer,
        &with_rounds(100_001),
        &pass,
        "EKU9003173C9",
        valid_now(),
    )
    .expect_err("refused");
    assert_eq!(
        over.messages(EfirmaField::PrivateKey),
        vec!["is encrypted with 100001 PBKDF2 rounds; at most 100000 are accepted (the SAT's keys use 2048): re-encrypt it, e.g. openssl pkcs8 -topk8 -v2 des3 -iter 2048"]
    );
    assert_eq!(over.iter().count(), 1, "{over}");
    Efirma::parse(
        &cer,
        &with_rounds(100_000),
        &pass,
        "EKU9003173C9",
        valid_now(),
    )
    .expect("the cap itself is accepted");
}
