//! Payment complements: their entries (one per distinct, linkable related document)
//! and the aggregates of the invoices they pay, recomputed from every stored entry.

use super::Owner;
use crate::cfdi::{Cfdi, InvoiceType};
use crate::db::classes::Stored;
use crate::db::{self, invoices::write, Conn};
use crate::domain::class::InvoiceClass;
use crate::domain::payments::{self, Aggregate, Entry};
use std::collections::BTreeSet;

/// Replaces a complement's entries (distinct, linkable ones; its `first` document has
/// none to replace); returns the uuids they name.
pub fn replace_entries(
    tx: &Conn,
    entity_id: &str,
    id: &str,
    c: &Cfdi,
    first: bool,
) -> anyhow::Result<Vec<String>> {
    let mut kept: Vec<(String, Entry)> = vec![];
    if c.invoice_type == InvoiceType::P {
        for payment in &c.payments {
            // A DoctoRelacionado without IdDocumento cannot be linked: it stays in the
            // complement's own `payments` only. Repeats within one Pago count once.
            let start = kept.len();
            for d in &payment.related_documents {
                let Some(uuid) = d.uuid.clone() else {
                    continue;
                };
                let e = Entry {
                    payment_uuid: String::new(),
                    payment_cancelled: false,
                    paid_at: payment.paid_at.clone(),
                    installment: d.installment,
                    previous_balance: d.previous_balance,
                    amount_paid: d.amount_paid,
                    outstanding_balance: d.outstanding_balance,
                    currency: d.currency.clone(),
                    equivalence: d.equivalence,
                };
                if !kept[start..].iter().any(|(u, k)| *u == uuid && *k == e) {
                    kept.push((uuid, e));
                }
            }
        }
    }
    db::payment_entries::replace(tx, entity_id, id, &kept, first)?;
    Ok(kept.into_iter().map(|(uuid, _)| uuid).collect())
}

/// Recomputes each of `uuids`' aggregates, marking them changed by `owner.batch`.
pub fn recompute_all(tx: &Conn, owner: Owner, uuids: &BTreeSet<String>) -> anyhow::Result<()> {
    for uuid in uuids {
        recompute(tx, owner, uuid)?;
    }
    Ok(())
}

/// The aggregate a document about to be stored will have, from the `entries` already
/// naming it: computed before its row is written, so that row is written once.
pub fn own_aggregate(entries: Vec<(String, Entry)>, c: &Cfdi, cancelled: bool) -> Aggregate {
    let invoice = payments::Invoice {
        invoice_type: c.invoice_type.as_str(),
        payment_method: c.payment_method.as_deref(),
        currency: c.currency.as_deref(),
        total: c.total,
        cancelled,
    };
    let entries: Vec<Entry> = entries.into_iter().map(|(_, e)| e).collect();
    payments::aggregate(&invoice, &entries)
}

/// Recomputes one invoice's payment aggregates from every stored entry naming it.
fn recompute(tx: &Conn, owner: Owner, uuid: &str) -> anyhow::Result<()> {
    let entity_id = owner.entity_id;
    let Some(basis) = write::payment_basis(tx, entity_id, uuid)? else {
        return Ok(()); // not here yet: its entries wait for it
    };
    let invoice = payments::Invoice {
        invoice_type: basis.invoice_type.as_deref().unwrap_or(""),
        payment_method: basis.payment_method.as_deref(),
        currency: basis.currency.as_deref(),
        total: basis.total.and_then(|t| t.parse().ok()).unwrap_or_default(),
        cancelled: basis.cancelled,
    };
    let agg = aggregate_of(tx, entity_id, uuid, &invoice)?;
    db::changes::mark(tx, &InvoiceClass::TRACKED, owner.batch, &basis.id)?;
    write::set_payments(tx, &basis.id, &agg)
}

fn aggregate_of(
    tx: &Conn,
    entity_id: &str,
    uuid: &str,
    invoice: &payments::Invoice,
) -> anyhow::Result<Aggregate> {
    let entries: Vec<Entry> = db::payment_entries::payments_of(tx, entity_id, uuid)?
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    Ok(payments::aggregate(invoice, &entries))
}
