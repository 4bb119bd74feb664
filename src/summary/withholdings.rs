//! What was withheld from the entity in the period, by tax and payment type, in pesos:
//! the withheld taxes of the invoices it issued (its clients withheld them from what
//! they paid it; its credit notes give some back) and the withheld taxes (ImpRetenidos)
//! of the CFDI de Retenciones it received (a bank, a platform, a payer withheld them).
//! Whatever the summary's direction, this section reads those two: withholdings are
//! always what others took from the entity, which it credits in its returns.
//!
//! - Taxes are the CFDI catalog's codes (`001` ISR, `002` IVA, `003` IEPS; RET 1.0's
//!   `01`/`02`/`03` read as them); a payment type is a retention's TipoPagoRet as
//!   written (invoices have none).
//! - Pesos: an invoice's amounts × its TipoCambio (unknown without one in another
//!   currency); a retention's amounts are pesos (RET 2.0's `t_ImporteMXN`; RET 1.0 states
//!   no currency). Each document's amount per line is rounded once to cents.
//! - Cancelled documents are left out. `total` lines add invoices and retentions and
//!   subtract credit notes, per tax.

use std::collections::BTreeMap;

use rust_decimal::Decimal;
use serde::Serialize;

use super::{Document, Pesos, RetentionWithholding};
use crate::cfdi::TaxKind;

/// Where a withholding line's amounts come from (and the order lines are listed in).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WithholdingSource {
    /// Type I invoices the entity issued.
    Invoices,
    /// Type E credit notes the entity issued (subtracted in the total).
    CreditNotes,
    /// CFDI de Retenciones the entity received.
    Retentions,
    /// Per tax: invoices plus retentions minus credit notes.
    Total,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WithholdingLine {
    pub source: WithholdingSource,
    /// `001`, `002`, `003`, or a code as written; null for an invoice that states
    /// only its total withheld.
    pub tax: Option<String>,
    pub tax_name: Option<&'static str>,
    /// A retention's TipoPagoRet as written; null for invoices and totals.
    pub payment_type: Option<String>,
    /// Documents behind the line; null on totals.
    pub count: Option<u64>,
    /// In pesos; null when a document behind the line has no rate to pesos.
    pub amount_mxn: Option<Decimal>,
}

type Key = (WithholdingSource, Option<String>, Option<String>);

#[derive(Debug, Default, Clone, Copy)]
struct Sums {
    count: u64,
    mxn: Decimal,
    no_mxn: bool,
}

#[derive(Debug, Default)]
pub struct Withholdings {
    by: BTreeMap<Key, Sums>,
}

impl Withholdings {
    /// An invoice the entity issued: its withheld taxes (type I) or those it gives
    /// back (type E).
    pub fn invoice(&mut self, d: &Document) {
        let source = match d.invoice_type.as_str() {
            "I" => WithholdingSource::Invoices,
            "E" => WithholdingSource::CreditNotes,
            _ => return,
        };
        if d.cancelled {
            return;
        }
        let mut own: BTreeMap<Option<String>, Decimal> = BTreeMap::new();
        let breakdown = d.breakdown();
        for t in breakdown.iter().filter(|t| t.kind == TaxKind::Withheld) {
            *own.entry(Some(t.tax.clone())).or_default() += t.amount.unwrap_or_default();
        }
        if breakdown.is_empty() {
            if let Some(total) = d.taxes_withheld.filter(|t| !t.is_zero()) {
                own.insert(None, total);
            }
        }
        let pesos = d.pesos();
        for (tax, amount) in own {
            self.add((source, tax, None), amount, pesos);
        }
    }

    /// A retention the entity received.
    pub fn retention(&mut self, r: &RetentionWithholding) {
        if r.cancelled {
            return;
        }
        let mut own: BTreeMap<(Option<String>, Option<String>), Decimal> = BTreeMap::new();
        for (tax, payment_type, amount) in &r.taxes {
            *own.entry((tax.clone(), payment_type.clone())).or_default() += *amount;
        }
        for ((tax, payment_type), amount) in own {
            let key = (WithholdingSource::Retentions, tax, payment_type);
            self.add(key, amount, Some(Pesos::SAME));
        }
    }

    fn add(&mut self, key: Key, amount: Decimal, pesos: Option<Pesos>) {
        let sums = self.by.entry(key).or_default();
        sums.count += 1;
        match pesos {
            Some(p) => sums.mxn += p.of(amount),
            None => sums.no_mxn = true,
        }
    }

    /// The lines in order, then one total per tax.
    pub fn finish(self) -> Vec<WithholdingLine> {
        let mut totals: BTreeMap<Option<String>, Sums> = BTreeMap::new();
        let mut out = Vec::new();
        for ((source, tax, payment_type), sums) in self.by {
            let sign = if source == WithholdingSource::CreditNotes {
                Decimal::NEGATIVE_ONE
            } else {
                Decimal::ONE
            };
            let total = totals.entry(tax.clone()).or_default();
            total.mxn += sign * sums.mxn;
            total.no_mxn |= sums.no_mxn;
            out.push(line(source, tax, payment_type, sums, Some(sums.count)));
        }
        out.extend(
            totals
                .into_iter()
                .map(|(tax, sums)| line(WithholdingSource::Total, tax, None, sums, None)),
        );
        out
    }
}

