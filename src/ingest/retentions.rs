//! A CFDI de Retenciones through the ingestion path: parsed and compressed before the
//! write transaction, then stored under the invoices' rules for a UUID seen again (the
//! same bytes, or the same document written out again, are idempotent; another document
//! claiming a stored UUID is refused and the stored one kept). Its events
//! (`retention.created`, `retention.updated`) commit with its row.

use super::IngestError;
use crate::cfdi::CfdiError;
use crate::db::documents::{self, Class, ToStore};
use crate::db::retentions::{self, Owner, Written};
use crate::db::{Conn, Tx};
use crate::domain::event::Kind;
use crate::domain::extraction::Direction;
use crate::domain::listing::Metadata;
use crate::retenciones::Retention;
use serde_json::value::RawValue;

/// A retention parsed and encoded for storing.
#[derive(Debug)]
pub struct PreparedRetention {
    pub retention: Retention,
    xml: ToStore,
    pdf: Option<ToStore>,
}

impl PreparedRetention {
    /// A document already parsed (and checked storable) with its files encoded.
    pub(super) fn of(retention: Retention, xml: &[u8], pdf: Option<&[u8]>) -> Self {
        PreparedRetention {
            retention,
            xml: documents::xml(xml),
            pdf: pdf.map(|pdf| documents::pdf(pdf, xml)),
        }
    }
}

/// Parses `xml` as a Retenciones and compresses it and `pdf`.
pub fn prepare_retention(xml: &[u8], pdf: Option<&[u8]>) -> Result<PreparedRetention, CfdiError> {
    let retention = Retention::parse_stamped(xml)?;
    Ok(PreparedRetention::of(retention, xml, pdf))
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
    let id = existing.unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let (status, cancelled_at) = match listed {
        Some(m) => (
            if m.cancelled { "cancelled" } else { "active" }.to_owned(),
            m.cancelled_at.clone(),
        ),
        None => retentions::status(tx, &id)?,
    };
    let written = retentions::upsert(
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
    documents::put_files(tx, Class::Retention, &id, &doc.xml, doc.pdf.as_ref())?;
    match written {
        Written::Created => emit(tx, owner.org_id, Kind::RetentionCreated, &id)?,
        Written::Updated => emit(tx, owner.org_id, Kind::RetentionUpdated, &id)?,
        Written::Unchanged => {}
    }
    Ok(id)
}

/// A retention's status as a later listing reports it: applied, with its
/// `retention.updated`, when it changed.
pub fn set_retention_status(tx: &Tx, org_id: &str, id: &str, m: &Metadata) -> anyhow::Result<()> {
    let status = if m.cancelled { "cancelled" } else { "active" };
    if retentions::set_status(tx, id, status, m.cancelled_at.as_deref())? {
        emit(tx, org_id, Kind::RetentionUpdated, id)?;
    }
    Ok(())
}

fn emit(tx: &Tx, org_id: &str, kind: Kind, id: &str) -> anyhow::Result<()> {
    let Some(object) = retentions::get(tx, org_id, id)? else {
        return Ok(());
    };
    crate::events::emit(tx, org_id, kind, id, &RawValue::from_string(object)?, None)?;
    Ok(())
}

/// Whether `doc` is the document stored as retention `id`: the same XML bytes, or an
/// XML that reads the same (every parsed field equal, the stamp included).
fn is_stored(tx: &Conn, id: &str, doc: &PreparedRetention) -> anyhow::Result<bool> {
    if documents::holds_xml_of(tx, Class::Retention, id, &doc.xml)? {
        return Ok(true);
    }
    let Some(stored) = documents::get_of(tx, Class::Retention, id, "xml")? else {
        return Ok(true);
    };
    Ok(Retention::parse(&stored).is_ok_and(|stored| stored == doc.retention))
}
