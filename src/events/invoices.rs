//! `invoice.created` and `invoice.updated`, coalesced per batch. Ingestion marks each
//! invoice it is about to change with the batch (an extraction, or one imported file)
//! and a snapshot of it, in the change's own transaction (`db::invoice_changes`); the
//! first snapshot is kept. When the batch ends its marks become at most one event per
//! invoice: `invoice.created` when the invoice was not visible before (new, or metadata
//! only) and is now, `invoice.updated` with the net difference when something it
//! tracks changed, and nothing otherwise. A 20,000-invoice extraction thus sends each
//! receiver one event per invoice it changed, however many times it touched it.

use super::emit;
use crate::db::{self, invoice_changes::Changed, Db, Tx};
use crate::domain::event::Kind;
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::{json, value::RawValue, Map, Value};

/// Marks taken per transaction when a batch ends.
pub const CHUNK: i64 = 500;

/// The fields `invoice.updated` reports, as `db::invoice_changes` snapshots them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Snapshot {
    pub status: String,
    pub cancelled_at: Option<String>,
    pub has_pdf: bool,
    pub paid_amount: Option<String>,
    pub due_amount: Option<String>,
    pub last_payment_date: Option<String>,
    pub fully_paid_at: Option<String>,
    pub payment_conflicts: bool,
    /// The SAT's answer without its times (`sat_status` less `checked_at`): a check that
    /// confirms it changes nothing. Absent from snapshots taken before version 12.
    #[serde(default)]
    pub sat_status: Option<Value>,
}

#[derive(Debug, PartialEq)]
pub enum Change {
    Created,
    /// `{ field: { "from": before, "to": now } }` for each field that changed.
    Updated(Map<String, Value>),
}

/// The event (if any) an invoice's first snapshot in a batch and its last one make.
/// None means not visible (metadata only): invisible invoices have no events.
pub fn diff(before: Option<&Snapshot>, after: Option<&Snapshot>) -> Option<Change> {
    let (before, after) = match (before, after) {
        (_, None) => return None,
        (None, Some(_)) => return Some(Change::Created),
        (Some(b), Some(a)) => (b, a),
    };
    let mut changes = Map::new();
    let mut field = |name: &str, from: Value, to: Value| {
        if from != to {
            changes.insert(name.into(), json!({ "from": from, "to": to }));
        }
    };
    field("status", json!(before.status), json!(after.status));
    field(
        "cancelled_at",
        json!(before.cancelled_at),
        json!(after.cancelled_at),
    );
    field("has_pdf", json!(before.has_pdf), json!(after.has_pdf));
    for (name, from, to) in [
        ("paid_amount", &before.paid_amount, &after.paid_amount),
        ("due_amount", &before.due_amount, &after.due_amount),
    ] {
        // Compared as numbers: 100.00 and 100.0 are the same amount.
        if decimal(from) != decimal(to) {
            field(name, money(from), money(to));
        }
    }
    field(
        "last_payment_date",
        json!(before.last_payment_date),
        json!(after.last_payment_date),
    );
    field(
        "fully_paid_at",
        json!(before.fully_paid_at),
        json!(after.fully_paid_at),
    );
    field(
        "payment_conflicts",
        json!(before.payment_conflicts),
        json!(after.payment_conflicts),
    );
    field(
        "sat_status",
        json!(before.sat_status),
        json!(after.sat_status),
    );
    (!changes.is_empty()).then_some(Change::Updated(changes))
}

fn decimal(s: &Option<String>) -> Option<Decimal> {
    s.as_deref().and_then(|s| s.parse().ok())
}

/// Decimal text as an exact JSON number, as the invoice object shows amounts.
fn money(s: &Option<String>) -> Value {
    s.as_deref()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .filter(Value::is_number)
        .unwrap_or(Value::Null)
}

fn snapshot(text: Option<&str>) -> anyhow::Result<Option<Snapshot>> {
    Ok(text.map(serde_json::from_str).transpose()?)
}

/// Turns up to `limit` of the batch's marks into events (deleting the marks) in the
/// caller's transaction, the invoices' first, then its retentions' (`retentions`);
/// returns how many marks it took.
pub fn flush(tx: &Tx, batch: &str, limit: i64) -> anyhow::Result<usize> {
    let taken = flush_invoices(tx, batch, limit)?;
    let left = limit.saturating_sub(taken as i64);
    let retentions = if left > 0 {
        super::retentions::flush(tx, batch, left)?
    } else {
        0
    };
    Ok(taken + retentions)
}

