//! Credential checks: the CIEC and the e.firma, each validated by its channel,
//! whichever is `pending`, then
//! `valid` or `invalid` and one `entity.update`. An unreachable authority leaves a
//! check pending and retries. The same job, queued for the moment an e.firma's
//! certificate lapses, records it `expired` and announces it.

use super::outcome::{backoff, settle, Outcome};
use crate::app::Context;
use crate::db::{self, efirmas::SealedEfirma, entities::Entity, jobs::Job, jobs::Kind, Tx};
use crate::domain::efirma::EfirmaStatus;
use crate::domain::entity::CredentialStatus;
use crate::domain::extraction::Channel;
use crate::events;
use crate::sat::{Credential, EfirmaKey, SatError, Secret};

/// The serial key of an entity's credential checks: one at a time, in order.
fn serial_key(entity_id: &str) -> String {
    format!("credential:{entity_id}")
}

/// The serial key of the check queued for an e.firma's expiry (apart, so a check due
/// years ahead never holds up the others).
fn expiry_key(entity_id: &str) -> String {
    format!("efirma-expiry:{entity_id}")
}

/// Queues a check of the entity's pending credentials, replacing a queued one.
pub fn enqueue(tx: &Tx, entity_id: &str) -> anyhow::Result<()> {
    let key = serial_key(entity_id);
    db::jobs::drop_queued(tx, &key)?;
    let now = crate::time::now();
    db::jobs::enqueue(tx, Kind::ValidateCredential, entity_id, Some(&key), &now)
}

/// Queues the check that records an e.firma `expired` once `valid_to` has passed.
pub fn enqueue_expiry(tx: &Tx, entity_id: &str, valid_to: &str) -> anyhow::Result<()> {
    let key = expiry_key(entity_id);
    db::jobs::drop_queued(tx, &key)?;
    let at = crate::time::parse(valid_to)
        .map(|t| crate::time::format(t + chrono::Duration::seconds(1)))
        .unwrap_or_else(crate::time::now);
    db::jobs::enqueue(tx, Kind::ValidateCredential, entity_id, Some(&key), &at)
}

/// A check's outcome: a verdict, or come back later.
enum Check<T> {
    Verdict(T),
    Later(String),
}

pub fn run(ctx: &Context, job: &Job) -> anyhow::Result<Outcome> {
    let Some(entity) = db::entities::get_any(&ctx.db.conn()?, &job.target_id)? else {
        return Ok(Outcome::Done); // deleted meanwhile
    };
    let mut later = None;
    let ciec = match entity.credential_status {
        CredentialStatus::Pending => match check_ciec(ctx, &entity)? {
            Check::Verdict(v) => Some(v),
            Check::Later(detail) => {
                later = Some(detail);
                None
            }
        },
        _ => None,
    };
    let efirma = match check_efirma(ctx, &entity)? {
        Some(Check::Verdict(v)) => Some(v),
        Some(Check::Later(detail)) => {
            later = Some(detail);
            None
        }
        None => None,
    };
    let outcome = match later {
        Some(error) => Outcome::Retry {
            after: backoff(job.attempts),
            error,
        },
        None => Outcome::Done,
    };
    ctx.db.tx(|tx| {
        // The verdict is written against the entity as it is now (a PATCH may have
        // changed its password meanwhile), with the organization's changes kept out.
        tx.lock(db::Lock::Org(&entity.org_id))?;
        let Some(mut current) = db::entities::get_any(tx, &entity.id)? else {
            return settle(tx, job, &Outcome::Done);
        };
        let mut changed = false;
        // The password may have changed while we talked to the authority: then this
        // verdict is stale, and the check queued by that change decides.
        if let Some(verdict) = ciec.filter(|v| {
            current.ciec_ciphertext == entity.ciec_ciphertext && current.credential_status != *v
        }) {
            current.credential_status = verdict;
            current.updated_at = crate::time::now();
            db::entities::update(tx, &current)?;
            changed = true;
        }
        if let Some((checked, verdict)) = &efirma {
            changed |= db::efirmas::set_status(tx, &entity.id, checked, *verdict)?;
        }
        if changed {
            let fresh = db::entities::get_any(tx, &entity.id)?.unwrap_or(current);
            announce(tx, &fresh)?;
        }
        settle(tx, job, &outcome)
    })?;
    Ok(Outcome::Settled)
}

