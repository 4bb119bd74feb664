//! The period summary of an entity: counts and totals by type and currency, taxes by
//! tax and rate from the documents' own concept taxes, and the cash-basis view of IVA
//! (what was paid in the period). Pure and exact: the database layer
//! (`db::summary`) feeds it documents and payment entries, and every amount is a
//! `Decimal`. The rules, as `/docs/summary` states them:
//!
//! - Cancelled documents are left out (and counted); so are the payments of cancelled
//!   complements.
//! - Document basis: type I documents are `invoices`, type E `credit_notes`; `net` is
//!   invoices minus credit notes. Other types (P, T, N) count in the totals only.
//! - Cash basis (IVA only): PUE invoices (every I that is not PPD) by their date, plus
//!   what complements paid in the period (by FechaPago): the DoctoRelacionado's own
//!   IVA (Pagos 2.0 ImpuestosDR) where it has some, else the paid proportion
//!   ImpPagado / invoice total × the invoice's IVA, rounded to cents; minus credit
//!   notes that are not PPD by their date.

mod lines;
pub mod sheet;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::Serialize;

use crate::cfdi::ItemTax;
pub use lines::{Lines, Source, TaxLine};

/// IVA's code (Impuesto 002): the only tax of the cash-basis view.
const IVA: &str = "002";

/// A stored, processed document issued in the period.
#[derive(Debug, Clone)]
pub struct Document {
    pub invoice_type: String,
    pub currency: Option<String>,
    pub subtotal: Decimal,
    pub discount: Option<Decimal>,
    pub taxes_transferred: Option<Decimal>,
    pub taxes_withheld: Option<Decimal>,
    pub total: Decimal,
    pub payment_method: Option<String>,
    pub cancelled: bool,
    /// Every concept's taxes, in document order.
    pub taxes: Vec<ItemTax>,
}

impl Document {
    fn is_ppd(&self) -> bool {
        self.payment_method.as_deref() == Some("PPD")
    }
}

/// A related-document entry of a payment complement, paid (FechaPago) in the period.
#[derive(Debug, Clone)]
pub struct PaidEntry {
    pub payment_invoice_id: String,
    pub payment_cancelled: bool,
    pub related_uuid: String,
    pub paid_at: String,
    /// MonedaDR.
    pub currency: Option<String>,
    /// ImpPagado, or ImpSaldoAnt − ImpSaldoInsoluto where Pagos 1.0 left it out.
    pub amount_paid: Option<Decimal>,
    /// The entry's own taxes (Pagos 2.0 ImpuestosDR); empty for Pagos 1.0.
    pub taxes: Vec<ItemTax>,
    /// The paid invoice, when it is stored for the entity.
    pub invoice: Option<Document>,
}

/// Counts and sums of one type in one currency.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Totals {
    pub count: u64,
    pub subtotal: Decimal,
    pub discount: Decimal,
    pub taxes_transferred: Decimal,
    pub taxes_withheld: Decimal,
    pub total: Decimal,
}

impl Totals {
    fn add(&mut self, d: &Document, sign: Decimal) {
        self.count += 1;
        self.subtotal += sign * d.subtotal;
        self.discount += sign * d.discount.unwrap_or_default();
        self.taxes_transferred += sign * d.taxes_transferred.unwrap_or_default();
        self.taxes_withheld += sign * d.taxes_withheld.unwrap_or_default();
        self.total += sign * d.total;
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TypeTotals {
    #[serde(rename = "type")]
    pub invoice_type: String,
    pub currency: Option<String>,
    #[serde(flatten)]
    pub totals: Totals,
}

/// Type I minus type E in one currency (`count` is the documents of both).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NetTotals {
    pub currency: Option<String>,
    #[serde(flatten)]
    pub totals: Totals,
}

/// A payment entry the cash-basis view could not count, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unresolved {
    pub payment_invoice_id: String,
    pub related_uuid: String,
    pub paid_at: String,
    pub currency: Option<String>,
    pub amount_paid: Option<Decimal>,
    pub reason: &'static str,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Excluded {
    /// Cancelled documents issued in the period (any type).
    pub cancelled_documents: u64,
    /// Entries paid in the period by cancelled complements.
    pub cancelled_payments: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    pub totals: Vec<TypeTotals>,
    pub net: Vec<NetTotals>,
    pub taxes: Vec<TaxLine>,
    pub cash_basis_iva: Vec<TaxLine>,
    pub unresolved_payments: Vec<Unresolved>,
    pub excluded: Excluded,
}