fn flush_invoices(tx: &Tx, batch: &str, limit: i64) -> anyhow::Result<usize> {
    let marks = db::invoice_changes::take(tx, batch, limit)?;
    for Changed {
        invoice_id,
        org_id,
        before,
        after,
    } in &marks
    {
        let before = snapshot(before.as_deref())?;
        let after = snapshot(after.as_deref())?;
        let Some(change) = diff(before.as_ref(), after.as_ref()) else {
            continue;
        };
        let Some(object) = db::invoices::get(tx, org_id, invoice_id)? else {
            continue;
        };
        let (kind, changes) = match change {
            Change::Created => (Kind::InvoiceCreated, None),
            Change::Updated(changes) => (Kind::InvoiceUpdated, Some(changes.into())),
        };
        let object = RawValue::from_string(object)?;
        emit(tx, org_id, kind, invoice_id, &object, changes)?;
    }
    Ok(marks.len())
}

/// All of a batch's events, `CHUNK` marks per transaction, so a large extraction never
/// holds the write lock for all of its invoices at once. Each chunk's events commit
/// with the removal of their marks: a crash repeats none and loses none.
pub fn flush_all(db: &Db, batch: &str) -> anyhow::Result<()> {
    while db.tx(|tx| flush(tx, batch, CHUNK))? == CHUNK as usize {}
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap() -> Snapshot {
        Snapshot {
            status: "active".into(),
            cancelled_at: None,
            has_pdf: false,
            paid_amount: Some("0".into()),
            due_amount: Some("1160.00".into()),
            last_payment_date: None,
            fully_paid_at: None,
            payment_conflicts: false,
            sat_status: None,
        }
    }

    #[test]
    fn invisible_invoices_make_no_event_and_appearing_ones_are_created() {
        assert_eq!(diff(None, None), None);
        assert_eq!(diff(Some(&snap()), None), None);
        assert_eq!(diff(None, Some(&snap())), Some(Change::Created));
    }

    #[test]
    fn nothing_changed_means_no_event_even_if_amounts_change_scale() {
        let mut after = snap();
        after.due_amount = Some("1160.0".into());
        assert_eq!(diff(Some(&snap()), Some(&after)), None);
    }

    #[test]
    fn a_cancellation_reports_status_time_and_balances_exactly() {
        let before = snap();
        let after = Snapshot {
            status: "cancelled".into(),
            cancelled_at: Some("2026-02-03T10:00:00".into()),
            due_amount: Some("0".into()),
            ..snap()
        };
        let Some(Change::Updated(changes)) = diff(Some(&before), Some(&after)) else {
            panic!("an update");
        };
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
        let after = Snapshot {
            has_pdf: true,
            paid_amount: Some("580.005".into()),
            due_amount: Some("579.995".into()),
            last_payment_date: Some("2026-02-01T12:00:00".into()),
            payment_conflicts: true,
            ..snap()
        };
        let Some(Change::Updated(changes)) = diff(Some(&snap()), Some(&after)) else {
            panic!("an update");
        };
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
    fn snapshots_parse_from_the_stored_json() {
        let text = r#"{"status":"active","cancelled_at":null,"has_pdf":true,"paid_amount":"10.50",
            "due_amount":null,"last_payment_date":null,"fully_paid_at":null,"payment_conflicts":false}"#;
        let s = snapshot(Some(text)).expect("parses").expect("some");
        assert!(s.has_pdf);
        assert_eq!(s.paid_amount.as_deref(), Some("10.50"));
        assert!(snapshot(None).expect("none").is_none());
    }

    #[test]
    fn a_new_sat_answer_is_reported_as_a_whole() {
        let answer = |state: &str| {
            json!({"state": state, "cancellable": "with_acceptance",
            "cancellation_status": null, "efos": "not_listed"})
        };
        let before = Snapshot {
            sat_status: Some(answer("active")),
            ..snap()
        };
        let after = Snapshot {
            sat_status: Some(answer("cancelled")),
            ..snap()
        };
        let Some(Change::Updated(changes)) = diff(Some(&before), Some(&after)) else {
            panic!("an update");
        };
        assert_eq!(
            changes["sat_status"],
            json!({"from": answer("active"), "to": answer("cancelled")})
        );
        assert_eq!(diff(Some(&before), Some(&before.clone())), None);
    }
}
