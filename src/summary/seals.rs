//! The summary's opt-in warning of documents whose seal is invalid
//! (`invalid_seals=true`): how many, and each with the reasons of its failed checks.

use serde::Serialize;
use serde_json::Value;

use crate::db::seals::Invalid;

/// The most documents the warning lists; `count` says how many there are.
pub const LISTED: usize = 1000;

#[derive(Debug, Serialize, PartialEq)]
pub struct InvalidSeals {
    pub count: usize,
    /// The first `LISTED`, oldest first, invoices then retentions.
    pub documents: Vec<Listed>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct Listed {
    /// `invoice` or `retention`.
    pub class: &'static str,
    pub id: String,
    pub uuid: String,
    pub issued_at: Option<String>,
    pub issuer_tax_id: Option<String>,
    pub receiver_tax_id: Option<String>,
    /// The reasons of the checks that are invalid, in the checks' order.
    pub reasons: Vec<String>,
}

/// The reasons of a stored `seal` object's invalid checks.
fn reasons(seal_json: &str) -> Vec<String> {
    let seal: Value = serde_json::from_str(seal_json).unwrap_or(Value::Null);
    const ORDER: [&str; 7] = [
        "issuer_seal",
        "certificate_number",
        "certificate_rfc",
        "certificate_validity",
        "certificate_issuer",
        "stamp_seal_cfd",
        "sat_seal",
    ];
    ORDER
        .iter()
        .filter_map(|name| {
            let check = &seal["checks"][name];
            (check["status"] == "invalid")
                .then(|| check["reason"].as_str().unwrap_or("invalid").to_string())
        })
        .collect()
}

pub fn warning(found: Vec<Invalid>) -> InvalidSeals {
    let count = found.len();
    let documents = found
        .into_iter()
        .take(LISTED)
        .map(|d| Listed {
            class: d.class,
            reasons: reasons(&d.seal_json),
            id: d.id,
            uuid: d.uuid,
            issued_at: d.issued_at,
            issuer_tax_id: d.issuer_tax_id,
            receiver_tax_id: d.receiver_tax_id,
        })
        .collect();
    InvalidSeals { count, documents }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reasons_are_the_invalid_checks_in_order() {
        let seal = r#"{"status":"invalid","checks":{
            "sat_seal":{"status":"invalid","reason":"stamp changed"},
            "issuer_seal":{"status":"invalid","reason":"document changed"},
            "certificate_rfc":{"status":"valid","reason":null},
            "certificate_issuer":{"status":"unverified","reason":"later"}}}"#;
        assert_eq!(reasons(seal), ["document changed", "stamp changed"]);
        assert!(reasons("not json").is_empty());
    }

    #[test]
    fn the_warning_counts_all_and_lists_the_first() {
        let doc = |i: usize| Invalid {
            class: "invoice",
            id: format!("i{i}"),
            uuid: format!("U{i}"),
            issued_at: None,
            issuer_tax_id: None,
            receiver_tax_id: None,
            seal_json: String::new(),
        };
        let w = warning((0..LISTED + 5).map(doc).collect());
        assert_eq!(w.count, LISTED + 5);
        assert_eq!(w.documents.len(), LISTED);
        assert_eq!(w.documents[0].id, "i0");
    }
}
