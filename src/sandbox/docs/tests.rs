//! Behaviour of the sandbox documents as the rest of the service relies on it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashMap;
use std::str::FromStr;

use chrono::NaiveDate;
use rust_decimal::Decimal;

use super::*;

const CFDI: &str = "http://www.sat.gob.mx/cfd/4";
const TFD: &str = "http://www.sat.gob.mx/TimbreFiscalDigital";
const PAGOS: &str = "http://www.sat.gob.mx/Pagos20";

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

fn base(invoices: &[SandboxInvoice]) -> impl Iterator<Item = &SandboxInvoice> {
    invoices.iter().filter(|i| i.invoice_type != 'P')
}

fn ratio(part: usize, whole: usize) -> f64 {
    part as f64 / whole as f64
}

// ---------------------------------------------------------------- determinism

#[test]
fn same_inputs_give_the_same_documents() {
    let from = date(2025, 3, 1);
    let to = date(2025, 3, 20);
    let first = invoices_for_period("AAA010101AAA", Direction::Issued, from, to);
    let again = invoices_for_period("AAA010101AAA", Direction::Issued, from, to);
    assert_eq!(first, again);
    for invoice in &first {
        let xml = render_xml("AAA010101AAA", Direction::Issued, invoice).unwrap();
        assert_eq!(
            xml,
            render_xml("AAA010101AAA", Direction::Issued, invoice).unwrap()
        );
        let pdf = render_pdf("AAA010101AAA", Direction::Issued, invoice);
        assert_eq!(pdf, render_pdf("AAA010101AAA", Direction::Issued, invoice));
    }
}

#[test]
fn outputs_differ_across_tax_ids_days_and_directions() {
    let day = date(2025, 5, 14);
    let uuids = |tax_id: &str, direction, day| -> Vec<String> {
        invoices_for_day(tax_id, direction, day)
            .into_iter()
            .map(|i| i.uuid)
            .collect()
    };
    let reference = uuids("AAA010101AAA", Direction::Issued, day);
    assert_ne!(reference, uuids("BBB010101BBB", Direction::Issued, day));
    assert_ne!(reference, uuids("AAA010101AAA", Direction::Received, day));
    assert_ne!(
        reference,
        uuids("AAA010101AAA", Direction::Issued, date(2025, 5, 15))
    );
}

#[test]
fn a_day_is_the_same_alone_or_within_a_period() {
    let from = date(2025, 1, 1);
    let to = date(2025, 2, 28);
    let period = invoices_for_period("XYZ900101AB1", Direction::Received, from, to);
    for day in days(from, to) {
        let listed: Vec<_> = period
            .iter()
            .filter(|i| i.issued_at.date() == day)
            .cloned()
            .collect();
        assert_eq!(
            listed,
            invoices_for_day("XYZ900101AB1", Direction::Received, day)
        );
    }
}

#[test]
fn uuids_are_unique_and_upper_case() {
    let invoices = invoices_for_period(
        "UUU010101AAA",
        Direction::Issued,
        date(2024, 1, 1),
        date(2024, 12, 31),
    );
    let mut seen = std::collections::HashSet::new();
    for invoice in &invoices {
        assert_eq!(invoice.uuid, invoice.uuid.to_uppercase());
        assert!(
            seen.insert(invoice.uuid.clone()),
            "duplicate {}",
            invoice.uuid
        );
    }
}

// ---------------------------------------------------------------- volume & mix

#[test]
fn normal_entities_get_three_to_seven_base_invoices_a_day() {
    let mut total = 0;
    let from = date(2025, 1, 1);
    for day in days(from, date(2025, 4, 30)) {
        let count = base(&invoices_for_day("NRM010101AAA", Direction::Issued, day)).count();
        assert!((3..=7).contains(&count), "{day}: {count}");
        total += count;
    }
    let average = total as f64 / 120.0;
    assert!((4.5..=5.5).contains(&average), "average {average}");
}

