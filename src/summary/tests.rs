use super::*;
use crate::cfdi::TaxKind;

fn d(s: &str) -> Decimal {
    s.parse().unwrap_or_else(|_| panic!("decimal {s}"))
}

fn iva(base: &str, amount: &str) -> ItemTax {
    ItemTax {
        kind: TaxKind::Transferred,
        tax: "002".into(),
        factor: Some("Tasa".into()),
        rate: Some(d("0.160000")),
        base: Some(d(base)),
        amount: Some(d(amount)),
    }
}

fn doc(kind: &str, method: &str, total: &str, taxes: Vec<ItemTax>) -> Document {
    let transferred: Decimal = taxes.iter().filter_map(|t| t.amount).sum();
    Document {
        invoice_type: kind.into(),
        currency: Some("MXN".into()),
        subtotal: d(total) - transferred,
        discount: None,
        taxes_transferred: Some(transferred),
        taxes_withheld: None,
        total: d(total),
        payment_method: Some(method.into()),
        cancelled: false,
        taxes,
    }
}

fn entry(paid: &str, taxes: Vec<ItemTax>, invoice: Option<Document>) -> PaidEntry {
    PaidEntry {
        payment_invoice_id: "p".into(),
        payment_cancelled: false,
        related_uuid: "U".into(),
        paid_at: "2024-01-10T00:00:00".into(),
        currency: Some("MXN".into()),
        amount_paid: Some(d(paid)),
        taxes,
        invoice,
    }
}

fn line(lines: &[TaxLine], source: Source) -> &TaxLine {
    let mut found = lines.iter().filter(|l| l.source == source);
    let l = found.next().expect("a line");
    assert!(found.next().is_none(), "one line of {source:?}");
    l
}

#[test]
fn credit_notes_net_against_invoices_and_cancelled_documents_are_left_out() {
    let mut b = Builder::default();
    // Two concepts at 16% on one invoice: one document behind the line.
    b.document(&doc(
        "I",
        "PUE",
        "232.00",
        vec![iva("100", "16"), iva("100", "16")],
    ));
    b.document(&doc("E", "PUE", "11.60", vec![iva("10", "1.60")]));
    let mut cancelled = doc("I", "PUE", "1160", vec![iva("1000", "160")]);
    cancelled.cancelled = true;
    b.document(&cancelled);
    let s = b.finish();
    assert_eq!(s.excluded.cancelled_documents, 1);
    assert_eq!(s.totals.len(), 2);
    assert_eq!(s.net[0].totals.total, d("220.40")); // 232.00 − 11.60
    assert_eq!(s.net[0].totals.count, 2);
    let invoices = line(&s.taxes, Source::Invoices);
    assert_eq!((invoices.base, invoices.amount), (d("200"), d("32")));
    assert_eq!(invoices.count, Some(1));
    assert_eq!(invoices.tax_name, Some("IVA"));
    let net = line(&s.taxes, Source::Net);
    assert_eq!(
        (net.base, net.amount, net.count),
        (d("190"), d("30.40"), None)
    );
    // Cash basis: the PUE invoice less the PUE credit note.
    assert_eq!(line(&s.cash_basis_iva, Source::Net).amount, d("30.40"));
}

#[test]
fn payments_use_their_own_taxes_or_the_paid_proportion_rounded_to_cents() {
    let ppd = doc("I", "PPD", "1160.00", vec![iva("1000.00", "160.00")]);
    let mut b = Builder::default();
    b.document(&ppd);
    // Own breakdown wins over the proportion.
    b.payment(&entry(
        "580.00",
        vec![iva("500.00", "80.00")],
        Some(ppd.clone()),
    ));
    // 333.33 / 1160.00 × 160.00 = 45.976551… → 45.98; base 287.353448… → 287.35.
    b.payment(&entry("333.33", vec![], Some(ppd.clone())));
    let s = b.finish();
    assert!(
        s.cash_basis_iva.iter().all(|l| l.source != Source::Pue),
        "PPD is not PUE"
    );
    let paid = line(&s.cash_basis_iva, Source::Payments);
    assert_eq!(paid.amount, d("125.98")); // 80.00 + 45.98
    assert_eq!(paid.base, d("787.35")); // 500.00 + 287.35
    assert_eq!(paid.count, Some(2));
    // The document view has the whole invoice.
    assert_eq!(line(&s.taxes, Source::Invoices).amount, d("160.00"));
}

#[test]
fn payments_that_cannot_be_proportioned_are_listed_with_why() {
    let usd = Document {
        currency: Some("USD".into()),
        ..doc("I", "PPD", "116", vec![iva("100", "16")])
    };
    let mut cancelled_invoice = doc("I", "PPD", "116", vec![iva("100", "16")]);
    cancelled_invoice.cancelled = true;
    let mut b = Builder::default();
    b.payment(&entry("1", vec![], None));
    b.payment(&entry("1", vec![], Some(usd)));
    b.payment(&entry("1", vec![], Some(cancelled_invoice)));
    b.payment(&entry("1", vec![], Some(doc("P", "PPD", "0", vec![]))));
    let mut gone = entry("1", vec![iva("1", "0.16")], None);
    gone.payment_cancelled = true;
    b.payment(&gone);
    let s = b.finish();
    let reasons: Vec<&str> = s.unresolved_payments.iter().map(|u| u.reason).collect();
    assert_eq!(
        reasons,
        [
            "invoice_not_found",
            "currency_mismatch",
            "invoice_cancelled",
            "not_an_income_invoice"
        ]
    );
    assert_eq!(s.excluded.cancelled_payments, 1);
    assert!(s.cash_basis_iva.is_empty());
}

#[test]
fn documents_without_concept_taxes_show_their_totals_with_no_tax_code() {
    let mut legacy = doc("I", "PUE", "116", vec![]);
    legacy.taxes_transferred = Some(d("16"));
    legacy.payment_method = None;
    let mut b = Builder::default();
    b.document(&legacy);
    let s = b.finish();
    let l = line(&s.taxes, Source::Invoices);
    assert_eq!(
        (l.tax.as_deref(), l.amount, l.count),
        (None, d("16"), Some(1))
    );
    assert!(s.cash_basis_iva.is_empty(), "no IVA breakdown to count");
}

#[test]
fn rates_written_with_other_scales_share_a_line() {
    let mut short = iva("10", "1.6");
    short.rate = Some(d("0.16"));
    let mut b = Builder::default();
    b.document(&doc("I", "PUE", "23.2", vec![iva("10", "1.6"), short]));
    let s = b.finish();
    assert_eq!(line(&s.taxes, Source::Invoices).amount, d("3.2"));
}
