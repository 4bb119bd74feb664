//! The document classes' events, `<class>.created` and `<class>.updated`, coalesced per
//! batch, written once for every class. Ingestion marks each document it is about to
//! change with the batch (an extraction, or one imported file) and a snapshot of it, in
//! the change's own transaction (`db::changes`); the first snapshot is kept. When the
//! batch ends its marks become at most one event per document: `.created` when it was
//! not visible before (new, or an invoice's metadata only) and is now, `.updated` with
//! the net difference of what its class tracks, and nothing otherwise. A 20,000-invoice
//! extraction thus sends each receiver one event per invoice it changed, however many
//! times it touched it.

use super::{emit_all, Emitted};
use crate::db::{self, changes::Changed, classes::Stored, Db, Tx};
use crate::domain::class::{InvoiceClass, RetentionClass};
use rust_decimal::Decimal;
use serde_json::{json, value::RawValue, Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Marks taken per transaction when a batch ends.
pub const CHUNK: i64 = 500;

/// Turns up to a limit of a batch's marks of one class into events.
type Flush = fn(&Tx, &str, i64) -> anyhow::Result<usize>;

/// Each class's flush, in the order a batch's events go out: a class is registered by
/// its line here.
const CLASSES: &[Flush] = &[flush_class::<InvoiceClass>, flush_class::<RetentionClass>];

#[derive(Debug, PartialEq)]
pub enum Change {
    Created,
    /// `{ field: { "from": before, "to": now } }` for each field that changed.
    Updated(Map<String, Value>),
}

/// The event (if any) a document's first snapshot in a batch and its last one make.
/// None means not visible: invisible documents have no events. Fields named in
/// `amounts` are compared as numbers (100.00 and 100.0 are the same amount) and
/// reported as exact JSON numbers.
pub fn diff(
    before: Option<&Map<String, Value>>,
    after: Option<&Map<String, Value>>,
    amounts: &[&str],
) -> Option<Change> {
    let (before, after) = match (before, after) {
        (_, None) => return None,
        (None, Some(_)) => return Some(Change::Created),
        (Some(b), Some(a)) => (b, a),
    };
    let mut changes = Map::new();
    let names: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for name in names {
        let from = before.get(name).cloned().unwrap_or(Value::Null);
        let to = after.get(name).cloned().unwrap_or(Value::Null);
        let (from, to) = if amounts.contains(&name.as_str()) {
            if decimal(&from) == decimal(&to) {
                continue;
            }
            (money(&from), money(&to))
        } else {
            (from, to)
        };
        if from != to {
            changes.insert(name.clone(), json!({ "from": from, "to": to }));
        }
    }
    (!changes.is_empty()).then_some(Change::Updated(changes))
}

/// An amount of a snapshot (decimal text).
fn decimal(v: &Value) -> Option<Decimal> {
    v.as_str().and_then(|s| s.parse().ok())
}

/// Decimal text as an exact JSON number, as the document's object shows amounts.
fn money(v: &Value) -> Value {
    v.as_str()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .filter(Value::is_number)
        .unwrap_or(Value::Null)
}

fn snapshot(text: Option<&str>) -> anyhow::Result<Option<Map<String, Value>>> {
    Ok(text.map(serde_json::from_str).transpose()?)
}

/// Turns up to `limit` of the batch's marks into events (deleting the marks) in the
/// caller's transaction, class by class; returns how many marks it took.
pub fn flush(tx: &Tx, batch: &str, limit: i64) -> anyhow::Result<usize> {
    let mut taken = 0;
    for flush in CLASSES {
        let left = limit.saturating_sub(taken as i64);
        if left <= 0 {
            break;
        }
        taken += flush(tx, batch, left)?;
    }
    Ok(taken)
}

fn flush_class<C: Stored>(tx: &Tx, batch: &str, limit: i64) -> anyhow::Result<usize> {
    let marks = db::changes::take(tx, &C::TRACKED, batch, limit)?;
    let mut changed = vec![];
    for mark in &marks {
        let before = snapshot(mark.before.as_deref())?;
        let after = snapshot(mark.after.as_deref())?;
        if let Some(change) = diff(before.as_ref(), after.as_ref(), C::AMOUNTS) {
            changed.push((mark, change));
        }
    }
    // An organization's at a time (a batch is one's): their objects read together,
    // their events written together, in the marks' order.
    let mut by_org: BTreeMap<&str, Vec<(&Changed, Change)>> = BTreeMap::new();
    for (mark, change) in changed {
        by_org.entry(&mark.org_id).or_default().push((mark, change));
    }
    for (org_id, changed) in by_org {
        let ids: Vec<&str> = changed.iter().map(|(mark, _)| mark.id.as_str()).collect();
        let mut objects = C::get_all(tx, org_id, &ids)?;
        let mut found = Vec::with_capacity(changed.len());
        for (mark, change) in changed {
            let Some(object) = objects.remove(&mark.id) else {
                continue; // no longer visible
            };
            let (kind, changes) = match change {
                Change::Created => (C::CREATED, None),
                Change::Updated(changes) => (C::UPDATED, Some(changes.into())),
            };
            found.push((mark, kind, changes, RawValue::from_string(object)?));
        }
        let events = found
            .iter_mut()
            .map(|(mark, kind, changes, object)| Emitted {
                kind: *kind,
                resource_id: &mark.id,
                object,
                changes: changes.take(),
            })
            .collect();
        emit_all(tx, org_id, events)?;
    }
    Ok(marks.len())
}

/// All of a batch's events, `CHUNK` marks per transaction, so a large extraction never
/// holds the write lock for all of its documents at once. Each chunk's events commit
/// with the removal of their marks: a crash repeats none and loses none.
pub fn flush_all(db: &Db, batch: &str) -> anyhow::Result<()> {
    while db.tx(|tx| flush(tx, batch, CHUNK))? == CHUNK as usize {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const AMOUNTS: &[&str] = <InvoiceClass as Stored>::AMOUNTS;

    fn snap(extra: Value) -> Map<String, Value> {
        let mut s = json!({
            "status": "active", "cancelled_at": null, "has_pdf": false,
            "paid_amount": "0", "due_amount": "1160.00", "last_payment_date": null,
            "fully_paid_at": null, "payment_conflicts": false, "sat_status": null
        });
        for (k, v) in extra.as_object().expect("object") {
            s[k] = v.clone();
        }
        s.as_object().expect("object").clone()
    }

    fn changes(before: &Map<String, Value>, after: &Map<String, Value>) -> Map<String, Value> {
        match diff(Some(before), Some(after), AMOUNTS) {
            Some(Change::Updated(changes)) => changes,
            other => panic!("an update, not {other:?}"),
        }
    }

    #[test]
    fn invisible_documents_make_no_event_and_appearing_ones_are_created() {
        let s = snap(json!({}));
        assert_eq!(diff(None, None, AMOUNTS), None);
        assert_eq!(diff(Some(&s), None, AMOUNTS), None);
        assert_eq!(diff(None, Some(&s), AMOUNTS), Some(Change::Created));
    }

    #[test]
    fn nothing_changed_means_no_event_even_if_amounts_change_scale() {
        let after = snap(json!({"due_amount": "1160.0"}));
        assert_eq!(diff(Some(&snap(json!({}))), Some(&after), AMOUNTS), None);
    }

    #[test]
    fn a_cancellation_reports_status_time_and_balances_exactly() {
        let after = snap(json!({
            "status": "cancelled", "cancelled_at": "2026-02-03T10:00:00", "due_amount": "0"
        }));
        let changes = changes(&snap(json!({})), &after);
        let expected: Value = serde_json::from_str(
            r#"{"status": {"from": "active", "to": "cancelled"},
                "cancelled_at": {"from": null, "to": "2026-02-03T10:00:00"},
                "due_amount": {"from": 1160.00, "to": 0}}"#,
        )
        .expect("json");
        assert_eq!(Value::Object(changes.clone()), expected);
        // Exact digits, as the invoice object writes them (never through f64).
        assert_eq!(changes["due_amount"]["from"].to_string(), "1160.00");
    }

    #[test]
    fn payments_and_a_pdf_arriving_are_reported() {
        let after = snap(json!({
            "has_pdf": true, "paid_amount": "580.005", "due_amount": "579.995",
            "last_payment_date": "2026-02-01T12:00:00", "payment_conflicts": true
        }));
        let changes = changes(&snap(json!({})), &after);
        let keys: Vec<&str> = changes.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "due_amount",
                "has_pdf",
                "last_payment_date",
                "paid_amount",
                "payment_conflicts"
            ]
        );
        assert_eq!(changes["has_pdf"], json!({"from": false, "to": true}));
        assert_eq!(changes["paid_amount"]["to"].to_string(), "580.005");
        assert_eq!(changes["paid_amount"]["from"].to_string(), "0");
    }

    #[test]
    fn a_new_sat_answer_is_reported_as_a_whole() {
        let answer = |state: &str| {
            json!({"state": state, "cancellable": "with_acceptance",
            "cancellation_status": null, "efos": "not_listed"})
        };
        let before = snap(json!({ "sat_status": answer("active") }));
        let after = snap(json!({ "sat_status": answer("cancelled") }));
        assert_eq!(
            changes(&before, &after)["sat_status"],
            json!({"from": answer("active"), "to": answer("cancelled")})
        );
        assert_eq!(diff(Some(&before), Some(&before.clone()), AMOUNTS), None);
    }

    #[test]
    fn a_snapshot_taken_before_a_field_existed_compares_it_as_null() {
        let mut old = snap(json!({}));
        old.remove("sat_status");
        assert_eq!(diff(Some(&old), Some(&snap(json!({}))), AMOUNTS), None);
    }

    #[test]
    fn a_retention_is_created_then_reports_its_cancellation() {
        let active = snapshot(Some(
            r#"{"status":"active","cancelled_at":null,"has_pdf":false}"#,
        ))
        .expect("parses")
        .expect("some");
        assert_eq!(diff(None, Some(&active), &[]), Some(Change::Created));
        assert_eq!(diff(Some(&active), Some(&active), &[]), None);
        let cancelled: Map<String, Value> = serde_json::from_str(
            r#"{"status":"cancelled","cancelled_at":"2026-02-03T10:00:00","has_pdf":false}"#,
        )
        .expect("json");
        assert_eq!(
            diff(Some(&active), Some(&cancelled), &[]),
            Some(Change::Updated(
                json!({
                    "status": { "from": "active", "to": "cancelled" },
                    "cancelled_at": { "from": null, "to": "2026-02-03T10:00:00" }
                })
                .as_object()
                .expect("object")
                .clone()
            ))
        );
    }
}
