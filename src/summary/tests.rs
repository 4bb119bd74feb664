use super::*;
use crate::cfdi::{StatedTaxes, TaxKind};

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
        exchange_rate: None,
        stated: StatedTaxes::default(),
        ..Document::default()
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
        payment_currency: Some("MXN".into()),
        payment_exchange_rate: None,
        equivalence: None,
        ..PaidEntry::default()
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
    // A 3.2 document stored before its Impuestos entries were read.
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

fn tax(kind: TaxKind, code: &str, rate: Option<&str>, base: Option<&str>, amount: &str) -> ItemTax {
    ItemTax {
        kind,
        tax: code.into(),
        factor: rate.map(|_| "Tasa".into()),
        rate: rate.map(d),
        base: base.map(d),
        amount: Some(d(amount)),
    }
}

/// The figure: two concepts at 16% (Importe 592.5888 and 71.9984) on a
/// 4,818.26 invoice paid 2,000.00. Per line: (592.5888 + 71.9984) × 2000.00 ÷ 4818.26
/// = 275.8619… → 275.86. Rounding each entry first gave 245.98 + 29.89 = 275.87.
#[test]
fn the_paid_share_is_taken_per_tax_factor_and_rate_and_rounded_once() {
    let invoice = doc(
        "I",
        "PPD",
        "4818.26",
        vec![iva("3703.68", "592.5888"), iva("449.99", "71.9984")],
    );
    let mut b = Builder::default();
    b.payment(&entry("2000.00", vec![], Some(invoice)));
    let s = b.finish();
    let paid = line(&s.cash_basis_iva, Source::Payments);
    assert_eq!(paid.amount, d("275.86"));
    // Base: (3703.68 + 449.99) × 2000 ÷ 4818.26 = 1724.1369… → 1724.14.
    assert_eq!(paid.base, d("1724.14"));
    assert_eq!(paid.count, Some(1));
    assert_eq!(
        (paid.base_mxn, paid.amount_mxn),
        (Some(d("1724.14")), Some(d("275.86")))
    );
}

/// USD documents in pesos. The PUE invoice (the shared sample
/// cfdi40-ingreso-pue-usd-descuento-unstamped: IVA 448.00 on 2800.00, TipoCambio
/// 18.9008): 448.00 × 18.9008 = 8467.5584 → 8467.56; 2800.00 × 18.9008 = 52922.24.
#[test]
fn pue_documents_convert_at_their_tipo_cambio() {
    let mut usd = doc("I", "PUE", "3248.00", vec![iva("2800.00", "448.00")]);
    usd.currency = Some("USD".into());
    usd.exchange_rate = Some(d("18.9008"));
    let mut no_rate = usd.clone();
    no_rate.exchange_rate = None;
    let mut b = Builder::default();
    b.document(&usd);
    let s = b.finish();
    let pue = line(&s.cash_basis_iva, Source::Pue);
    assert_eq!(
        (pue.currency.as_deref(), pue.amount),
        (Some("USD"), d("448.00"))
    );
    assert_eq!(pue.amount_mxn, Some(d("8467.56")));
    assert_eq!(pue.base_mxn, Some(d("52922.24")));
    assert_eq!(
        line(&s.cash_basis_iva, Source::Net).amount_mxn,
        Some(d("8467.56"))
    );
    assert_eq!(
        line(&s.taxes, Source::Invoices).amount_mxn,
        Some(d("8467.56"))
    );
    // A foreign document without TipoCambio has no peso figure, and neither has its line.
    let mut b = Builder::default();
    b.document(&usd);
    b.document(&no_rate);
    let s = b.finish();
    let pue = line(&s.cash_basis_iva, Source::Pue);
    assert_eq!((pue.amount, pue.amount_mxn), (d("896.00"), None));
}

