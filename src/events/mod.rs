//! The outbox. An event is written in the caller's transaction together with one
//! pending delivery (and its job) per webhook of the organization that wants it, so a
//! state change and its notifications commit or roll back together. Callers wake the
//! workers after commit. Invoice events are coalesced per extraction (`invoices`).

pub mod invoices;
pub mod retention;

use crate::db::{self, jobs::Kind as JobKind};
use crate::domain::event::Kind;
use rusqlite::Connection;
use serde_json::{json, Value};

/// Writes the event and its deliveries; returns how many deliveries were queued.
/// `extra` adds top-level fields beside `object` (`changes` of `invoice.updated`).
pub fn emit(
    conn: &Connection,
    org_id: &str,
    kind: Kind,
    resource_id: &str,
    object: Value,
    extra: Option<(&str, Value)>,
    first_attempt_at: &str,
) -> anyhow::Result<usize> {
    let id = uuid::Uuid::now_v7().to_string();
    let created_at = crate::time::now();
    let resource = kind.resource();
    let source = resource.source(resource_id);
    let mut payload = json!({
        "id": id,
        "event": kind.name(),
        "source": source,
        "resource": { "type": resource.type_name(), "id": resource_id, "path": source },
        "object": object,
        "created_at": created_at,
    });
    if let Some((name, value)) = extra {
        payload[name] = value;
    }
    db::events::insert(
        conn,
        &db::events::NewEvent {
            id: &id,
            org_id,
            event: kind.name(),
            source: &source,
            payload: &payload.to_string(),
            created_at: &created_at,
        },
    )?;

    let mut queued = 0;
    for hook in db::webhooks::for_org(conn, org_id)?
        .iter()
        .filter(|h| h.wants(kind.name()))
    {
        let delivery_id = db::deliveries::insert(conn, &hook.id, &id, first_attempt_at)?;
        // One resource's events reach one webhook in order.
        let serial = format!("{}|{source}", hook.id);
        db::jobs::enqueue_for_org(
            conn,
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
pub fn entity_changed(
    conn: &Connection,
    entity: &db::entities::Entity,
    first_attempt_at: &str,
) -> anyhow::Result<()> {
    emit(
        conn,
        &entity.org_id,
        Kind::EntityUpdate,
        &entity.id,
        entity.view(),
        None,
        first_attempt_at,
    )?;
    Ok(())
}
