//! The accumulator of validation errors: every parse of input collects all its field
//! errors before it fails (the HTTP edge answers them as one 422).

use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Field name -> messages, with dotted names for nested fields (`options.period.to`).
/// Ordered so bodies are stable.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct FieldErrors(BTreeMap<String, Vec<String>>);

impl FieldErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn single(field: &str, message: &str) -> Self {
        let mut e = Self::new();
        e.add(field, message);
        e
    }

    pub fn add(&mut self, field: &str, message: &str) {
        self.0
            .entry(field.to_string())
            .or_default()
            .push(message.to_string());
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn contains(&self, field: &str) -> bool {
        self.0.contains_key(field)
    }

    /// Ok when nothing was added; otherwise the errors (a 422 at the HTTP edge).
    pub fn into_result(self) -> Result<(), FieldErrors> {
        if self.is_empty() {
            Ok(())
        } else {
            Err(self)
        }
    }

    pub fn to_json(&self) -> Value {
        json!({ "errors": self.0 })
    }
}