/// Payments in pesos: the DR amount ÷ EquivalenciaDR (MonedaP) × TipoCambioP.
#[test]
fn payment_entries_convert_through_the_payment_currency() {
    let mut usd_invoice = doc("I", "PPD", "1160.00", vec![iva("1000.00", "160.00")]);
    usd_invoice.currency = Some("USD".into());
    usd_invoice.exchange_rate = Some(d("17.00"));
    let usd_entry = |paid: &str, taxes: Vec<ItemTax>| PaidEntry {
        currency: Some("USD".into()),
        ..entry(paid, taxes, Some(usd_invoice.clone()))
    };
    // Pagos 2.0, a USD payment (TipoCambioP 17.2580) of a USD invoice with its own
    // taxes: 80.00 × 17.2580 = 1380.64; base 500.00 × 17.2580 = 8629.00.
    let mut b = Builder::default();
    b.payment(&PaidEntry {
        payment_currency: Some("USD".into()),
        payment_exchange_rate: Some(d("17.2580")),
        equivalence: Some(d("1")),
        ..usd_entry("580.00", vec![iva("500.00", "80.00")])
    });
    let s = b.finish();
    let p = line(&s.cash_basis_iva, Source::Payments);
    assert_eq!((p.amount, p.amount_mxn), (d("80.00"), Some(d("1380.64"))));
    assert_eq!(p.base_mxn, Some(d("8629.00")));
    // Pagos 1.0, a MXN payment of the USD invoice, TipoCambioDR 0.050522 USD per peso,
    // no taxes of its own: the share 580.00 ÷ 1160.00 × 160.00 = 80.00 USD,
    // 80.00 ÷ 0.050522 = 1583.4685… → 1583.47; base 500.00 ÷ 0.050522 = 9896.6786… →
    // 9896.68.
    let mut b = Builder::default();
    b.payment(&PaidEntry {
        equivalence: Some(d("0.050522")),
        ..usd_entry("580.00", vec![])
    });
    let s = b.finish();
    let p = line(&s.cash_basis_iva, Source::Payments);
    assert_eq!((p.amount, p.amount_mxn), (d("80.00"), Some(d("1583.47"))));
    assert_eq!(p.base_mxn, Some(d("9896.68")));
    // A MXN payment of a USD invoice without TipoCambioDR: no peso figure is guessed.
    let mut b = Builder::default();
    b.payment(&usd_entry("580.00", vec![]));
    let s = b.finish();
    assert_eq!(line(&s.cash_basis_iva, Source::Payments).amount_mxn, None);
    // A USD payment of a MXN invoice (EquivalenciaDR 18.50 pesos per dollar,
    // TipoCambioP 18.50): the DR amount is already in pesos, 16.00 ÷ 18.50 × 18.50.
    let mut b = Builder::default();
    b.payment(&PaidEntry {
        payment_currency: Some("USD".into()),
        payment_exchange_rate: Some(d("18.50")),
        equivalence: Some(d("18.50")),
        ..entry("116.00", vec![iva("100.00", "16.00")], None)
    });
    let s = b.finish();
    assert_eq!(
        line(&s.cash_basis_iva, Source::Payments).amount_mxn,
        Some(d("16.00"))
    );
}

#[test]
fn ppd_credit_notes_count_by_their_date() {
    let mut b = Builder::default();
    b.document(&doc("I", "PUE", "116.00", vec![iva("100.00", "16.00")]));
    b.document(&doc("E", "PPD", "11.60", vec![iva("10.00", "1.60")]));
    let s = b.finish();
    assert_eq!(
        line(&s.cash_basis_iva, Source::CreditNotes).amount,
        d("1.60")
    );
    assert_eq!(line(&s.cash_basis_iva, Source::Net).amount, d("14.40"));
}

/// A CFDI 3.2 invoice (the shared sample cfdi32-ingreso-real-legacy-tfd10: IVA 16%
/// 646.21, no MetodoPago) lands on the IVA 16% line, document and cash basis alike.
#[test]
fn cfdi32_entries_land_on_their_tax_and_rate() {
    let mut legacy = doc("I", "PUE", "4685.00", vec![]);
    legacy.payment_method = None;
    legacy.stated.legacy = vec![tax(
        TaxKind::Transferred,
        "002",
        Some("0.160000"),
        None,
        "646.21",
    )];
    let mut b = Builder::default();
    b.document(&legacy);
    b.document(&doc("I", "PUE", "116.00", vec![iva("100.00", "16.00")]));
    let s = b.finish();
    let l = line(&s.taxes, Source::Invoices);
    assert_eq!(
        (l.tax_name, l.amount, l.count),
        (Some("IVA"), d("662.21"), Some(2))
    );
    // 3.2 states no base: only the 3.3 document's.
    assert_eq!(l.base, d("100.00"));
    assert_eq!(line(&s.cash_basis_iva, Source::Pue).amount, d("662.21"));
}

