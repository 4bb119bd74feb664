//! Credential checks: each channel's credential that needs it (a `pending` one, or one
//! that lapsed) is checked by its channel, the verdicts recorded with one
//! `entity.update`. An unreachable authority leaves a check pending and retries. The
//! same job, queued for the moment an e.firma's certificate lapses, records it
//! `expired` and announces it.

use super::outcome::{backoff, settle, Outcome};
use crate::app::Context;
use crate::db::{self, entities::Entity, jobs::Job, jobs::Kind, Tx};
use crate::events;
use crate::sat::{Channel, Due, SatError, Secret, Verdict};

/// The serial key of an entity's credential checks: one at a time, in order.
fn serial_key(entity_id: &str) -> String {
    format!("credential:{entity_id}")
}

/// The serial key of the check queued for a credential's lapse (apart, so a check due
/// years ahead never holds up the others).
fn lapse_key(entity_id: &str) -> String {
    format!("credential-lapse:{entity_id}")
}

/// Queues a check of the entity's pending credentials, replacing a queued one.
pub fn enqueue(tx: &Tx, entity_id: &str) -> anyhow::Result<()> {
    let key = serial_key(entity_id);
    db::jobs::drop_queued(tx, &key)?;
    let now = crate::time::now();
    db::jobs::enqueue(tx, Kind::ValidateCredential, entity_id, Some(&key), &now)
}

/// Queues the check that records a credential lapsed (an e.firma `expired`) once
/// `valid_to` has passed, replacing a queued one.
pub fn enqueue_lapse(tx: &Tx, entity_id: &str, valid_to: &str) -> anyhow::Result<()> {
    let key = lapse_key(entity_id);
    db::jobs::drop_queued(tx, &key)?;
    let at = crate::time::parse(valid_to)
        .map(|t| crate::time::format(t + chrono::Duration::seconds(1)))
        .unwrap_or_else(crate::time::now);
    db::jobs::enqueue(tx, Kind::ValidateCredential, entity_id, Some(&key), &at)
}

pub fn run(ctx: &Context, job: &Job) -> anyhow::Result<Outcome> {
    let Some(entity) = db::entities::get_any(&ctx.db.conn()?, &job.target_id)? else {
        return Ok(Outcome::Done); // deleted meanwhile
    };
    // Each channel's credential that needs it is checked (the SAT asked off any
    // transaction); an unreachable SAT leaves that one pending, and the job retries.
    let mut verdicts = Vec::new();
    let mut later = None;
    for channel in ctx.channels.all() {
        match channel.due(&ctx.db.conn()?, &ctx.cipher, &entity)? {
            Due::Nothing => {}
            Due::Record(secret, verdict) => verdicts.push((channel, secret, verdict)),
            Due::Check(secret) => match channel.validate(&secret) {
                Ok(()) => verdicts.push((channel, secret, Verdict::Valid)),
                Err(SatError::InvalidCredentials) => {
                    verdicts.push((channel, secret, Verdict::Invalid))
                }
                Err(SatError::Unavailable(detail)) => {
                    log::warn!(
                        "entity {}: the SAT is unavailable for the {} check: {detail}",
                        entity.id,
                        channel.name()
                    );
                    later = Some(detail);
                }
                Err(SatError::Internal(e)) => return Err(e),
            },
        }
    }
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
        let mut changed = false;
        for (channel, secret, verdict) in &verdicts {
            changed |= channel.record(tx, &entity.id, secret, *verdict)?;
        }
        if changed {
            if let Some(fresh) = db::entities::get_any(tx, &entity.id)? {
                announce(tx, &fresh)?;
            }
        }
        settle(tx, job, &outcome)
    })?;
    Ok(Outcome::Settled)
}

/// Records a verdict on a channel's credential in the caller's transaction and, when
/// that changed it, emits `entity.update`.
pub fn record(
    tx: &Tx,
    channel: &dyn Channel,
    entity_id: &str,
    secret: &Secret,
    verdict: Verdict,
) -> anyhow::Result<()> {
    if channel.record(tx, entity_id, secret, verdict)? {
        if let Some(fresh) = db::entities::get_any(tx, entity_id)? {
            announce(tx, &fresh)?;
        }
    }
    Ok(())
}

/// `entity.update` with the entity as it now is.
fn announce(tx: &Tx, entity: &Entity) -> anyhow::Result<()> {
    events::entity_changed(tx, entity)
}
