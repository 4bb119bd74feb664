//! Stage 2 of an invoice: its XML (and PDF) stored byte for byte (compressed), its row
//! filled from the parsed CFDI, and the payment aggregates it affects recomputed.

use super::{payments, Ahead, IngestError, Owner};
use crate::cfdi::{xml, Cfdi, CfdiError};
use crate::db::classes::Stored;
use crate::db::{self, documents::ToStore, invoices::write, Conn};
use crate::domain::class::InvoiceClass;
use crate::domain::extraction::Direction;
use crate::domain::listing::Metadata;
use crate::seal::{Verified, Verifier};
use std::collections::BTreeSet;

/// A document parsed, its seal verified and its files encoded for storing: the
/// CPU-bound part of ingesting, done before the write transaction so the database's
/// single writer lock never waits on it.
#[derive(Debug)]
pub struct Prepared {
    pub cfdi: Cfdi,
    /// Its seal's verification (`None`: a version the SAT publishes no stylesheet for).
    pub seal: Option<Verified>,
    xml: ToStore,
    pdf: Option<ToStore>,
}

/// Parses `xml`, verifies its seal on the same tree, and compresses it and `pdf` (a
/// document that does not parse is not compressed: it is not stored).
pub fn prepare(
    bytes: &[u8],
    pdf: Option<&[u8]>,
    verifier: Verifier<'_>,
) -> Result<Prepared, CfdiError> {
    let (cfdi, seal) = xml::with_tree(bytes, |root| {
        Ok((Cfdi::from_root(root)?, verifier.tree(root)))
    })?;
    cfdi.uuid()?;
    Ok(Prepared::of(cfdi, seal, bytes, pdf))
}

impl Prepared {
    /// A stamped document already parsed and verified, with its files encoded.
    pub(super) fn of(cfdi: Cfdi, seal: Option<Verified>, xml: &[u8], pdf: Option<&[u8]>) -> Self {
        Prepared {
            cfdi,
            seal,
            xml: db::documents::xml(xml),
            pdf: pdf.map(|pdf| db::documents::pdf(pdf, xml)),
        }
    }
}

/// Parses, verifies offline (`Verifier::offline`) and stores one document. `listed` is the listing entry it answers, when there
/// is one (it carries the authority's cancellation status). Returns the invoice id.
pub fn ingest_invoice(
    tx: &Conn,
    owner: Owner,
    direction: Direction,
    listed: Option<&Metadata>,
    xml: &[u8],
    pdf: Option<&[u8]>,
) -> Result<String, IngestError> {
    let prepared = prepare(xml, pdf, Verifier::offline())?;
    store_invoice(tx, owner, direction, listed, &prepared, &mut Ahead::none())
}

/// `ingest_invoice` for a document prepared beforehand (extractions, packages and
/// imports prepare outside the write transaction), with what its batch read ahead.
pub fn store_invoice(
    tx: &Conn,
    owner: Owner,
    direction: Direction,
    listed: Option<&Metadata>,
    doc: &Prepared,
    ahead: &mut Ahead,
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
    let existing = ahead.invoice(tx, owner.entity_id, &uuid)?;
    // A UUID names one document: another one claiming it never replaces what is stored,
    // and a retention of the entity holding it is another document. Checked in the
    // write transaction that stores it, so no other writer stores one in between.
    if let Some(known) = existing.as_ref().filter(|k| k.processed) {
        if !is_stored(tx, &known.id, doc)? {
            return Err(IngestError::UuidTaken { uuid });
        }
    }
    if ahead.holds_retention(tx, owner.entity_id, &uuid)? {
        return Err(IngestError::UuidTaken { uuid });
    }
    // The invoices whose aggregates this document can change, besides its own (written
    // with its row): those its earlier version and this one pay.
    let mut affected: BTreeSet<String> = BTreeSet::new();
    if let Some(known) = &existing {
        db::changes::mark(tx, &InvoiceClass::TRACKED, owner.batch, &known.id)?;
        // Only a stored document has entries (a metadata-only row has none yet).
        if known.processed {
            affected.extend(db::payment_entries::related_uuids(tx, &known.id)?);
        }
    }
    let (status, cancelled_at) = match (listed, &existing) {
        (Some(m), _) => (
            if m.cancelled { "cancelled" } else { "active" },
            m.cancelled_at.clone(),
        ),
        (None, Some(known)) => known.status(),
        (None, None) => ("active", None),
    };
    // Only a processed document has files stored.
    let (new, has_files) = (
        existing.is_none(),
        existing.as_ref().is_some_and(|k| k.processed),
    );
    let id = existing
        .map(|known| known.id)
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let entries = ahead.payments_of(tx, owner.entity_id, &uuid)?;
    let own = payments::own_aggregate(entries, cfdi, status == "cancelled");
    let seal = db::seals::Answer::of(doc.seal.as_ref())?;
    if ahead.first_seal(&seal.key) {
        db::seals::keep(tx, &seal)?;
    }
    write::upsert_processed(
        tx,
        owner,
        direction,
        &id,
        !has_files,
        &uuid,
        cfdi,
        status,
        cancelled_at.as_deref(),
        doc.pdf.is_some(),
        &own,
        (&seal.status, &seal.key, seal.awaits.as_deref()),
    )?;
    if new {
        db::changes::mark_new(tx, &InvoiceClass::TRACKED, owner.batch, &id)?;
    }
    if has_files {
        db::documents::put_invoice(tx, &id, &doc.xml, doc.pdf.as_ref())?;
    } else {
        db::documents::put_first_invoice(tx, &id, &doc.xml, doc.pdf.as_ref())?;
    }
    affected.extend(payments::replace_entries(
        tx,
        owner.entity_id,
        &id,
        cfdi,
        !has_files,
    )?);
    // What this batch read ahead of these UUIDs no longer holds.
    ahead.touch(&uuid);
    for paid in &affected {
        ahead.touch(paid);
    }
    // A complement naming itself changes nothing: only type I invoices are paid.
    affected.remove(&uuid);
    payments::recompute_all(tx, owner, &affected)?;
    Ok(id)
}

/// Whether `doc` is the document stored as invoice `id`: the same XML bytes (checked
/// without decoding), or an XML that reads the same (see `same_document`).
fn is_stored(tx: &Conn, id: &str, doc: &Prepared) -> anyhow::Result<bool> {
    if db::documents::holds_xml(tx, id, &doc.xml)? {
        return Ok(true);
    }
    let Some(stored) = db::documents::get(tx, id, "xml")? else {
        return Ok(true);
    };
    // A stored XML that no longer parses cannot be shown to be the same: it is kept.
    Ok(Cfdi::parse_stamped(&stored).is_ok_and(|stored| same_document(&stored, &doc.cfdi)))
}

/// The same document, written out again: every field the service reads from the XML
/// is equal (type, parties, amounts, concepts, taxes, payments, related documents, the
/// issuer's seal and the SAT's stamp). Whitespace, attribute order, namespace prefixes
/// or a trailing newline do not make another document; any other content does, even
/// under the same UUID.
pub fn same_document(stored: &Cfdi, new: &Cfdi) -> bool {
    stored == new
}
