//! The taxpayer's e.firma (FIEL): the certificate (`.cer`, DER) and its private key
//! (`.key`, PKCS#8 DER encrypted with a password), checked the way an upload must be
//! before the service keeps it, with one clear message per field.

use chrono::{DateTime, SecondsFormat, Utc};
use pkcs8::der::Encode;
use pkcs8::{DecodePublicKey, EncryptedPrivateKeyInfo, PrivateKeyInfo};
use rsa::{BigUint, RsaPrivateKey, RsaPublicKey};
use x509_cert::der::Decode;
use x509_cert::Certificate;

use crate::domain::efirma::EfirmaCertificate;
use crate::seal::names::{self, serial_text};

/// PBKDF2 rounds above this are refused instead of computed. The SAT's keys use 2,048
/// and OpenSSL's `pkcs8 -topk8` writes 2,048 too; 100,000 leaves room for any tool that
/// re-encrypts a key (about 50 ms to check), where 1,000,000 let sixteen uploads hold
/// every CPU for seconds.
pub const MAX_PBKDF2_ITERATIONS: u32 = 100_000;

/// The upload field an error is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EfirmaField {
    Certificate,
    PrivateKey,
    Password,
}

impl EfirmaField {
    pub fn as_str(self) -> &'static str {
        match self {
            EfirmaField::Certificate => "certificate",
            EfirmaField::PrivateKey => "private_key",
            EfirmaField::Password => "password",
        }
    }
}

/// Why an e.firma was refused: every problem found, each tied to its field.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EfirmaErrors(Vec<(EfirmaField, String)>);

