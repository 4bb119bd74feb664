//! SQL for `payment_entries`: the related-document entries of payment complements,
//! linked to the paid invoice by (entity, uuid) so a complement that arrives first
//! waits here for its invoice.

use super::invoices::{dec, write::text};
use super::sql::params;
use super::Conn;
use crate::domain::payments::Entry;

/// The uuids an invoice's stored payment entries name.
pub fn related_uuids(conn: &Conn, payment_invoice_id: &str) -> anyhow::Result<Vec<String>> {
    conn.all(
        "SELECT DISTINCT related_uuid FROM payment_entries WHERE payment_invoice_id = ?1",
        params![payment_invoice_id],
        |r| r.get(0),
    )
}

/// Replaces a complement's entries with `entries` (related uuid, entry), in order.
pub fn replace(
    conn: &Conn,
    entity_id: &str,
    payment_invoice_id: &str,
    entries: &[(String, Entry)],
) -> anyhow::Result<()> {
    conn.defer(
        "DELETE FROM payment_entries WHERE payment_invoice_id = ?1",
        params![payment_invoice_id],
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
        |r| {
            Ok((
                r.get::<String>(0)?,
                Entry {
                    payment_uuid: r.get(1)?,
                    payment_cancelled: r.get::<String>(2)? == "cancelled",
                    paid_at: r.get(3)?,
                    installment: r.get::<Option<i64>>(4)?.map(u32::try_from).transpose()?,
                    previous_balance: dec(r.get(5)?),
                    amount_paid: dec(r.get(6)?),
                    outstanding_balance: dec(r.get(7)?),
                    currency: r.get(8)?,
                    equivalence: dec(r.get(9)?),
                },
            ))
        },
    )
}
