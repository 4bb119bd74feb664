//! Payment aggregation: what an invoice has been paid and still owes, from the
//! payment-complement entries (DoctoRelacionado) that name it. Pure and exact.
//!
//! The rules (API.md "Payment rules"):
//! - `I` not `PPD` (PUE, or CFDI 3.2 without one): paid = total, due = 0.
//! - `I` + `PPD`: paid = Σ ImpPagado of non-cancelled complements' entries naming it;
//!   absent ImpPagado -> ImpSaldoAnt − ImpSaldoInsoluto; an entry repeated verbatim in
//!   one complement counts once; an entry in another currency (MonedaDR) than the
//!   invoice is not summed and flags `payment_conflicts`. due = total − paid, never < 0.
//! - `P`, `T`, `N`, `E`: paid = 0, due = 0.
//! - A cancelled invoice owes nothing (due = 0).
//!
//! Policy for inconsistent saldo chains (two complements both reporting 8208 -> 8108):
//! each complement is a distinct payment, so ImpPagado is summed; the reported balances
//! stay visible per entry in `/payments`.

use rust_decimal::Decimal;

/// What aggregation needs to know about the paid invoice.
#[derive(Debug, Clone)]
pub struct Invoice<'a> {
    pub invoice_type: &'a str,
    pub payment_method: Option<&'a str>,
    pub currency: Option<&'a str>,
    pub total: Decimal,
    pub cancelled: bool,
}

/// One related-document entry of a payment complement.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The complement's fiscal UUID (entries repeat "verbatim" only within one).
    pub payment_uuid: String,
    pub payment_cancelled: bool,
    pub paid_at: String,
    pub installment: Option<u32>,
    pub previous_balance: Option<Decimal>,
    pub amount_paid: Option<Decimal>,
    pub outstanding_balance: Option<Decimal>,
    pub currency: Option<String>,
    pub equivalence: Option<Decimal>,
}

impl Entry {
    /// ImpPagado, or ImpSaldoAnt − ImpSaldoInsoluto where Pagos 1.0 left it out.
    pub fn amount(&self) -> Option<Decimal> {
        self.amount_paid
            .or(match (self.previous_balance, self.outstanding_balance) {
                (Some(before), Some(after)) => Some(before - after),
                _ => None,
            })
    }