#[test]
fn big_entities_get_about_500_a_day() {
    for day in days(date(2025, 6, 1), date(2025, 6, 3)) {
        let count = base(&invoices_for_day("BIG010101AAA", Direction::Received, day)).count();
        assert!((480..=520).contains(&count), "{day}: {count}");
    }
}

#[test]
fn type_mix_over_90_days_matches_the_rules() {
    let mut counts: HashMap<(char, Option<&str>), usize> = HashMap::new();
    let mut all = 0;
    for tax_id in ["MIX010101AAA", "MIX020202BBB", "MIX030303CCC"] {
        let invoices = invoices_for_period(
            tax_id,
            Direction::Issued,
            date(2025, 1, 1),
            date(2025, 3, 31),
        );
        for invoice in base(&invoices) {
            *counts
                .entry((invoice.invoice_type, invoice.payment_method()))
                .or_default() += 1;
            all += 1;
        }
    }
    let share = |key| ratio(counts.get(&key).copied().unwrap_or(0), all);
    let near = |actual: f64, expected: f64| (actual - expected).abs() < 0.04;
    assert!(near(share(('I', Some("PUE"))), 0.50), "{counts:?}");
    assert!(near(share(('I', Some("PPD"))), 0.25), "{counts:?}");
    assert!(near(share(('E', Some("PUE"))), 0.10), "{counts:?}");
    assert!(near(share(('N', Some("PUE"))), 0.08), "{counts:?}");
    assert!(near(share(('T', None)), 0.07), "{counts:?}");
}

#[test]
fn flags_have_the_documented_rates() {
    let invoices = invoices_for_period(
        "BIG777777ZZZ",
        Direction::Issued,
        date(2025, 7, 1),
        date(2025, 7, 20),
    );
    let base: Vec<_> = base(&invoices).collect();
    let printable: Vec<_> = base
        .iter()
        .filter(|i| matches!(i.invoice_type, 'I' | 'E' | 'N'))
        .collect();
    let without_pdf = printable.iter().filter(|i| !i.has_pdf).count();
    let cancelled: Vec<_> = base.iter().filter(|i| i.cancelled_at.is_some()).collect();
    let seen_late = cancelled
        .iter()
        .filter(|i| i.cancellation_seen_late)
        .count();
    let withheld = invoices.iter().filter(|i| i.xml_withheld_first).count();
    let usd = base.iter().filter(|i| i.currency() == "USD").count();
    let income = base.iter().filter(|i| i.invoice_type == 'I').count();

    assert!((ratio(without_pdf, printable.len()) - 1.0 / 7.0).abs() < 0.015);
    assert!((ratio(cancelled.len(), base.len()) - 0.05).abs() < 0.01);
    assert!((ratio(seen_late, cancelled.len()) - 0.5).abs() < 0.08);
    assert!((ratio(withheld, invoices.len()) - 0.05).abs() < 0.01);
    assert!((ratio(usd, income) - 0.10).abs() < 0.02);
    assert!(!invoices
        .iter()
        .any(|i| i.has_pdf && matches!(i.invoice_type, 'P' | 'T')));
    assert!(!invoices
        .iter()
        .any(|i| i.invoice_type == 'P' && i.cancelled_at.is_some()));
}

#[test]
fn cancellations_come_one_to_three_days_after_issue() {
    let invoices = invoices_for_period(
        "CAN010101AAA",
        Direction::Received,
        date(2024, 1, 1),
        date(2024, 12, 31),
    );
    let cancelled: Vec<_> = invoices
        .iter()
        .filter(|i| i.cancelled_at.is_some())
        .collect();
    assert!(!cancelled.is_empty());
    for invoice in cancelled {
        let at = invoice.cancelled_at.unwrap();
        let days = (at.date() - invoice.issued_at.date()).num_days();
        assert!((1..=3).contains(&days), "{days}");
    }
    assert!(!invoices
        .iter()
        .any(|i| i.cancellation_seen_late && i.cancelled_at.is_none()));
}

