//! One document's or payment entry's part in the cash basis of IVA: where it counts
//! (PUE invoices by their date, complements' payments by theirs, credit notes
//! subtracted by theirs), its IVA entries in its own currency, how they become pesos,
//! and its acts not subject to IVA. The summary adds shares up per line; the month's
//! IVA determination and the DIOT take them one at a time, per counterparty.

use rust_decimal::Decimal;

use super::{cents, iva_entries, paid_shares, proportion, Document, PaidEntry, Pesos, Source};
use crate::cfdi::ItemTax;

#[derive(Debug, Clone, PartialEq)]
pub struct Share {
    /// `Pue`, `Payments` or `CreditNotes` (subtracted).
    pub source: Source,
    pub currency: Option<String>,
    /// Its IVA entries (transferred and withheld), as the document or payment has them.
    pub taxes: Vec<ItemTax>,
    /// None: another currency without a rate to pesos.
    pub pesos: Option<Pesos>,
    /// What of it is not subject to IVA (concepts without an IVA transfer; a payment's
    /// paid proportion of its invoice's), in its currency.
    pub untaxed: Decimal,
}

/// A document's share, whatever its status: None for a PPD invoice (its complements
/// count) and for types other than I and E.
pub fn of_document(d: &Document) -> Option<Share> {
    // Credit notes count by their date whatever their MetodoPago: no payment
    // complement ever pays one (the SAT's guide has them PUE).
    let source = match d.invoice_type.as_str() {
        "I" if d.is_ppd() => return None,
        "I" => Source::Pue,
        "E" => Source::CreditNotes,
        _ => return None,
    };
    Some(Share {
        source,
        currency: d.currency.clone(),
        taxes: iva_entries(d.breakdown()).cloned().collect(),
        pesos: d.pesos(),
        untaxed: d.untaxed,
    })
}

/// A payment entry's share: the complement's own breakdown of what it carried
/// (ImpuestosDR) when it has one, else the paid proportion of its invoice's IVA; or
/// why neither can be taken.
pub fn of_payment(e: &PaidEntry) -> Result<Share, &'static str> {
    let paid = proportion(e);
    let untaxed = match paid {
        Ok((invoice, paid)) => cents(invoice.untaxed * paid / invoice.total),
        Err(_) => Decimal::ZERO,
    };
    if !e.taxes.is_empty() {
        return Ok(Share {
            source: Source::Payments,
            currency: e.currency.clone(),
            taxes: iva_entries(&e.taxes).cloned().collect(),
            pesos: e.pesos(),
            untaxed,
        });
    }
    let (invoice, paid) = paid?;
    Ok(Share {
        source: Source::Payments,
        currency: invoice.currency.clone(),
        taxes: paid_shares(invoice, paid),
        pesos: e.pesos(),
        untaxed,
    })
}
