//! Tax lines: amounts by source, kind, tax, rate, factor and currency, with the
//! number of documents (or payment entries) behind each, and the net of the sources.

use std::collections::{BTreeMap, BTreeSet};

use rust_decimal::Decimal;
use serde::Serialize;

use super::Document;
use crate::cfdi::{ItemTax, TaxKind};

/// Where a line's amounts come from (and the order lines are listed in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// Type I documents issued in the period.
    Invoices,
    /// Type I documents that are not PPD, by their date (cash basis).
    Pue,
    /// Payment-complement entries paid in the period (cash basis).
    Payments,
    /// Type E documents issued in the period (cash basis: those that are not PPD).
    CreditNotes,
    /// The other sources added up, credit notes subtracted.
    Net,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Invoices => "invoices",
            Source::Pue => "pue",
            Source::Payments => "payments",
            Source::CreditNotes => "credit_notes",
            Source::Net => "net",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaxLine {
    pub source: Source,
    pub kind: TaxKind,
    /// Impuesto (001, 002, 003); null for documents without a concept breakdown.
    pub tax: Option<String>,
    pub tax_name: Option<&'static str>,
    pub factor: Option<String>,
    pub rate: Option<Decimal>,
    pub currency: Option<String>,
    pub base: Decimal,
    pub amount: Decimal,
    /// Documents (or payment entries) behind the line; null on net lines.
    pub count: Option<u64>,
}

fn tax_name(code: Option<&str>) -> Option<&'static str> {
    match code? {
        "001" => Some("ISR"),
        "002" => Some("IVA"),
        "003" => Some("IEPS"),
        _ => None,
    }
}

/// kind, tax, rate, factor, currency. Rates compare by value (0.16 = 0.160000); a
/// line shows the first spelling seen.
type Key = (
    TaxKind,
    Option<String>,
    Option<Decimal>,
    Option<String>,
    Option<String>,
);

#[derive(Debug, Default, Clone, Copy)]
struct Sums {
    base: Decimal,
    amount: Decimal,
    count: u64,
}

#[derive(Debug, Default)]
pub struct Lines {
    by: BTreeMap<(Source, Key), Sums>,
}

impl Lines {
    /// One document's (or payment entry's) taxes: each line it touches counts it once.
    pub fn add_all<'a>(
        &mut self,
        source: Source,
        currency: Option<&str>,
        taxes: impl IntoIterator<Item = &'a ItemTax>,
    ) {
        let mut touched = BTreeSet::new();
        for t in taxes {
            let key: Key = (
                t.kind,
                Some(t.tax.clone()),
                t.rate,
                t.factor.clone(),
                currency.map(str::to_owned),
            );
            let sums = self.by.entry((source, key.clone())).or_default();
            sums.base += t.base.unwrap_or_default();
            sums.amount += t.amount.unwrap_or_default();
            touched.insert(key);
        }
        for key in touched {
            self.by.entry((source, key)).or_default().count += 1;
        }
    }

    /// A document without concept taxes (CFDI 3.2): its Impuestos totals, tax unknown.
    pub fn add_unbroken(&mut self, source: Source, currency: Option<&str>, d: &Document) {
        let totals = [
            (TaxKind::Transferred, d.taxes_transferred),
            (TaxKind::Withheld, d.taxes_withheld),
        ];
        for (kind, total) in totals {
            let Some(total) = total.filter(|t| !t.is_zero()) else {
                continue;
            };
            let key: Key = (kind, None, None, None, currency.map(str::to_owned));
            let sums = self.by.entry((source, key)).or_default();
            sums.amount += total;
            sums.count += 1;
        }
    }

    /// The lines in order, then one net line per key: `plus` sources added, `minus`
    /// ones subtracted.
    pub fn finish(self, plus: &[Source], minus: &[Source]) -> Vec<TaxLine> {
        let mut net: BTreeMap<Key, Sums> = BTreeMap::new();
        let mut out = Vec::new();
        for ((source, key), sums) in self.by {
            let sign = if minus.contains(&source) {
                Decimal::NEGATIVE_ONE
            } else if plus.contains(&source) {
                Decimal::ONE
            } else {
                Decimal::ZERO
            };
            let n = net.entry(key.clone()).or_default();
            n.base += sign * sums.base;
            n.amount += sign * sums.amount;
            out.push(line(source, key, sums, Some(sums.count)));
        }
        out.extend(
            net.into_iter()
                .map(|(key, sums)| line(Source::Net, key, sums, None)),
        );
        out
    }
}

fn line(source: Source, key: Key, sums: Sums, count: Option<u64>) -> TaxLine {
    let (kind, tax, rate, factor, currency) = key;
    TaxLine {
        source,
        kind,
        tax_name: tax_name(tax.as_deref()),
        tax,
        factor,
        rate,
        currency,
        base: sums.base,
        amount: sums.amount,
        count,
    }
}
