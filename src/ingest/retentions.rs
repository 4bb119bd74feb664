//! A CFDI de Retenciones through the ingestion path: parsed and compressed before the
//! write transaction, then stored under the invoices' rules for a UUID seen again (the
//! same bytes, or the same document written out again, are idempotent; another document
//! claiming a stored UUID, a stored invoice's included, is refused and the stored one
//! kept). A retention has no
//! metadata-only row: a listing's entries (stage 1, `record_retention_listing`) keep
//! their status in `retention_listings` for the XML stored after them, and apply it to
//! one already stored. Its events (`retention.created`, `retention.updated`) are
//! coalesced per batch like the invoices' (`db::changes`, flushed with them).

use super::IngestError;
use crate::cfdi::{xml, CfdiError};
use crate::db::classes::Stored;
use crate::db::documents::{self, ToStore};
use crate::db::retentions::{self, Owner};
use crate::db::{changes, invoices, Conn, Tx};
use crate::domain::class::RetentionClass;
use crate::domain::extraction::Direction;
use crate::domain::listing::Metadata;
use crate::retention::Retention;
use crate::seal::{Verified, Verifier};

/// A retention parsed and encoded for storing.
#[derive(Debug)]
pub struct PreparedRetention {
    pub retention: Retention,
    /// Its seal's verification (`None`: a version the SAT publishes no stylesheet for).
    pub seal: Option<Verified>,
    xml: ToStore,
    pdf: Option<ToStore>,
}

impl PreparedRetention {
    /// A document already parsed (and checked storable) and verified, with its files
    /// encoded.
    pub(super) fn of(
        retention: Retention,
        seal: Option<Verified>,
        xml: &[u8],
        pdf: Option<&[u8]>,
    ) -> Self {
        PreparedRetention {
            retention,
            seal,
            xml: documents::xml(xml),
            pdf: pdf.map(|pdf| documents::pdf(pdf, xml)),
        }
    }
}

/// Parses `xml` as a Retenciones, verifies its seal on the same tree, and compresses
/// it and `pdf`.
pub fn prepare_retention(
    bytes: &[u8],
    pdf: Option<&[u8]>,
    verifier: Verifier<'_>,
) -> Result<PreparedRetention, CfdiError> {
    let (retention, seal) = xml::with_tree(bytes, |root| {
        Ok((Retention::from_root(root)?, verifier.tree(root)))
    })?;
    retention.check_storable()?;
    Ok(PreparedRetention::of(retention, seal, bytes, pdf))
}

/// Stores a prepared retention for `owner`'s entity. `listed` is the listing entry it
/// answers, when there is one (its cancellation status). Returns the retention's id.
pub fn store_retention(
    tx: &Tx,
    owner: Owner,
    direction: Direction,
    listed: Option<&Metadata>,
    doc: &PreparedRetention,
) -> Result<String, IngestError> {
    let r = &doc.retention;
    let uuid = r.uuid()?.to_string();
    if let Some(m) = listed {
        if !m.uuid.trim().eq_ignore_ascii_case(&uuid) {
            return Err(IngestError::UuidMismatch {
                expected: m.uuid.clone(),
                found: uuid,
            });
        }
    }
    let existing = retentions::find(tx, owner.entity_id, &uuid)?;
    if let Some(id) = &existing {
        if !is_stored(tx, id, doc)? {
            return Err(IngestError::UuidTaken { uuid });
        }
    }
    // One UUID, one document of either class: a stored invoice of the entity holds it
    // (its metadata-only row, a listing's entry, is no document yet).
    let invoice = invoices::write::known(tx, owner.entity_id, &uuid)?;
    if invoice.is_some_and(|known| known.processed) {
        return Err(IngestError::UuidTaken { uuid });
    }
    if let Some(id) = &existing {
        changes::mark(tx, &RetentionClass::TRACKED, owner.batch, id)?;
    }
    let new = existing.is_none();
    let id = existing.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let (status, cancelled_at) = match listed {
        Some(m) => listing_status(m),
        // A new one takes what its listing said (an issued one comes cancelled too);
        // a stored one keeps its own.
        None if new => retentions::listed_status(tx, owner.entity_id, &uuid.to_ascii_uppercase())?
            .unwrap_or_else(|| ("active".into(), None)),
        None => retentions::status(tx, &id)?,
    };
    retentions::upsert(
        tx,
        owner,
        direction,
        &id,
        &uuid,
        r,
        &status,
        cancelled_at.as_deref(),
        doc.pdf.is_some(),
    )?;
    if new {
        changes::mark_new(tx, &RetentionClass::TRACKED, owner.batch, &id)?;
    }
    crate::db::seals::put::<RetentionClass>(tx, &id, doc.seal.as_ref())?;
    documents::put_files(tx, RetentionClass::FILES, &id, &doc.xml, doc.pdf.as_ref())?;
    Ok(id)
}

/// Stage 1 for retentions: each listed entry's status is kept for its XML to come, and
/// applied to a stored retention whose status it changes (its `retention.updated`
/// goes out with the batch's events). Returns the positions in `listing` whose XML is
/// still to be stored.
pub fn record_retention_listing(
    tx: &Conn,
    owner: Owner,
    listing: &[Metadata],
) -> anyhow::Result<Vec<usize>> {
    let mut pending = vec![];
    for (i, m) in listing.iter().enumerate() {
        let uuid = m.uuid.trim().to_ascii_uppercase();
        let (status, cancelled_at) = listing_status(m);
        retentions::record_listing(tx, owner.entity_id, &uuid, &status, cancelled_at.as_deref())?;
        match retentions::find_listed(tx, owner.entity_id, &uuid)? {
            Some(id) => set_retention_status(tx, owner.batch, &id, m)?,
            None => pending.push(i),
        }
    }
    Ok(pending)
}

/// A retention's status as a listing reports it: applied, marked for `batch`'s
/// `retention.updated`, when it changed.
pub fn set_retention_status(tx: &Conn, batch: &str, id: &str, m: &Metadata) -> anyhow::Result<()> {
    let (status, cancelled_at) = listing_status(m);
    let (stored, stored_at) = retentions::status(tx, id)?;
    if stored == status && stored_at == cancelled_at {
        return Ok(());
    }
    changes::mark(tx, &RetentionClass::TRACKED, batch, id)?;
    retentions::set_status(tx, id, &status, cancelled_at.as_deref())?;
    Ok(())
}

fn listing_status(m: &Metadata) -> (String, Option<String>) {
    if m.cancelled {
        ("cancelled".into(), m.cancelled_at.clone())
    } else {
        ("active".into(), None)
    }
}

/// Whether `doc` is the document stored as retention `id`: the same XML bytes, or an
/// XML that reads the same (every parsed field equal, the stamp included).
fn is_stored(tx: &Conn, id: &str, doc: &PreparedRetention) -> anyhow::Result<bool> {
    if documents::holds_xml_of(tx, RetentionClass::FILES, id, &doc.xml)? {
        return Ok(true);
    }
    let Some(stored) = documents::get_of(tx, RetentionClass::FILES, id, "xml")? else {
        return Ok(true);
    };
    Ok(Retention::parse(&stored).is_ok_and(|stored| stored == doc.retention))
}
