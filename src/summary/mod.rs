//! The period summary of an entity: counts and totals by type and currency, taxes by
//! tax and rate from the documents' own breakdown, local and payroll taxes, and the
//! cash-basis view of IVA (what was paid in the period), each tax line also in pesos.
//! Pure and exact: the database layer (`db::summary`) feeds it documents and payment
//! entries one at a time, and every amount is a `Decimal`. The rules, as
//! `/docs/summary` states them:
//!
//! - Cancelled documents are left out (and counted); so are the payments of cancelled
//!   complements.
//! - Document basis: type I documents are `invoices`, type E `credit_notes`; `net` is
//!   invoices minus credit notes. Other types (P, T, N) count in the totals only,
//!   except that payroll ISR withheld (Nómina) has a section of its own.
//! - A document's breakdown is its concepts' taxes, or for CFDI 3.2 its Impuestos
//!   entries; local taxes (implocal) are a section of their own.
//! - Cash basis (IVA only): PUE invoices (every I that is not PPD) by their date, plus
//!   what complements paid in the period (by FechaPago): the DoctoRelacionado's own
//!   IVA (Pagos 2.0 ImpuestosDR) where it has some, else the paid proportion
//!   ImpPagado / invoice total × the invoice's IVA per tax, factor and rate, rounded
//!   once to cents; minus credit notes (PPD ones too: no complement pays a credit
//!   note) by their date.
//! - Pesos: a document's amounts × its TipoCambio (a peso document without one, CFDI
//!   3.2's spellings of pesos included, as is: `currency`); a payment entry's ×
//!   TipoCambioP ÷ EquivalenciaDR (Pagos 1.0 TipoCambioDR); rounded to cents per
//!   document (entry) and line, and written with two decimals.
//! - Withholdings: what others withheld from the entity, from the invoices it issued
//!   and the retentions it received, whatever the direction (`withholdings`).

pub mod cash;
mod currency;
pub mod diot;
pub mod diot_fields;
pub mod iva;
mod lines;
pub mod seals;
pub mod sheet;
#[cfg(test)]
mod tests;
mod withholdings;

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::Serialize;

use crate::cfdi::ItemTax;
pub use crate::domain::summary::{fold_into, Document, PaidEntry, RetentionWithholding};
use currency::{is_pesos, same_currency};
pub use lines::{Lines, Pesos, Source, TaxLine};
pub use withholdings::{WithholdingLine, WithholdingSource, Withholdings};

/// IVA's code (Impuesto 002): the only tax of the cash-basis view.
const IVA: &str = "002";

impl Document {
    fn is_ppd(&self) -> bool {
        self.payment_method.as_deref() == Some("PPD")
    }

    /// The document's tax breakdown: its concepts' taxes, or CFDI 3.2's Impuestos
    /// entries (3.2 concepts carry none).
    fn breakdown(&self) -> &[ItemTax] {
        if self.taxes.is_empty() {
            &self.stated.legacy
        } else {
            &self.taxes
        }
    }

    /// Its amounts in pesos: × TipoCambio; a peso document (MXN, no Moneda, or a
    /// CFDI 3.2 spelling of pesos: `currency`) without one as is; None for another
    /// currency without one.
    fn pesos(&self) -> Option<Pesos> {
        match self.exchange_rate {
            Some(rate) => Pesos::new(rate, Decimal::ONE),
            None if is_pesos(self.currency.as_deref()) => Some(Pesos::SAME),
            None => None,
        }
    }
}

impl PaidEntry {
    /// An amount in MonedaDR in pesos: ÷ EquivalenciaDR gives MonedaP, × TipoCambioP
    /// pesos. A peso payment needs no TipoCambioP, an entry in the payment's currency
    /// no EquivalenciaDR; otherwise a missing one leaves the pesos unknown (None).
    fn pesos(&self) -> Option<Pesos> {
        let to_payment = match self.equivalence {
            Some(e) => e,
            None if same_currency(self.currency.as_deref(), self.payment_currency.as_deref()) => {
                Decimal::ONE
            }
            None => return None,
        };
        let rate = match self.payment_exchange_rate {
            Some(r) => r,
            None if is_pesos(self.payment_currency.as_deref()) => Decimal::ONE,
            None => return None,
        };
        Pesos::new(rate, to_payment)
    }
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
    /// implocal TotaldeTraslados / TotaldeRetenciones (as the entries add up): with
    /// them, subtotal − discount + taxes − withheld + local − local withheld = total.
    pub local_taxes_transferred: Decimal,
    pub local_taxes_withheld: Decimal,
}

impl Totals {
    fn add(&mut self, d: &Document, sign: Decimal) {
        self.count += 1;
        self.subtotal += sign * d.subtotal;
        self.discount += sign * d.discount.unwrap_or_default();
        self.taxes_transferred += sign * d.taxes_transferred.unwrap_or_default();
        self.taxes_withheld += sign * d.taxes_withheld.unwrap_or_default();
        self.total += sign * d.total;
        for t in &d.stated.local {
            let amount = sign * t.amount.unwrap_or_default();
            match t.kind {
                crate::cfdi::TaxKind::Transferred => self.local_taxes_transferred += amount,
                crate::cfdi::TaxKind::Withheld => self.local_taxes_withheld += amount,
            }
        }
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
    /// Local taxes (implocal) of invoices and credit notes, and their net.
    pub local_taxes: Vec<TaxLine>,
    /// ISR withheld on payroll (the Nómina complement's deductions of type 002).
    pub payroll_taxes: Vec<TaxLine>,
    /// What others withheld from the entity (see `withholdings`).
    pub withholdings: Vec<WithholdingLine>,
}

/// The reason of a payment left out because the invoice it pays is not stored: what an
/// extraction by UUID can fetch.
pub const INVOICE_NOT_FOUND: &str = "invoice_not_found";

/// Whether the period's cash basis counted every payment it could: the invoices its
/// payments pay that are not stored (each UUID once, in order), and how many payment
/// entries were left out for them.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Missing {
    pub count: usize,
    pub payments: usize,
    pub uuids: Vec<String>,
}

