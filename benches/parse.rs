//! Raw CFDI parse rate over the documents a sandbox `BIG` entity gets in a month: the
//! reference the end-to-end ingest rate is compared with in `bench/run`.
//! Prints `parse_rate <documents per second>` (median of 5 passes).

use cfdi_extract::cfdi::Cfdi;
use cfdi_extract::sat::sandbox_docs::{self, Direction};
use chrono::NaiveDate;
use std::time::Instant;

fn main() {
    let tax_id = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "BIGA010101AAA".to_string());
    let from = NaiveDate::from_ymd_opt(2026, 3, 1).expect("date");
    let to = NaiveDate::from_ymd_opt(2026, 3, 31).expect("date");
    let docs: Vec<Vec<u8>> =
        sandbox_docs::invoices_for_period(&tax_id, Direction::Issued, from, to)
            .iter()
            .filter_map(|inv| sandbox_docs::render_xml(&tax_id, Direction::Issued, inv).ok())
            .collect();
    let mut rates = vec![];
    for _ in 0..5 {
        let start = Instant::now();
        let parsed = docs
            .iter()
            .filter(|d| Cfdi::parse_stamped(d).is_ok())
            .count();
        assert_eq!(parsed, docs.len(), "every sandbox document parses");
        rates.push(docs.len() as f64 / start.elapsed().as_secs_f64());
    }
    rates.sort_by(f64::total_cmp);
    println!("documents {}", docs.len());
    println!("parse_rate {:.0}", rates[rates.len() / 2]);
}
