//! PDF render rate: the printed CFDI (`pdf::invoice::render`) of every document a
//! sandbox `BIG` entity gets in a month, each rendered once per pass (distinct
//! invoices, so nothing is cached). Prints `pdf_documents`, `pdf_rate <documents per
//! second>` (median of 5 passes), `pdf_bytes` (the average PDF size) and
//! `pdf_first_ms`, the process's first render, which also reads the SAT catalogs it
//! looks codes up in (c_ClaveProdServ is the largest).

use cfdi_extract::cfdi::Cfdi;
use cfdi_extract::pdf::invoice::render;
use cfdi_extract::sandbox::docs::{self as sandbox_docs, Direction};
use chrono::NaiveDate;
use std::time::Instant;

fn main() {
    let tax_id = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "BIGA010101AAA".to_string());
    let from = NaiveDate::from_ymd_opt(2026, 3, 1).expect("date");
    let to = NaiveDate::from_ymd_opt(2026, 3, 31).expect("date");
    let docs: Vec<Cfdi> = sandbox_docs::invoices_for_period(&tax_id, Direction::Issued, from, to)
        .iter()
        .filter_map(|inv| sandbox_docs::render_xml(&tax_id, Direction::Issued, inv).ok())
        .filter_map(|xml| Cfdi::parse_stamped(&xml).ok())
        .collect();
    assert!(!docs.is_empty(), "the sandbox gave documents");
    let start = Instant::now();
    render(&docs[0]);
    let first_ms = start.elapsed().as_secs_f64() * 1000.0;
    let mut rates = vec![];
    let mut bytes = 0usize;
    for _ in 0..5 {
        let start = Instant::now();
        bytes = docs.iter().map(|d| render(d).len()).sum();
        rates.push(docs.len() as f64 / start.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    println!("pdf_documents {}", docs.len());
    println!("pdf_rate {:.0}", rates[rates.len() / 2]);
    println!("pdf_bytes {}", bytes / docs.len());
    println!("pdf_first_ms {first_ms:.1}");
}
