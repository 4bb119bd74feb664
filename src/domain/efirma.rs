//! An e.firma upload: the certificate (`.cer`), the encrypted private key (`.key`) and
//! its password, as JSON with the files in base64. This checks the shape; what the
//! files say (an e.firma of this RFC, in force, a key that opens and matches) is checked
//! by `sat::efirma::credential` once the entity is known.

use super::required_string;
use crate::domain::FieldErrors;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{Map, Value};

/// Real files are 1-2 KB; anything far larger is not one.
pub const FILE_MAX_BYTES: usize = 64 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EfirmaStatus {
    Pending,
    Valid,
    /// The SAT refused it (revoked, not an e.firma it knows).
    Invalid,
    /// Past its validity: recorded (and announced) when `valid_to` passes.
    Expired,
}

impl EfirmaStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            EfirmaStatus::Pending => "pending",
            EfirmaStatus::Valid => "valid",
            EfirmaStatus::Invalid => "invalid",
            EfirmaStatus::Expired => "expired",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(EfirmaStatus::Pending),
            "valid" => Some(EfirmaStatus::Valid),
            "invalid" => Some(EfirmaStatus::Invalid),
            "expired" => Some(EfirmaStatus::Expired),
            _ => None,
        }
    }
}

/// The decoded upload. `Debug` never shows the key or the password.
pub struct NewEfirma {
    pub certificate: Vec<u8>,
    pub private_key: Vec<u8>,
    pub password: String,
}

impl std::fmt::Debug for NewEfirma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("NewEfirma(<redacted>)")
    }
}

impl NewEfirma {
    pub fn parse(body: &Map<String, Value>) -> Result<NewEfirma, FieldErrors> {
        let mut errors = FieldErrors::new();
        let certificate = file(body, "certificate", &mut errors);
        let private_key = file(body, "private_key", &mut errors);
        let password = required_string(body, "password", "password", &mut errors);
        match (certificate, private_key, password) {
            (Some(certificate), Some(private_key), Some(password)) if errors.is_empty() => {
                Ok(NewEfirma {
                    certificate,
                    private_key,
                    password,
                })
            }
            _ => Err(errors),
        }
    }
}

/// A required base64 field holding a file of at most `FILE_MAX_BYTES`. White space
/// (line breaks of `base64` tools) is ignored.
fn file(body: &Map<String, Value>, field: &str, errors: &mut FieldErrors) -> Option<Vec<u8>> {
    let text = required_string(body, field, field, errors)?;
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.len() > FILE_MAX_BYTES * 4 / 3 + 4 {
        errors.add(field, "is too large for an e.firma file (64 KiB at most)");
        return None;
    }
    match STANDARD.decode(compact) {
        Ok(bytes) if !bytes.is_empty() => Some(bytes),
        _ => {
            errors.add(field, "must be the file's contents in base64");
            None
        }
    }
}

/// What the service may show about an e.firma (nothing secret).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EfirmaCertificate {
    /// As the SAT writes it: the serial's bytes are ASCII digits (`30001000000500003415`).
    pub serial_number: String,
    pub rfc: String,
    /// The holder's name (subject CN).
    pub holder_name: String,
    /// The issuing authority's name (issuer CN).
    pub issuer: String,
    /// RFC 3339, UTC.
    pub valid_from: String,
    pub valid_to: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    #[test]
    fn files_are_base64_and_every_field_is_required() {
        let ok = NewEfirma::parse(&obj(json!({
            "certificate": "AQID", "private_key": "BAUG\nBw==", "password": "12345678a"
        })))
        .expect("valid");
        assert_eq!(ok.certificate, [1, 2, 3]);
        assert_eq!(ok.private_key, [4, 5, 6, 7]);
        assert!(!format!("{ok:?}").contains("12345678a"));

        let bad = NewEfirma::parse(&obj(json!({
            "certificate": "not base64!", "private_key": 7
        })))
        .expect_err("invalid");
        for field in ["certificate", "private_key", "password"] {
            assert!(bad.contains(field), "{field}: {bad:?}");
        }
        let huge = "A".repeat(FILE_MAX_BYTES * 2);
        let too_large = NewEfirma::parse(&obj(json!({
            "certificate": huge, "private_key": "AQID", "password": "x"
        })))
        .expect_err("too large");
        assert!(too_large.contains("certificate"));
    }
}