impl EfirmaErrors {
    fn add(&mut self, field: EfirmaField, message: impl Into<String>) {
        self.0.push((field, message.into()));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (EfirmaField, &str)> {
        self.0.iter().map(|(f, m)| (*f, m.as_str()))
    }

    pub fn messages(&self, field: EfirmaField) -> Vec<&str> {
        self.iter()
            .filter(|(f, _)| *f == field)
            .map(|(_, m)| m)
            .collect()
    }
}

impl std::fmt::Display for EfirmaErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .iter()
            .map(|(field, m)| format!("{}: {m}", field.as_str()))
            .collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for EfirmaErrors {}

impl From<EfirmaErrors> for crate::domain::FieldErrors {
    fn from(errors: EfirmaErrors) -> Self {
        let mut out = crate::domain::FieldErrors::new();
        for (field, message) in errors.iter() {
            out.add(field.as_str(), message);
        }
        out
    }
}

/// A checked e.firma, ready to sign requests. The key never leaves this struct.
pub struct Efirma {
    certificate_der: Vec<u8>,
    key: RsaPrivateKey,
    summary: EfirmaCertificate,
    valid_to: DateTime<Utc>,
    issuer_name: String,
    serial_decimal: String,
}

impl std::fmt::Debug for Efirma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Efirma")
            .field("summary", &self.summary)
            .field("key", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// The certificate's facts once it passed its own checks.
struct CheckedCertificate {
    public_key: RsaPublicKey,
    summary: EfirmaCertificate,
    valid_to: DateTime<Utc>,
    issuer_name: String,
    serial_decimal: String,
}

impl Efirma {
    /// Checks an upload: the certificate parses, is an e.firma (not a CSD), belongs to
    /// `expected_rfc` and is valid at `now`; the key decrypts with `password` and is the
    /// certificate's. Every failed check is reported, under its field.
    pub fn parse(
        cer: &[u8],
        key: &[u8],
        password: &str,
        expected_rfc: &str,
        now: DateTime<Utc>,
    ) -> Result<Efirma, EfirmaErrors> {
        let mut errors = EfirmaErrors::default();
        let certificate = check_certificate(cer, expected_rfc, now, &mut errors);
        let key = decrypt_key(key, password, &mut errors);
        match (certificate, key) {
            (Some(c), Some(k)) => {
                if RsaPublicKey::from(&k) != c.public_key {
                    errors.add(
                        EfirmaField::PrivateKey,
                        "does not belong to this certificate (upload the .key issued with this .cer)",
                    );
                    return Err(errors);
                }
                Ok(Efirma {
                    certificate_der: cer.to_vec(),
                    key: k,
                    summary: c.summary,
                    valid_to: c.valid_to,
                    issuer_name: c.issuer_name,
                    serial_decimal: c.serial_decimal,
                })
            }
            _ => Err(errors),
        }
    }

    /// An e.firma stored after passing `parse`, opened again: the same checks but the
    /// clock's (whether it is still in force is the caller's decision).
    pub fn reopen(
        cer: &[u8],
        key: &[u8],
        password: &str,
        expected_rfc: &str,
    ) -> Result<Efirma, EfirmaErrors> {
        let in_force = Certificate::from_der(cer)
            .map(|c| utc(c.tbs_certificate.validity.not_before))
            .unwrap_or_else(|_| Utc::now());
        Self::parse(cer, key, password, expected_rfc, in_force)
    }

    pub fn summary(&self) -> &EfirmaCertificate {
        &self.summary
    }

    pub fn rfc(&self) -> &str {
        &self.summary.rfc
    }

    /// Whether the certificate has expired at `now` (checked again before each run).
    pub fn expired_at(&self, now: DateTime<Utc>) -> bool {
        now > self.valid_to
    }

    pub fn certificate_der(&self) -> &[u8] {
        &self.certificate_der
    }

    /// `X509IssuerName`, as the service expects it.
    pub fn issuer_name(&self) -> &str {
        &self.issuer_name
    }

    /// `X509SerialNumber`: the serial as a decimal integer.
    pub fn serial_decimal(&self) -> &str {
        &self.serial_decimal
    }

    pub(super) fn key(&self) -> &RsaPrivateKey {
        &self.key
    }
}

fn utc(time: x509_cert::time::Time) -> DateTime<Utc> {
    let d = time.to_unix_duration();
    let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
    DateTime::from_timestamp(secs, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
}

fn day(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn first(name: &x509_cert::name::Name, oid: x509_cert::der::oid::ObjectIdentifier) -> String {
    names::values(name, oid)
        .into_iter()
        .next()
        .unwrap_or_default()
}

fn check_certificate(
    cer: &[u8],
    expected_rfc: &str,
    now: DateTime<Utc>,
    errors: &mut EfirmaErrors,
) -> Option<CheckedCertificate> {
    let field = EfirmaField::Certificate;
    let Ok(cert) = Certificate::from_der(cer) else {
        errors.add(
            field,
            "is not an X.509 certificate in DER form (the e.firma's .cer file)",
        );
        return None;
    };
    let tbs = &cert.tbs_certificate;
    let errors_before = errors.0.len();

    if !names::values(&tbs.subject, names::ORGANIZATIONAL_UNIT).is_empty() {
        errors.add(
            field,
            "is a CSD (sello digital) certificate, not an e.firma: upload the e.firma's .cer",
        );
    }
    // `EKU9003173C9 / VADA800927DJ3`: the company's RFC, then its representative's.
    let rfc = names::values(&tbs.subject, names::UNIQUE_IDENTIFIER)
        .into_iter()
        .next()
        .and_then(|v| v.split('/').next().map(|r| r.trim().to_uppercase()))
        .unwrap_or_default();
    let expected = expected_rfc.trim().to_uppercase();
    if rfc.is_empty() {
        errors.add(field, "carries no RFC: it is not a SAT e.firma certificate");
    } else if rfc != expected {
        errors.add(
            field,
            format!("belongs to RFC {rfc}, not to this entity's tax_id {expected}"),
        );
    }
    let valid_from = utc(tbs.validity.not_before);
    let valid_to = utc(tbs.validity.not_after);
    if now < valid_from {
        errors.add(
            field,
            format!("is not valid yet: valid from {}", day(valid_from)),
        );
    } else if now > valid_to {
        errors.add(field, format!("expired on {}", day(valid_to)));
    }
    let public_key = tbs
        .subject_public_key_info
        .to_der()
        .ok()
        .and_then(|der| RsaPublicKey::from_public_key_der(&der).ok());
    if public_key.is_none() {
        errors.add(field, "does not hold an RSA public key");
    }
    if errors.0.len() > errors_before {
        return None;
    }
    let serial = tbs.serial_number.as_bytes();
    Some(CheckedCertificate {
        public_key: public_key?,
        summary: EfirmaCertificate {
            serial_number: serial_text(serial),
            rfc,
            holder_name: first(&tbs.subject, names::COMMON_NAME),
            issuer: first(&tbs.issuer, names::COMMON_NAME),
            valid_from: crate::time::format(valid_from),
            valid_to: crate::time::format(valid_to),
        },
        valid_to,
        issuer_name: names::issuer_text(&tbs.issuer),
        serial_decimal: BigUint::from_bytes_be(serial).to_string(),
    })
}

fn decrypt_key(key: &[u8], password: &str, errors: &mut EfirmaErrors) -> Option<RsaPrivateKey> {
    let Ok(info) = EncryptedPrivateKeyInfo::try_from(key) else {
        errors.add(
            EfirmaField::PrivateKey,
            "is not an encrypted private key in DER form (the e.firma's .key file)",
        );
        return None;
    };
    let pbkdf2 = info
        .encryption_algorithm
        .pbes2()
        .and_then(|p| p.kdf.pbkdf2());
    match pbkdf2 {
        Some(p) if p.iteration_count <= MAX_PBKDF2_ITERATIONS => {}
        Some(p) => {
            errors.add(
                EfirmaField::PrivateKey,
                format!(
                    "is encrypted with {} PBKDF2 rounds; at most {MAX_PBKDF2_ITERATIONS} are accepted (the SAT's keys use 2048): re-encrypt it, e.g. openssl pkcs8 -topk8 -v2 des3 -iter 2048",
                    p.iteration_count
                ),
            );
            return None;
        }
        None => {
            errors.add(
                EfirmaField::PrivateKey,
                "is encrypted with a scheme the SAT's .key files do not use (expected PBES2 with PBKDF2)",
            );
            return None;
        }
    }
    let decrypted = match info.decrypt(password.as_bytes()) {
        Ok(doc) => doc,
        Err(pkcs8::Error::EncryptedPrivateKey(
            pkcs8::pkcs5::Error::DecryptFailed | pkcs8::pkcs5::Error::EncryptFailed,
        ))
        | Err(pkcs8::Error::Asn1(_)) => {
            errors.add(EfirmaField::Password, "does not decrypt the private key");
            return None;
        }
        Err(_) => {
            errors.add(
                EfirmaField::PrivateKey,
                "is encrypted with a cipher this service does not support",
            );
            return None;
        }
    };
    // A wrong password can, rarely, unpad cleanly and yield garbage: that is still the
    // password's fault.
    let Ok(info) = PrivateKeyInfo::try_from(decrypted.as_bytes()) else {
        errors.add(EfirmaField::Password, "does not decrypt the private key");
        return None;
    };
    match RsaPrivateKey::try_from(info) {
        Ok(k) => Some(k),
        Err(_) => {
            errors.add(EfirmaField::PrivateKey, "is not an RSA private key");
            None
        }
    }
}

#[cfg(test)]
pub(crate) mod tests;
