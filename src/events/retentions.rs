//! `retention.created` and `retention.updated`, coalesced per batch as the invoices'
//! events are (`invoices`): ingestion marks each retention it is about to change with
//! the batch and a snapshot of it (`db::retention_changes`); when the batch ends the
//! marks become at most one event per retention: `retention.created` when the batch
//! created it, `retention.updated` with `changes` (status, cancellation time, PDF) when
//! one of those differs from its first snapshot, nothing otherwise. (`retention` is
//! another matter: how long events are kept.)

use super::emit;
use crate::db::{self, retention_changes::Changed, Tx};
use crate::domain::event::Kind;
use serde_json::{json, value::RawValue, Map, Value};

/// The event (if any) a retention's first snapshot in a batch and its last make, with
/// `{ field: { "from", "to" } }` for an update. None when nothing it reports changed.
fn diff(before: Option<&str>, after: &str) -> anyhow::Result<Option<(Kind, Option<Value>)>> {
    let Some(before) = before else {
        return Ok(Some((Kind::RetentionCreated, None)));
    };
    let before: Map<String, Value> = serde_json::from_str(before)?;
    let after: Map<String, Value> = serde_json::from_str(after)?;
    let mut changes = Map::new();
    for (name, to) in &after {
        let from = before.get(name).cloned().unwrap_or(Value::Null);
        if &from != to {
            changes.insert(name.clone(), json!({ "from": from, "to": to }));
        }
    }
    Ok((!changes.is_empty()).then_some((Kind::RetentionUpdated, Some(Value::Object(changes)))))
}

/// Turns up to `limit` of the batch's retention marks into events (deleting the marks)
/// in the caller's transaction; returns how many marks it took.
pub fn flush(tx: &Tx, batch: &str, limit: i64) -> anyhow::Result<usize> {
    let marks = db::retention_changes::take(tx, batch, limit)?;
    for Changed {
        retention_id,
        org_id,
        before,
        after,
    } in &marks
    {
        let Some((kind, changes)) = diff(before.as_deref(), after)? else {
            continue;
        };
        let Some(object) = db::retentions::get(tx, org_id, retention_id)? else {
            continue;
        };
        emit(
            tx,
            org_id,
            kind,
            retention_id,
            &RawValue::from_string(object)?,
            changes,
        )?;
    }
    Ok(marks.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ACTIVE: &str = r#"{"status":"active","cancelled_at":null,"has_pdf":false}"#;

    #[test]
    fn a_new_retention_is_created_and_an_unchanged_one_says_nothing() {
        let created = diff(None, ACTIVE).expect("diff");
        assert_eq!(created, Some((Kind::RetentionCreated, None)));
        assert_eq!(diff(Some(ACTIVE), ACTIVE).expect("diff"), None);
    }

    #[test]
    fn a_cancellation_reports_its_status_and_time() {
        let after =
            r#"{"status":"cancelled","cancelled_at":"2026-02-03T10:00:00","has_pdf":false}"#;
        let (kind, changes) = diff(Some(ACTIVE), after).expect("diff").expect("a change");
        assert_eq!(kind, Kind::RetentionUpdated);
        assert_eq!(
            changes,
            Some(json!({
                "status": { "from": "active", "to": "cancelled" },
                "cancelled_at": { "from": null, "to": "2026-02-03T10:00:00" }
            }))
        );
    }
}
