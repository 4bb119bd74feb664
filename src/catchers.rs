//! JSON catchers for failures Rocket raises itself (no route, a limit hit, a guard that
//! failed). They give the same bodies as `ApiError`.

use crate::auth::AuthUser;
use crate::domain::FieldErrors;
use crate::http::error::{ApiError, AuthFailure};
use rocket::http::Status;
use rocket::outcome::Outcome;
use rocket::{catch, catchers, Catcher, Request};

#[catch(401)]
fn unauthorized(req: &Request) -> ApiError {
    let failure = req
        .local_cache(|| None::<AuthFailure>)
        .unwrap_or(AuthFailure::Missing);
    ApiError::Unauthorized(failure)
}

/// No route matched. Under `/v1`, known or not, authentication comes first, whatever
/// the method: an unknown path is 401 without valid credentials and 404 with them.
#[catch(404)]
async fn not_found(req: &Request<'_>) -> ApiError {
    let path = req.uri().path();
    if path == "/v1" || path.starts_with("/v1/") {
        if let Outcome::Error((_, failure)) = req.guard::<AuthUser>().await {
            return failure.into();
        }
    }
    ApiError::NotFound
}

#[catch(413)]
fn too_large() -> ApiError {
    ApiError::PayloadTooLarge
}

/// A guard's 422 (`http::query`): the field errors it left.
#[catch(422)]
fn unprocessable(req: &Request) -> ApiError {
    match req.local_cache(|| None::<FieldErrors>) {
        Some(errors) => ApiError::Validation(errors.clone()),
        None => ApiError::validation("body", "could not be read"),
    }
}

#[catch(503)]
fn unavailable(req: &Request) -> ApiError {
    match req.local_cache(|| None::<AuthFailure>) {
        Some(AuthFailure::Busy) => ApiError::Busy,
        Some(AuthFailure::Unreachable) => ApiError::Unreachable,
        _ => ApiError::Unavailable,
    }
}

#[catch(default)]
fn default(
    status: Status,
    _req: &Request,
) -> rocket::response::status::Custom<rocket::serde::json::Json<serde_json::Value>> {
    let message = match status.code {
        500..=599 => crate::http::error::INTERNAL_MESSAGE.to_string(),
        _ => status.reason().unwrap_or("Error").to_string(),
    };
    rocket::response::status::Custom(
        status,
        rocket::serde::json::Json(serde_json::json!({ "message": message })),
    )
}

pub fn all() -> Vec<Catcher> {
    catchers![
        unauthorized,
        not_found,
        too_large,
        unprocessable,
        unavailable,
        default
    ]
}
