//! Entities: a taxpayer (RFC), its name and its CIEC password.

use super::{optional_string, required_string};
use crate::error::FieldErrors;
use serde_json::{Map, Value};

pub const NAME_MAX: usize = 255;
pub const CIEC_LEN: usize = 8;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CredentialStatus {
    Pending,
    Valid,
    Invalid,
}

impl CredentialStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            CredentialStatus::Pending => "pending",
            CredentialStatus::Valid => "valid",
            CredentialStatus::Invalid => "invalid",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(CredentialStatus::Pending),
            "valid" => Some(CredentialStatus::Valid),
            "invalid" => Some(CredentialStatus::Invalid),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewEntity {
    pub tax_id: String,
    pub name: String,
    pub ciec_password: String,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct EntityPatch {
    pub name: Option<String>,
    pub ciec_password: Option<String>,
}

/// RFCs are written upper case; surrounding blanks are never part of one.
pub fn normalize_tax_id(s: &str) -> String {
    s.trim().to_uppercase()
}

/// Counted on the value as given (upper-casing can change the length: `ß` -> `SS`).
fn check_tax_id(tax_id: &str, errors: &mut FieldErrors) {
    let n = tax_id.trim().chars().count();
    if !(12..=13).contains(&n) {
        errors.add("tax_id", "must be 12 to 13 characters");
    }
    if tax_id
        .trim()
        .chars()
        .any(|c| c.is_control() || c.is_whitespace())
    {
        errors.add("tax_id", "must not contain spaces or control characters");
    }
}

fn check_name(name: &str, errors: &mut FieldErrors) {
    if name.chars().count() > NAME_MAX {
        errors.add("name", "must be at most 255 characters");
    }
}

fn check_password(password: &str, errors: &mut FieldErrors) {
    if password.chars().count() != CIEC_LEN {
        errors.add("ciec_password", "must be exactly 8 characters");
    }
}

impl NewEntity {
    pub fn parse(body: &Map<String, Value>) -> Result<NewEntity, FieldErrors> {
        let mut errors = FieldErrors::new();
        let tax_id = required_string(body, "tax_id", "tax_id", &mut errors);
        let name = required_string(body, "name", "name", &mut errors);
        let ciec_password = required_string(body, "ciec_password", "ciec_password", &mut errors);
        if let Some(t) = &tax_id {
            check_tax_id(t, &mut errors);
        }
        if let Some(n) = &name {
            check_name(n, &mut errors);
        }
        if let Some(p) = &ciec_password {
            check_password(p, &mut errors);
        }
        match (tax_id, name, ciec_password) {
            (Some(tax_id), Some(name), Some(ciec_password)) if errors.is_empty() => Ok(NewEntity {
                tax_id: normalize_tax_id(&tax_id),
                name: name.trim().to_string(),
                ciec_password,
            }),
            _ => Err(errors),
        }
    }
}

impl EntityPatch {
    pub fn parse(body: &Map<String, Value>) -> Result<EntityPatch, FieldErrors> {
        let mut errors = FieldErrors::new();
        if body.contains_key("tax_id") {
            errors.add("tax_id", "cannot be changed");
        }
        let name = optional_string(body, "name", "name", &mut errors);
        let ciec_password = optional_string(body, "ciec_password", "ciec_password", &mut errors);
        if let Some(n) = &name {
            check_name(n, &mut errors);
        }
        if let Some(p) = &ciec_password {
            check_password(p, &mut errors);
        }
        if errors.is_empty() {
            Ok(EntityPatch {
                name: name.map(|n| n.trim().to_string()),
                ciec_password,
            })
        } else {
            Err(errors)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    #[test]
    fn create_accepts_the_boundaries() {
        for tax_id in ["AAA010101AAA", "AAAA010101AAA"] {
            let e = NewEntity::parse(&obj(json!({
                "tax_id": tax_id, "name": "x".repeat(255), "ciec_password": "12345678"
            })))
            .expect("valid");
            assert_eq!(e.tax_id, tax_id);
        }
    }

    #[test]
    fn create_rejects_each_rule_with_its_field() {
        let cases = [
            (json!({"name": "n", "ciec_password": "12345678"}), "tax_id"),
            (
                json!({"tax_id": "  ", "name": "n", "ciec_password": "12345678"}),
                "tax_id",
            ),
            (
                json!({"tax_id": "AAA010101AA", "name": "n", "ciec_password": "12345678"}),
                "tax_id",
            ),
            (
                json!({"tax_id": "AAAA010101AAAA", "name": "n", "ciec_password": "12345678"}),
                "tax_id",
            ),
            (
                json!({"tax_id": 123456789012u64, "name": "n", "ciec_password": "12345678"}),
                "tax_id",
            ),
            (
                json!({"tax_id": "AAA010101AAA", "ciec_password": "12345678"}),
                "name",
            ),
            (
                json!({"tax_id": "AAA010101AAA", "name": "x".repeat(256), "ciec_password": "12345678"}),
                "name",
            ),
            (
                json!({"tax_id": "AAA010101AAA", "name": "n"}),
                "ciec_password",
            ),
            (
                json!({"tax_id": "AAA010101AAA", "name": "n", "ciec_password": "1234567"}),
                "ciec_password",
            ),
            (
                json!({"tax_id": "AAA010101AAA", "name": "n", "ciec_password": "123456789"}),
                "ciec_password",
            ),
        ];
        for (body, field) in cases {
            let errors = NewEntity::parse(&obj(body.clone())).expect_err("invalid");
            assert!(
                errors.contains(field),
                "{body} should fail on {field}: {errors:?}"
            );
        }
    }

    #[test]
    fn create_rejects_control_characters_and_counts_before_upper_casing() {
        let bad = NewEntity::parse(&obj(
            json!({"tax_id": "CTL01010\u{5}AAA", "name": "n", "ciec_password": "12345678"}),
        ));
        assert!(bad.expect_err("control").contains("tax_id"));
        let spaced = NewEntity::parse(&obj(
            json!({"tax_id": "AAA 010101AA", "name": "n", "ciec_password": "12345678"}),
        ));
        assert!(spaced.expect_err("space").contains("tax_id"));
        let sharp = NewEntity::parse(&obj(
            json!({"tax_id": "ßßßßßßßßßßßß", "name": "n", "ciec_password": "12345678"}),
        ));
        assert!(sharp.is_ok());
        let padded = NewEntity::parse(&obj(
            json!({"tax_id": " aaa010101aaa ", "name": "n", "ciec_password": "12345678"}),
        ));
        assert_eq!(padded.expect("trimmed").tax_id, "AAA010101AAA");
    }

    #[test]
    fn create_counts_characters_not_bytes() {
        let e = NewEntity::parse(&obj(json!({
            "tax_id": "E&Ñ831019M53", "name": "Ñ", "ciec_password": "ññññññññ"
        })));
        assert!(e.is_ok());
    }

    #[test]
    fn patch_refuses_tax_id_and_checks_present_fields() {
        assert!(EntityPatch::parse(&obj(json!({"tax_id": "X"})))
            .expect_err("tax")
            .contains("tax_id"));
        assert!(EntityPatch::parse(&obj(json!({"ciec_password": "short"})))
            .expect_err("pw")
            .contains("ciec_password"));
        assert_eq!(
            EntityPatch::parse(&obj(json!({}))),
            Ok(EntityPatch::default())
        );
    }
}
