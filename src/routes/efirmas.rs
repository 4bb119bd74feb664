//! `/v1/entities/{id}/efirma`: an entity's e.firma, for the SAT's bulk-download web
//! service. Uploaded as JSON with the files in base64; checked at once (422 per field),
//! then validated in the background by authenticating with the service. The key and
//! its password are sealed at rest and never returned.

use crate::auth::AuthUser;
use crate::db::{self, efirmas::SealedEfirma};
use crate::domain::efirma::EfirmaCertificate;
use crate::domain::efirma::NewEfirma;
use crate::events;
use crate::http::error::{ApiError, ApiResult};
use crate::http::Ctx;
use crate::http::{heavy::Heavy, request_log::RequestId};
use crate::http::{
    ids,
    json_body::{BodyError, JsonBody},
};
use crate::jobs::credential;
use crate::sat::efirma::Efirma;
use rocket::http::Status;
use rocket::serde::json::Json;
use rocket::{delete, put, routes, Route, State};
use serde_json::Value;

pub fn routes() -> Vec<Route> {
    routes![put_entity_efirma, delete_entity_efirma]
}

#[put("/v1/entities/<id>/efirma", data = "<body>")]
async fn put_entity_efirma(
    user: AuthUser,
    request: RequestId,
    id: &str,
    body: Result<JsonBody, BodyError>,
    ctx: &Ctx,
    heavy: &State<Heavy>,
) -> ApiResult<Json<Value>> {
    let new = NewEfirma::parse(&body?.0).map_err(ApiError::Validation)?;
    let id = ids::parse(id)?;
    let org = user.org_id.clone();
    let lookup = id.clone();
    let entity = ctx
        .db
        .read(move |c| db::entities::get(c, &org, &lookup))
        .await?
        .ok_or(ApiError::NotFound)?;
    // PBKDF2 and RSA: heavy CPU work, in the organization's turn on its own pool.
    let cipher = ctx.cipher.clone();
    let (summary, sealed) = heavy
        .run(&user.org_id, move || {
            check_and_seal(&new, &entity.tax_id, &cipher)
        })
        .await?;
    let updated = ctx
        .db
        .write_for(request.0, move |tx| {
            tx.lock(db::Lock::Org(&user.org_id))?;
            if db::entities::get(tx, &user.org_id, &id)?.is_none() {
                return Ok(None); // deleted meanwhile
            }
            db::efirmas::upsert(tx, &id, &sealed, &summary)?;
            credential::enqueue(tx, &id)?;
            credential::enqueue_lapse(tx, &id, &summary.valid_to)?;
            let entity = db::entities::get(tx, &user.org_id, &id)?;
            if let Some(e) = &entity {
                events::entity_changed(tx, e)?;
            }
            Ok(entity)
        })
        .await?;
    Ok(Json(updated.ok_or(ApiError::NotFound)?.view()))
}

/// The upload's checks against the entity's RFC and the clock, then the sealed files.
fn check_and_seal(
    new: &NewEfirma,
    tax_id: &str,
    cipher: &crate::crypto::Cipher,
) -> ApiResult<(EfirmaCertificate, SealedEfirma)> {
    let efirma = Efirma::parse(
        &new.certificate,
        &new.private_key,
        &new.password,
        tax_id,
        chrono::Utc::now(),
    )
    .map_err(|e| ApiError::Validation(e.into()))?;
    let summary = efirma.summary().clone();
    let sealed = SealedEfirma {
        certificate: new.certificate.clone(),
        key_ciphertext: cipher.seal_bytes(&new.private_key)?,
        password_ciphertext: cipher.seal(&new.password)?,
    };
    Ok((summary, sealed))
}

#[delete("/v1/entities/<id>/efirma")]
async fn delete_entity_efirma(
    user: AuthUser,
    request: RequestId,
    id: &str,
    ctx: &Ctx,
) -> ApiResult<Status> {
    let id = ids::parse(id)?;
    let removed = ctx
        .db
        .write_for(request.0, move |tx| {
            tx.lock(db::Lock::Org(&user.org_id))?;
            if db::entities::get(tx, &user.org_id, &id)?.is_none() || !db::efirmas::delete(tx, &id)?
            {
                return Ok(false);
            }
            if let Some(e) = db::entities::get(tx, &user.org_id, &id)? {
                events::entity_changed(tx, &e)?;
            }
            Ok(true)
        })
        .await?;
    if removed {
        Ok(Status::NoContent)
    } else {
        Err(ApiError::NotFound)
    }
}
