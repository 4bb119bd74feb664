//! Which class a document is: its root element decides (a `Comprobante` is an
//! invoice, a `Retenciones` a retention), read from one tree built under the same
//! limits for both; and the one place that sends a document, or a listing, down its
//! class's path, so the channels' sink and the import name no class.

use super::{Ahead, IngestError, Owner, Prepared, PreparedRetention};
use crate::cfdi::{xml, Cfdi, CfdiError};
use crate::db::{Conn, Tx};
use crate::domain::class::DocumentClass;
use crate::domain::extraction::Direction;
use crate::domain::listing::Metadata;
use crate::retention::Retention;
use crate::seal::{Verified, Verifier};

/// A stamped document of either class, parsed and encoded for storing.
#[derive(Debug)]
pub enum AnyPrepared {
    /// Both boxed: the two parsed documents differ in size by hundreds of bytes.
    Invoice(Box<Prepared>),
    Retention(Box<PreparedRetention>),
}

impl From<Prepared> for AnyPrepared {
    fn from(doc: Prepared) -> Self {
        AnyPrepared::Invoice(Box::new(doc))
    }
}

impl From<PreparedRetention> for AnyPrepared {
    fn from(doc: PreparedRetention) -> Self {
        AnyPrepared::Retention(Box::new(doc))
    }
}

enum Parsed {
    Invoice(Box<Cfdi>),
    Retention(Box<Retention>),
}

/// Parses `xml` as whichever class its root names, verifies its seal on the same tree,
/// requires what storing needs (a stamp; for a retention also its date and receiver)
/// and compresses the files.
pub fn prepare_any(
    xml: &[u8],
    pdf: Option<&[u8]>,
    verifier: Verifier<'_>,
) -> Result<AnyPrepared, CfdiError> {
    let (parsed, seal) = xml::with_tree(xml, |root| {
        let parsed = if Retention::is_root(root) {
            Retention::from_root(root).map(|r| Parsed::Retention(Box::new(r)))
        } else {
            Cfdi::from_root(root).map(|cfdi| Parsed::Invoice(Box::new(cfdi)))
        }?;
        Ok((parsed, verifier.tree(root)))
    })?;
    Ok(match parsed {
        Parsed::Invoice(cfdi) => {
            cfdi.uuid()?;
            AnyPrepared::Invoice(Box::new(Prepared::of(*cfdi, seal, xml, pdf)))
        }
        Parsed::Retention(retention) => {
            retention.check_storable()?;
            AnyPrepared::Retention(Box::new(PreparedRetention::of(*retention, seal, xml, pdf)))
        }
    })
}

impl AnyPrepared {
    /// Its seal's verification, when its version is one the SAT seals.
    pub fn seal(&self) -> Option<&Verified> {
        match self {
            AnyPrepared::Invoice(doc) => doc.seal.as_ref(),
            AnyPrepared::Retention(doc) => doc.seal.as_ref(),
        }
    }

    pub fn class(&self) -> DocumentClass {
        match self {
            AnyPrepared::Invoice(_) => DocumentClass::Invoices,
            AnyPrepared::Retention(_) => DocumentClass::Retentions,
        }
    }

    /// The RFC of the party an entity is in `direction` (the issuer of what it issued,
    /// the receiver of what it received), as written; empty when the document names
    /// none (a retention's foreign receiver).
    pub fn party(&self, direction: Direction) -> &str {
        match (self, direction) {
            (AnyPrepared::Invoice(doc), Direction::Issued) => &doc.cfdi.issuer.tax_id,
            (AnyPrepared::Invoice(doc), Direction::Received) => &doc.cfdi.receiver.tax_id,
            (AnyPrepared::Retention(doc), Direction::Issued) => &doc.retention.issuer.tax_id,
            (AnyPrepared::Retention(doc), Direction::Received) => doc
                .retention
                .receiver
                .as_ref()
                .and_then(|x| x.national.as_ref())
                .map_or("", |n| n.tax_id.as_str()),
        }
    }

    /// Its UUID as the document writes it; None when it has none.
    pub fn uuid(&self) -> Option<&str> {
        match self {
            AnyPrepared::Invoice(doc) => doc.cfdi.uuid().ok(),
            AnyPrepared::Retention(doc) => doc.retention.uuid().ok(),
        }
    }

    /// Stores it down its class's path (stage 2), with what its batch read `ahead`
    /// (`Ahead::read` of the batch's `uuid`s); the stored document's id.
    pub fn store(
        &self,
        tx: &Tx,
        owner: Owner,
        direction: Direction,
        listed: Option<&Metadata>,
        ahead: &mut Ahead,
    ) -> Result<String, IngestError> {
        match self {
            AnyPrepared::Invoice(doc) => {
                super::store_invoice(tx, owner, direction, listed, doc, ahead)
            }
            AnyPrepared::Retention(doc) => {
                // Its writes are not read ahead: whatever the batch read of its UUID is stale.
                if let Some(uuid) = self.uuid() {
                    ahead.touch(uuid);
                }
                super::store_retention(tx, owner, direction, listed, doc)
            }
        }
    }
}

/// Stage 1 of a run of `class`: records its listing; returns the positions whose XML
/// is still to be stored.
pub fn record_listing_of(
    class: DocumentClass,
    tx: &Conn,
    owner: Owner,
    direction: Direction,
    rows: &[Metadata],
) -> anyhow::Result<Vec<usize>> {
    match class {
        DocumentClass::Invoices => super::record_listing(tx, owner, direction, rows),
        DocumentClass::Retentions => super::record_retention_listing(tx, owner, rows),
    }
}
