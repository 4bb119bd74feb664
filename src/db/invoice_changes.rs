//! SQL for `invoice_changes`: which invoices a batch (an extraction, or one imported
//! file) changed, each with the first snapshot taken of it in that batch.

use super::sql::params;
use super::Conn;

/// What `invoice.updated` compares, as JSON text (amounts as decimal text); NULL
/// while the invoice is not visible (metadata only), which counts as not existing.
const SNAPSHOT: &str = "CASE WHEN xml_processed = 1 THEN json_object(
    'status', status, 'cancelled_at', cancelled_at,
    'has_pdf', json(CASE WHEN has_pdf <> 0 THEN 'true' ELSE 'false' END),
    'paid_amount', paid_amount, 'due_amount', due_amount,
    'last_payment_date', last_payment_date, 'fully_paid_at', fully_paid_at,
    'payment_conflicts', json(CASE WHEN payment_conflicts <> 0 THEN 'true' ELSE 'false' END),
    'sat_status', json(CASE WHEN sat_state IS NOT NULL THEN json_object(
        'state', sat_state, 'cancellable', sat_cancellable,
        'cancellation_status', sat_cancellation_status, 'efos', sat_efos) END)) END";

/// Records that `batch` is about to change the stored invoice `id`, snapshotting it
/// now; a later mark in the same batch keeps the first snapshot.
pub fn mark(conn: &Conn, batch: &str, id: &str) -> anyhow::Result<()> {
    conn.exec(
        &format!(
            "INSERT INTO invoice_changes (batch_id, invoice_id, before_json)
         SELECT ?1, id, {SNAPSHOT} FROM invoices WHERE id = ?2 ON CONFLICT DO NOTHING"
        ),
        params![batch, id],
    )?;
    Ok(())
}

/// Records that `batch` created the invoice `id` (it did not exist before).
pub fn mark_new(conn: &Conn, batch: &str, id: &str) -> anyhow::Result<()> {
    conn.exec(
        "INSERT INTO invoice_changes (batch_id, invoice_id, before_json) VALUES (?1, ?2, NULL)
         ON CONFLICT DO NOTHING",
        params![batch, id],
    )?;
    Ok(())
}

/// An invoice a batch changed: its organization, and its snapshots before and now.
pub struct Changed {
    pub invoice_id: String,
    pub org_id: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// Takes (reads and deletes) up to `limit` of the batch's marks, oldest invoice first.
pub fn take(conn: &Conn, batch: &str, limit: i64) -> anyhow::Result<Vec<Changed>> {
    let rows = conn.all(
        &format!(
            "SELECT c.invoice_id, i.org_id, c.before_json, {SNAPSHOT}
             FROM invoice_changes c JOIN invoices i ON i.id = c.invoice_id
             WHERE c.batch_id = ?1 ORDER BY c.invoice_id LIMIT ?2"
        ),
        params![batch, limit],
        |r| {
            Ok(Changed {
                invoice_id: r.get(0)?,
                org_id: r.get(1)?,
                before: r.get(2)?,
                after: r.get(3)?,
            })
        },
    )?;
    // They are the batch's first by id: one range deletes them.
    if let Some(last) = rows.last() {
        conn.exec(
            "DELETE FROM invoice_changes WHERE batch_id = ?1 AND invoice_id <= ?2",
            params![batch, last.invoice_id],
        )?;
    }
    Ok(rows)
}
