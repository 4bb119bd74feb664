//! Tax entries (Traslado and Retencion lists) wherever a CFDI or its payment
//! complement has them: a concept's and the document's Impuestos, a Pagos 2.0
//! payment's ImpuestosP and its documents' ImpuestosDR, a Pagos 1.0 payment's
//! Impuestos. Entries are read leniently: one without its tax is skipped and an
//! unreadable decimal is None, so tax detail never makes a document unreadable.

use roxmltree::Node;

use super::xml::{self, Attr, Reader};
use super::{ItemTax, TaxKind};

/// How one kind of Impuestos node spells its lists and attributes.
pub(super) struct TaxNames {
    container: &'static str,
    transfers: (&'static str, &'static str),
    withholdings: (&'static str, &'static str),
    tax: Attr,
    factor: Attr,
    rate: Attr,
    base: Attr,
    amount: Attr,
}

/// A Comprobante's or Concepto's Impuestos; 3.2 spells `impuesto`, `tasa` (a
/// percentage) and `importe`, and has no factor or base.
pub(super) const CFDI: TaxNames = TaxNames {
    container: "Impuestos",
    transfers: ("Traslados", "Traslado"),
    withholdings: ("Retenciones", "Retencion"),
    tax: Attr::new("Impuesto", "impuesto"),
    factor: Attr::modern_only("TipoFactor"),
    rate: Attr::new("TasaOCuota", "tasa"),
    base: Attr::modern_only("Base"),
    amount: Attr::new("Importe", "importe"),
};

/// Pagos 2.0 DoctoRelacionado/ImpuestosDR.
pub(super) const PAGOS20_DR: TaxNames = TaxNames {
    container: "ImpuestosDR",
    transfers: ("TrasladosDR", "TrasladoDR"),
    withholdings: ("RetencionesDR", "RetencionDR"),
    tax: Attr::field("ImpuestoDR", "ImpuestoDR"),
    factor: Attr::field("TipoFactorDR", "TipoFactorDR"),
    rate: Attr::field("TasaOCuotaDR", "TasaOCuotaDR"),
    base: Attr::field("BaseDR", "BaseDR"),
    amount: Attr::field("ImporteDR", "ImporteDR"),
};

/// Pagos 2.0 Pago/ImpuestosP.
pub(super) const PAGOS20_P: TaxNames = TaxNames {
    container: "ImpuestosP",
    transfers: ("TrasladosP", "TrasladoP"),
    withholdings: ("RetencionesP", "RetencionP"),
    tax: Attr::field("ImpuestoP", "ImpuestoP"),
    factor: Attr::field("TipoFactorP", "TipoFactorP"),
    rate: Attr::field("TasaOCuotaP", "TasaOCuotaP"),
    base: Attr::field("BaseP", "BaseP"),
    amount: Attr::field("ImporteP", "ImporteP"),
};

/// Pagos 1.0 Pago/Impuestos (spelled like a 3.3 document's).
pub(super) const PAGOS10_P: TaxNames = CFDI;

/// The Traslado then Retencion entries of `parent`'s `names.container` children in
/// namespace `ns`; `legacy` reads CFDI 3.2 spellings.
pub(super) fn entries(
    parent: Node<'_, '_>,
    ns: &str,
    names: &TaxNames,
    legacy: bool,
) -> Vec<ItemTax> {
    let groups = [
        (names.transfers, TaxKind::Transferred),
        (names.withholdings, TaxKind::Withheld),
    ];
    let mut taxes = Vec::new();
    for container in xml::children(parent, ns, names.container) {
        for ((list, entry), kind) in groups {
            for node in xml::children(container, ns, list).flat_map(|l| xml::children(l, ns, entry))
            {
                let r = Reader::new(node, legacy);
                let lenient = |attr| r.raw(attr).and_then(xml::parse_decimal);
                let Some(tax) = r.string(names.tax) else {
                    continue;
                };
                taxes.push(ItemTax {
                    kind,
                    tax,
                    factor: r.string(names.factor),
                    rate: lenient(names.rate),
                    base: lenient(names.base),
                    amount: lenient(names.amount),
                });
            }
        }
    }
    taxes
}
