//! SQL for `invoice_relations`: the CfdiRelacionados of each processed invoice
//! (TipoRelacion and UUID, in document order), read in both directions. An invoice's
//! own entries name documents by UUID within its entity, and the ones that name it are
//! found by its UUID, so a related document links whenever it arrives, before or after.
//!
//! A CFDI may name 100,000 documents, or one document 100,000 times, and every relation
//! is kept. So each direction is read a page at a time, in its order, off an index (the
//! primary key; `invoice_relations_named`): the invoice object carries the first
//! `EMBEDDED` of each with their counts, and `GET /v1/invoices/{id}/relates-to` and
//! `/related-by` page through the rest.

use crate::cfdi::Related;
use crate::db::rows::insert;
use crate::db::sql::params;
use crate::db::Conn;
use crate::domain::relations::{sole_credited, KINDS};
use std::collections::BTreeMap;

/// The most entries of each direction an invoice object (and its events) carries.
pub const EMBEDDED: i64 = 100;

/// Replaces the invoice's entries with `related`'s, many rows per statement (a
/// document may name 100,000: one statement each held the write lock for minutes on
/// PostgreSQL); `issued_at` is the invoice's own (the order of the documents naming
/// another). Beside them: how many times it names each UUID (what `counts` adds up),
/// and on its row the one UUID its crediting relations name (`credits`). `first`:
/// the invoice's first document, so it has nothing to replace (no statement is sent
/// to remove it: most of an extraction's documents are first ones).
pub fn store(
    conn: &Conn,
    invoice_id: &str,
    entity_id: &str,
    issued_at: &str,
    related: &[Related],
    first: bool,
) -> anyhow::Result<()> {
    for table in ["invoice_relations", "invoice_relation_counts"] {
        crate::db::rows::clear(conn, table, "invoice_id", invoice_id, first)?;
    }
    let rows: Vec<(i64, &Related)> = (0..).zip(related).collect();
    insert(
        conn,
        "invoice_relations (invoice_id, entity_id, invoice_issued_at, position, relation_type, related_uuid)",
        &[&invoice_id, &entity_id, &issued_at],
        &rows,
        |(position, r)| vec![position, &r.relation_type, &r.uuid],
    )?;
    let mut times: BTreeMap<&str, i64> = BTreeMap::new();
    for r in related {
        *times.entry(&r.uuid).or_default() += 1;
    }
    let times: Vec<(&str, i64)> = times.into_iter().collect();
    insert(
        conn,
        "invoice_relation_counts (invoice_id, entity_id, related_uuid, times)",
        &[&invoice_id, &entity_id],
        &times,
        |(uuid, n)| vec![uuid, n],
    )?;
    // Only when it changes: most documents credit nothing, and on PostgreSQL each
    // update writes a new row version with an entry in each of the table's indexes.
    // (A first document's row credits nothing yet.)
    let credited = sole_credited(related);
    if !first || credited.is_some() {
        conn.defer(
            "UPDATE invoices SET credited_uuid = ?2 WHERE id = ?1 AND credited_uuid IS DISTINCT FROM ?2",
            params![invoice_id, credited],
        )?;
    }
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

/// One entry, `{relation_type, relation, uuid, invoice}`, as JSON text: the relation
/// `r`, the other document's UUID `uuid` and `o`, that document when it is held.
fn entry(uuid: &str) -> String {
    let name = kind_name("r.relation_type");
    format!(
        "json_object('relation_type', r.relation_type, 'relation', {name}, 'uuid', {uuid},
            'invoice', {OTHER})"
    )
}

