//! A downloaded package handed to the sink in batches: each batch and the request's
//! resume point (the package's entries handled so far) commit in one transaction, and a
//! package read again after a crash skips what was already stored, so nothing is
//! counted twice.

use super::package::Package;
use crate::cfdi::CfdiError;
use crate::domain::extraction::DocumentClass;
use crate::domain::listing::Metadata;
use crate::ingest::{self, AnyPrepared};
use crate::sat::{Fetched, Sink};

/// Entries stored per transaction.
pub const BATCH: usize = 500;

/// The resume point after a batch: entries of the package handled so far, and whether
/// the package is complete.
pub type Progress<'a> = dyn FnMut(&crate::db::Conn, u64, bool) -> anyhow::Result<()> + 'a;

/// Stores a metadata package's rows through the listing step (stage 1).
pub fn store_listing(
    sink: &dyn Sink,
    package: &mut Package,
    skip: u64,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let mut handled = skip;
    let mut seen = 0u64;
    let mut batch: Vec<Metadata> = Vec::with_capacity(BATCH);
    let mut flush = |rows: &[Metadata], handled: u64, done: bool| {
        sink.listed(rows, &mut |tx| progress(tx, handled, done))
            .map(|_| ())
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

/// Stores a CFDI package's documents (stage 2), of the run's document class: invoices
/// parse as CFDI, retentions as CFDI de Retenciones. Each XML is parsed and compressed
/// before its batch's transaction, so the write lock is held only for storing.
pub fn store_cfdis(
    sink: &dyn Sink,
    class: DocumentClass,
    package: &mut Package,
    skip: u64,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let prepare = |xml: &[u8]| -> Result<AnyPrepared, CfdiError> {
        match class {
            DocumentClass::Invoices => ingest::prepare(xml, None).map(Into::into),
            DocumentClass::Retentions => ingest::prepare_retention(xml, None).map(Into::into),
        }
    };
    let mut handled = skip;
    let mut batch: Vec<Fetched> = Vec::with_capacity(BATCH);
    let mut flush = |docs: &[Fetched], handled: u64, done: bool| {
        sink.documents(docs, &mut |tx| progress(tx, handled, done))
    };
    let skip = usize::try_from(skip).unwrap_or(usize::MAX);
    for file in package.cfdis().skip(skip) {
        let file = file?;
        batch.push(Fetched {
            listed: None,
            prepared: prepare(&file.xml),
            name: format!("{} in a package", file.name),
        });
        if batch.len() == BATCH {
            handled += BATCH as u64;
            flush(&std::mem::take(&mut batch), handled, false)?;
        }
    }
    handled += batch.len() as u64;
    flush(&batch, handled, true)
}
