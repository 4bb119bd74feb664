//! Tax lines: amounts by source, kind, tax, rate, factor and currency, with the
//! number of documents (or payment entries) behind each, their peso equivalent, and
//! the net of the sources.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::Serialize;

use super::{cents, fold_into, Document};
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
    /// Type E documents issued in the period.
    CreditNotes,
    /// Payroll documents (a Nómina complement) issued in the period.
    Payroll,
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
            Source::Payroll => "payroll",
            Source::Net => "net",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaxLine {
    pub source: Source,
    pub kind: TaxKind,
    /// Impuesto (001, 002, 003), or a local tax's name; null for documents without a
    /// breakdown.
    pub tax: Option<String>,
    pub tax_name: Option<&'static str>,
    pub factor: Option<String>,
    pub rate: Option<Decimal>,
    pub currency: Option<String>,
    pub base: Decimal,
    pub amount: Decimal,
    /// Documents (or payment entries) behind the line; null on net lines.
    pub count: Option<u64>,
    /// `base` and `amount` in pesos, each document's (or payment entry's) share
    /// converted and rounded to cents; null when one behind the line has no rate.
    pub base_mxn: Option<Decimal>,
    pub amount_mxn: Option<Decimal>,
}

pub(super) fn tax_name(code: Option<&str>) -> Option<&'static str> {
    match code? {
        "001" => Some("ISR"),
        "002" => Some("IVA"),
        "003" => Some("IEPS"),
        _ => None,
    }
}

/// How an amount in a document's currency becomes pesos: × `mul` ÷ `div`, rounded
/// to cents. Multiplying first keeps every digit of both rates.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pesos {
    mul: Decimal,
    div: Decimal,
}

impl Pesos {
    pub const SAME: Pesos = Pesos {
        mul: Decimal::ONE,
        div: Decimal::ONE,
    };

    /// × `mul` ÷ `div`; None when `div` is zero.
    pub fn new(mul: Decimal, div: Decimal) -> Option<Pesos> {
        (!div.is_zero()).then_some(Pesos { mul, div })
    }

    /// Always written with two decimals (1000.00, not 1000).
    pub fn of(self, v: Decimal) -> Decimal {
        two_decimals(cents(v * self.mul / self.div))
    }
}

/// A peso figure as the summary writes it: with two decimals, zero too (`0.00`).
/// Sums of such figures need it again: rust_decimal writes a product with zero as `0`,
/// so a net of zero would lose its decimals.
pub(super) fn two_decimals(mut pesos: Decimal) -> Decimal {
    pesos.rescale(2);
    pesos
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
    base_mxn: Decimal,
    amount_mxn: Decimal,
    /// One behind the line had no rate to pesos.
    no_mxn: bool,
}

impl Sums {
    fn add(&mut self, base: Decimal, amount: Decimal, pesos: Option<Pesos>) {
        self.base += base;
        self.amount += amount;
        match pesos {
            Some(p) => {
                self.base_mxn += p.of(base);
                self.amount_mxn += p.of(amount);
            }
            None => self.no_mxn = true,
        }
    }
}

#[derive(Debug, Default)]
pub struct Lines {
    by: BTreeMap<(Source, Key), Sums>,
}

impl Lines {
    /// One document's (or payment entry's) taxes: each line it touches counts it once,
    /// and takes its amounts in pesos rounded once per line (`pesos` None: no rate).
    pub fn add_all<'a>(
        &mut self,
        source: Source,
        currency: Option<&str>,
        taxes: impl IntoIterator<Item = &'a ItemTax>,
        pesos: Option<Pesos>,
    ) {
        let mut own = Vec::new();
        for t in taxes {
            fold_into(&mut own, t);
        }
        for t in own {
            let key: Key = (
                t.kind,
                Some(t.tax),
                t.rate,
                t.factor,
                currency.map(str::to_owned),
            );
            let sums = self.by.entry((source, key)).or_default();
            sums.add(
                t.base.unwrap_or_default(),
                t.amount.unwrap_or_default(),
                pesos,
            );
            sums.count += 1;
        }
    }

    /// A document without any tax breakdown (a CFDI 3.2 stored before its Impuestos
    /// entries were read): its Impuestos totals, tax unknown.
    pub fn add_unbroken(
        &mut self,
        source: Source,
        currency: Option<&str>,
        d: &Document,
        pesos: Option<Pesos>,
    ) {
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
            sums.add(Decimal::ZERO, total, pesos);
            sums.count += 1;
        }
    }

    /// The lines in order, then (when there are `plus` or `minus` sources) one net
    /// line per key: `plus` sources added, `minus` ones subtracted.
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
            if !sign.is_zero() {
                let n = net.entry(key.clone()).or_default();
                n.base += sign * sums.base;
                n.amount += sign * sums.amount;
                n.base_mxn += sign * sums.base_mxn;
                n.amount_mxn += sign * sums.amount_mxn;
                n.no_mxn |= sums.no_mxn;
            }
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
    let mxn = |v: Decimal| (!sums.no_mxn).then_some(two_decimals(v));
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
        base_mxn: mxn(sums.base_mxn),
        amount_mxn: mxn(sums.amount_mxn),
    }
}
