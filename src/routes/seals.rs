//! `POST /v1/seals/verify`: is this XML what its issuer signed and the SAT stamped?
//! A document (CFDI 3.2, 3.3, 4.0; CFDI de Retenciones 1.0, 2.0) is verified offline
//! (`seal`) without being stored; the SAT's certificate a stamp names is fetched once
//! from its repository (`sat::certificates`). The answer is the `seal` object.

use crate::auth::AuthUser;
use crate::http::error::{ApiError, ApiResult};
use crate::http::heavy::Heavy;
use crate::http::json_body::{BodyError, JsonBody};
use crate::http::Ctx;
use rocket::serde::json::Json;
use rocket::{post, routes, Route, State};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![verify]
}

#[post("/v1/seals/verify", data = "<body>")]
async fn verify(
    user: AuthUser,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Json<Value>> {
    let body = body?;
    let xml = match body.0.get("xml") {
        Some(Value::String(xml)) if !xml.trim().is_empty() => xml.clone(),
        Some(Value::String(_)) | None => return Err(ApiError::validation("xml", "can't be blank")),
        Some(_) => {
            return Err(ApiError::validation(
                "xml",
                "must be the document's XML as a string",
            ))
        }
    };
    let store = ctx.sat_certificates.clone();
    // Parsing, RSA and maybe a fetch from the SAT: on the heavy pool, in the org's turn.
    let seal = heavy
        .run(&user.org_id, move || match store.verify(xml.as_bytes()) {
            Ok(Some(seal)) => Ok(seal),
            Ok(None) => Err(ApiError::validation(
                "xml",
                "is not a CFDI 3.2, 3.3 or 4.0 nor a CFDI de Retenciones 1.0 or 2.0",
            )),
            Err(why) => Err(ApiError::validation(
                "xml",
                &format!("is not a readable document: {why}"),
            )),
        })
        .await?;
    Ok(Json(
        serde_json::to_value(seal).map_err(|e| ApiError::Internal(e.into()))?,
    ))
}