fn check_ciec(ctx: &Context, entity: &Entity) -> anyhow::Result<Check<CredentialStatus>> {
    let credential = Secret::Ciec(Credential {
        tax_id: entity.tax_id.clone(),
        password: ctx.cipher.open(&entity.ciec_ciphertext)?,
    });
    Ok(
        match ctx.channels.get(Channel::Ciec).validate(&credential) {
            Ok(()) => Check::Verdict(CredentialStatus::Valid),
            Err(SatError::InvalidCredentials) => Check::Verdict(CredentialStatus::Invalid),
            Err(SatError::Unavailable(detail)) => {
                log::warn!(
                    "entity {}: tax authority unavailable for validation: {detail}",
                    entity.id
                );
                Check::Later(detail)
            }
            Err(SatError::Internal(e)) => return Err(e),
        },
    )
}

/// The e.firma's verdict, when it needs one: a `pending` one is validated by its
/// channel; one whose certificate has lapsed is `expired`.
fn check_efirma(
    ctx: &Context,
    entity: &Entity,
) -> anyhow::Result<Option<Check<(SealedEfirma, EfirmaStatus)>>> {
    let Some(summary) = &entity.efirma else {
        return Ok(None);
    };
    let current = summary.current_status();
    if current != EfirmaStatus::Pending && current == summary.status {
        return Ok(None);
    }
    let Some(sealed) = db::efirmas::sealed(&ctx.db.conn()?, &entity.id)? else {
        return Ok(None);
    };
    if current == EfirmaStatus::Expired {
        return Ok(Some(Check::Verdict((sealed, EfirmaStatus::Expired))));
    }
    let key = Secret::Efirma(efirma_key(ctx, &sealed, &entity.tax_id)?);
    let verdict = match ctx.channels.get(Channel::Efirma).validate(&key) {
        Ok(_) => EfirmaStatus::Valid,
        Err(SatError::InvalidCredentials) => EfirmaStatus::Invalid,
        Err(SatError::Unavailable(detail)) => {
            log::warn!(
                "entity {}: web service unavailable for the e.firma check: {detail}",
                entity.id
            );
            return Ok(Some(Check::Later(detail)));
        }
        Err(SatError::Internal(e)) => return Err(e),
    };
    Ok(Some(Check::Verdict((sealed, verdict))))
}

/// The stored e.firma, unsealed for its channel.
pub fn efirma_key(ctx: &Context, sealed: &SealedEfirma, tax_id: &str) -> anyhow::Result<EfirmaKey> {
    Ok(EfirmaKey {
        tax_id: tax_id.to_string(),
        certificate: sealed.certificate.clone(),
        key: ctx.cipher.open_bytes(&sealed.key_ciphertext)?,
        password: ctx.cipher.open(&sealed.password_ciphertext)?,
    })
}

/// Changes `credential_status` and emits `entity.update` in the caller's transaction.
pub fn set_status(tx: &Tx, entity: &mut Entity, status: CredentialStatus) -> anyhow::Result<()> {
    entity.credential_status = status;
    entity.updated_at = crate::time::now();
    db::entities::update(tx, entity)?;
    announce(tx, entity)
}

/// Records an e.firma's status (unless its files changed meanwhile) and, when that
/// changed it, emits `entity.update`, in the caller's transaction.
pub fn set_efirma_status(
    tx: &Tx,
    entity_id: &str,
    checked: &SealedEfirma,
    status: EfirmaStatus,
) -> anyhow::Result<()> {
    if db::efirmas::set_status(tx, entity_id, checked, status)? {
        if let Some(fresh) = db::entities::get_any(tx, entity_id)? {
            announce(tx, &fresh)?;
        }
    }
    Ok(())
}

/// `entity.update` with the entity as it now is.
pub fn announce(tx: &Tx, entity: &Entity) -> anyhow::Result<()> {
    events::entity_changed(tx, entity)
}
