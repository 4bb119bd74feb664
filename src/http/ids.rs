//! Path ids: a value that is not a UUID is a 404, like a missing resource, never a 422
//! or a Rocket forward.

use crate::http::error::ApiError;
use uuid::Uuid;

/// Parses a path id into the canonical lower-case hyphenated form stored in the database.
pub fn parse(id: &str) -> Result<String, ApiError> {
    Uuid::parse_str(id)
        .map(|u| u.to_string())
        .map_err(|_| ApiError::NotFound)
}
