//! Raw CFDI parse rate over the documents a sandbox `BIG` entity gets in a month: the
//! reference the end-to-end ingest rate is compared with in `bench/run`.
//! Prints `parse_rate <documents per second>` (median of 5 passes).
//!
//! `--dump DIR` writes the same documents to DIR as `<UUID>.xml` instead, for the
//! side-by-side with satcfdi in `bench/run`, and prints `dumped <count>`.

use cfdi_extract::cfdi::Cfdi;
use cfdi_extract::sandbox::docs::{self as sandbox_docs, Direction};
use chrono::NaiveDate;
use std::path::Path;
use std::time::Instant;

fn main() -> std::io::Result<()> {
    // `cargo bench` passes `--bench`; the tax id is the first argument that is not an
    // option or the value of `--dump`.
    let args: Vec<String> = std::env::args().skip(1).collect();
    let dump = args
        .iter()
        .position(|a| a == "--dump")
        .and_then(|i| args.get(i + 1));
    let tax_id = args
        .iter()
        .find(|a| !a.starts_with("--") && Some(*a) != dump)
        .cloned()
        .unwrap_or_else(|| "BIGA010101AAA".to_string());
    let from = NaiveDate::from_ymd_opt(2026, 3, 1).expect("date");
    let to = NaiveDate::from_ymd_opt(2026, 3, 31).expect("date");
    let docs: Vec<(String, Vec<u8>)> =
        sandbox_docs::invoices_for_period(&tax_id, Direction::Issued, from, to)
            .iter()
            .filter_map(|inv| {
                let xml = sandbox_docs::render_xml(&tax_id, Direction::Issued, inv).ok()?;
                Some((inv.uuid.clone(), xml))
            })
            .collect();
    if let Some(dir) = dump {
        std::fs::create_dir_all(dir)?;
        for (uuid, xml) in &docs {
            std::fs::write(Path::new(dir).join(format!("{uuid}.xml")), xml)?;
        }
        println!("dumped {}", docs.len());
        return Ok(());
    }
    let mut rates = vec![];
    for _ in 0..5 {
        let start = Instant::now();
        let parsed = docs
            .iter()
            .filter(|(_, d)| Cfdi::parse_stamped(d).is_ok())
            .count();
        assert_eq!(parsed, docs.len(), "every sandbox document parses");
        rates.push(docs.len() as f64 / start.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    println!("documents {}", docs.len());
    println!("parse_rate {:.0}", rates[rates.len() / 2]);
    Ok(())
}
