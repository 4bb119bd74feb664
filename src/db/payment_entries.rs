//! SQL for `payment_entries`: the related-document entries of payment complements,
//! linked to the paid invoice by (entity, uuid) so a complement that arrives first
//! waits here for its invoice.

use super::invoices::{dec, write::text};
use super::sql::{params, Row};
use super::Conn;
use crate::domain::payments::Entry;
use std::collections::HashMap;

/// The uuids an invoice's stored payment entries name.
pub fn related_uuids(conn: &Conn, payment_invoice_id: &str) -> anyhow::Result<Vec<String>> {
    conn.all(
        "SELECT DISTINCT related_uuid FROM payment_entries WHERE payment_invoice_id = ?1",
        params![payment_invoice_id],
        |r| r.get(0),
    )
}

/// Replaces a complement's entries with `entries` (related uuid, entry), in order
/// (its `first` document has none to replace).
pub fn replace(
    conn: &Conn,
    entity_id: &str,
    payment_invoice_id: &str,
    entries: &[(String, Entry)],
    first: bool,
) -> anyhow::Result<()> {
    super::rows::clear(
        conn,
        "payment_entries",
        "payment_invoice_id",
        payment_invoice_id,
        first,
    )?;
    for (seq, (uuid, e)) in entries.iter().enumerate() {
        conn.defer(
            "INSERT INTO payment_entries (payment_invoice_id, entity_id, seq, related_uuid, paid_at, installment,
                previous_balance, amount_paid, outstanding_balance, currency, equivalence)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            params![
                payment_invoice_id,
                entity_id,
                seq as i64,
                uuid,
                e.paid_at,
                e.installment.map(i64::from),
                text(e.previous_balance),
                text(e.amount_paid),
                text(e.outstanding_balance),
                e.currency,
                text(e.equivalence)
            ],
        )?;
    }
    Ok(())
}

/// The entries of payment complements that name an invoice, oldest first, with the
/// complement's id, uuid and status.
pub fn payments_of(
    conn: &Conn,
    entity_id: &str,
    uuid: &str,
) -> anyhow::Result<Vec<(String, Entry)>> {
    conn.all(
        "SELECT p.id, p.uuid, p.status, e.paid_at, e.installment, e.previous_balance, e.amount_paid,
                e.outstanding_balance, e.currency, e.equivalence
         FROM payment_entries e JOIN invoices p ON p.id = e.payment_invoice_id
         WHERE e.entity_id = ?1 AND e.related_uuid = ?2
         ORDER BY e.paid_at, p.uuid, e.seq",
        params![entity_id, uuid],
        |r| entry(r, 0),
    )
}

/// `payments_of` each of `uuids`, by UUID (one with no entries is absent): one read for
/// a batch of documents (`ingest::Ahead`).
pub fn payments_of_all(
    conn: &Conn,
    entity_id: &str,
    uuids: &[String],
) -> anyhow::Result<HashMap<String, Vec<(String, Entry)>>> {
    // PostgreSQL looks each UUID up by the index, LATERALly, as `known_all` does.
    let sql = conn.pick(
        "SELECT e.related_uuid, p.id, p.uuid, p.status, e.paid_at, e.installment, e.previous_balance,
                e.amount_paid, e.outstanding_balance, e.currency, e.equivalence
         FROM payment_entries e JOIN invoices p ON p.id = e.payment_invoice_id
         WHERE e.entity_id = ?1 AND e.related_uuid IN (SELECT value FROM json_each(?2))
         ORDER BY e.paid_at, p.uuid, e.seq",
        "SELECT e.related_uuid, p.id, p.uuid, p.status, e.paid_at, e.installment, e.previous_balance,
                e.amount_paid, e.outstanding_balance, e.currency, e.equivalence
         FROM json_each(?2) u CROSS JOIN LATERAL (
              SELECT * FROM payment_entries WHERE entity_id = ?1 AND related_uuid = u.value) e
         JOIN invoices p ON p.id = e.payment_invoice_id
         ORDER BY e.paid_at, p.uuid, e.seq",
    );
    let rows = conn.all(
        sql,
        params![entity_id, serde_json::to_string(uuids)?],
        |r| Ok((r.get::<String>(0)?, entry(r, 1)?)),
    )?;
    let mut by_uuid: HashMap<String, Vec<(String, Entry)>> = HashMap::new();
    for (uuid, e) in rows {
        by_uuid.entry(uuid).or_default().push(e);
    }
    Ok(by_uuid)
}

/// An entry read from column `at` on (see `payments_of`).
fn entry(r: &Row, at: usize) -> anyhow::Result<(String, Entry)> {
    Ok((
        r.get::<String>(at)?,
        Entry {
            payment_uuid: r.get(at + 1)?,
            payment_cancelled: r.get::<String>(at + 2)? == "cancelled",
            paid_at: r.get(at + 3)?,
            installment: r
                .get::<Option<i64>>(at + 4)?
                .map(u32::try_from)
                .transpose()?,
            previous_balance: dec(r.get(at + 5)?),
            amount_paid: dec(r.get(at + 6)?),
            outstanding_balance: dec(r.get(at + 7)?),
            currency: r.get(at + 8)?,
            equivalence: dec(r.get(at + 9)?),
        },
    ))
}
