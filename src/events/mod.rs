//! The outbox. An event is written in the caller's transaction together with one
//! pending delivery (and its job) per webhook of the organization that wants it, so a
//! state change and its notifications commit or roll back together; the transaction
//! wakes the workers once it commits (`db::Tx`), and dates the first delivery. Invoice
//! and retention events are coalesced per batch, every class alike (`documents`).

pub mod documents;
pub mod list_69b;
pub mod purge;

use crate::db::{self, jobs::Kind as JobKind, Tx};
use crate::domain::event::Kind;
use serde::Serialize;
use serde_json::{value::RawValue, Value};

/// An event as stored and delivered. The object is JSON text already rendered (by
/// SQLite for invoices), copied into the payload without being parsed again.
#[derive(Serialize)]
struct Payload<'a> {
    id: &'a str,
    event: &'a str,
    source: &'a str,
    resource: Resource<'a>,
    object: &'a RawValue,
    /// What `invoice.updated` (or `retention.updated`) changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    changes: Option<Value>,
    created_at: &'a str,
}

#[derive(Serialize)]
struct Resource<'a> {
    #[serde(rename = "type")]
    type_name: &'a str,
    id: &'a str,
    path: &'a str,
}

/// Writes the event and its deliveries, due at the transaction's first delivery time;
/// returns how many deliveries were queued.
pub fn emit(
    tx: &Tx,
    org_id: &str,
    kind: Kind,
    resource_id: &str,
    object: &RawValue,
    changes: Option<Value>,
) -> anyhow::Result<usize> {
    // The organization's events are numbered in the order their transactions commit.
    tx.lock(db::Lock::Org(org_id))?;
    let id = uuid::Uuid::now_v7().to_string();
    let created_at = crate::time::now();
    let resource = kind.resource();
    let source = resource.source(resource_id);
    let payload = serde_json::to_string(&Payload {
        id: &id,
        event: kind.name(),
        source: &source,
        resource: Resource {
            type_name: resource.type_name(),
            id: resource_id,
            path: &source,
        },
        object,
        changes,
        created_at: &created_at,
    })?;
    db::events::insert(
        tx,
        &db::events::NewEvent {
            id: &id,
            org_id,
            event: kind.name(),
            source: &source,
            payload: &payload,
            created_at: &created_at,
        },
    )?;

    let first_attempt_at = tx.first_delivery_at();
    let mut queued = 0;
    // A batch emits many events of one organization: its webhooks are read once.
    let hooks = tx.remember(&format!("webhooks:{org_id}"), || {
        db::webhooks::for_org(tx, org_id)
    })?;
    for hook in hooks.iter().filter(|h| h.wants(kind.name())) {
        let delivery_id = db::deliveries::insert(tx, &hook.id, &id, first_attempt_at)?;
        // One resource's events reach one webhook in order.
        let serial = format!("{}|{source}", hook.id);
        db::jobs::enqueue_for_org(
            tx,
            JobKind::DeliverWebhook,
            &delivery_id,
            Some(&serial),
            Some(org_id),
            first_attempt_at,
        )?;
        queued += 1;
    }
    Ok(queued)
}

/// `entity.update` with the entity as it now is.
pub fn entity_changed(tx: &Tx, entity: &db::entities::Entity) -> anyhow::Result<()> {
    emit(
        tx,
        &entity.org_id,
        Kind::EntityUpdate,
        &entity.id,
        &serde_json::value::to_raw_value(&entity.view())?,
        None,
    )?;
    Ok(())
}
