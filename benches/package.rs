//! The e.firma channel's package ingest: one ZIP of 20,000 CFDI (a sandbox `BIG`
//! entity's issued invoices, as the SAT's bulk-download service packs them) stored
//! through `ingest::package::store_cfdis`, the path extraction jobs use: read each XML
//! from the ZIP, parse it, store it in batches of 500 per transaction.
//! Prints `package_documents`, `package_bytes` and `package_rate <documents per
//! second>` (median of 3 passes, each on a fresh database).

use cfdi_extract::db::{self, Db};
use cfdi_extract::domain::extraction::Direction;
use cfdi_extract::ingest::{package, Owner};
use cfdi_extract::sat::sandbox_bulk::packages::cfdi_package;
use cfdi_extract::sat::sandbox_docs::{self, Direction as DocsDirection};
use cfdi_extract::sat::webservice::package::Package;
use chrono::NaiveDate;
use std::time::Instant;

const DOCUMENTS: usize = 20_000;

fn main() -> anyhow::Result<()> {
    // `cargo bench` passes `--bench`; the tax id is the first other argument.
    let tax_id = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "BIGP010101AAA".to_string());
    let from = NaiveDate::from_ymd_opt(2026, 1, 1).expect("date");
    let to = NaiveDate::from_ymd_opt(2026, 3, 31).expect("date");
    let mut invoices = sandbox_docs::invoices_for_period(&tax_id, DocsDirection::Issued, from, to);
    invoices.truncate(DOCUMENTS);
    assert_eq!(
        invoices.len(),
        DOCUMENTS,
        "a BIG entity has enough invoices"
    );
    let zip = cfdi_package(&tax_id, DocsDirection::Issued, &invoices)?;

    let mut rates = vec![];
    for _ in 0..3 {
        let dir = tempfile::tempdir()?;
        let db = Db::open(dir.path(), 2)?;
        let (org, entity) = db.tx(|tx| {
            let org = db::orgs::insert(tx, "Bench")?;
            let entity = db::entities::insert(tx, &org.id, &tax_id, "Bench", b"sealed")?;
            Ok((org.id, entity.id))
        })?;
        let owner = Owner {
            org_id: &org,
            entity_id: &entity,
            batch: "bench",
        };
        let start = Instant::now();
        let mut stored = 0u64;
        let mut pkg = Package::open(zip.clone())?;
        package::store_cfdis(&db, owner, Direction::Issued, &mut pkg, 0, &mut |_, at| {
            stored += at.stored;
            Ok(())
        })?;
        let elapsed = start.elapsed().as_secs_f64();
        assert_eq!(stored as usize, DOCUMENTS, "every document stored");
        rates.push(DOCUMENTS as f64 / elapsed);
    }
    rates.sort_by(f64::total_cmp);
    println!("package_documents {DOCUMENTS}");
    println!("package_bytes {}", zip.len());
    println!("package_rate {:.0}", rates[rates.len() / 2]);
    Ok(())
}