    fn same_fact(&self, other: &Entry) -> bool {
        self == other
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Aggregate {
    pub paid_amount: Decimal,
    pub due_amount: Decimal,
    pub last_payment_date: Option<String>,
    pub fully_paid_at: Option<String>,
    pub payment_conflicts: bool,
}

fn same_currency(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.trim().eq_ignore_ascii_case(b.trim()),
        // A missing currency on either side cannot contradict the other.
        _ => true,
    }
}

/// Zero written with the invoice's own precision, so `0.00` stays `0.00`.
fn zero_like(total: Decimal) -> Decimal {
    Decimal::new(0, total.scale())
}

pub fn aggregate(invoice: &Invoice, entries: &[Entry]) -> Aggregate {
    let zero = zero_like(invoice.total);
    let mut agg = Aggregate {
        paid_amount: zero,
        due_amount: zero,
        last_payment_date: None,
        fully_paid_at: None,
        payment_conflicts: false,
    };
    if invoice.invoice_type != "I" {
        return agg;
    }
    if invoice.payment_method != Some("PPD") {
        agg.paid_amount = invoice.total;
        return agg;
    }

    // Distinct, non-cancelled entries in payment order.
    let mut counted: Vec<&Entry> = vec![];
    for e in entries.iter().filter(|e| !e.payment_cancelled) {
        if !same_currency(e.currency.as_deref(), invoice.currency) {
            agg.payment_conflicts = true;
            continue;
        }
        if counted.iter().any(|c| c.same_fact(e)) {
            continue;
        }
        counted.push(e);
    }
    counted.sort_by(|a, b| (&a.paid_at, &a.payment_uuid).cmp(&(&b.paid_at, &b.payment_uuid)));

    let mut paid = zero;
    for e in counted {
        let Some(amount) = e.amount() else { continue };
        paid += amount;
        agg.last_payment_date = Some(e.paid_at.clone());
        if agg.fully_paid_at.is_none() && paid >= invoice.total {
            agg.fully_paid_at = Some(e.paid_at.clone());
        }
    }
    agg.paid_amount = paid;
    agg.due_amount = if invoice.cancelled {
        zero
    } else {
        (invoice.total - paid).max(zero)
    };
    agg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cfdi::Cfdi;

    fn dec(s: &str) -> Decimal {
        s.parse().expect("decimal")
    }

    fn sample(name: &str) -> Cfdi {
        let path = format!(
            "{}/tests/fixtures/cfdi-samples/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        Cfdi::parse(&std::fs::read(path).expect("sample")).expect("parses")
    }

    /// Every entry of a complement sample naming `uuid`.
    fn entries_for(name: &str, uuid: &str) -> Vec<Entry> {
        let c = sample(name);
        let payment_uuid = c
            .stamp
            .as_ref()
            .and_then(|s| s.uuid.clone())
            .unwrap_or_else(|| name.to_string());
        c.payments
            .iter()
            .flat_map(|p| p.related_documents.iter().map(move |d| (p, d)))
            .filter(|(_, d)| d.uuid.as_deref() == Some(uuid))
            .map(|(p, d)| Entry {
                payment_uuid: payment_uuid.clone(),
                payment_cancelled: false,
                paid_at: p.paid_at.clone(),
                installment: d.installment,
                previous_balance: d.previous_balance,
                amount_paid: d.amount_paid,
                outstanding_balance: d.outstanding_balance,
                currency: d.currency.clone(),
                equivalence: d.equivalence,
            })
            .collect()
    }

    fn ppd(total: &str, currency: &str) -> Invoice<'static> {
        Invoice {
            invoice_type: "I",
            payment_method: Some("PPD"),
            currency: Some(if currency == "USD" { "USD" } else { "MXN" }),
            total: dec(total),
            cancelled: false,
        }
    }

    #[test]
    fn scenario_1_full_payment_of_a_ppd_invoice() {
        let inv = sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml");
        let entries = entries_for(
            "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
            "6D7434A6-E3F2-47AD-9E4C-08849946AFA0",
        );
        let agg = aggregate(&ppd(&inv.total.to_string(), "MXN"), &entries);
        assert_eq!(agg.paid_amount, dec("17852.75"));
        assert_eq!(agg.due_amount.to_string(), "0.00");
        assert!(agg.fully_paid_at.is_some());
        assert_eq!(agg.fully_paid_at, agg.last_payment_date);
    }

    #[test]
    fn scenario_2_pue_is_paid_in_full_without_complements() {
        let inv = Invoice {
            invoice_type: "I",
            payment_method: Some("PUE"),
            currency: Some("MXN"),
            total: dec("17852.75"),
            cancelled: false,
        };
        let agg = aggregate(&inv, &[]);
        assert_eq!(
            (agg.paid_amount, agg.due_amount.to_string()),
            (dec("17852.75"), "0.00".into())
        );
        let legacy = Invoice {
            payment_method: None,
            ..inv
        };
        assert_eq!(aggregate(&legacy, &[]).paid_amount, dec("17852.75"));
    }

    #[test]
    fn scenario_3_ppd_without_complements_owes_its_total() {
        let agg = aggregate(&ppd("1191.95", "MXN"), &[]);
        assert_eq!(
            (agg.paid_amount.to_string(), agg.due_amount),
            ("0.00".into(), dec("1191.95"))
        );
        assert_eq!(agg.last_payment_date, None);
    }

    #[test]
    fn scenario_4_usd_invoice_paid_by_a_mxn_payment() {
        let entries = entries_for(
            "cfdi33-pago10-tfd-usd-docto-mxn-payment.xml",
            "1A3CD882-EB73-484A-6971-1C2D29C9F264",
        );
        let agg = aggregate(&ppd("4000.00", "USD"), &entries);
        assert_eq!(agg.paid_amount, dec("4000.00"));
        assert_eq!(agg.due_amount.to_string(), "0.00");
    }

    #[test]
    fn scenario_5_inconsistent_saldo_chain_sums_imp_pagado() {
        let id = "D72829D8-ADCD-4457-935F-B7168A488850";
        let mut entries = entries_for("cfdi33-pago10-usd-docto-parcialidad4.xml", id);
        entries.extend(entries_for("cfdi33-pago10-usd-docto-parcialidad5.xml", id));
        let agg = aggregate(&ppd("8208.00", "USD"), &entries);
        assert_eq!(agg.paid_amount, dec("200"));
        assert_eq!(agg.due_amount, dec("8008.00"));
        assert_eq!(
            agg.last_payment_date.as_deref(),
            Some("2017-07-14T16:14:59")
        );
    }

    #[test]
    fn scenario_6_verbatim_repeat_counts_once() {
        let entries = entries_for(
            "cfdi33-pago10-duplicate-docto-bom.xml",
            "31FBF471-DCFD-46A5-B235-CADD520A9CC0",
        );
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0], entries[1], "a verbatim repeat");
        let agg = aggregate(&ppd("2499.80", "MXN"), &entries);
        assert_eq!(agg.paid_amount, dec("100.77"));
        assert_eq!(agg.due_amount, dec("2399.03"));
    }

    #[test]
    fn scenario_7_absent_imp_pagado_uses_the_saldo_difference() {
        let entries = entries_for(
            "cfdi33-pago10-usd-payment-no-imppagado.xml",
            "A6F92B41-7FE7-49A5-AA9F-D9AF01625C8D",
        );
        assert_eq!(entries[0].amount_paid, None);
        let agg = aggregate(&ppd("100.00", "USD"), &entries);
        assert_eq!(agg.paid_amount, dec("100.00"));
        assert_eq!(agg.due_amount.to_string(), "0.00");
    }

    #[test]
    fn scenario_8_other_currency_is_kept_out_and_flagged() {
        let id = "A6F92B41-7FE7-49A5-AA9F-D9AF01625C8D";
        let mut entries = entries_for("cfdi33-pago10-usd-payment-no-imppagado.xml", id);
        entries.extend(entries_for("cfdi33-pago10-partial-single-docto.xml", id));
        let agg = aggregate(&ppd("580.00", "MXN"), &entries);
        assert!(agg.payment_conflicts);
        assert_eq!(agg.paid_amount, dec("380.00"));
        assert_eq!(agg.due_amount, dec("200.00"));
    }

    #[test]
    fn scenario_9_one_payment_settles_one_and_partly_pays_another() {
        let a = entries_for(
            "cfdi40-pago20-two-docs-partial.xml",
            "00000000-1111-2222-3333-00000000000A",
        );
        let b = entries_for(
            "cfdi40-pago20-two-docs-partial.xml",
            "00000000-1111-2222-3333-00000000000B",
        );
        let agg_a = aggregate(&ppd("12000.00", "MXN"), &a);
        let agg_b = aggregate(&ppd("10000.00", "MXN"), &b);
        assert_eq!(
            (agg_a.paid_amount, agg_a.due_amount),
            (dec("12000.00"), dec("0.00"))
        );
        assert_eq!(
            (agg_b.paid_amount, agg_b.due_amount),
            (dec("3000.00"), dec("7000.00"))
        );
        assert!(agg_a.fully_paid_at.is_some() && agg_b.fully_paid_at.is_none());
    }

    #[test]
    fn cancelled_complements_do_not_count_and_cancelled_invoices_owe_nothing() {
        let mut entries = entries_for(
            "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
            "6D7434A6-E3F2-47AD-9E4C-08849946AFA0",
        );
        entries[0].payment_cancelled = true;
        let agg = aggregate(&ppd("17852.75", "MXN"), &entries);
        assert_eq!(agg.paid_amount.to_string(), "0.00");
        assert_eq!(agg.due_amount, dec("17852.75"));
        let cancelled = Invoice {
            cancelled: true,
            ..ppd("17852.75", "MXN")
        };
        assert_eq!(aggregate(&cancelled, &[]).due_amount.to_string(), "0.00");
    }

    #[test]
    fn other_types_are_neither_paid_nor_due() {
        for t in ["P", "T", "N", "E"] {
            let inv = Invoice {
                invoice_type: t,
                ..ppd("10.00", "MXN")
            };
            let agg = aggregate(&inv, &[]);
            assert!(agg.paid_amount.is_zero() && agg.due_amount.is_zero(), "{t}");
        }
    }

    #[test]
    fn overpayment_never_makes_due_negative_and_order_does_not_matter() {
        let mk = |at: &str, amt: &str, uuid: &str| Entry {
            payment_uuid: uuid.into(),
            payment_cancelled: false,
            paid_at: at.into(),
            installment: None,
            previous_balance: None,
            amount_paid: Some(dec(amt)),
            outstanding_balance: None,
            currency: Some("MXN".into()),
            equivalence: None,
        };
        let entries = vec![
            mk("2024-03-01T00:00:00", "60.00", "B"),
            mk("2024-02-01T00:00:00", "50.00", "A"),
        ];
        let mut reversed = entries.clone();
        reversed.reverse();
        let a = aggregate(&ppd("100.00", "MXN"), &entries);
        assert_eq!(a, aggregate(&ppd("100.00", "MXN"), &reversed));
        assert_eq!(a.due_amount.to_string(), "0.00");
        assert_eq!(a.fully_paid_at.as_deref(), Some("2024-03-01T00:00:00"));
    }
}
