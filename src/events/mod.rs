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

/// An event to write: what `emit` takes, for `emit_all`.
pub struct Emitted<'a> {
    pub kind: Kind,
    pub resource_id: &'a str,
    pub object: &'a RawValue,
    pub changes: Option<Value>,
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
    let event = Emitted {
        kind,
        resource_id,
        object,
        changes,
    };
    emit_all(tx, org_id, vec![event])
}

/// `emit` for each of an organization's `events`, in order: the events, their
/// deliveries and their jobs written many rows to a statement (a batch's events are
/// thousands). Returns how many deliveries were queued.
pub fn emit_all(tx: &Tx, org_id: &str, events: Vec<Emitted>) -> anyhow::Result<usize> {
    if events.is_empty() {
        return Ok(0);
    }
    // The organization's events are numbered in the order their transactions commit.
    tx.lock(db::Lock::Org(org_id))?;
    let mut written = Vec::with_capacity(events.len());
    for Emitted {
        kind,
        resource_id,
        object,
        changes,
    } in events
    {
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
        written.push(db::events::NewEvent {
            id,
            event: kind.name(),
            source,
            payload,
            created_at,
        });
    }
    db::events::insert_all(tx, org_id, &written)?;

    // A batch emits many events of one organization: its webhooks are read once.
    let hooks = tx.remember(&format!("webhooks:{org_id}"), || {
        db::webhooks::for_org(tx, org_id)
    })?;
    let mut deliveries = vec![];
    for event in &written {
        for hook in hooks.iter().filter(|h| h.wants(event.event)) {
            // One resource's events reach one webhook in order.
            let serial = format!("{}|{}", hook.id, event.source);
            deliveries.push(db::deliveries::NewDelivery::new(
                &hook.id, &event.id, serial,
            ));
        }
    }
    let first_attempt_at = tx.first_delivery_at();
    db::deliveries::insert_all(tx, &deliveries, first_attempt_at)?;
    let jobs: Vec<(&str, Option<&str>)> = deliveries
        .iter()
        .map(|d| (d.id.as_str(), Some(d.serial.as_str())))
        .collect();
    db::jobs::enqueue_all_for_org(
        tx,
        JobKind::DeliverWebhook,
        &jobs,
        Some(org_id),
        first_attempt_at,
    )?;
    Ok(deliveries.len())
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{testing, Memory};

    /// A batch's events are written many rows to a statement: each event once and in
    /// order, with one delivery and one job per webhook that wants it, whose serial key
    /// keeps one resource's events in order per webhook.
    #[test]
    fn a_batch_s_events_are_each_written_once_in_order_with_their_deliveries() {
        let conn = Memory::new();
        testing::org_with_entity(&conn, "o", "e");
        let both: Vec<String> = vec!["invoice.created".into(), "invoice.updated".into()];
        let all = db::webhooks::insert(&conn, "o", "http://a", &both, vec![1]).expect("hook");
        let created = &both[..1];
        let some = db::webhooks::insert(&conn, "o", "http://b", created, vec![1]).expect("hook");
        let object = RawValue::from_string(r#"{"id":"x"}"#.into()).expect("json");
        let ids: Vec<String> = (0..300).map(|i| format!("inv-{i:03}")).collect();
        let kind = |i: usize| match i % 3 {
            0 => Kind::InvoiceUpdated,
            _ => Kind::InvoiceCreated,
        };
        let queued = conn
            .tx(|tx| {
                let events = (0..ids.len())
                    .map(|i| Emitted {
                        kind: kind(i),
                        resource_id: &ids[i],
                        object: &object,
                        changes: None,
                    })
                    .collect();
                emit_all(tx, "o", events)
            })
            .expect("emitted");
        assert_eq!(queued, 300 + 200);
        assert_eq!(testing::count(&conn, "events"), 300);
        assert_eq!(testing::count(&conn, "deliveries"), 500);
        assert_eq!(testing::count(&conn, "jobs"), 500);
        let payloads: Vec<Value> = testing::event_payloads(&conn, 0)
            .iter()
            .map(|p| serde_json::from_str(p).expect("json"))
            .collect();
        let order: Vec<&str> = payloads
            .iter()
            .map(|p| p["resource"]["id"].as_str().expect("id"))
            .collect();
        assert_eq!(order, ids);
        assert_eq!(payloads[3]["event"], "invoice.updated");
        assert_eq!(payloads[4]["object"]["id"], "x");
        let serials = testing::column(&conn, "jobs", "serial_key");
        let source = Kind::InvoiceCreated.resource().source("inv-001");
        for hook in [&all.id, &some.id] {
            assert!(serials.contains(&format!("{hook}|{source}")));
        }
        let updated = Kind::InvoiceUpdated.resource().source("inv-000");
        assert!(!serials.contains(&format!("{}|{updated}", some.id)));
    }
}
