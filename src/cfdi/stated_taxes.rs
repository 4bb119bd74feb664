//! Taxes a document states outside its concepts' 3.3/4.0 breakdown: CFDI 3.2's
//! Impuestos entries (`impuesto="IVA" tasa="16.00"`), local taxes (the `implocal`
//! complement) and the ISR withheld on payroll (the Nómina 1.1 / 1.2 complement).
//! Read leniently, like a concept's taxes: an entry that cannot be read is skipped, so
//! tax detail never makes a document unreadable.

use roxmltree::Node;
use rust_decimal::Decimal;

use super::xml::{self, Attr, Reader};
use super::{ItemTax, StatedTaxes, TaxKind};

const IMPLOCAL: &str = "http://www.sat.gob.mx/implocal";
const NOMINA11: &str = "http://www.sat.gob.mx/nomina";
const NOMINA12: &str = "http://www.sat.gob.mx/nomina12";

/// ISR's code (Impuesto 001), and the payroll deduction type of ISR withheld.
const ISR: &str = "001";
const DEDUCTION_ISR: &str = "002";

/// Every stated tax: `entries_32` is the Comprobante's Impuestos entries as written
/// when the document is CFDI 3.2 (read once, by `taxes::entries`), `complements`
/// every node under Complemento.
pub(super) fn parse(entries_32: &[ItemTax], complements: &[Node<'_, '_>]) -> StatedTaxes {
    StatedTaxes {
        legacy: entries_32.iter().filter_map(in_33_shape).collect(),
        local: local(complements),
        payroll: payroll(complements),
    }
}

/// A 3.2 entry (`impuesto="IVA" tasa="16.00"`) in the 3.3 shape: the tax's code and
/// the rate as a fraction with factor `Tasa`; 3.2 states no base. None for a tax
/// 3.3 has no code for.
fn in_33_shape(entry: &ItemTax) -> Option<ItemTax> {
    let rate = entry.rate.map(percent);
    Some(ItemTax {
        kind: entry.kind,
        tax: tax_code(&entry.tax)?.to_owned(),
        factor: rate.map(|_| "Tasa".to_owned()),
        rate,
        base: None,
        amount: entry.amount,
    })
}

/// 3.2's tax names as the codes 3.3 introduced.
fn tax_code(name: &str) -> Option<&'static str> {
    match name.trim().to_ascii_uppercase().as_str() {
        "ISR" => Some(ISR),
        "IVA" => Some("002"),
        "IEPS" => Some("003"),
        _ => None,
    }
}

/// A percentage (16.00, 2.50) as the fraction 3.3 writes (0.160000, 0.025000).
fn percent(rate: Decimal) -> Decimal {
    let mut fraction = (rate / Decimal::ONE_HUNDRED).normalize();
    fraction.rescale(fraction.scale().max(6));
    fraction
}

/// `implocal:TrasladosLocales` (ImpLocTrasladado, TasadeTraslado, Importe) and
/// `RetencionesLocales` (ImpLocRetenido, TasadeRetencion, Importe): the tax is the
/// local tax's name as written, the rate a fraction, no factor and no base.
fn local(complements: &[Node<'_, '_>]) -> Vec<ItemTax> {
    let groups = [
        (
            "TrasladosLocales",
            "ImpLocTrasladado",
            "TasadeTraslado",
            TaxKind::Transferred,
        ),
        (
            "RetencionesLocales",
            "ImpLocRetenido",
            "TasadeRetencion",
            TaxKind::Withheld,
        ),
    ];
    let mut out = Vec::new();
    let roots = complements
        .iter()
        .filter(|n| xml::is_element(**n, IMPLOCAL, "ImpuestosLocales"));
    for root in roots {
        for node in root.children().filter(|n| n.is_element()) {
            let Some((_, name, rate, kind)) =
                groups.iter().find(|g| xml::is_element(node, IMPLOCAL, g.0))
            else {
                continue;
            };
            let r = Reader::new(node, false);
            let Some(tax) = r.string(Attr::field(name, name)) else {
                continue;
            };
            let rate = r.raw(Attr::field(rate, rate)).and_then(xml::parse_decimal);
            out.push(ItemTax {
                kind: *kind,
                tax,
                factor: None,
                rate: rate.map(percent),
                base: None,
                amount: r
                    .raw(Attr::field("Importe", "Importe"))
                    .and_then(xml::parse_decimal),
            });
        }
    }
    out
}

/// The ISR withheld on payroll: per Nómina complement, the deductions of TipoDeduccion
/// 002 (1.2: Importe; 1.1: ImporteGravado + ImporteExento), or 1.2's
/// Deducciones@TotalImpuestosRetenidos when it lists none. One withheld ISR entry per
/// complement that states any.
fn payroll(complements: &[Node<'_, '_>]) -> Vec<ItemTax> {
    let amount = |r: Reader, names: &[&'static str]| -> Option<Decimal> {
        let parts: Vec<Decimal> = names
            .iter()
            .filter_map(|n| r.raw(Attr::field(n, n)).and_then(xml::parse_decimal))
            .collect();
        (!parts.is_empty()).then(|| parts.into_iter().sum())
    };
    let mut out = Vec::new();
    for node in complements {
        let (ns, names): (&str, &[&'static str]) = if xml::is_element(*node, NOMINA12, "Nomina") {
            (NOMINA12, &["Importe"])
        } else if xml::is_element(*node, NOMINA11, "Nomina") {
            (NOMINA11, &["ImporteGravado", "ImporteExento"])
        } else {
            continue;
        };
        let mut withheld: Option<Decimal> = None;
        for deductions in xml::children(*node, ns, "Deducciones") {
            let isr = xml::children(deductions, ns, "Deduccion")
                .map(|d| Reader::new(d, false))
                .filter(|r| {
                    r.raw(Attr::field("TipoDeduccion", "TipoDeduccion")) == Some(DEDUCTION_ISR)
                })
                .filter_map(|r| amount(r, names))
                .reduce(|a, b| a + b);
            let stated = Reader::new(deductions, false)
                .raw(Attr::field(
                    "TotalImpuestosRetenidos",
                    "TotalImpuestosRetenidos",
                ))
                .and_then(xml::parse_decimal);
            if let Some(v) = isr.or(stated) {
                withheld = Some(withheld.unwrap_or_default() + v);
            }
        }
        if let Some(amount) = withheld {
            out.push(ItemTax {
                kind: TaxKind::Withheld,
                tax: ISR.to_owned(),
                factor: None,
                rate: None,
                base: None,
                amount: Some(amount),
            });
        }
    }
    out
}
