//! A data guard that reads the body whatever its Content-Type, answers 413 over 1 MiB,
//! and yields a JSON object; anything else is a 422 on `body`. A string holding the NUL
//! character (`\u0000`, which PostgreSQL's text cannot hold and no field means) is a
//! 422 on its field on both engines, before anything is written.

use crate::http::error::ApiError;
use rocket::data::{Data, FromData, Outcome, ToByteUnit};
use rocket::http::Status;
use rocket::Request;
use serde_json::{Map, Value};

pub const LIMIT_BYTES: u64 = 1024 * 1024;

pub struct JsonBody(pub Map<String, Value>);

/// Why the body was refused; read back by the handler through `JsonBody::from_outcome`.
#[derive(Debug)]
pub enum BodyError {
    TooLarge,
    Invalid(&'static str),
    Io,
    /// A NUL character in the string value of this field (dotted, as `FieldErrors`).
    Nul(String),
}

/// The 422 message of a NUL character in a body field or a query parameter.
pub const NUL_MESSAGE: &str = "must not contain the NUL character (\\u0000)";

impl From<BodyError> for ApiError {
    fn from(e: BodyError) -> Self {
        match e {
            BodyError::TooLarge => ApiError::PayloadTooLarge,
            BodyError::Invalid(msg) => ApiError::validation("body", msg),
            BodyError::Io => ApiError::validation("body", "could not be read"),
            BodyError::Nul(field) => ApiError::validation(&field, NUL_MESSAGE),
        }
    }
}

#[rocket::async_trait]
impl<'r> FromData<'r> for JsonBody {
    type Error = BodyError;

    async fn from_data(_req: &'r Request<'_>, data: Data<'r>) -> Outcome<'r, Self> {
        // Read at most one byte past the limit to tell "exactly 1 MiB" from "more".
        let bytes = match data.open((LIMIT_BYTES + 1).bytes()).into_bytes().await {
            Ok(b) => b,
            Err(_) => return Outcome::Error((Status::UnprocessableEntity, BodyError::Io)),
        };
        if bytes.len() as u64 > LIMIT_BYTES || !bytes.is_complete() {
            return Outcome::Error((Status::PayloadTooLarge, BodyError::TooLarge));
        }
        match parse(&bytes) {
            Ok(body) => Outcome::Success(body),
            Err(e) => Outcome::Error((Status::UnprocessableEntity, e)),
        }
    }
}

fn parse(bytes: &[u8]) -> Result<JsonBody, BodyError> {
    let invalid = BodyError::Invalid;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(invalid("can't be blank"));
    }
    match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(map)) => match map.iter().find_map(|(k, v)| with_nul(k, v)) {
            Some(field) => Err(BodyError::Nul(field)),
            None => Ok(JsonBody(map)),
        },
        Ok(_) => Err(invalid("must be a JSON object")),
        Err(_) => Err(invalid("is not valid JSON")),
    }
}

/// The dotted name of the first field under `name` whose string value holds a NUL
/// (an array's elements are named by the array).
fn with_nul(name: &str, value: &Value) -> Option<String> {
    match value {
        Value::String(s) if s.contains('\0') => Some(name.to_string()),
        Value::Array(items) => items.iter().find_map(|v| with_nul(name, v)),
        Value::Object(map) => map
            .iter()
            .find_map(|(k, v)| with_nul(&format!("{name}.{k}"), v)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(body: &str) -> Option<String> {
        match parse(body.as_bytes()) {
            Err(BodyError::Nul(field)) => Some(field),
            _ => None,
        }
    }

    #[test]
    fn a_nul_character_is_refused_on_its_field_wherever_it_is() {
        assert_eq!(refused(r#"{"name": "a\u0000b"}"#).as_deref(), Some("name"));
        assert_eq!(
            refused(r#"{"options": {"period": {"from": "\u0000"}}}"#).as_deref(),
            Some("options.period.from")
        );
        assert_eq!(
            refused(r#"{"events": ["entity.update", "\u0000"]}"#).as_deref(),
            Some("events")
        );
        assert_eq!(
            refused(r#"{"name": "a\\u0000b", "n": 0}"#),
            None,
            "an escaped backslash"
        );
        assert!(parse(br#"{"name": "Acme"}"#).is_ok());
    }
}
