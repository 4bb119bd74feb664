//! The outbox. An event is written in the caller's transaction together with one
//! pending delivery (and its job) per webhook of the organization that wants it, so a
//! state change and its notifications commit or roll back together. Callers wake the
//! workers after commit.

use crate::db::{self, jobs::Kind};
use rusqlite::{params, Connection};
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    Entity,
    Extraction,
}

impl Resource {
    fn event(self) -> &'static str {
        match self {
            Resource::Entity => "entity.update",
            Resource::Extraction => "extraction.update",
        }
    }

    fn type_name(self) -> &'static str {
        match self {
            Resource::Entity => "Entity",
            Resource::Extraction => "Extraction",
        }
    }

    fn collection(self) -> &'static str {
        match self {
            Resource::Entity => "entities",
            Resource::Extraction => "extractions",
        }
    }
}

/// Writes the event and its deliveries; returns how many deliveries were queued.
pub fn emit(
    conn: &Connection,
    org_id: &str,
    resource: Resource,
    resource_id: &str,
    object: Value,
    first_attempt_at: &str,
) -> anyhow::Result<usize> {
    let id = uuid::Uuid::now_v7().to_string();
    let created_at = crate::time::now();
    let source = format!("{}/{resource_id}", resource.collection());
    let payload = json!({
        "id": id,
        "event": resource.event(),
        "source": source,
        "resource": { "type": resource.type_name(), "id": resource_id, "path": source },
        "object": object,
        "created_at": created_at,
    });
    conn.prepare_cached(
        "INSERT INTO events (id, org_id, event, source, payload, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![id, org_id, resource.event(), source, payload.to_string(), created_at])?;

    let mut queued = 0;
    for hook in db::webhooks::for_org(conn, org_id)?
        .iter()
        .filter(|h| h.wants(resource.event()))
    {
        let delivery_id = db::deliveries::insert(conn, &hook.id, &id, first_attempt_at)?;
        // One resource's events reach one webhook in order.
        let serial = format!("{}|{source}", hook.id);
        db::jobs::enqueue_for_org(
            conn,
            Kind::DeliverWebhook,
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
        Resource::Entity,
        &entity.id,
        entity.view(),
        first_attempt_at,
    )?;
    Ok(())
}