#[test]
fn issue_times_are_business_hours_of_the_day() {
    let day = date(2025, 2, 3);
    for invoice in invoices_for_day("HRS010101AAA", Direction::Issued, day) {
        assert_eq!(invoice.issued_at.date(), day);
        let hour = chrono::Timelike::hour(&invoice.issued_at);
        assert!((8..20).contains(&hour), "{hour}");
    }
}

#[test]
fn the_entity_is_on_its_side_of_every_invoice() {
    let day = date(2025, 8, 8);
    for invoice in invoices_for_day("SID010101AAA", Direction::Issued, day) {
        assert_eq!(invoice.issuer_tax_id, "SID010101AAA");
        assert_eq!(invoice.issuer_name, "CONTRIBUYENTE SID010101AAA");
    }
    for invoice in invoices_for_day("SID010101AAA", Direction::Received, day) {
        assert_eq!(invoice.receiver_tax_id, "SID010101AAA");
    }
}

// ---------------------------------------------------------------- payments

/// Checks every complement of `tax_id` paid in [from, to] against the PPD
/// invoices generated up to 120 days earlier; returns (complete, partial)
/// chain counts of PPD invoices whose whole chain is inside the window.
fn check_payment_chains(
    tax_id: &str,
    direction: Direction,
    from: NaiveDate,
    to: NaiveDate,
) -> (usize, usize) {
    let earliest = from - chrono::Days::new(120);
    let all = invoices_for_period(tax_id, direction, earliest, to);
    let by_uuid: HashMap<&str, &SandboxInvoice> =
        all.iter().map(|i| (i.uuid.as_str(), i)).collect();
    let mut chains: HashMap<&str, Vec<&SandboxInvoice>> = HashMap::new();
    let paid_in_window = |i: &&SandboxInvoice| i.invoice_type == 'P' && i.issued_at.date() >= from;
    for complement in all.iter().filter(paid_in_window) {
        let payment = complement.payment().unwrap();
        chains
            .entry(payment.related_uuid.as_str())
            .or_default()
            .push(complement);
    }
    assert!(!chains.is_empty());

    for (related, mut chain) in chains.clone() {
        let ppd = by_uuid
            .get(related)
            .expect("complement of an unknown invoice");
        assert_eq!((ppd.invoice_type, ppd.payment_method()), ('I', Some("PPD")));
        assert!(ppd.cancelled_at.is_none());
        chain.sort_by_key(|p| p.payment().unwrap().installment);
        let mut balance = ppd.total;
        let mut previous_day = ppd.issued_at.date();
        for (n, complement) in chain.iter().enumerate() {
            let payment = complement.payment().unwrap();
            let gap = (complement.issued_at.date() - previous_day).num_days();
            let allowed = if n == 0 { 10..=60 } else { 5..=30 };
            // The window may cut a chain's start off; only judge what it holds.
            if payment.installment as usize == n + 1 {
                assert!(
                    allowed.contains(&gap),
                    "installment {} after {gap} days",
                    n + 1
                );
                assert_eq!(payment.previous_balance, balance);
            }
            assert_eq!(
                (
                    complement.issuer_tax_id.as_str(),
                    complement.receiver_tax_id.as_str()
                ),
                (ppd.issuer_tax_id.as_str(), ppd.receiver_tax_id.as_str())
            );
            assert_eq!(
                payment.previous_balance - payment.amount,
                payment.outstanding_balance
            );
            assert!(payment.amount > Decimal::ZERO);
            assert!(payment.outstanding_balance >= Decimal::ZERO);
            assert_eq!(payment.amount.scale(), 2);
            assert_eq!(complement.total, Decimal::ZERO);
            balance = payment.outstanding_balance;
            previous_day = complement.issued_at.date();
        }
        let paid: Decimal = chain.iter().map(|p| p.payment().unwrap().amount).sum();
        assert!(paid <= ppd.total);
        if chain
            .last()
            .unwrap()
            .payment()
            .unwrap()
            .outstanding_balance
            .is_zero()
            && chain[0].payment().unwrap().installment == 1
        {
            assert_eq!(paid, ppd.total);
        }
    }

    // Completion rate, over PPD invoices whose chain cannot extend past `to`.
    let judged = all.iter().filter(|i| {
        i.payment_method() == Some("PPD")
            && i.cancelled_at.is_none()
            && i.issued_at.date() >= from
            && i.issued_at.date() <= to - chrono::Days::new(120)
    });
    let (mut complete, mut partial) = (0, 0);
    for ppd in judged {
        let chain = &chains[ppd.uuid.as_str()];
        let last = chain
            .iter()
            .map(|p| p.payment().unwrap())
            .max_by_key(|p| p.installment)
            .unwrap();
        if last.outstanding_balance.is_zero() {
            complete += 1
        } else {
            partial += 1
        }
    }
    (complete, partial)
}

