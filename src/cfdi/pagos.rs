//! Pagos 1.0 and 2.0 payment complements.

use roxmltree::Node;

use super::xml::{self, Attr, Reader, PAGOS10, PAGOS20};
use super::{taxes, CfdiError, Payment, PaymentTotals, RelatedDocument};

const PAID_AT: Attr = Attr::field("FechaPago", "Pago@FechaPago");
const PAYMENT_FORM: Attr = Attr::field("FormaDePagoP", "Pago@FormaDePagoP");
const CURRENCY: Attr = Attr::field("MonedaP", "Pago@MonedaP");
const EXCHANGE_RATE: Attr = Attr::field("TipoCambioP", "Pago@TipoCambioP");
const AMOUNT: Attr = Attr::field("Monto", "Pago@Monto");

const DOC_UUID: Attr = Attr::field("IdDocumento", "DoctoRelacionado@IdDocumento");
const DOC_SERIES: Attr = Attr::field("Serie", "DoctoRelacionado@Serie");
const DOC_FOLIO: Attr = Attr::field("Folio", "DoctoRelacionado@Folio");
const DOC_CURRENCY: Attr = Attr::field("MonedaDR", "DoctoRelacionado@MonedaDR");
const DOC_EQUIVALENCE_20: Attr = Attr::field("EquivalenciaDR", "DoctoRelacionado@EquivalenciaDR");
const DOC_EXCHANGE_RATE_10: Attr = Attr::field("TipoCambioDR", "DoctoRelacionado@TipoCambioDR");
const DOC_METHOD_10: Attr = Attr::field("MetodoDePagoDR", "DoctoRelacionado@MetodoDePagoDR");
const DOC_INSTALLMENT: Attr = Attr::field("NumParcialidad", "DoctoRelacionado@NumParcialidad");
const DOC_PREVIOUS: Attr = Attr::field("ImpSaldoAnt", "DoctoRelacionado@ImpSaldoAnt");
const DOC_PAID: Attr = Attr::field("ImpPagado", "DoctoRelacionado@ImpPagado");
const DOC_OUTSTANDING: Attr = Attr::field("ImpSaldoInsoluto", "DoctoRelacionado@ImpSaldoInsoluto");

/// Which payment complement a Pagos element belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    V10,
    V20,
}

impl Kind {
    fn of(node: Node<'_, '_>) -> Option<Kind> {
        if xml::is_element(node, PAGOS10, "Pagos") {
            Some(Kind::V10)
        } else if xml::is_element(node, PAGOS20, "Pagos") {
            Some(Kind::V20)
        } else {
            None
        }
    }

    fn ns(self) -> &'static str {
        match self {
            Kind::V10 => PAGOS10,
            Kind::V20 => PAGOS20,
        }
    }
}

/// Every Pago of every Pagos complement found among `complements`
/// (all nodes under Complemento), in document order.
pub(super) fn parse(complements: &[Node<'_, '_>]) -> Result<Vec<Payment>, CfdiError> {
    let mut payments = Vec::new();
    for node in complements {
        let Some(kind) = Kind::of(*node) else {
            continue;
        };
        for pago in xml::children(*node, kind.ns(), "Pago") {
            payments.push(parse_pago(pago, kind)?);
        }
    }
    Ok(payments)
}

fn parse_pago(node: Node<'_, '_>, kind: Kind) -> Result<Payment, CfdiError> {
    let r = Reader::new(node, false);
    let related_documents = xml::children(node, kind.ns(), "DoctoRelacionado")
        .map(|doc| parse_docto(doc, kind))
        .collect::<Result<_, _>>()?;
    Ok(Payment {
        paid_at: r.required_datetime(PAID_AT)?.to_owned(),
        payment_form: r.string(PAYMENT_FORM),
        currency: r.required(CURRENCY)?.to_owned(),
        exchange_rate: r.decimal(EXCHANGE_RATE)?,
        amount: r.required_decimal(AMOUNT)?,
        related_documents,
        taxes: match kind {
            Kind::V10 => taxes::entries(node, PAGOS10, &taxes::PAGOS10_P, false),
            Kind::V20 => taxes::entries(node, PAGOS20, &taxes::PAGOS20_P, false),
        },
    })
}

/// One DoctoRelacionado, kept verbatim: duplicates and gaps are for the
/// aggregation layer to judge.
fn parse_docto(node: Node<'_, '_>, kind: Kind) -> Result<RelatedDocument, CfdiError> {
    let r = Reader::new(node, false);
    // Both express MonedaDR units per unit of MonedaP.
    let equivalence = match kind {
        Kind::V10 => r.decimal(DOC_EXCHANGE_RATE_10)?,
        Kind::V20 => r.decimal(DOC_EQUIVALENCE_20)?,
    };
    let payment_method = match kind {
        Kind::V10 => r.string(DOC_METHOD_10),
        Kind::V20 => None,
    };
    Ok(RelatedDocument {
        uuid: r.uuid(DOC_UUID),
        series: r.string(DOC_SERIES),
        folio: r.string(DOC_FOLIO),
        currency: r.string(DOC_CURRENCY),
        equivalence,
        payment_method,
        installment: r.integer(DOC_INSTALLMENT)?,
        previous_balance: r.decimal(DOC_PREVIOUS)?,
        amount_paid: r.decimal(DOC_PAID)?,
        outstanding_balance: r.decimal(DOC_OUTSTANDING)?,
        taxes: match kind {
            Kind::V10 => Vec::new(),
            Kind::V20 => taxes::entries(node, PAGOS20, &taxes::PAGOS20_DR, false),
        },
    })
}

/// The Totales of the first Pagos 2.0 complement among `complements`, read leniently
/// (an unreadable amount is None): it is printed, never summed.
pub(super) fn totals(complements: &[Node<'_, '_>]) -> Option<PaymentTotals> {
    let pagos = complements
        .iter()
        .find(|node| Kind::of(**node) == Some(Kind::V20))?;
    let node = xml::child(*pagos, PAGOS20, "Totales")?;
    let amount = |name| node.attribute(name).and_then(xml::parse_decimal);
    Some(PaymentTotals {
        withheld_iva: amount("TotalRetencionesIVA"),
        withheld_isr: amount("TotalRetencionesISR"),
        withheld_ieps: amount("TotalRetencionesIEPS"),
        base_iva16: amount("TotalTrasladosBaseIVA16"),
        iva16: amount("TotalTrasladosImpuestoIVA16"),
        base_iva8: amount("TotalTrasladosBaseIVA8"),
        iva8: amount("TotalTrasladosImpuestoIVA8"),
        base_iva0: amount("TotalTrasladosBaseIVA0"),
        iva0: amount("TotalTrasladosImpuestoIVA0"),
        base_iva_exempt: amount("TotalTrasladosBaseIVAExento"),
        total_paid: amount("MontoTotalPagos"),
    })
}
