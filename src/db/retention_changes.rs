//! SQL for `retention_changes`: which retentions a batch (an extraction, or one
//! imported file) changed, each with the first snapshot taken of it in that batch, as
//! `invoice_changes` does for invoices.

use super::sql::params;
use super::Conn;

/// What `retention.updated` compares, as JSON text.
const SNAPSHOT: &str = "json_object('status', status, 'cancelled_at', cancelled_at,
    'has_pdf', json(CASE WHEN has_pdf <> 0 THEN 'true' ELSE 'false' END))";

/// Records that `batch` is about to change the stored retention `id`, snapshotting it
/// now; a later mark in the same batch keeps the first snapshot.
pub fn mark(conn: &Conn, batch: &str, id: &str) -> anyhow::Result<()> {
    conn.defer(
        &format!(
            "INSERT INTO retention_changes (batch_id, retention_id, before_json)
         SELECT ?1, id, {SNAPSHOT} FROM retentions WHERE id = ?2 ON CONFLICT DO NOTHING"
        ),
        params![batch, id],
    )?;
    Ok(())
}

/// Records that `batch` created the retention `id` (it did not exist before).
pub fn mark_new(conn: &Conn, batch: &str, id: &str) -> anyhow::Result<()> {
    conn.defer(
        "INSERT INTO retention_changes (batch_id, retention_id, before_json)
         VALUES (?1, ?2, NULL) ON CONFLICT DO NOTHING",
        params![batch, id],
    )?;
    Ok(())
}

/// A retention a batch changed: its organization, and its snapshots before (None when
/// the batch created it) and now.
pub struct Changed {
    pub retention_id: String,
    pub org_id: String,
    pub before: Option<String>,
    pub after: String,
}

/// Takes (reads and deletes) up to `limit` of the batch's marks, oldest retention first.
pub fn take(conn: &Conn, batch: &str, limit: i64) -> anyhow::Result<Vec<Changed>> {
    let rows = conn.all(
        &format!(
            "SELECT c.retention_id, r.org_id, c.before_json, {SNAPSHOT}
             FROM retention_changes c JOIN retentions r ON r.id = c.retention_id
             WHERE c.batch_id = ?1 ORDER BY c.retention_id LIMIT ?2"
        ),
        params![batch, limit],
        |r| {
            Ok(Changed {
                retention_id: r.get(0)?,
                org_id: r.get(1)?,
                before: r.get(2)?,
                after: r.get(3)?,
            })
        },
    )?;
    let ids: Vec<&str> = rows.iter().map(|r| r.retention_id.as_str()).collect();
    super::invoice_changes::delete_taken(conn, "retention_changes", "retention_id", batch, &ids)?;
    Ok(rows)
}