/// Up to `limit` entries of what the invoice's CfdiRelacionados name, in document order,
/// after position `after` (-1 for the first): (position, entry).
pub fn relates_to(
    conn: &Conn,
    invoice_id: &str,
    after: i64,
    limit: i64,
) -> anyhow::Result<Vec<(i64, String)>> {
    conn.all(&relates_to_sql(), params![invoice_id, after, limit], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
}

/// `relates_to`'s statement: (invoice id, after, limit).
pub(super) fn relates_to_sql() -> String {
    format!(
        "SELECT r.position, {} FROM invoice_relations r
         LEFT JOIN invoices o ON o.entity_id = r.entity_id AND o.uuid = r.related_uuid
             AND o.xml_processed = 1
         WHERE r.invoice_id = ?1 AND r.position > ?2
         ORDER BY r.position LIMIT ?3",
        entry("r.related_uuid")
    )
}

/// Where a page of `related_by` resumes: its last entry's naming invoice's `issued_at`,
/// id, and the position of the relation in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NamedAt {
    pub issued_at: String,
    pub invoice_id: String,
    pub position: i64,
}

/// Up to `limit` entries of the stored documents whose CfdiRelacionados name the
/// invoice, oldest first (by their `issued_at`, id and the relation's position), after
/// `after` (`NamedAt::default()` for the first): (its key, entry).
pub fn related_by(
    conn: &Conn,
    invoice_id: &str,
    after: &NamedAt,
    limit: i64,
) -> anyhow::Result<Vec<(NamedAt, String)>> {
    let params = params![
        invoice_id,
        after.issued_at,
        after.invoice_id,
        after.position,
        limit
    ];
    conn.all(&related_by_sql(), params, |r| {
        let at = NamedAt {
            issued_at: r.get(0)?,
            invoice_id: r.get(1)?,
            position: r.get(2)?,
        };
        Ok((at, r.get(3)?))
    })
}

/// `related_by`'s statement: (invoice id, the three parts of after, limit).
pub(super) fn related_by_sql() -> String {
    format!(
        "SELECT r.invoice_issued_at, r.invoice_id, r.position, {} FROM invoices i
         JOIN invoice_relations r ON r.entity_id = i.entity_id AND r.related_uuid = i.uuid
         JOIN invoices o ON o.id = r.invoice_id
         WHERE i.id = ?1 AND r.invoice_id <> i.id
             AND (r.invoice_issued_at, r.invoice_id, r.position) > (?2, ?3, ?4)
         ORDER BY r.invoice_issued_at, r.invoice_id, r.position LIMIT ?5",
        entry("o.uuid")
    )
}

/// How many entries each direction has: (relates_to, related_by). The first is read off
/// the primary key (positions run from 0), the second added up from
/// `invoice_relation_counts`, a row per document that names the invoice.
pub fn counts(conn: &Conn, invoice_id: &str) -> anyhow::Result<(i64, i64)> {
    conn.one(COUNTS, params![invoice_id], |r| Ok((r.get(0)?, r.get(1)?)))
}

pub(super) const COUNTS: &str = "SELECT
        coalesce((SELECT r.position + 1 FROM invoice_relations r WHERE r.invoice_id = i.id
                  ORDER BY r.position DESC LIMIT 1), 0),
        coalesce((SELECT sum(c.times) FROM invoice_relation_counts c
                  WHERE c.entity_id = i.entity_id AND c.related_uuid = i.uuid AND c.invoice_id <> i.id), 0)
     FROM invoices i WHERE i.id = ?1";

/// Two columns for a query over `invoices`: whether the row's CfdiRelacionados name
/// documents (1 or 0), and whether other documents' name it. When both are 0 it has
/// no relations and no `credits`, so `invoices::get` runs neither query: most invoices
/// relate to nothing.
pub const PRESENT: &str = "CASE WHEN EXISTS (SELECT 1 FROM invoice_relations r \
        WHERE r.invoice_id = invoices.id) THEN 1 ELSE 0 END, \
    CASE WHEN EXISTS (SELECT 1 FROM invoice_relations r WHERE r.entity_id = invoices.entity_id \
        AND r.related_uuid = invoices.uuid AND r.invoice_id <> invoices.id) THEN 1 ELSE 0 END";

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