/// The implocal sample (SubTotal 1709.12 + IVA 273.46 + IH 2.5% 27.43 = 2010.01) and a
/// payroll document (ISR withheld 2272.25) next to an invoice.
#[test]
fn local_and_payroll_taxes_have_sections_and_totals_add_up() {
    let mut hotel = doc("I", "PUE", "2010.01", vec![iva("1709.12", "273.46")]);
    hotel.subtotal = d("1709.12");
    hotel.stated.local = vec![tax(
        TaxKind::Transferred,
        "IH",
        Some("0.025000"),
        None,
        "27.43",
    )];
    let mut refund = doc("E", "PUE", "10.25", vec![]);
    refund.stated.local = vec![tax(TaxKind::Transferred, "IH", Some("0.025"), None, "0.25")];
    let mut payroll = doc("N", "PUE", "12574.40", vec![]);
    payroll.stated.payroll = vec![tax(TaxKind::Withheld, "001", None, None, "2272.25")];
    let mut b = Builder::default();
    b.document(&hotel);
    b.document(&refund);
    b.document(&payroll);
    let s = b.finish();
    let t = &s
        .totals
        .iter()
        .find(|t| t.invoice_type == "I")
        .expect("I")
        .totals;
    assert_eq!(t.local_taxes_transferred, d("27.43"));
    assert_eq!(
        t.subtotal - t.discount + t.taxes_transferred - t.taxes_withheld
            + t.local_taxes_transferred
            - t.local_taxes_withheld,
        t.total
    );
    assert_eq!(s.net[0].totals.local_taxes_transferred, d("27.18"));
    let local = line(&s.local_taxes, Source::Invoices);
    assert_eq!(
        (local.tax.as_deref(), local.tax_name, local.amount),
        (Some("IH"), None, d("27.43"))
    );
    assert_eq!(line(&s.local_taxes, Source::Net).amount, d("27.18"));
    let isr = line(&s.payroll_taxes, Source::Payroll);
    assert_eq!(
        (
            isr.kind,
            isr.tax_name,
            isr.amount,
            isr.count,
            isr.amount_mxn
        ),
        (
            TaxKind::Withheld,
            Some("ISR"),
            d("2272.25"),
            Some(1),
            Some(d("2272.25"))
        )
    );
    assert!(s.payroll_taxes.iter().all(|l| l.source != Source::Net));
    // Payroll and local taxes are not IVA: the cash basis has the hotel's IVA only.
    assert_eq!(line(&s.cash_basis_iva, Source::Net).amount, d("273.46"));
}

