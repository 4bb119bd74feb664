//! Credential validation: one login at the tax authority, then `valid` or `invalid`
//! and an `entity.update`. An unreachable authority leaves it `pending` and retries.

use super::{backoff, Context, Outcome};
use crate::db::{self, jobs::Job};
use crate::domain::entity::CredentialStatus;
use crate::events::{self, Resource};
use crate::sat::{Credential, SatError};

pub fn run(ctx: &Context, job: &Job) -> anyhow::Result<Outcome> {
    let Some(entity) = db::entities::get_any(&*ctx.db.conn()?, &job.target_id)? else {
        return Ok(Outcome::Done); // deleted meanwhile
    };
    let credential = Credential {
        tax_id: entity.tax_id.clone(),
        password: ctx.cipher.open(&entity.ciec_ciphertext)?,
    };
    let verdict = match ctx.provider.validate(&credential) {
        Ok(()) => CredentialStatus::Valid,
        Err(SatError::InvalidCredentials) => CredentialStatus::Invalid,
        Err(SatError::Unavailable(detail)) => {
            log::warn!(
                "entity {}: tax authority unavailable for validation: {detail}",
                entity.id
            );
            return Ok(Outcome::Retry {
                after: backoff(job.attempts),
                error: detail,
            });
        }
        Err(SatError::Internal(e)) => return Err(e),
    };
    ctx.db.tx(|tx| {
        // The password may have changed while we talked to the authority: then this
        // verdict is stale, and the validation queued by that change decides.
        let changed = db::entities::get_any(tx, &entity.id)?.filter(|current| {
            current.ciec_ciphertext == entity.ciec_ciphertext
                && current.credential_status != verdict
        });
        if let Some(mut current) = changed {
            set_status(tx, ctx, &mut current, verdict)?;
        }
        super::settle(tx, job, &Outcome::Done)
    })?;
    Ok(Outcome::Settled)
}

/// Changes `credential_status` and emits `entity.update` in the caller's transaction.
pub fn set_status(
    tx: &rusqlite::Connection,
    ctx: &Context,
    entity: &mut db::entities::Entity,
    status: CredentialStatus,
) -> anyhow::Result<()> {
    entity.credential_status = status;
    entity.updated_at = crate::time::now();
    db::entities::update(tx, entity)?;
    events::emit(
        tx,
        &entity.org_id,
        Resource::Entity,
        &entity.id,
        entity.view(),
        &ctx.first_attempt_at(),
    )?;
    Ok(())
}
