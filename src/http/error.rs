//! The one error type of the HTTP edge. Every non-2xx JSON body comes from here or from
//! `catchers`, which produce the same shapes.

use crate::domain::FieldErrors;
use rocket::http::{Header, Status};
use rocket::response::{self, Responder};
use rocket::serde::json::Json;
use rocket::Request;
use serde_json::{json, Value};

/// Why authentication did not succeed: one of the two 401 messages, or a database too
/// busy to look the user up, or out of reach (a 503: the credentials were not judged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthFailure {
    Missing,
    Invalid,
    Busy,
    Unreachable,
}

impl AuthFailure {
    /// The 503 of a lookup that failed with `e`.
    pub fn of(e: &anyhow::Error) -> Option<AuthFailure> {
        if crate::db::is_unreachable(e) {
            Some(AuthFailure::Unreachable)
        } else if crate::db::is_busy(e) {
            Some(AuthFailure::Busy)
        } else {
            None
        }
    }
}

impl AuthFailure {
    pub fn message(self) -> &'static str {
        match self {
            AuthFailure::Missing => {
                "Missing Authorization header: use HTTP Basic authentication with your email and password"
            }
            AuthFailure::Invalid | AuthFailure::Busy | AuthFailure::Unreachable => {
                "Invalid credentials"
            }
        }
    }

    pub fn status(self) -> Status {
        match self {
            AuthFailure::Busy | AuthFailure::Unreachable => Status::ServiceUnavailable,
            _ => Status::Unauthorized,
        }
    }
}

