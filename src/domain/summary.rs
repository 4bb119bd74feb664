//! What the period summary reads of a stored document and of a paid payment entry:
//! the rows `db::summary` hands, one at a time, to the pure computation in
//! `crate::summary` (which also holds their rules: pesos, basis, breakdown).

use rust_decimal::Decimal;

use crate::cfdi::{ItemTax, Party, StatedTaxes};

/// A stored, processed document issued in the period.
#[derive(Debug, Clone, Default)]
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
    /// The concepts' taxes (the database layer hands them added up per tax, factor
    /// and rate, which is all the summary reads).
    pub taxes: Vec<ItemTax>,
    /// TipoCambio.
    pub exchange_rate: Option<Decimal>,
    /// Taxes stated outside the concepts (3.2, local, payroll).
    pub stated: StatedTaxes,
    /// Which document it is and who is on either side (the receiver with its UsoCFDI):
    /// what the month close lists a document by and groups it under.
    pub id: String,
    pub uuid: String,
    pub issued_at: String,
    pub issuer: Party,
    pub receiver: Party,
    /// Σ Importe − Descuento of its concepts that carry no IVA transfer: acts not
    /// subject to IVA (every concept of a CFDI 3.2, whose concepts carry no taxes).
    pub untaxed: Decimal,
}

/// A related-document entry of a payment complement, paid (FechaPago) in the period.
#[derive(Debug, Clone, Default)]
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
    /// MonedaP and TipoCambioP of the Pago.
    pub payment_currency: Option<String>,
    pub payment_exchange_rate: Option<Decimal>,
    /// MonedaDR units per unit of MonedaP (EquivalenciaDR, Pagos 1.0 TipoCambioDR).
    pub equivalence: Option<Decimal>,
    /// The complement's UUID and parties (who paid whom).
    pub payment_uuid: String,
    pub payment_issuer: Party,
    pub payment_receiver: Party,
}

/// Adds `t` into the entry of `acc` with its kind, tax, factor and rate (the same
/// rate by value), or appends it: a document's taxes per line, in first-seen order.
pub fn fold_into(acc: &mut Vec<ItemTax>, t: &ItemTax) {
    let plus = |a: Option<Decimal>, b: Option<Decimal>| match (a, b) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or_default() + b.unwrap_or_default()),
    };
    match acc
        .iter_mut()
        .find(|a| (a.kind, &a.tax, &a.factor, a.rate) == (t.kind, &t.tax, &t.factor, t.rate))
    {
        Some(a) => {
            a.base = plus(a.base, t.base);
            a.amount = plus(a.amount, t.amount);
        }
        None => acc.push(t.clone()),
    }
}

/// A retention the entity received, as the summary's withholdings read it.
#[derive(Debug, Clone)]
pub struct RetentionWithholding {
    pub cancelled: bool,
    /// (tax code, payment type, amount) per ImpRetenidos entry: the tax as the CFDI
    /// catalog codes it, the payment type as written.
    pub taxes: Vec<(Option<String>, Option<String>, Decimal)>,
}
