//! SQL for `invoice_changes`: which invoices a batch (an extraction, or one imported
//! file) changed, each with the first snapshot taken of it in that batch.

use super::sql::{params, Query};
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
    conn.defer(
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
    conn.defer(
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
    let ids: Vec<&str> = rows.iter().map(|r| r.invoice_id.as_str()).collect();
    delete_taken(conn, "invoice_changes", "invoice_id", batch, &ids)?;
    Ok(rows)
}

/// Deletes a batch's marks of `ids` from `table` (`invoice_changes`, or
/// `retention_changes` with `column` its key), a few hundred per statement. Exactly
/// those read, not a range: a mark another transaction commits meanwhile (a job run
/// twice after its lease ran out) is left for its own event.
pub(super) fn delete_taken(
    conn: &Conn,
    table: &str,
    column: &str,
    batch: &str,
    ids: &[&str],
) -> anyhow::Result<()> {
    for chunk in ids.chunks(500) {
        let mut delete = Query::new(format!("DELETE FROM {table} WHERE batch_id = "));
        delete.bind(&batch);
        delete.sql.push_str(&format!(" AND {column} IN ("));
        for (i, id) in chunk.iter().enumerate() {
            if i > 0 {
                delete.sql.push_str(", ");
            }
            delete.bind(id);
        }
        delete.sql.push(')');
        conn.defer(&delete.sql, &delete.params)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::invoices::write::{insert_metadata, Owner};
    use crate::db::{testing, Memory};
    use crate::domain::extraction::Direction;
    use crate::domain::listing::Metadata;

    #[test]
    fn take_deletes_exactly_the_marks_it_read_in_statements_of_a_few_hundred() {
        let conn = Memory::new();
        testing::org_with_entity(&conn, "o", "e");
        let owner = Owner {
            org_id: "o",
            entity_id: "e",
            batch: "b",
        };
        for i in 0..1100 {
            let m = Metadata {
                uuid: format!("U{i:04}"),
                ..Metadata::default()
            };
            insert_metadata(
                &conn,
                owner,
                Direction::Issued,
                &m.uuid,
                &m,
                "active",
                "now",
            )
            .expect("row");
        }
        let ids: Vec<String> = conn
            .all("SELECT id FROM invoices ORDER BY id", params![], |r| {
                r.get(0)
            })
            .expect("ids");
        for id in &ids {
            mark_new(&conn, "b", id).expect("mark");
        }
        mark_new(&conn, "other", &ids[0]).expect("another batch's mark");

        let first = take(&conn, "b", 700).expect("take");
        assert_eq!(first.len(), 700);
        let left: Vec<String> = conn
            .all(
                "SELECT invoice_id FROM invoice_changes WHERE batch_id = 'b' ORDER BY invoice_id",
                params![],
                |r| r.get(0),
            )
            .expect("left");
        assert_eq!(
            left,
            ids[700..],
            "the first 700 by id are gone, the rest stay"
        );
        assert_eq!(take(&conn, "b", 700).expect("take").len(), 400);
        assert!(take(&conn, "b", 700).expect("take").is_empty());
        assert_eq!(
            testing::count(&conn, "invoice_changes"),
            1,
            "the other batch's mark stays"
        );
    }
}