/// A shared sample as the database layer hands it over.
fn sample(name: &str) -> crate::cfdi::Cfdi {
    let path = format!(
        "{}/tests/fixtures/cfdi-samples/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    crate::cfdi::Cfdi::parse(&std::fs::read(path).expect("sample")).expect("parses")
}

fn stored(c: &crate::cfdi::Cfdi) -> Document {
    let mut taxes = Vec::new();
    for t in c.items.iter().flat_map(|i| &i.taxes) {
        fold_into(&mut taxes, t);
    }
    Document {
        invoice_type: c.invoice_type.as_str().into(),
        currency: c.currency.clone(),
        subtotal: c.subtotal,
        discount: c.discount,
        taxes_transferred: c.taxes_transferred,
        taxes_withheld: c.taxes_withheld,
        total: c.total,
        payment_method: c.payment_method.clone(),
        cancelled: false,
        taxes,
        exchange_rate: c.exchange_rate,
        stated: c.stated_taxes.clone(),
        ..Document::default()
    }
}

/// Every entry of a complement sample, with `invoice` as the paid invoice.
fn paid_entries(c: &crate::cfdi::Cfdi, invoice: Option<&Document>) -> Vec<PaidEntry> {
    c.payments
        .iter()
        .flat_map(|p| p.related_documents.iter().map(move |d| (p, d)))
        .map(|(p, d)| PaidEntry {
            payment_invoice_id: "p".into(),
            payment_cancelled: false,
            related_uuid: d.uuid.clone().unwrap_or_default(),
            paid_at: p.paid_at.clone(),
            currency: d.currency.clone(),
            amount_paid: d.amount_paid,
            taxes: d.taxes.clone(),
            invoice: invoice.cloned(),
            payment_currency: Some(p.currency.clone()),
            payment_exchange_rate: p.exchange_rate,
            equivalence: d.equivalence,
            ..PaidEntry::default()
        })
        .collect()
}

fn cash(s: &Summary) -> Vec<String> {
    let opt = |v: Option<Decimal>| v.map_or("null".to_owned(), |v| v.to_string());
    s.cash_basis_iva
        .iter()
        .map(|l| {
            format!(
                "{} {:?} {} {} {} {} {}",
                l.source.as_str(),
                l.kind,
                opt(l.rate),
                l.base,
                l.amount,
                opt(l.count.map(Decimal::from)),
                opt(l.amount_mxn)
            )
        })
        .collect()
}

/// The real PPD invoice with withholdings (cfdi40-ingreso-ppd-retenciones-tfd-oneline:
/// total 1191.95; IVA 16% 200.05 and IVA withheld 0.106667 133.37 on 1250.30; ISR
/// withheld 125.03) paid 500.00 by a Pagos 1.0 entry (no taxes of its own):
/// 200.05 × 500 ÷ 1191.95 = 83.9171… → 83.92; 133.37 × 500 ÷ 1191.95 = 55.9461… →
/// 55.95; base 1250.30 × 500 ÷ 1191.95 = 524.4766… → 524.48. ISR is not IVA.
#[test]
fn withholdings_of_a_real_invoice_paid_in_part() {
    let invoice = stored(&sample("cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"));
    assert_eq!(invoice.total, d("1191.95"));
    let mut b = Builder::default();
    b.document(&invoice);
    b.payment(&entry("500.00", vec![], Some(invoice.clone())));
    let s = b.finish();
    assert_eq!(
        cash(&s),
        [
            "payments Transferred 0.160000 524.48 83.92 1 83.92",
            "payments Withheld 0.106667 524.48 55.95 1 55.95",
            "net Transferred 0.160000 524.48 83.92 null 83.92",
            "net Withheld 0.106667 524.48 55.95 null 55.95",
        ]
    );
    // The document basis has the whole invoice, ISR included.
    let isr = s
        .taxes
        .iter()
        .find(|l| l.source == Source::Invoices && l.tax_name == Some("ISR"))
        .expect("ISR line");
    assert_eq!((isr.kind, isr.amount), (TaxKind::Withheld, d("125.03")));
}

/// The real Pagos 2.0 complement with two Pagos (cfdi40-pago20-two-pagos-retenciones):
/// their own TrasladoDR / RetencionDR count as written (1941.0656 + 388.3120 =
/// 2329.3776 transferred; 258.9556 withheld at 0.106700), each entry's pesos rounded
/// once (1941.07 + 388.31 = 2329.38; 258.96).
#[test]
fn a_real_complements_own_taxes_with_withholdings() {
    let complement = sample("cfdi40-pago20-two-pagos-retenciones.xml");
    let mut b = Builder::default();
    for e in paid_entries(&complement, None) {
        b.payment(&e);
    }
    let s = b.finish();
    assert_eq!(
        cash(&s),
        [
            "payments Transferred 0.160000 14558.6100 2329.3776 2 2329.38",
            "payments Withheld 0.106700 2426.9500 258.9556 1 258.96",
            "net Transferred 0.160000 14558.6100 2329.3776 null 2329.38",
            "net Withheld 0.106700 2426.9500 258.9556 null 258.96",
        ]
    );
    assert!(
        s.unresolved_payments.is_empty(),
        "own taxes need no invoice"
    );
}

/// The real USD PUE invoice (cfdi40-ingreso-pue-usd-descuento-unstamped: IVA 448.00 on
/// 2800.00, TipoCambio 18.9008) and a Pagos 1.0 peso payment of a USD invoice
/// (cfdi33-pago10-tfd-usd-docto-mxn-payment: ImpPagado 4000.00 USD, TipoCambioDR
/// 0.050522) of a 4,640.00 USD invoice with IVA 640.00 on 4000.00: 640.00 × 4000.00 ÷
/// 4640.00 = 551.7241… → 551.72 USD, and 551.72 ÷ 0.050522 = 10920.3911… → 10920.39
/// pesos (the payment is in pesos: no TipoCambioP).
#[test]
fn real_usd_documents_in_pesos() {
    let pue = stored(&sample("cfdi40-ingreso-pue-usd-descuento-unstamped.xml"));
    let mut ppd = doc("I", "PPD", "4640.00", vec![iva("4000.00", "640.00")]);
    ppd.currency = Some("USD".into());
    let complement = sample("cfdi33-pago10-tfd-usd-docto-mxn-payment.xml");
    let mut b = Builder::default();
    b.document(&pue);
    for e in paid_entries(&complement, Some(&ppd)) {
        b.payment(&e);
    }
    let s = b.finish();
    assert_eq!(
        cash(&s),
        [
            "pue Transferred 0.160000 2800 448 1 8467.56",
            "payments Transferred 0.160000 3448.28 551.72 1 10920.39",
            "net Transferred 0.160000 6248.28 999.72 null 19387.95",
        ]
    );
}

/// Every `*_mxn` number in the summary's JSON, as written, with where it is.
fn peso_figures(s: &Summary) -> Vec<(String, String)> {
    fn walk(v: &serde_json::Value, at: &str, out: &mut Vec<(String, String)>) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let here = format!("{at}.{k}");
                    match v {
                        serde_json::Value::Number(n) if k.ends_with("_mxn") => {
                            out.push((here, n.to_string()))
                        }
                        _ => walk(v, &here, out),
                    }
                }
            }
            serde_json::Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    walk(v, &format!("{at}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(
        &serde_json::to_value(s).expect("serializable"),
        "",
        &mut out,
    );
    out
}

