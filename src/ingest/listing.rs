//! Stage 1: a listing's entries become metadata-only rows; a changed status (a
//! cancellation seen by a later run) is applied and the aggregates it affects follow
//! (`apply_status`, also what the SAT's status service's answers go through).

use super::{payments, Owner};
use crate::db::classes::Stored;
use crate::db::invoices::write::{self, Known, Listed};
use crate::db::{self, Conn};
use crate::domain::class::InvoiceClass;
use crate::domain::extraction::Direction;
use crate::domain::listing::Metadata;
use std::collections::BTreeSet;

/// Records each listed invoice (new ones metadata-only) and applies status changes.
/// Returns the positions in `listing` whose XML still has to be processed.
pub fn record_listing(
    tx: &Conn,
    owner: Owner,
    direction: Direction,
    listing: &[Metadata],
) -> anyhow::Result<Vec<usize>> {
    let now = crate::time::now();
    let mut pending = vec![];
    let uuids: Vec<String> = listing
        .iter()
        .map(|m| m.uuid.trim().to_uppercase())
        .collect();
    // What the entity has of the page, read at once; kept up to date below, as a
    // listing may name a UUID twice.
    let mut stored = write::known_all(tx, owner.entity_id, &uuids)?;
    // The page's new entries, written together (`write::insert_metadata`).
    let mut new: Vec<Listed> = vec![];
    for (i, (m, uuid)) in listing.iter().zip(uuids).enumerate() {
        let status = if m.cancelled { "cancelled" } else { "active" };
        let Some(known) = stored.get(&uuid).cloned() else {
            let row = Listed::new(uuid.clone(), m, status);
            stored.insert(
                uuid,
                Known {
                    id: row.id.clone(),
                    processed: false,
                    status: status.to_string(),
                    cancelled_at: m.cancelled_at.clone(),
                    invoice_type: row.invoice_type().map(str::to_owned),
                },
            );
            new.push(row);
            pending.push(i);
            continue;
        };
        if known.status != status {
            // It may be one of the new rows (the page names it twice): written first.
            write::insert_metadata(tx, owner, direction, &std::mem::take(&mut new), &now)?;
            apply_status(
                tx,
                owner,
                &known,
                &uuid,
                status,
                m.cancelled_at.as_deref(),
                &now,
            )?;
            if let Some(stored) = stored.get_mut(&uuid) {
                stored.status = status.to_string();
                stored.cancelled_at = m.cancelled_at.clone();
            }
        }
        if !known.processed {
            pending.push(i);
        }
    }
    write::insert_metadata(tx, owner, direction, &new, &now)?;
    Ok(pending)
}

/// A status the SAT gives a stored invoice (a later listing, or its status service:
/// `jobs::sat_status`), applied the one way: the invoice is marked for its batch's
/// events, its status written, and the payment aggregates it affects recomputed (a
/// cancelled invoice owes nothing; a cancelled complement no longer pays).
pub fn apply_status(
    tx: &Conn,
    owner: Owner,
    known: &Known,
    uuid: &str,
    status: &str,
    cancelled_at: Option<&str>,
    now: &str,
) -> anyhow::Result<()> {
    db::changes::mark(tx, &InvoiceClass::TRACKED, owner.batch, &known.id)?;
    write::set_status(tx, &known.id, status, cancelled_at, now)?;
    if known.processed {
        let mut affected = BTreeSet::from([uuid.to_owned()]);
        if known.invoice_type.as_deref() == Some("P") {
            affected.extend(db::payment_entries::related_uuids(tx, &known.id)?);
        }
        payments::recompute_all(tx, owner, &affected)?;
    }
    Ok(())
}