fn line(
    source: WithholdingSource,
    tax: Option<String>,
    payment_type: Option<String>,
    sums: Sums,
    count: Option<u64>,
) -> WithholdingLine {
    WithholdingLine {
        source,
        tax_name: super::lines::tax_name(tax.as_deref()),
        tax,
        payment_type,
        count,
        amount_mxn: (!sums.no_mxn).then_some(super::lines::two_decimals(sums.mxn)),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::cfdi::{ItemTax, StatedTaxes};

    fn d(s: &str) -> Decimal {
        Decimal::from_str_exact(s).unwrap()
    }

    fn tax(kind: TaxKind, code: &str, amount: &str) -> ItemTax {
        ItemTax {
            kind,
            tax: code.into(),
            factor: Some("Tasa".into()),
            rate: None,
            base: None,
            amount: Some(d(amount)),
        }
    }

    fn doc(kind: &str, currency: &str, rate: Option<&str>, taxes: Vec<ItemTax>) -> Document {
        Document {
            invoice_type: kind.into(),
            currency: Some(currency.into()),
            subtotal: d("1000.00"),
            discount: None,
            taxes_transferred: None,
            taxes_withheld: None,
            total: d("1000.00"),
            payment_method: Some("PUE".into()),
            cancelled: false,
            taxes,
            exchange_rate: rate.map(d),
            stated: StatedTaxes::default(),
            ..Document::default()
        }
    }

    fn retention(entries: &[(&str, &str, &str)]) -> RetentionWithholding {
        RetentionWithholding {
            cancelled: false,
            taxes: entries
                .iter()
                .map(|(t, p, a)| (Some((*t).to_owned()), Some((*p).to_owned()), d(a)))
                .collect(),
        }
    }

    /// (source, tax, payment type, count, pesos) of one line.
    type Row<'a> = (
        WithholdingSource,
        &'a str,
        &'a str,
        Option<u64>,
        Option<String>,
    );

    fn rows(lines: &[WithholdingLine]) -> Vec<Row<'_>> {
        lines
            .iter()
            .map(|l| {
                (
                    l.source,
                    l.tax.as_deref().unwrap_or("-"),
                    l.payment_type.as_deref().unwrap_or("-"),
                    l.count,
                    l.amount_mxn.map(|a| a.to_string()),
                )
            })
            .collect()
    }

    #[test]
    fn invoices_and_retentions_add_up_by_tax_and_payment_type_in_pesos() {
        use TaxKind::{Transferred, Withheld};
        use WithholdingSource::{CreditNotes, Invoices, Retentions, Total};
        let mut w = Withholdings::default();
        // A peso invoice its client withheld ISR 100.00 and IVA 106.67 from (its
        // transferred IVA is not a withholding).
        w.invoice(&doc(
            "I",
            "MXN",
            None,
            vec![
                tax(Withheld, "001", "100.00"),
                tax(Withheld, "002", "106.67"),
                tax(Transferred, "002", "160.00"),
            ],
        ));
        // A dollar invoice at 17.50: ISR 10.00 USD is 175.00 pesos.
        w.invoice(&doc(
            "I",
            "USD",
            Some("17.50"),
            vec![tax(Withheld, "001", "10.00")],
        ));
        // A credit note gives back ISR 20.00; a cancelled invoice counts for nothing.
        w.invoice(&doc("E", "MXN", None, vec![tax(Withheld, "001", "20.00")]));
        let mut cancelled = doc("I", "MXN", None, vec![tax(Withheld, "001", "999.00")]);
        cancelled.cancelled = true;
        w.invoice(&cancelled);
        // A platform's monthly constancia (6-decimal amounts round to cents) and a
        // bank's definitive ISR; a cancelled retention counts for nothing.
        w.retention(&retention(&[
            ("001", "Pago provisional", "647.379200"),
            ("002", "Pago provisional", "647.379200"),
        ]));
        w.retention(&retention(&[("001", "Pago definitivo", "500.00")]));
        let mut gone = retention(&[("001", "Pago definitivo", "1.00")]);
        gone.cancelled = true;
        w.retention(&gone);
        let s = |v: &str| Some(v.to_owned());
        assert_eq!(
            rows(&w.finish()),
            vec![
                (Invoices, "001", "-", Some(2), s("275.00")),
                (Invoices, "002", "-", Some(1), s("106.67")),
                (CreditNotes, "001", "-", Some(1), s("20.00")),
                (Retentions, "001", "Pago definitivo", Some(1), s("500.00")),
                (Retentions, "001", "Pago provisional", Some(1), s("647.38")),
                (Retentions, "002", "Pago provisional", Some(1), s("647.38")),
                // 275.00 − 20.00 + 500.00 + 647.38 and 106.67 + 647.38.
                (Total, "001", "-", None, s("1402.38")),
                (Total, "002", "-", None, s("754.05")),
            ]
        );
    }

    #[test]
    fn a_foreign_invoice_without_a_rate_leaves_its_pesos_unknown() {
        let mut w = Withholdings::default();
        w.invoice(&doc(
            "I",
            "USD",
            None,
            vec![tax(TaxKind::Withheld, "001", "10.00")],
        ));
        w.retention(&retention(&[("001", "03", "5.00")]));
        let lines = w.finish();
        let total = lines.last().unwrap();
        assert_eq!(total.source, WithholdingSource::Total);
        assert_eq!(total.amount_mxn, None);
        assert_eq!(lines[1].amount_mxn, Some(d("5.00")));
        assert_eq!(lines[1].tax_name, Some("ISR"));
    }
}