#[test]
fn payment_chains_are_consistent() {
    let (mut complete, mut partial) = (0, 0);
    for (tax_id, direction) in [
        ("PAY010101AAA", Direction::Issued),
        ("PAY010101AAA", Direction::Received),
        ("PAY020202BBB", Direction::Issued),
    ] {
        let (c, p) = check_payment_chains(tax_id, direction, date(2024, 1, 1), date(2024, 12, 31));
        complete += c;
        partial += p;
    }
    let unpaid = ratio(partial, complete + partial);
    assert!(
        (0.15..=0.25).contains(&unpaid),
        "{partial} of {}",
        complete + partial
    );
}

#[test]
fn big_entities_get_payments_too() {
    let day = date(2025, 9, 1);
    let invoices = invoices_for_day("BIG010101AAA", Direction::Issued, day);
    let payments = invoices.iter().filter(|i| i.invoice_type == 'P').count();
    // ~125 PPD a day × ~1.7 installments, spread over ~50 days each.
    assert!((100..=400).contains(&payments), "{payments}");
}

// ---------------------------------------------------------------- XML

fn attr<'a>(node: roxmltree::Node<'a, '_>, name: &str) -> &'a str {
    node.attribute(name)
        .unwrap_or_else(|| panic!("{} lacks {name}", node.tag_name().name()))
}

fn amount(node: roxmltree::Node, name: &str) -> Decimal {
    Decimal::from_str(attr(node, name)).unwrap()
}

fn child<'a, 'i>(
    node: roxmltree::Node<'a, 'i>,
    ns: &str,
    name: &str,
) -> Option<roxmltree::Node<'a, 'i>> {
    node.descendants().find(|n| n.has_tag_name((ns, name)))
}