impl Summary {
    /// Complete when no payment was left out for want of its invoice.
    pub fn missing_invoices(&self) -> Missing {
        let left_out = self
            .unresolved_payments
            .iter()
            .filter(|u| u.reason == INVOICE_NOT_FOUND);
        let uuids: std::collections::BTreeSet<String> = left_out
            .clone()
            .map(|u| u.related_uuid.to_ascii_uppercase())
            .collect();
        Missing {
            count: uuids.len(),
            payments: left_out.count(),
            uuids: uuids.into_iter().collect(),
        }
    }
}

/// Gathers documents and payment entries one at a time (memory is per line, not per
/// document), then [`Builder::finish`] orders the lines and adds the nets.
#[derive(Default)]
pub struct Builder {
    totals: BTreeMap<(String, Option<String>), Totals>,
    net: BTreeMap<Option<String>, Totals>,
    taxes: Lines,
    cash: Lines,
    local: Lines,
    payroll: Lines,
    unresolved: Vec<Unresolved>,
    excluded: Excluded,
    withholdings: Withholdings,
}

impl Builder {
    /// An invoice the entity issued, for the withholdings section only (the summary
    /// of either direction reads them).
    pub fn issued_withholdings(&mut self, d: &Document) {
        self.withholdings.invoice(d);
    }

    /// A retention the entity received (the withholdings section).
    pub fn retention(&mut self, r: &RetentionWithholding) {
        self.withholdings.retention(r);
    }

    pub fn document(&mut self, d: &Document) {
        if d.cancelled {
            self.excluded.cancelled_documents += 1;
            return;
        }
        let key = (d.invoice_type.clone(), d.currency.clone());
        self.totals.entry(key).or_default().add(d, Decimal::ONE);
        let currency = d.currency.as_deref();
        let pesos = d.pesos();
        self.payroll
            .add_all(Source::Payroll, currency, &d.stated.payroll, pesos);
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
        let taxes = d.breakdown();
        if taxes.is_empty() {
            // No breakdown at all: only the document's Impuestos totals.
            self.taxes.add_unbroken(source, currency, d, pesos);
        }
        self.taxes.add_all(source, currency, taxes, pesos);
        self.local.add_all(source, currency, &d.stated.local, pesos);
        if let Some(share) = cash::of_document(d) {
            self.cash_share(&share);
        }
    }

    fn cash_share(&mut self, s: &cash::Share) {
        let currency = s.currency.as_deref();
        self.cash.add_all(s.source, currency, &s.taxes, s.pesos);
    }

    pub fn payment(&mut self, e: &PaidEntry) {
        if e.payment_cancelled {
            self.excluded.cancelled_payments += 1;
            return;
        }
        match cash::of_payment(e) {
            Ok(share) => self.cash_share(&share),
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
        let invoices_less_credit_notes =
            |lines: Lines| lines.finish(&[Source::Invoices], &[Source::CreditNotes]);
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
            taxes: invoices_less_credit_notes(self.taxes),
            cash_basis_iva,
            unresolved_payments: self.unresolved,
            excluded: self.excluded,
            local_taxes: invoices_less_credit_notes(self.local),
            payroll_taxes: self.payroll.finish(&[], &[]),
            withholdings: self.withholdings.finish(),
        }
    }
}

/// The paid share of an invoice's IVA: per tax, factor and rate (the invoice's
/// entries of one line added up first), Base and Importe × paid ÷ total, multiplied
/// before dividing and rounded once to cents, as the SAT's Pagos guide takes it.
fn paid_shares(invoice: &Document, paid: Decimal) -> Vec<ItemTax> {
    let mut lines = Vec::new();
    for t in iva_entries(invoice.breakdown()) {
        fold_into(&mut lines, t);
    }
    let share = |v: Option<Decimal>| v.map(|v| cents(v * paid / invoice.total));
    for t in &mut lines {
        t.base = share(t.base);
        t.amount = share(t.amount);
    }
    lines
}

/// The invoice an entry pays and the amount it paid, or why the paid proportion
/// cannot be taken.
fn proportion(e: &PaidEntry) -> Result<(&Document, Decimal), &'static str> {
    let invoice = e.invoice.as_ref().ok_or(INVOICE_NOT_FOUND)?;
    if invoice.cancelled {
        return Err("invoice_cancelled");
    }
    if invoice.invoice_type != "I" {
        return Err("not_an_income_invoice");
    }
    if !same_currency(e.currency.as_deref(), invoice.currency.as_deref()) {
        return Err("currency_mismatch");
    }
    let paid = e.amount_paid.ok_or("no_amount_paid")?;
    if invoice.total.is_zero() {
        return Err("invoice_total_zero");
    }
    Ok((invoice, paid))
}

fn iva_entries(taxes: &[ItemTax]) -> impl Iterator<Item = &ItemTax> {
    taxes.iter().filter(|t| t.tax == IVA)
}

/// Rounded to cents, half away from zero (the SAT's rounding of tax amounts).
fn cents(v: Decimal) -> Decimal {
    v.round_dp_with_strategy(2, rust_decimal::RoundingStrategy::MidpointAwayFromZero)
}