impl From<AuthFailure> for ApiError {
    fn from(f: AuthFailure) -> Self {
        match f {
            AuthFailure::Busy => ApiError::Busy,
            AuthFailure::Unreachable => ApiError::Unreachable,
            f => ApiError::Unauthorized(f),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("unauthorized")]
    Unauthorized(AuthFailure),
    #[error("validation failed")]
    Validation(FieldErrors),
    #[error("not found")]
    NotFound,
    #[error("{0} not found")]
    FieldNotFound(&'static str),
    /// A 404 whose message says what is missing and what to ask for instead.
    #[error("not found: {0}")]
    NotFoundSaying(&'static str),
    #[error("payload too large")]
    PayloadTooLarge,
    #[error("service unavailable")]
    Unavailable,
    /// A 503 for a feature this server runs without; the message says which and how
    /// to turn it on.
    #[error("unavailable: {0}")]
    UnavailableSaying(&'static str),
    /// The database stayed locked past the busy timeout (e.g. a long CLI import): the
    /// request did nothing and can be retried, so it is a 503, never a 500.
    #[error("database busy")]
    Busy,
    /// The database server is out of reach (PostgreSQL): the request did nothing.
    #[error("database unreachable")]
    Unreachable,
    /// The database connection was lost while the request's transaction committed, and
    /// whether it committed could not be learnt: a 503 that, unlike `Busy`, does not
    /// say the request did nothing.
    #[error("commit outcome unknown")]
    CommitUnknown,
    /// The organization already has as many heavy requests (exports, summaries, PDFs,
    /// e.firma checks) running and waiting as it may (`http::heavy`).
    #[error("too many heavy requests")]
    TooManyRequests,
    #[error(transparent)]
    Internal(anyhow::Error),
}

pub type ApiResult<T> = Result<T, ApiError>;

pub const NOT_FOUND_MESSAGE: &str = "Not found";
pub const TOO_LARGE_MESSAGE: &str = "Request body is larger than 1 MiB";
pub const INTERNAL_MESSAGE: &str = "Internal server error";
pub const BUSY_MESSAGE: &str = "The service is busy; retry in a moment";
pub const UNREACHABLE_MESSAGE: &str = "The database is unreachable; retry in a moment";
pub const COMMIT_UNKNOWN_MESSAGE: &str = "The connection to the database was lost while this request was being saved, and whether it was saved is unknown: check before retrying, or retry with the same Idempotency-Key";
/// Seconds a client should wait before retrying a `Busy` answer.
pub const BUSY_RETRY_AFTER: &str = "1";
pub const TOO_MANY_MESSAGE: &str = "Too many exports, summaries, PDFs or e.firma checks of this organization at once; retry in a moment";
/// Seconds a client should wait before retrying a `TooManyRequests` answer.
pub const TOO_MANY_RETRY_AFTER: &str = "5";
pub const WWW_AUTHENTICATE: &str = "Basic realm=\"cfdi-extract\"";

impl ApiError {
    pub fn validation(field: &str, message: &str) -> Self {
        ApiError::Validation(FieldErrors::single(field, message))
    }

    pub fn status(&self) -> Status {
        match self {
            ApiError::Unauthorized(_) => Status::Unauthorized,
            ApiError::Validation(_) => Status::UnprocessableEntity,
            ApiError::NotFound | ApiError::FieldNotFound(_) | ApiError::NotFoundSaying(_) => {
                Status::NotFound
            }
            ApiError::PayloadTooLarge => Status::PayloadTooLarge,
            ApiError::Unavailable
            | ApiError::UnavailableSaying(_)
            | ApiError::Busy
            | ApiError::Unreachable
            | ApiError::CommitUnknown => Status::ServiceUnavailable,
            ApiError::TooManyRequests => Status::TooManyRequests,
            ApiError::Internal(_) => Status::InternalServerError,
        }
    }

    pub fn body(&self) -> Value {
        match self {
            ApiError::Unauthorized(f) => json!({ "message": f.message() }),
            ApiError::Validation(errors) => errors.to_json(),
            ApiError::NotFound => json!({ "message": NOT_FOUND_MESSAGE }),
            ApiError::FieldNotFound(field) => json!({ "errors": { *field: ["not found"] } }),
            ApiError::NotFoundSaying(message) => json!({ "message": message }),
            ApiError::PayloadTooLarge => json!({ "message": TOO_LARGE_MESSAGE }),
            ApiError::Unavailable => json!({ "status": "unavailable" }),
            ApiError::UnavailableSaying(message) => json!({ "message": message }),
            ApiError::Busy => json!({ "message": BUSY_MESSAGE }),
            ApiError::Unreachable => json!({ "message": UNREACHABLE_MESSAGE }),
            ApiError::CommitUnknown => json!({ "message": COMMIT_UNKNOWN_MESSAGE }),
            ApiError::TooManyRequests => json!({ "message": TOO_MANY_MESSAGE }),
            ApiError::Internal(_) => json!({ "message": INTERNAL_MESSAGE }),
        }
    }
}

impl From<FieldErrors> for ApiError {
    fn from(errors: FieldErrors) -> Self {
        ApiError::Validation(errors)
    }
}

impl From<anyhow::Error> for ApiError {
    fn from(e: anyhow::Error) -> Self {
        if crate::db::is_commit_unknown(&e) {
            log::error!("answering 503, outcome unknown: {e:#}");
            ApiError::CommitUnknown
        } else if crate::db::is_unreachable(&e) {
            log::warn!("answering 503, the database is unreachable: {e:#}");
            ApiError::Unreachable
        } else if crate::db::is_busy(&e) {
            log::warn!("answering 503, the database is busy: {e:#}");
            ApiError::Busy
        } else {
            ApiError::Internal(e)
        }
    }
}

impl<'r> Responder<'r, 'static> for ApiError {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        if let ApiError::Internal(cause) = &self {
            let request_id = super::request_log::request_id(req);
            log::error!(request_id; "{} {}: {cause:#}", req.method(), req.uri().path());
        }
        let status = self.status();
        let mut res = Json(self.body()).respond_to(req)?;
        res.set_status(status);
        if status == Status::Unauthorized {
            res.set_header(Header::new("WWW-Authenticate", WWW_AUTHENTICATE));
        }
        let retry_after = match self {
            ApiError::Busy | ApiError::Unreachable | ApiError::CommitUnknown => {
                Some(BUSY_RETRY_AFTER)
            }
            ApiError::TooManyRequests => Some(TOO_MANY_RETRY_AFTER),
            _ => None,
        };
        if let Some(seconds) = retry_after {
            res.set_header(Header::new("Retry-After", seconds));
        }
        Ok(res)
    }
}
