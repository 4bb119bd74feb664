//! A data guard that reads the body whatever its Content-Type, answers 413 over 1 MiB,
//! and yields a JSON object; anything else is a 422 on `body`.

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
}

impl From<BodyError> for ApiError {
    fn from(e: BodyError) -> Self {
        match e {
            BodyError::TooLarge => ApiError::PayloadTooLarge,
            BodyError::Invalid(msg) => ApiError::validation("body", msg),
            BodyError::Io => ApiError::validation("body", "could not be read"),
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
        Ok(Value::Object(map)) => Ok(JsonBody(map)),
        Ok(_) => Err(invalid("must be a JSON object")),
        Err(_) => Err(invalid("is not valid JSON")),
    }
}
