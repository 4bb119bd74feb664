//! The e.firma channel's package ingest: one ZIP of 20,000 CFDI (a sandbox `BIG`
//! entity's issued invoices, as the SAT's bulk-download service packs them) stored
//! through `sat::efirma::store::store_cfdis` into the extraction job's sink, the path
//! extraction jobs use: read each XML
//! from the ZIP, parse it, store it in batches of 500 per transaction.
//! Prints `package_documents`, `package_bytes` and `package_rate <documents per
//! second>` (median of 3 passes, each on a fresh database).
//!
//! `--dir DIR` packs every `*.xml` file of DIR into the ZIP instead (the side-by-side
//! with satcfdi in `bench/run`); it also prints `package_stored`, since a directory may
//! hold documents the service refuses (unstamped, empty). A small directory gets more
//! passes (until they add up to 2 s, at most 50), so its median is not one timer tick.

use cfdi_extract::db::{self, Db};
use cfdi_extract::domain::class::DocumentClass;
use cfdi_extract::domain::extraction::{Direction, NewExtraction, Period};
use cfdi_extract::ingest::Owner;
use cfdi_extract::jobs::extraction::RunSink;
use cfdi_extract::sandbox::docs::{self as sandbox_docs, Direction as DocsDirection};
use cfdi_extract::sandbox::efirma::packages::cfdi_package;
use cfdi_extract::sat::efirma::package::Package;
use cfdi_extract::sat::efirma::store::store_cfdis;
use chrono::NaiveDate;
use std::io::{Cursor, Write};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use zip::write::SimpleFileOptions;
use zip::{CompressionMethod, ZipWriter};

const DOCUMENTS: usize = 20_000;

/// The sandbox package of `tax_id`'s first 20,000 issued invoices of 2026.
fn sandbox_zip(tax_id: &str) -> anyhow::Result<Vec<u8>> {
    let from = NaiveDate::from_ymd_opt(2026, 1, 1).expect("date");
    let to = NaiveDate::from_ymd_opt(2026, 3, 31).expect("date");
    let mut invoices = sandbox_docs::invoices_for_period(tax_id, DocsDirection::Issued, from, to);
    invoices.truncate(DOCUMENTS);
    assert_eq!(
        invoices.len(),
        DOCUMENTS,
        "a BIG entity has enough invoices"
    );
    cfdi_package(tax_id, DocsDirection::Issued, &invoices)
}

/// A ZIP of every `*.xml` file in `dir` (deflated, as the authority packs them), and
/// how many files it holds.
fn dir_zip(dir: &Path) -> anyhow::Result<(Vec<u8>, usize)> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<_, _>>()?;
    paths.retain(|p| p.extension().is_some_and(|e| e == "xml"));
    paths.sort();
    let mut writer = ZipWriter::new(Cursor::new(Vec::new()));
    let options = SimpleFileOptions::default().compression_method(CompressionMethod::Deflated);
    for path in &paths {
        let name = path.file_name().expect("a file name").to_string_lossy();
        writer.start_file(name, options)?;
        writer.write_all(&std::fs::read(path)?)?;
    }
    Ok((writer.finish()?.into_inner(), paths.len()))
}

/// One pass on a fresh database: documents stored and the seconds `store_cfdis` took.
fn ingest(zip: &[u8], tax_id: &str) -> anyhow::Result<(u64, f64)> {
    let dir = tempfile::tempdir()?;
    let db = Db::open(dir.path(), 2)?;
    // A real extraction row: a refused document (two of the shared samples share a
    // UUID) is recorded on it.
    let (org, entity, extraction) = db.tx(|tx| {
        let org = db::orgs::insert(tx, "Bench")?;
        let entity = db::entities::insert(tx, &org.id, tax_id, "Bench", b"sealed")?;
        let new = NewExtraction {
            entity_id: entity.id.clone(),
            period: Period {
                from: NaiveDate::from_ymd_opt(2026, 1, 1).expect("date"),
                to: NaiveDate::from_ymd_opt(2026, 3, 31).expect("date"),
            },
            direction: Direction::Issued,
            document_class: DocumentClass::Invoices,
            uuids: Vec::new(),
        };
        let extraction = db::extractions::insert(tx, &org.id, &new, None)?;
        Ok((org.id, entity.id, extraction.id))
    })?;
    let owner = Owner {
        org_id: &org,
        entity_id: &entity,
        batch: "bench",
    };
    let stopping = AtomicBool::new(false);
    // Verified as a server verifies them: the sandbox's authority trusted; no SAT
    // certificate repository (a bench fetches nothing), so stamps stay unverified. Its
    // refusals are not paced: at a server's one fetch a second, the real samples' nine
    // SAT certificates, each missing once per pass, were most of the figure (5 docs/s).
    let sat_certificates = cfdi_extract::sat::certificates::Store::new(
        db.clone(),
        std::sync::Arc::new(NoRepository),
        cfdi_extract::seal::Trust::sat()
            .and(cfdi_extract::sandbox::docs::authority_certificate().clone()),
        1e6,
    );
    let sink = RunSink {
        db: &db,
        sat_certificates: sat_certificates.at_hand(),
        stopping: &stopping,
        extraction_id: &extraction,
        owner,
        direction: Direction::Issued,
        class: DocumentClass::Invoices,
        party: None,
    };
    let start = Instant::now();
    let mut pkg = Package::open(zip.to_vec())?;
    store_cfdis(
        &sink,
        DocumentClass::Invoices,
        &mut pkg,
        0,
        &mut |_, _, _| Ok(()),
    )?;
    let seconds = start.elapsed().as_secs_f64();
    let stored: i64 = db.conn()?.one(
        "SELECT COUNT(*) FROM invoices WHERE xml_processed = 1",
        cfdi_extract::db::sql::params![],
        |r| r.get(0),
    )?;
    Ok((stored as u64, seconds))
}

fn main() -> anyhow::Result<()> {
    // `cargo bench` passes `--bench`; the tax id is the first argument that is not an
    // option or the value of `--dir`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dir = args
        .iter()
        .position(|a| a == "--dir")
        .and_then(|i| args.get(i + 1));
    let tax_id = args
        .iter()
        .find(|a| !a.starts_with("--") && Some(*a) != dir)
        .cloned()
        .unwrap_or_else(|| "BIGP010101AAA".to_string());
    let (zip, documents) = match dir {
        Some(dir) => dir_zip(Path::new(dir))?,
        None => (sandbox_zip(&tax_id)?, DOCUMENTS),
    };
    let (mut rates, mut spent, mut stored) = (vec![], Duration::ZERO, 0);
    // Each pass opens a fresh database (untimed, but not free): at most 50 passes.
    while rates.len() < 3 || (dir.is_some() && spent < Duration::from_secs(2) && rates.len() < 50) {
        let seconds;
        (stored, seconds) = ingest(&zip, &tax_id)?;
        if dir.is_none() {
            assert_eq!(stored as usize, DOCUMENTS, "every document stored");
        }
        spent += Duration::from_secs_f64(seconds);
        rates.push(documents as f64 / seconds);
    }
    rates.sort_by(f64::total_cmp);
    println!("package_documents {documents}");
    println!("package_stored {stored}");
    println!("package_bytes {}", zip.len());
    println!("package_rate {:.0}", rates[rates.len() / 2]);
    Ok(())
}

/// A SAT certificate repository that has none.
struct NoRepository;

impl cfdi_extract::sat::certificates::Repository for NoRepository {
    fn fetch(&self, number: &str) -> Result<Vec<u8>, String> {
        Err(format!("the bench fetches no certificate ({number})"))
    }
}
