//! SQL for `invoice_relations`: the CfdiRelacionados of each processed invoice
//! (TipoRelacion and UUID, in document order), read in both directions. An invoice's
//! own entries name documents by UUID within its entity, and the ones that name it are
//! found by its UUID, so a related document links whenever it arrives, before or after.

use crate::cfdi::Related;
use crate::db::sql::params;
use crate::db::Conn;
use crate::domain::relations::{sole_credited, KINDS};

/// Replaces the invoice's entries with `related`'s; `issued_at` is the invoice's own
/// (the order of the documents naming another), and the one UUID its crediting
/// relations name is kept on its row (`credits`).
pub fn store(
    conn: &Conn,
    invoice_id: &str,
    entity_id: &str,
    issued_at: &str,
    related: &[Related],
) -> anyhow::Result<()> {
    conn.exec(
        "DELETE FROM invoice_relations WHERE invoice_id = ?1",
        params![invoice_id],
    )?;
    for (position, r) in related.iter().enumerate() {
        conn.exec(
            "INSERT INTO invoice_relations (invoice_id, position, entity_id, relation_type, related_uuid,
                invoice_issued_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                invoice_id,
                position as i64,
                entity_id,
                r.relation_type,
                r.uuid,
                issued_at
            ],
        )?;
    }
    conn.exec(
        "UPDATE invoices SET credited_uuid = ?2 WHERE id = ?1",
        params![invoice_id, sole_credited(related)],
    )?;
    Ok(())
}

/// `CASE` naming a TipoRelacion code (`domain::relations::KINDS`).
fn kind_name(column: &str) -> String {
    let whens: String = KINDS
        .iter()
        .map(|(code, name)| format!(" WHEN '{code}' THEN '{name}'"))
        .collect();
    format!("CASE {column}{whens} END")
}

/// The related document as the relation shows it: `o` (a held, processed invoice) or
/// NULL.
const OTHER: &str = "json(CASE WHEN o.id IS NOT NULL THEN json_object('id', o.id, 'type', o.type,
    'series', o.series, 'folio', o.folio, 'issued_at', o.issued_at, 'currency', o.currency,
    'total', json(o.total), 'status', o.status, 'cancelled_at', o.cancelled_at) END)";

/// `{"relates_to": [...], "related_by": [...]}` as JSON text (an empty aggregate is
/// NULL on PostgreSQL, `[]` on SQLite: hence the coalesces): the documents the
/// invoice's CfdiRelacionados name (the document when it is held, else null beside its
/// UUID), and the held documents whose CfdiRelacionados name it.
pub fn view(conn: &Conn, invoice_id: &str) -> anyhow::Result<String> {
    let name = kind_name("r.relation_type");
    let sql = format!(
        "SELECT json_object(
            'relates_to', coalesce((SELECT json_group_array(json_object('relation_type', r.relation_type,
                    'relation', {name}, 'uuid', r.related_uuid, 'invoice', {OTHER}) ORDER BY r.position)
                FROM invoice_relations r
                LEFT JOIN invoices o ON o.entity_id = r.entity_id AND o.uuid = r.related_uuid
                    AND o.xml_processed = 1
                WHERE r.invoice_id = i.id), json('[]')),
            'related_by', coalesce((SELECT json_group_array(json_object('relation_type', r.relation_type,
                    'relation', {name}, 'uuid', o.uuid, 'invoice', {OTHER})
                    ORDER BY o.issued_at, o.id, r.position)
                FROM invoice_relations r JOIN invoices o ON o.id = r.invoice_id
                WHERE r.entity_id = i.entity_id AND r.related_uuid = i.uuid AND o.id <> i.id),
                json('[]')))
         FROM invoices i WHERE i.id = ?1"
    );
    conn.one(&sql, params![invoice_id], |r| r.get(0))
}

/// Two columns for a query over `invoices`: whether the row's CfdiRelacionados name
/// documents (1 or 0), and whether other documents' name it. When both are 0 its
/// `view` is `EMPTY` and it has no `credits`, so `invoices::get` runs neither query:
/// most invoices relate to nothing.
pub const PRESENT: &str = "CASE WHEN EXISTS (SELECT 1 FROM invoice_relations r \
        WHERE r.invoice_id = invoices.id) THEN 1 ELSE 0 END, \
    CASE WHEN EXISTS (SELECT 1 FROM invoice_relations r WHERE r.entity_id = invoices.entity_id \
        AND r.related_uuid = invoices.uuid AND r.invoice_id <> invoices.id) THEN 1 ELSE 0 END";

/// `view` of an invoice that relates to nothing.
pub const EMPTY: &str = r#"{"relates_to":[],"related_by":[]}"#;

/// The totals of the credit notes that reduce an invoice's due amount
/// (`domain::relations::credited`). A credit note counts when it is a processed, active
/// type E document of the invoice's entity and currency whose 01/03 relations name
/// this invoice and no other (its `credited_uuid`, `store`): CFDI carry no amount per
/// related document, so one naming several invoices cannot be split without guessing
/// (it still shows in `relations`). One row per credit note, however many relations it
/// has (their order is no matter: the sum is exact).
pub fn credits(conn: &Conn, invoice_id: &str) -> anyhow::Result<Vec<String>> {
    conn.all(CREDITS, params![invoice_id], |r| r.get(0))
}

pub(super) const CREDITS: &str = "SELECT o.total FROM invoices i
     JOIN invoices o ON o.entity_id = i.entity_id AND o.credited_uuid = i.uuid
     WHERE i.id = ?1 AND o.id <> i.id AND o.xml_processed = 1 AND o.type = 'E'
         AND o.status <> 'cancelled' AND upper(o.currency) IS NOT DISTINCT FROM upper(i.currency)
         AND o.total IS NOT NULL";

/// Processed invoices after `after` (by id), with their entity: the backfill's batches.
pub fn processed_after(
    conn: &Conn,
    after: &str,
    limit: i64,
) -> anyhow::Result<Vec<(String, String)>> {
    conn.all(
        "SELECT id, entity_id FROM invoices WHERE id > ?1 AND xml_processed = 1 ORDER BY id LIMIT ?2",
        params![after, limit],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}
