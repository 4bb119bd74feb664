//! Change marks: which documents a batch (an extraction, or one imported file) changed,
//! each with the first snapshot taken of it in that batch, for every class alike (each
//! class's `Stored::TRACKED` names its table and snapshot). The batch's events are made
//! from them when it ends (`events::documents`).

use super::classes::Tracked;
use super::sql::{params, Query};
use super::Conn;

/// Records that `batch` is about to change the stored document `id`, snapshotting it
/// now; a later mark in the same batch keeps the first snapshot.
pub fn mark(conn: &Conn, t: &Tracked, batch: &str, id: &str) -> anyhow::Result<()> {
    let Tracked {
        table,
        key,
        source,
        snapshot,
    } = t;
    conn.defer(
        &format!(
            "INSERT INTO {table} (batch_id, {key}, before_json)
             SELECT ?1, id, {snapshot} FROM {source} WHERE id = ?2 ON CONFLICT DO NOTHING"
        ),
        params![batch, id],
    )?;
    Ok(())
}

/// Records that `batch` created the document `id` (it did not exist before).
pub fn mark_new(conn: &Conn, t: &Tracked, batch: &str, id: &str) -> anyhow::Result<()> {
    conn.defer(
        &format!(
            "INSERT INTO {} (batch_id, {}, before_json) VALUES (?1, ?2, NULL)
             ON CONFLICT DO NOTHING",
            t.table, t.key
        ),
        params![batch, id],
    )?;
    Ok(())
}

/// A document a batch changed: its organization, and its snapshots before (None when
/// the batch created it) and now (None while it is not visible).
pub struct Changed {
    pub id: String,
    pub org_id: String,
    pub before: Option<String>,
    pub after: Option<String>,
}

/// Takes (reads and deletes) up to `limit` of the batch's marks, oldest document first.
pub fn take(conn: &Conn, t: &Tracked, batch: &str, limit: i64) -> anyhow::Result<Vec<Changed>> {
    let Tracked {
        table,
        key,
        source,
        snapshot,
    } = t;
    let rows = conn.all(
        &format!(
            "SELECT c.{key}, d.org_id, c.before_json, {snapshot}
             FROM {table} c JOIN {source} d ON d.id = c.{key}
             WHERE c.batch_id = ?1 ORDER BY c.{key} LIMIT ?2"
        ),
        params![batch, limit],
        |r| {
            Ok(Changed {
                id: r.get(0)?,
                org_id: r.get(1)?,
                before: r.get(2)?,
                after: r.get(3)?,
            })
        },
    )?;
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    delete_taken(conn, t, batch, &ids)?;
    Ok(rows)
}

/// Deletes a batch's marks of `ids`, a few hundred per statement. Exactly those read,
/// not a range: a mark another transaction commits meanwhile (a job run twice after
/// its lease ran out) is left for its own event.
fn delete_taken(conn: &Conn, t: &Tracked, batch: &str, ids: &[&str]) -> anyhow::Result<()> {
    for chunk in ids.chunks(500) {
        let mut delete = Query::new(format!("DELETE FROM {} WHERE batch_id = ", t.table));
        delete.bind(&batch);
        delete.sql.push_str(&format!(" AND {} IN (", t.key));
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
    use crate::db::classes::Stored;
    use crate::db::invoices::write::{insert_metadata, Listed, Owner};
    use crate::db::{testing, Memory};
    use crate::domain::class::InvoiceClass;
    use crate::domain::extraction::Direction;
    use crate::domain::listing::Metadata;

    const INVOICES: &Tracked = &InvoiceClass::TRACKED;

    #[test]
    fn take_deletes_exactly_the_marks_it_read_in_statements_of_a_few_hundred() {
        let conn = Memory::new();
        testing::org_with_entity(&conn, "o", "e");
        let owner = Owner {
            org_id: "o",
            entity_id: "e",
            batch: "b",
        };
        let entries: Vec<Metadata> = (0..1100)
            .map(|i| Metadata {
                uuid: format!("U{i:04}"),
                ..Metadata::default()
            })
            .collect();
        let rows: Vec<Listed> = entries
            .iter()
            .map(|m| Listed::new(m.uuid.clone(), m, "active"))
            .collect();
        insert_metadata(&conn, owner, Direction::Issued, &rows, "now").expect("rows");
        let ids: Vec<String> = conn
            .all("SELECT id FROM invoices ORDER BY id", params![], |r| {
                r.get(0)
            })
            .expect("ids");
        for id in &ids {
            mark_new(&conn, INVOICES, "b", id).expect("mark");
        }
        mark_new(&conn, INVOICES, "other", &ids[0]).expect("another batch's mark");

        let first = take(&conn, INVOICES, "b", 700).expect("take");
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
        assert_eq!(take(&conn, INVOICES, "b", 700).expect("take").len(), 400);
        assert!(take(&conn, INVOICES, "b", 700).expect("take").is_empty());
        assert_eq!(
            testing::count(&conn, "invoice_changes"),
            1,
            "the other batch's mark stays"
        );
    }

    #[test]
    fn a_mark_keeps_the_first_snapshot_of_the_batch() {
        let conn = Memory::new();
        testing::org_with_entity(&conn, "o", "e");
        let owner = Owner {
            org_id: "o",
            entity_id: "e",
            batch: "b",
        };
        let m = Metadata {
            uuid: "U1".into(),
            ..Metadata::default()
        };
        let row = Listed::new("U1".into(), &m, "active");
        insert_metadata(&conn, owner, Direction::Issued, &[row], "now").expect("row");
        let id: String = conn
            .one("SELECT id FROM invoices", params![], |r| r.get(0))
            .expect("id");
        // Metadata only: not visible, so the snapshot is NULL, and stays the first.
        mark(&conn, INVOICES, "b", &id).expect("mark");
        conn.exec("UPDATE invoices SET xml_processed = 1", params![])
            .expect("now visible");
        mark(&conn, INVOICES, "b", &id).expect("a later mark");
        let taken = take(&conn, INVOICES, "b", 10).expect("take");
        assert_eq!(taken.len(), 1);
        assert_eq!(taken[0].before, None);
        assert!(taken[0].after.is_some(), "visible now");
    }
}