/// Zero peso figures keep their two decimals wherever they land: an invoice at 0% and
/// a 3.2 document without Base net to `0.00` (products with zero used to come out `0`),
/// and so do local taxes, withholdings and the cash basis netting to nothing.
#[test]
fn every_peso_figure_has_two_decimals_zeros_included() {
    let mut zero_rate = doc("I", "PUE", "100.00", vec![]);
    zero_rate.taxes = vec![ItemTax {
        rate: Some(d("0.000000")),
        ..iva("100.00", "0.00")
    }];
    let mut legacy = doc("I", "PUE", "116.00", vec![]);
    legacy.payment_method = None;
    legacy.stated.legacy = vec![tax(
        TaxKind::Transferred,
        "002",
        Some("0.160000"),
        None,
        "16",
    )];
    legacy.stated.local = vec![tax(TaxKind::Transferred, "IH", Some("0.025"), None, "0")];
    // A credit note giving back an ISR withholding of 0.00.
    let mut refund = doc("E", "PUE", "100.00", vec![]);
    refund.taxes = vec![tax(TaxKind::Withheld, "001", None, None, "0.00")];
    refund.stated.local = vec![tax(TaxKind::Transferred, "IH", Some("0.025"), None, "0")];
    let mut b = Builder::default();
    for d in [&zero_rate, &legacy, &refund] {
        b.document(d);
        b.issued_withholdings(d);
    }
    let s = b.finish();
    let figures = peso_figures(&s);
    assert!(figures.len() > 20, "{figures:?}");
    let two_decimals = |n: &str| {
        n.trim_start_matches('-')
            .split_once('.')
            .is_some_and(|(units, cents)| {
                !units.is_empty()
                    && cents.len() == 2
                    && (units.to_owned() + cents)
                        .bytes()
                        .all(|b| b.is_ascii_digit())
            })
    };
    let bad: Vec<_> = figures.iter().filter(|(_, n)| !two_decimals(n)).collect();
    assert!(bad.is_empty(), "not written with two decimals: {bad:?}");
    // The zero lines themselves.
    let zero_net = s
        .taxes
        .iter()
        .find(|l| l.source == Source::Net && l.rate == Some(d("0")))
        .expect("the 0% net line");
    assert_eq!(
        zero_net.amount_mxn.map(|a| a.to_string()),
        Some("0.00".into())
    );
    let legacy_net = s
        .taxes
        .iter()
        .find(|l| l.source == Source::Net && l.rate == Some(d("0.16")))
        .expect("the 16% net line");
    // 3.2 states no Base.
    assert_eq!(
        legacy_net.base_mxn.map(|a| a.to_string()),
        Some("0.00".into())
    );
    let withholdings_total = s
        .withholdings
        .iter()
        .find(|l| l.source == WithholdingSource::Total)
        .expect("a total");
    assert_eq!(
        withholdings_total.amount_mxn.map(|a| a.to_string()),
        Some("0.00".into())
    );
}

