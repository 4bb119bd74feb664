//! What compressing stored documents saves and costs (`db::codec`, `db::documents`).
//! - The real CFDI in `tests/fixtures/cfdi-samples` (XML only) as the service stores XML:
//!   `samples_raw`, `samples_stored` (bytes: each compressed with the dictionary, its
//!   issuer certificate taken out and each distinct certificate counted once) and
//!   `samples_ratio`. The dictionary was trained on these files, so `samples_stored_whole`
//!   (certificates left in) and `samples_stored_plain` (no dictionary) are printed beside it.
//! - A sandbox `BIG` entity's month (XML and PDF): as stored (`sandbox_xml_stored_ratio`,
//!   certificates once; `sandbox_pdf_stored_ratio`, each PDF against its XML), through
//!   the codec alone (`sandbox_xml_ratio`, `sandbox_pdf_ratio`, `encode_us` per document;
//!   `_plain`: without the dictionary), and through
//!   other zstd levels for comparison (`level <n> ratio <r> us <t>`), which is how
//!   `codec::LEVEL` was chosen.

use cfdi_extract::db::codec;
use cfdi_extract::db::documents::{self, certificate};
use cfdi_extract::sandbox::docs::{self as sandbox_docs, Direction};
use chrono::NaiveDate;
use std::collections::HashSet;
use std::path::Path;
use std::time::Instant;

fn samples(dir: &Path) -> Vec<Vec<u8>> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    files.sort();
    files
        .iter()
        .map(|p| std::fs::read(p).expect("read"))
        .collect()
}

/// Stored bytes over raw bytes, and microseconds per document (median of 3 passes).
fn measure(docs: &[Vec<u8>], encode: impl Fn(&[u8]) -> usize) -> (f64, f64) {
    let raw: usize = docs.iter().map(Vec::len).sum();
    let mut stored = 0;
    let mut times = vec![];
    for _ in 0..3 {
        let start = Instant::now();
        stored = docs.iter().map(|d| encode(d)).sum();
        times.push(start.elapsed().as_secs_f64() * 1e6 / docs.len().max(1) as f64);
    }
    times.sort_by(f64::total_cmp);
    (stored as f64 / raw.max(1) as f64, times[1])
}

/// Bytes `docs` take stored as the service stores XML: each document's row, plus each
/// distinct issuer certificate once. Checks that every document reads back whole.
fn stored_xml(docs: &[Vec<u8>]) -> usize {
    let mut certificates = HashSet::new();
    let mut stored = 0;
    for doc in docs {
        let s = documents::xml(doc);
        let rest = codec::decode(s.content().codec, s.content().bytes.clone()).expect("decodes");
        let back = match s.certificate() {
            Some(c) => certificate::join(&rest, c).expect("joins"),
            None => rest,
        };
        assert_eq!(&back, doc);
        stored += s.content().bytes.len();
        if let Some(c) = s.certificate().filter(|c| certificates.insert(c.to_vec())) {
            stored += c.len();
        }
    }
    stored
}

fn main() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let real = samples(&root.join("tests/fixtures/cfdi-samples"));
    let raw: usize = real.iter().map(Vec::len).sum();
    let stored = stored_xml(&real);
    let whole: usize = real.iter().map(|d| codec::encode_xml(d).bytes.len()).sum();
    let plain: usize = real.iter().map(|d| codec::encode(d).bytes.len()).sum();
    println!("samples {}", real.len());
    println!("samples_raw {raw}");
    // With the dictionary, which was trained on these very files: an in-sample figure.
    println!("samples_stored {stored}");
    println!("samples_ratio {:.3}", stored as f64 / raw as f64);
    // Certificates left in each document, as schema 8 stored them.
    println!("samples_stored_whole {whole}");
    // Without the dictionary: what the codec's zstd alone does to them.
    println!("samples_stored_plain {plain}");
    println!("samples_ratio_plain {:.3}", plain as f64 / raw as f64);

    let tax_id = "BIGA010101AAA";
    let from = NaiveDate::from_ymd_opt(2026, 3, 1).expect("date");
    let to = NaiveDate::from_ymd_opt(2026, 3, 31).expect("date");
    let invoices = sandbox_docs::invoices_for_period(tax_id, Direction::Issued, from, to);
    let xml: Vec<Vec<u8>> = invoices
        .iter()
        .filter_map(|i| sandbox_docs::render_xml(tax_id, Direction::Issued, i).ok())
        .collect();
    let pdf: Vec<Vec<u8>> = invoices
        .iter()
        .filter_map(|i| sandbox_docs::render_pdf(tax_id, Direction::Issued, i))
        .collect();
    let size = |docs: &[Vec<u8>]| docs.iter().map(Vec::len).sum::<usize>() / docs.len().max(1);
    println!("sandbox_xml {} avg {} B", xml.len(), size(&xml));
    println!("sandbox_pdf {} avg {} B", pdf.len(), size(&pdf));
    let stored = stored_xml(&xml) as f64 / xml.iter().map(Vec::len).sum::<usize>() as f64;
    println!("sandbox_xml_stored_ratio {stored:.3}");
    let (ratio, us) = measure(&xml, |d| codec::encode_xml(d).bytes.len());
    println!("sandbox_xml_ratio {ratio:.3}");
    println!("encode_us {us:.1}");
    let (ratio, us) = measure(&xml, |d| codec::encode(d).bytes.len());
    println!("sandbox_xml_ratio_plain {ratio:.3}");
    println!("encode_plain_us {us:.1}");
    // PDFs as stored: compressed against their invoice's XML.
    let pairs: Vec<(Vec<u8>, Vec<u8>)> = invoices
        .iter()
        .filter_map(|i| {
            let pdf = sandbox_docs::render_pdf(tax_id, Direction::Issued, i)?;
            Some((
                sandbox_docs::render_xml(tax_id, Direction::Issued, i).ok()?,
                pdf,
            ))
        })
        .collect();
    let start = Instant::now();
    let stored: usize = pairs
        .iter()
        .map(|(x, p)| documents::pdf(p, x).content().bytes.len())
        .sum();
    let us = start.elapsed().as_secs_f64() * 1e6 / pairs.len().max(1) as f64;
    let raw: usize = pairs.iter().map(|(_, p)| p.len()).sum();
    println!(
        "sandbox_pdf_stored_ratio {:.3}",
        stored as f64 / raw.max(1) as f64
    );
    println!("encode_pdf_stored_us {us:.1}");
    let (ratio, us) = measure(&pdf, |d| codec::encode(d).bytes.len());
    println!("sandbox_pdf_ratio {ratio:.3}");
    println!("encode_pdf_us {us:.1}");
    // Other levels on the first 2,000 of each (level 19 takes milliseconds a document).
    let (xml, pdf) = (&xml[..xml.len().min(2000)], &pdf[..pdf.len().min(2000)]);
    for level in [1, 3, 6, 9, 15, 19] {
        let at = |d: &[u8]| zstd::bulk::compress(d, level).expect("compress").len();
        let (x, xus) = measure(xml, at);
        let (p, pus) = measure(pdf, at);
        let (r, _) = measure(&real, at);
        println!("level {level} xml_ratio {x:.3} xml_us {xus:.1} pdf_ratio {p:.3} pdf_us {pus:.1} samples_ratio {r:.3}");
    }
}