/// Gathers documents and payment entries one at a time (memory is per line, not per
/// document), then [`Builder::finish`] orders the lines and adds the nets.
#[derive(Default)]
pub struct Builder {
    totals: BTreeMap<(String, Option<String>), Totals>,
    net: BTreeMap<Option<String>, Totals>,
    taxes: Lines,
    cash: Lines,
    unresolved: Vec<Unresolved>,
    excluded: Excluded,
}

impl Builder {
    pub fn document(&mut self, d: &Document) {
        if d.cancelled {
            self.excluded.cancelled_documents += 1;
            return;
        }
        let key = (d.invoice_type.clone(), d.currency.clone());
        self.totals.entry(key).or_default().add(d, Decimal::ONE);
        let source = match d.invoice_type.as_str() {
            "I" => Source::Invoices,
            "E" => Source::CreditNotes,
            _ => return,
        };
        let sign = if source == Source::Invoices {
            Decimal::ONE
        } else {
            Decimal::NEGATIVE_ONE
        };
        self.net.entry(d.currency.clone()).or_default().add(d, sign);
        let currency = d.currency.as_deref();
        if d.taxes.is_empty() {
            // No concept taxes (CFDI 3.2): only the document's Impuestos totals.
            self.taxes.add_unbroken(source, currency, d);
        }
        self.taxes.add_all(source, currency, &d.taxes);
        if !d.is_ppd() {
            let cash = match source {
                Source::Invoices => Source::Pue,
                _ => Source::CreditNotes,
            };
            self.cash.add_all(cash, currency, iva(&d.taxes));
        }
    }

    pub fn payment(&mut self, e: &PaidEntry) {
        if e.payment_cancelled {
            self.excluded.cancelled_payments += 1;
            return;
        }
        if !e.taxes.is_empty() {
            // The complement's own breakdown of what this payment carried.
            let currency = e.currency.as_deref();
            self.cash.add_all(Source::Payments, currency, iva(&e.taxes));
            return;
        }
        match proportion(e) {
            Ok((invoice, paid)) => {
                // Each line's share is rounded once per payment, after multiplying,
                // so no precision is lost to an intermediate ratio.
                let share = |v: Option<Decimal>| v.map(|v| cents(v * paid / invoice.total));
                let shares: Vec<ItemTax> = iva(&invoice.taxes)
                    .map(|tax| ItemTax {
                        base: share(tax.base),
                        amount: share(tax.amount),
                        ..tax.clone()
                    })
                    .collect();
                let currency = invoice.currency.as_deref();
                self.cash.add_all(Source::Payments, currency, &shares);
            }
            Err(reason) => self.unresolved.push(Unresolved {
                payment_invoice_id: e.payment_invoice_id.clone(),
                related_uuid: e.related_uuid.clone(),
                paid_at: e.paid_at.clone(),
                currency: e.currency.clone(),
                amount_paid: e.amount_paid,
                reason,
            }),
        }
    }

    pub fn finish(self) -> Summary {
        let taxes = self
            .taxes
            .finish(&[Source::Invoices], &[Source::CreditNotes]);
        let cash_basis_iva = self
            .cash
            .finish(&[Source::Pue, Source::Payments], &[Source::CreditNotes]);
        Summary {
            totals: (self.totals.into_iter())
                .map(|((invoice_type, currency), totals)| TypeTotals {
                    invoice_type,
                    currency,
                    totals,
                })
                .collect(),
            net: (self.net.into_iter())
                .map(|(currency, totals)| NetTotals { currency, totals })
                .collect(),
            taxes,
            cash_basis_iva,
            unresolved_payments: self.unresolved,
            excluded: self.excluded,
        }
    }
}

/// The invoice an entry pays and the amount it paid, or why the paid proportion
/// cannot be taken.
fn proportion(e: &PaidEntry) -> Result<(&Document, Decimal), &'static str> {
    let invoice = e.invoice.as_ref().ok_or("invoice_not_found")?;
    if invoice.cancelled {
        return Err("invoice_cancelled");
    }
    if invoice.invoice_type != "I" {
        return Err("not_an_income_invoice");
    }
    if let (Some(a), Some(b)) = (&e.currency, &invoice.currency) {
        if !a.trim().eq_ignore_ascii_case(b.trim()) {
            return Err("currency_mismatch");
        }
    }
    let paid = e.amount_paid.ok_or("no_amount_paid")?;
    if invoice.total.is_zero() {
        return Err("invoice_total_zero");
    }
    Ok((invoice, paid))
}

fn iva(taxes: &[ItemTax]) -> impl Iterator<Item = &ItemTax> {
    taxes.iter().filter(|t| t.tax == IVA)
}

/// Rounded to cents, half away from zero (the SAT's rounding of tax amounts).
fn cents(v: Decimal) -> Decimal {
    v.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
}
