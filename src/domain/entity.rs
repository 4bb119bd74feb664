//! Entities: a taxpayer (RFC), its name and its CIEC password.

use super::{optional_string, required_string};
use crate::domain::FieldErrors;
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

/// The RFC pattern: 3 (company) or 4 (person) letters from A-Z, `Ñ` and `&`, six digits
/// (the YYMMDD date) and a three-character homoclave of A-Z and digits. Anything else
/// (a zero-width space, a direction override, a letter from another alphabet, `ß`
/// expanding to `SS`) cannot make a second entity that looks like an existing RFC.
pub fn is_rfc(tax_id: &str) -> bool {
    let chars: Vec<char> = tax_id.chars().collect();
    let letters = match chars.len() {
        12 => 3,
        13 => 4,
        _ => return false,
    };
    let (name, rest) = chars.split_at(letters);
    let (date, homoclave) = rest.split_at(6);
    name.iter()
        .all(|c| c.is_ascii_uppercase() || matches!(c, 'Ñ' | '&'))
        && date.iter().all(char::is_ascii_digit)
        && homoclave
            .iter()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

pub const TAX_ID_PATTERN_MESSAGE: &str =
    "must be an RFC: 3 or 4 letters (A-Z, Ñ, &), 6 digits and 3 letters or digits";

/// Checked after normalizing (trim, upper case), on exactly what would be stored.
fn check_tax_id(tax_id: &str, errors: &mut FieldErrors) {
    let normalized = normalize_tax_id(tax_id);
    if !(12..=13).contains(&normalized.chars().count()) {
        errors.add("tax_id", "must be 12 to 13 characters");
    } else if !is_rfc(&normalized) {
        errors.add("tax_id", TAX_ID_PATTERN_MESSAGE);
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
    fn tax_ids_are_normalized_then_held_to_the_rfc_pattern() {
        let parse = |t: &str| {
            NewEntity::parse(&obj(
                json!({"tax_id": t, "name": "n", "ciec_password": "12345678"}),
            ))
        };
        for bad in [
            "CTL01010\u{5}AAA",
            "AAA 010101AA",
            "ßßßßßßßßßßßß",
            "AAA010101\u{200B}AA", // zero-width space
            "\u{202E}AA010101AAA", // right-to-left override
            "AAA0101011AA\u{200B}",
            "ААА010101AAA", // Cyrillic А
            "AAA01O101AAA", // a letter in the date
            "1AA010101AAA",
            "AAA010101AA-",
        ] {
            let errors = parse(bad).expect_err(bad);
            assert!(errors.contains("tax_id"), "{bad:?}");
        }
        assert_eq!(
            parse(" aaa010101aaa ").expect("trimmed").tax_id,
            "AAA010101AAA"
        );
        assert_eq!(parse("e&ñ831019m53").expect("ñ").tax_id, "E&Ñ831019M53");
        assert!(is_rfc("XAXX010101000") && is_rfc("EKU9003173C9"));
        assert!(!is_rfc("AAAA010101AA") && !is_rfc("AAA0101011AAA"));
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
