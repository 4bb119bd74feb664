//! A downloaded package handed to the sink in batches: each batch and the request's
//! resume point (the package's entries handled so far) commit in one transaction, and a
//! package read again after a crash skips what was already stored, so nothing is
//! counted twice.

use super::package::Package;
use crate::cfdi::CfdiError;
use crate::domain::class::DocumentClass;
use crate::domain::listing::Metadata;
use crate::ingest::{self, AnyPrepared};
use crate::sat::{Fetched, Sink};
use std::sync::mpsc::sync_channel;

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
/// parse as CFDI, retentions as CFDI de Retenciones. A thread of its own reads, parses
/// and compresses the next batch while this one stores the last, in the package's order
/// (the resume point counts entries), so the write lock is held only for storing.
pub fn store_cfdis(
    sink: &dyn Sink,
    class: DocumentClass,
    package: &mut Package,
    skip: u64,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    let prepare = move |xml: &[u8]| -> Result<AnyPrepared, CfdiError> {
        let verifier = sink.verifier();
        match class {
            DocumentClass::Invoices => ingest::prepare(xml, None, verifier).map(Into::into),
            DocumentClass::Retentions => {
                ingest::prepare_retention(xml, None, verifier).map(Into::into)
            }
        }
    };
    std::thread::scope(|scope| {
        // Each batch, and whether it is the package's last (possibly empty) one. Handed
        // over, not queued: at most the batch storing and the one ready are in memory.
        let (prepared, to_store) = sync_channel::<anyhow::Result<(Vec<Fetched>, bool)>>(0);
        scope.spawn(move || {
            let skip = usize::try_from(skip).unwrap_or(usize::MAX);
            let mut batch: Vec<Fetched> = Vec::with_capacity(BATCH);
            for file in package.cfdis().skip(skip) {
                let file = match file {
                    Ok(file) => file,
                    Err(e) => {
                        let _ = prepared.send(Err(e.into()));
                        return;
                    }
                };
                batch.push(Fetched {
                    listed: None,
                    prepared: prepare(&file.xml),
                    name: format!("{} in a package", file.name),
                });
                // A closed channel means the storing side stopped: so do we.
                if batch.len() == BATCH
                    && prepared
                        .send(Ok((std::mem::take(&mut batch), false)))
                        .is_err()
                {
                    return;
                }
            }
            let _ = prepared.send(Ok((batch, true)));
        });
        let mut handled = skip;
        for next in to_store {
            let (docs, last) = next?;
            handled += docs.len() as u64;
            sink.documents(&docs, &mut |tx| progress(tx, handled, last))?;
            if last {
                return Ok(());
            }
        }
        Err(anyhow::anyhow!("the package's reading thread ended early"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{self, Conn};
    use crate::sat::Resume;
    use std::io::{Cursor, Write};

    /// A package of `n` entries named `0000.xml`, `0001.xml`, ... (not CFDI: the sink
    /// gets them all the same, as documents that did not parse).
    fn package_of(n: usize) -> Package {
        let mut writer = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for i in 0..n {
            writer
                .start_file(
                    format!("{i:04}.xml"),
                    zip::write::SimpleFileOptions::default(),
                )
                .expect("entry");
            writer.write_all(b"<not-a-cfdi/>").expect("write");
        }
        Package::open(writer.finish().expect("zip").into_inner()).expect("package")
    }

    /// Records each batch's entry names, and commits its resume point on a real
    /// connection as the extraction's sink does.
    struct FakeSink {
        conn: parking_lot::Mutex<db::Memory>,
        batches: parking_lot::Mutex<Vec<Vec<String>>>,
    }

    impl Sink for FakeSink {
        fn stopping(&self) -> bool {
            false
        }
        fn recount(&self) -> anyhow::Result<()> {
            Ok(())
        }
        fn found(&self, _: u64, _: Resume) -> anyhow::Result<()> {
            unreachable!("these tests find nothing by UUID")
        }
        fn listed(&self, _: &[Metadata], _: Resume) -> anyhow::Result<Vec<usize>> {
            unreachable!("a CFDI package lists nothing")
        }
        fn documents(&self, docs: &[Fetched], resume: Resume) -> anyhow::Result<()> {
            assert!(docs.iter().all(|d| d.prepared.is_err()));
            self.batches
                .lock()
                .push(docs.iter().map(|d| d.name.clone()).collect());
            resume(&self.conn.lock())
        }
    }

    /// Each batch's names, and the resume points committed with them.
    fn store(n: usize, skip: u64) -> (Vec<Vec<String>>, Vec<(u64, bool)>) {
        let sink = FakeSink {
            conn: parking_lot::Mutex::new(db::Memory::new()),
            batches: Default::default(),
        };
        let mut points = vec![];
        let mut progress = |_: &Conn, handled: u64, done: bool| {
            points.push((handled, done));
            Ok(())
        };
        let mut package = package_of(n);
        store_cfdis(
            &sink,
            DocumentClass::Invoices,
            &mut package,
            skip,
            &mut progress,
        )
        .expect("stored");
        (sink.batches.into_inner(), points)
    }

    fn names(range: std::ops::Range<usize>) -> Vec<String> {
        range.map(|i| format!("{i:04}.xml in a package")).collect()
    }

    #[test]
    fn a_package_is_stored_in_its_order_with_each_batch_s_resume_point() {
        let (batches, points) = store(1234, 0);
        assert_eq!(batches.concat(), names(0..1234));
        assert_eq!(
            batches.iter().map(Vec::len).collect::<Vec<_>>(),
            [BATCH, BATCH, 234]
        );
        assert_eq!(points, [(500, false), (1000, false), (1234, true)]);
    }

    #[test]
    fn a_package_read_again_skips_what_was_stored_and_still_ends_complete() {
        let (batches, points) = store(1234, 1000);
        assert_eq!(batches.concat(), names(1000..1234));
        assert_eq!(points, [(1234, true)]);
        // Whole batches only: the package is complete with an empty last one.
        let (batches, points) = store(1000, 0);
        assert_eq!(batches.concat(), names(0..1000));
        assert_eq!(points, [(500, false), (1000, false), (1000, true)]);
    }
}
