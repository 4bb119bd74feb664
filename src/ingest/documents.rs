//! Stage 2: a document's XML (and PDF) stored byte for byte (compressed), its row
//! filled from the parsed CFDI, and the payment aggregates it affects recomputed.

use super::{payments, IngestError, Owner};
use crate::cfdi::{Cfdi, CfdiError};
use crate::db::{self, documents::ToStore, invoices::write};
use crate::domain::extraction::Direction;
use crate::sat::Metadata;
use rusqlite::Connection;
use std::collections::BTreeSet;

/// A document parsed and encoded for storing: the CPU-bound part of ingesting, done
/// before the write transaction so the database's single writer lock never waits on it.
#[derive(Debug)]
pub struct Prepared {
    pub cfdi: Cfdi,
    xml: ToStore,
    pdf: Option<ToStore>,
}

/// Parses `xml` and compresses it and `pdf` (a document that does not parse is not
/// compressed: it is not stored).
pub fn prepare(xml: &[u8], pdf: Option<&[u8]>) -> Result<Prepared, CfdiError> {
    let cfdi = Cfdi::parse_stamped(xml)?;
    Ok(Prepared {
        cfdi,
        xml: db::documents::xml(xml),
        pdf: pdf.map(|pdf| db::documents::pdf(pdf, xml)),
    })
}

/// Parses and stores one document. `listed` is the listing entry it answers, when there
/// is one (it carries the authority's cancellation status). Returns the invoice id.
pub fn ingest_document(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    listed: Option<&Metadata>,
    xml: &[u8],
    pdf: Option<&[u8]>,
) -> Result<String, IngestError> {
    let prepared = prepare(xml, pdf)?;
    store_document(tx, owner, direction, listed, &prepared)
}

/// `ingest_document` for a document prepared beforehand (extractions, packages and
/// imports prepare outside the write transaction).
pub fn store_document(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    listed: Option<&Metadata>,
    doc: &Prepared,
) -> Result<String, IngestError> {
    let cfdi = &doc.cfdi;
    let uuid = cfdi.uuid()?.to_string();
    if let Some(m) = listed {
        if !m.uuid.trim().eq_ignore_ascii_case(&uuid) {
            return Err(IngestError::UuidMismatch {
                expected: m.uuid.clone(),
                found: uuid,
            });
        }
    }
    let existing = db::invoices::find(tx, owner.entity_id, &uuid)?;
    // The invoices whose aggregates this document can change, besides its own (written
    // with its row): those its earlier version and this one pay.
    let mut affected: BTreeSet<String> = BTreeSet::new();
    if let Some((id, processed)) = &existing {
        db::invoice_changes::mark(tx, owner.batch, id)?;
        // Only a stored document has entries (a metadata-only row has none yet).
        if *processed {
            affected.extend(db::payment_entries::related_uuids(tx, id)?);
        }
    }
    let new = existing.is_none();
    let id = existing
        .map(|(id, _)| id)
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let (status, cancelled_at) = match listed {
        Some(m) => (
            if m.cancelled { "cancelled" } else { "active" },
            m.cancelled_at.clone(),
        ),
        None => write::status(tx, &id)?,
    };
    let own = payments::own_aggregate(tx, owner.entity_id, &uuid, cfdi, status == "cancelled")?;
    write::upsert_processed(
        tx,
        owner,
        direction,
        &id,
        &uuid,
        cfdi,
        status,
        cancelled_at.as_deref(),
        doc.pdf.is_some(),
        &own,
    )?;
    if new {
        db::invoice_changes::mark_new(tx, owner.batch, &id)?;
    }
    db::documents::put_invoice(tx, &id, &doc.xml, doc.pdf.as_ref())?;
    affected.extend(payments::replace_entries(tx, owner.entity_id, &id, cfdi)?);
    // A complement naming itself changes nothing: only type I invoices are paid.
    affected.remove(&uuid);
    payments::recompute_all(tx, owner, &affected)?;
    Ok(id)
}