/// Parses and checks one rendered invoice against its metadata.
fn check_xml(invoice: &SandboxInvoice, xml: &[u8]) {
    let text = std::str::from_utf8(xml).unwrap();
    assert!(text.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"));
    let doc = roxmltree::Document::parse(text).unwrap();
    let root = doc.root_element();
    assert!(root.has_tag_name((CFDI, "Comprobante")));
    assert_eq!(attr(root, "Version"), "4.0");
    assert_eq!(
        attr(root, "TipoDeComprobante"),
        invoice.invoice_type.to_string()
    );
    assert_eq!(
        attr(root, "Fecha"),
        invoice.issued_at.format("%Y-%m-%dT%H:%M:%S").to_string()
    );
    assert_eq!(root.attribute("MetodoPago"), invoice.payment_method());
    assert_eq!(attr(root, "Moneda"), invoice.currency());

    let emisor = child(root, CFDI, "Emisor").unwrap();
    let receptor = child(root, CFDI, "Receptor").unwrap();
    assert_eq!(attr(emisor, "Rfc"), invoice.issuer_tax_id);
    assert_eq!(attr(emisor, "Nombre"), invoice.issuer_name);
    assert_eq!(attr(receptor, "Rfc"), invoice.receiver_tax_id);
    assert_eq!(attr(receptor, "Nombre"), invoice.receiver_name);

    let tfd = child(root, TFD, "TimbreFiscalDigital").unwrap();
    assert_eq!(attr(tfd, "Version"), "1.1");
    assert_eq!(attr(tfd, "UUID"), invoice.uuid);
    assert_eq!(attr(tfd, "SelloCFD"), attr(root, "Sello"));

    let conceptos: Vec<_> = root
        .children()
        .filter(|n| n.has_tag_name((CFDI, "Conceptos")))
        .collect();
    assert_eq!(conceptos.len(), 1);
    let lines: Vec<_> = conceptos[0]
        .children()
        .filter(|n| n.has_tag_name((CFDI, "Concepto")))
        .collect();
    assert!(!lines.is_empty());
    let importes: Decimal = lines.iter().map(|l| amount(*l, "Importe")).sum();
    for line in &lines {
        let expected =
            Decimal::from_str(attr(*line, "Cantidad")).unwrap() * amount(*line, "ValorUnitario");
        assert_eq!(amount(*line, "Importe"), expected);
    }
    let subtotal = amount(root, "SubTotal");
    let total = amount(root, "Total");
    let discount = root
        .attribute("Descuento")
        .map_or(Decimal::ZERO, |d| Decimal::from_str(d).unwrap());
    let iva = root
        .children()
        .find(|n| n.has_tag_name((CFDI, "Impuestos")))
        .map_or(Decimal::ZERO, |n| amount(n, "TotalImpuestosTrasladados"));
    let line_iva: Decimal = lines
        .iter()
        .flat_map(|l| {
            l.descendants()
                .filter(|n| n.has_tag_name((CFDI, "Traslado")))
        })
        .map(|t| amount(t, "Importe"))
        .sum();
    assert_eq!(importes, subtotal);
    assert_eq!(line_iva, iva);
    assert_eq!(subtotal - discount + iva, total);
    assert_eq!(total, invoice.total);

    match invoice.invoice_type {
        'P' => check_pagos(invoice, root),
        'T' => assert!(subtotal.is_zero() && total.is_zero()),
        'N' => assert!(child(root, "http://www.sat.gob.mx/nomina12", "Nomina").is_some()),
        _ => {}
    }
    // The stamp closes the complement.
    let complemento = child(root, CFDI, "Complemento").unwrap();
    let last = complemento.children().rfind(|n| n.is_element()).unwrap();
    assert!(last.has_tag_name((TFD, "TimbreFiscalDigital")));
}

fn check_pagos(invoice: &SandboxInvoice, root: roxmltree::Node) {
    let payment = invoice.payment().unwrap();
    let pagos = child(root, PAGOS, "Pagos").unwrap();
    assert_eq!(attr(pagos, "Version"), "2.0");
    assert_eq!(attr(root, "Moneda"), "XXX");
    assert_eq!(
        attr(child(root, CFDI, "Receptor").unwrap(), "UsoCFDI"),
        "CP01"
    );
    let totales = child(pagos, PAGOS, "Totales").unwrap();
    let pago = child(pagos, PAGOS, "Pago").unwrap();
    let docto = child(pago, PAGOS, "DoctoRelacionado").unwrap();
    assert_eq!(amount(totales, "MontoTotalPagos"), payment.amount);
    assert_eq!(amount(pago, "Monto"), payment.amount);
    assert_eq!(
        (attr(pago, "MonedaP"), attr(pago, "TipoCambioP")),
        ("MXN", "1")
    );
    assert_eq!(attr(docto, "IdDocumento"), payment.related_uuid);
    assert_eq!(
        attr(docto, "NumParcialidad"),
        payment.installment.to_string()
    );
    assert_eq!(amount(docto, "ImpSaldoAnt"), payment.previous_balance);
    assert_eq!(amount(docto, "ImpPagado"), payment.amount);
    assert_eq!(
        amount(docto, "ImpSaldoInsoluto"),
        payment.outstanding_balance
    );
    assert_eq!(
        amount(docto, "ImpSaldoAnt") - amount(docto, "ImpPagado"),
        amount(docto, "ImpSaldoInsoluto")
    );
    assert_eq!(
        (
            attr(docto, "MonedaDR"),
            attr(docto, "EquivalenciaDR"),
            attr(docto, "ObjetoImpDR")
        ),
        ("MXN", "1", "01")
    );
}

#[test]
fn every_rendered_xml_is_a_consistent_stamped_cfdi() {
    let mut seen_types = std::collections::HashSet::new();
    for direction in [Direction::Issued, Direction::Received] {
        let invoices = invoices_for_period(
            "XML010101AAA",
            direction,
            date(2025, 1, 1),
            date(2025, 6, 30),
        );
        for invoice in &invoices {
            check_xml(
                invoice,
                &render_xml("XML010101AAA", direction, invoice).unwrap(),
            );
            seen_types.insert(invoice.invoice_type);
        }
    }
    assert_eq!(seen_types.len(), 5, "{seen_types:?}");
}

#[test]
fn credit_notes_refer_to_an_earlier_pue_invoice_of_the_day() {
    let invoices = invoices_for_period(
        "REL010101AAA",
        Direction::Issued,
        date(2025, 1, 1),
        date(2025, 3, 31),
    );
    let by_uuid: HashMap<&str, &SandboxInvoice> =
        invoices.iter().map(|i| (i.uuid.as_str(), i)).collect();
    let related: Vec<_> = invoices
        .iter()
        .filter_map(|i| Some((i, i.related_uuid()?)))
        .collect();
    assert!(!related.is_empty());
    for (credit, uuid) in related {
        let income = by_uuid[uuid];
        assert_eq!(
            (credit.invoice_type, income.payment_method()),
            ('E', Some("PUE"))
        );
        assert_eq!(credit.receiver_tax_id, income.receiver_tax_id);
        assert_eq!(credit.issued_at.date(), income.issued_at.date());
        assert!(credit.issued_at >= income.issued_at);
    }
}

#[test]
fn special_characters_are_escaped() {
    // Find an invoice with a counterparty whose RFC and name contain '&'.
    let invoices = invoices_for_period(
        "ESC010101AAA",
        Direction::Received,
        date(2025, 1, 1),
        date(2025, 12, 31),
    );
    let invoice = invoices
        .iter()
        .find(|i| i.issuer_tax_id.contains('&'))
        .unwrap();
    let xml = String::from_utf8(render_xml("ESC010101AAA", Direction::Received, invoice).unwrap())
        .unwrap();
    assert!(xml.contains("Rfc=\"H&amp;E951128469\"") || xml.contains("Rfc=\"B&amp;C0402196N8\""));
    assert!(!xml.contains("& "));
    check_xml(invoice, xml.as_bytes());
}

#[test]
fn a_big_day_is_about_500_distinct_invoices_that_each_parse() {
    // What a BIG RFC is for (/docs/sandbox): load tests, about 500 invoices a day. The
    // speed of rendering them is measured by `bench/run` (ingest per parse), not here.
    let day = date(2025, 10, 1);
    let invoices = invoices_for_day("BIG123456XYZ", Direction::Issued, day);
    let mut uuids = std::collections::HashSet::new();
    let mut not_payments = 0;
    for invoice in &invoices {
        let xml = render_xml("BIG123456XYZ", Direction::Issued, invoice).expect("renders");
        let cfdi = crate::cfdi::Cfdi::parse(&xml).expect("a BIG invoice parses");
        assert_eq!(cfdi.issuer.tax_id, "BIG123456XYZ");
        if cfdi.invoice_type != crate::cfdi::InvoiceType::P {
            not_payments += 1;
        }
        let uuid = cfdi.stamp.and_then(|s| s.uuid).expect("stamped");
        assert!(uuids.insert(uuid.clone()), "repeated {uuid}");
    }
    // Plus the day's payment complements of earlier invoices.
    assert!((400..=600).contains(&not_payments), "{not_payments}");
}

// ---------------------------------------------------------------- PDF

#[test]
fn pdfs_are_valid_and_only_for_printable_types() {
    let invoices = invoices_for_period(
        "PDF010101AAA",
        Direction::Issued,
        date(2025, 1, 1),
        date(2025, 3, 31),
    );
    let mut rendered = 0;
    for invoice in &invoices {
        let pdf = render_pdf("PDF010101AAA", Direction::Issued, invoice);
        assert_eq!(pdf.is_some(), invoice.has_pdf);
        if let Some(pdf) = pdf {
            crate::pdf::check_structure(&pdf);
            let text = String::from_utf8_lossy(&pdf);
            assert!(text.contains(&invoice.uuid), "the PDF names its UUID");
            rendered += 1;
        }
    }
    assert!(rendered > 100);
}

// ---------------------------------------------------------------- seals

/// The sandbox SAT's certificate, as its repository serves it.
struct SandboxSat;

impl crate::seal::SatCertificates for SandboxSat {
    fn lookup(&self, number: &str) -> crate::seal::Lookup {
        use crate::sat::certificates::Repository;
        match crate::sandbox::rccf::SandboxRepository.fetch(number) {
            Ok(der) => crate::seal::Lookup::Found(Box::new(
                crate::seal::Certificate::from_der(&der).unwrap(),
            )),
            Err(why) => crate::seal::Lookup::Missing(why),
        }
    }
}

#[test]
fn the_sandboxs_documents_verify_against_its_authority_only() {
    use crate::seal::{verify, Status, Trust};
    let sandbox = Trust::sat().and(authority_certificate().clone());
    let from = date(2025, 3, 1);
    let to = date(2025, 3, 31);
    let mut xmls = Vec::new();
    for (tax_id, direction) in [
        ("AAA010101AAA", Direction::Issued),
        ("AAA010101AAA", Direction::Received),
    ] {
        for invoice in invoices_for_period(tax_id, direction, from, to) {
            xmls.push(render_xml(tax_id, direction, &invoice).unwrap());
        }
    }
    for r in retentions_for_period("AAA010101AAA", Direction::Received, from, to) {
        xmls.push(render_retention_xml(&r).unwrap());
    }
    assert!(xmls.len() > 100, "{}", xmls.len());
    for xml in &xmls {
        let seal = verify(xml, &sandbox, &SandboxSat).unwrap().unwrap();
        assert_eq!(seal.status, Status::Valid, "{seal:?}");
    }
    // Outside the sandbox its authority is no one's.
    let seal = verify(&xmls[0], &Trust::sat(), &SandboxSat)
        .unwrap()
        .unwrap();
    assert_eq!(seal.checks.certificate_issuer.status, Status::Invalid);
    assert_eq!(seal.checks.sat_seal.status, Status::Invalid);
    assert_eq!(seal.checks.issuer_seal.status, Status::Valid);
}

#[test]
fn an_invoice_is_found_by_its_uuid_within_its_days_only() {
    let (from, to) = (date(2025, 1, 1), date(2025, 4, 30));
    let wanted = base(&invoices_for_period(
        "AAA010101AAA",
        Direction::Received,
        date(2025, 2, 10),
        date(2025, 2, 10),
    ))
    .next()
    .cloned()
    .unwrap();
    let started = std::time::Instant::now();
    let found = find_invoice(
        "AAA010101AAA",
        Direction::Received,
        from,
        to,
        &wanted.uuid.to_lowercase(),
    );
    eprintln!(
        "searched {} days in {:?}",
        (to - from).num_days() + 1,
        started.elapsed()
    );
    assert_eq!(found.as_ref(), Some(&wanted));
    let after = date(2025, 2, 11);
    assert_eq!(
        find_invoice("AAA010101AAA", Direction::Received, after, to, &wanted.uuid),
        None
    );
    assert_eq!(
        find_invoice("AAA010101AAA", Direction::Issued, from, to, &wanted.uuid),
        None
    );
}
