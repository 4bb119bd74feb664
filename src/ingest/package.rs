//! A package downloaded from the SAT's bulk-download service, stored in batches: each
//! batch and the caller's progress record (`progress`, e.g. the request's resume point
//! and the extraction's counts) commit in one transaction, and a package read again
//! after a crash skips what was already stored, so nothing is counted twice.

use super::{IngestError, Owner, Prepared};
use crate::cfdi::CfdiError;
use crate::db::Db;
use crate::domain::extraction::Direction;
use crate::sat::webservice::package::{CfdiFile, Package};
use crate::sat::Metadata;
use rusqlite::Connection;

/// Entries stored per transaction.
pub const BATCH: usize = 500;

/// Where a package's storing stands after a batch.
#[derive(Debug, Clone)]
pub struct Progress {
    /// Entries of the package handled so far (the resume point).
    pub handled: u64,
    /// Entries in this batch.
    pub batch: u64,
    /// Of those, documents stored (a CFDI that does not parse is logged and skipped).
    pub stored: u64,
    /// The package is complete.
    pub done: bool,
    /// Documents not stored because their UUID names another stored document:
    /// `(uuid, reason)`.
    pub conflicts: Vec<(String, String)>,
}

type OnBatch<'a> = dyn FnMut(&Connection, Progress) -> anyhow::Result<()> + 'a;

/// Stores a metadata package's rows through the listing step (stage 1).
pub fn store_listing(
    db: &Db,
    owner: Owner,
    direction: Direction,
    package: &mut Package,
    skip: u64,
    progress: &mut OnBatch,
) -> anyhow::Result<()> {
    let mut handled = skip;
    let mut seen = 0u64;
    let mut batch: Vec<Metadata> = Vec::with_capacity(BATCH);
    let mut flush = |rows: &[Metadata], handled: u64, done: bool| {
        db.tx(|tx| {
            super::record_listing(tx, owner, direction, rows)?;
            let n = rows.len() as u64;
            progress(
                tx,
                Progress {
                    handled,
                    batch: n,
                    stored: n,
                    done,
                    conflicts: Vec::new(),
                },
            )
        })
    };
    package.for_each_metadata(|m| -> anyhow::Result<()> {
        seen += 1;
        if seen <= skip {
            return Ok(());
        }
        batch.push(m);
        if batch.len() == BATCH {
            handled += BATCH as u64;
            flush(&std::mem::take(&mut batch), handled, false)?;
        }
        Ok(())
    })?;
    handled += batch.len() as u64;
    flush(&batch, handled, true)
}

/// Stores a CFDI package's documents (stage 2). Each XML is parsed and compressed before
/// its batch's transaction, so the write lock is held only for storing.
pub fn store_cfdis(
    db: &Db,
    owner: Owner,
    direction: Direction,
    package: &mut Package,
    skip: u64,
    progress: &mut OnBatch,
) -> anyhow::Result<()> {
    let mut handled = skip;
    let mut batch: Vec<(CfdiFile, Result<Prepared, CfdiError>)> = Vec::with_capacity(BATCH);
    let mut flush = |docs: &[(CfdiFile, Result<Prepared, CfdiError>)], handled: u64, done: bool| {
        db.tx(|tx| {
            let (stored, conflicts) = store_batch(tx, owner, direction, docs)?;
            let batch = docs.len() as u64;
            progress(
                tx,
                Progress {
                    handled,
                    batch,
                    stored,
                    done,
                    conflicts,
                },
            )
        })
    };
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    for file in package.cfdis().skip(skip) {
        let file = file?;
        let prepared = super::prepare(&file.xml, None);
        batch.push((file, prepared));
        if batch.len() == BATCH {
            handled += BATCH as u64;
            flush(&std::mem::take(&mut batch), handled, false)?;
        }
    }
    handled += batch.len() as u64;
    flush(&batch, handled, true)
}

/// Stores parsed documents; returns how many were stored, and the conflicts met.
fn store_batch(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    docs: &[(CfdiFile, Result<Prepared, CfdiError>)],
) -> anyhow::Result<(u64, Vec<(String, String)>)> {
    let (mut stored, mut conflicts) = (0, Vec::new());
    for (file, parsed) in docs {
        let result = match parsed {
            Ok(doc) => super::store_document(tx, owner, direction, None, doc),
            Err(e) => Err(IngestError::Cfdi(e.clone())),
        };
        match result {
            Ok(_) => stored += 1,
            Err(IngestError::Storage(e)) => return Err(e),
            Err(e) => {
                log::warn!("{} in a package not processed: {e}", file.name);
                if let IngestError::UuidTaken { uuid } = &e {
                    conflicts.push((uuid.clone(), e.to_string()));
                }
            }
        }
    }
    Ok((stored, conflicts))
}