/// CFDI 3.2 wrote Moneda as free text: its spellings of pesos without a TipoCambio are
/// pesos at rate 1 (payroll too), and the line keeps the currency as written.
#[test]
fn cfdi32_peso_spellings_without_a_rate_are_pesos() {
    let mut b = Builder::default();
    let mut invoice = doc("I", "PUE", "116.00", vec![]);
    invoice.currency = Some("Pesos".into());
    invoice.payment_method = None;
    invoice.stated.legacy = vec![tax(
        TaxKind::Transferred,
        "002",
        Some("0.160000"),
        None,
        "16.00",
    )];
    b.document(&invoice);
    let mut payroll = doc("N", "PUE", "900.00", vec![]);
    payroll.currency = Some("M.N.".into());
    payroll.stated.payroll = vec![tax(TaxKind::Withheld, "001", None, None, "100.00")];
    b.document(&payroll);
    let mut dollars = doc("I", "PUE", "116.00", vec![iva("100.00", "16.00")]);
    dollars.currency = Some("Dolares".into());
    b.document(&dollars);
    let s = b.finish();
    let pesos = s
        .taxes
        .iter()
        .find(|l| l.source == Source::Invoices && l.currency.as_deref() == Some("Pesos"))
        .expect("the Pesos line");
    assert_eq!(
        (pesos.amount_mxn, pesos.base_mxn),
        (Some(d("16.00")), Some(d("0.00")))
    );
    let isr = line(&s.payroll_taxes, Source::Payroll);
    assert_eq!(
        (isr.currency.as_deref(), isr.amount_mxn),
        (Some("M.N."), Some(d("100.00")))
    );
    let other = s
        .taxes
        .iter()
        .find(|l| l.currency.as_deref() == Some("Dolares"))
        .expect("the Dolares line");
    assert_eq!(
        other.amount_mxn, None,
        "another currency without a rate is not guessed"
    );
}

/// A 3.2 invoice in `Pesos` paid by a complement in `MXN`: the same currency, so its
/// paid share counts.
#[test]
fn a_peso_spelling_and_mxn_are_one_currency_for_the_paid_share() {
    let mut invoice = doc("I", "PPD", "1160.00", vec![iva("1000.00", "160.00")]);
    invoice.currency = Some("Pesos".into());
    let mut b = Builder::default();
    b.payment(&entry("580.00", vec![], Some(invoice)));
    let s = b.finish();
    assert!(
        s.unresolved_payments.is_empty(),
        "{:?}",
        s.unresolved_payments
    );
    let paid = line(&s.cash_basis_iva, Source::Payments);
    assert_eq!(
        (paid.amount, paid.amount_mxn),
        (d("80.00"), Some(d("80.00")))
    );
}

#[test]
fn the_invoices_payments_miss_are_listed_once_each_and_nothing_else() {
    let missing = |uuid: &str| PaidEntry {
        related_uuid: uuid.into(),
        ..entry("1", vec![], None)
    };
    let mut b = Builder::default();
    b.payment(&missing("bbbbbbbb-0000-4000-8000-000000000002"));
    b.payment(&missing("AAAAAAAA-0000-4000-8000-000000000001"));
    b.payment(&missing("BBBBBBBB-0000-4000-8000-000000000002"));
    // A payment of a stored invoice in another currency: left out, but not missing.
    let usd = Document {
        currency: Some("USD".into()),
        ..doc("I", "PPD", "116", vec![iva("100", "16")])
    };
    b.payment(&entry("1", vec![], Some(usd)));
    // A cancelled complement's missing invoice does not count.
    let mut gone = missing("CCCCCCCC-0000-4000-8000-000000000003");
    gone.payment_cancelled = true;
    b.payment(&gone);
    let m = b.finish().missing_invoices();
    assert_eq!(
        m.uuids,
        [
            "AAAAAAAA-0000-4000-8000-000000000001",
            "BBBBBBBB-0000-4000-8000-000000000002"
        ]
    );
    assert_eq!((m.count, m.payments), (2, 3));
    let complete = Builder::default().finish().missing_invoices();
    assert_eq!((complete.count, complete.payments), (0, 0));
}
