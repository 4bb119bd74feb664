//! The month's IVA determination (a draft, not a filing), on the cash basis and from
//! both directions: IVA causado (transferred to the taxpayer's clients and collected),
//! the IVA its clients withheld from it, IVA acreditable (transferred to it and paid),
//! and the result a cargo or a favor; beside it the IVA it withheld from others, which
//! it pays on its own. Each document's or payment's share is the summary's
//! (`cash::of_document`, `cash::of_payment`) and becomes pesos as the summary's does.
//! What the rule leaves out is listed apart with its reason, never netted:
//! cancelled documents and complements, payments the cash basis cannot count, shares
//! without a rate to pesos, and what a definitive 69-B issuer invoiced the taxpayer.
//! The rule and a worked example: `/docs/summary#iva`.

use rust_decimal::Decimal;
use serde::Serialize;

use super::cash::{self, Share};
use super::lines::two_decimals;
use super::{Document, Lines, PaidEntry, Source, TaxLine};
use crate::cfdi::{Party, TaxKind};

/// Which side of the taxpayer's operations a document is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Issued by the taxpayer: its IVA is causado (or withheld by the client).
    Issued,
    /// Received by the taxpayer: its IVA is acreditable (or withheld by the taxpayer).
    Received,
}

/// Why a share is left out of the determination.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// The document is cancelled.
    Cancelled,
    /// The payment complement is cancelled.
    PaymentCancelled,
    /// The cash basis cannot count the payment (`detail` says why: the summary's
    /// `unresolved_payments` reasons).
    PaymentUnresolved,
    /// In another currency without a rate to pesos.
    NoExchangeRate,
    /// Received from an issuer `definitive` on the 69-B list: its IVA is not creditable.
    #[serde(rename = "issuer_definitive_69b")]
    IssuerDefinitive69b,
}

/// A share left out, with what it would have counted (its IVA in its own currency;
/// in pesos when there is a rate).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Excluded {
    pub side: Side,
    pub reason: Reason,
    /// The unresolved payment's reason (`invoice_not_found`, …).
    pub detail: Option<&'static str>,
    /// `document` (an I or E by its date) or `payment` (a complement's entry).
    pub origin: &'static str,
    pub uuid: String,
    /// The document a payment entry paid.
    pub related_uuid: Option<String>,
    pub date: String,
    pub counterparty_tax_id: String,
    pub counterparty_name: Option<String>,
    pub currency: Option<String>,
    /// Subtracted (a credit note) or added.
    pub source: Source,
    pub iva_transferred: Decimal,
    pub iva_withheld: Decimal,
    pub iva_transferred_mxn: Option<Decimal>,
    pub iva_withheld_mxn: Option<Decimal>,
}

/// The figures, in pesos.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    /// IVA causado: transferred on what the taxpayer collected, less its credit notes.
    pub iva_collected: Decimal,
    /// Withheld from the taxpayer by its clients (it counts as paid).
    pub iva_withheld_by_clients: Decimal,
    /// IVA acreditable: transferred on what the taxpayer paid, less credit notes.
    pub iva_creditable: Decimal,
    /// collected − withheld by clients − creditable.
    pub balance: Decimal,
    /// `payable` (a cargo), `in_favor` (a favor) or `zero`.
    pub result: &'static str,
    /// Withheld by the taxpayer from others: paid by it on its own, never offset here.
    pub iva_withheld_from_others: Decimal,
    /// The balance when payable, plus what it withheld from others.
    pub total_to_pay: Decimal,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Determination {
    /// The issued side's cash-basis IVA lines (as the summary's `cash_basis_iva`).
    pub issued: Vec<TaxLine>,
    pub received: Vec<TaxLine>,
    pub figures: Figures,
    pub excluded: Vec<Excluded>,
}

/// Gathers both sides' documents and payment entries, one at a time.
#[derive(Default)]
pub struct Builder {
    issued: Lines,
    received: Lines,
    excluded: Vec<Excluded>,
}

/// Who a share is of: its UUID, date and counterparty.
pub(super) struct Of<'a> {
    origin: &'static str,
    pub(super) uuid: &'a str,
    related_uuid: Option<&'a str>,
    date: &'a str,
    pub(super) counterparty: &'a Party,
}

/// A document's or payment entry's share, who it is of, and why the rule leaves it
/// out (the DIOT reads the same: `diot`).
pub(super) struct Classified<'a> {
    pub(super) share: Share,
    pub(super) of: Of<'a>,
    pub(super) reason: Option<Reason>,
    /// Why the cash basis cannot count a payment (then `share` has no IVA known).
    pub(super) detail: Option<&'static str>,
}

/// A document of the month; `definitive` when it was received from an issuer
/// definitive on the 69-B list. None when it has no share (`cash::of_document`).
pub(super) fn classify_document(
    side: Side,
    d: &Document,
    definitive: bool,
) -> Option<Classified<'_>> {
    let share = cash::of_document(d)?;
    let of = Of {
        origin: "document",
        uuid: &d.uuid,
        related_uuid: None,
        date: &d.issued_at,
        counterparty: counterparty(side, &d.issuer, &d.receiver),
    };
    let reason = if d.cancelled {
        Some(Reason::Cancelled)
    } else if definitive && side == Side::Received {
        Some(Reason::IssuerDefinitive69b)
    } else {
        None
    };
    Some(Classified {
        share,
        of,
        reason,
        detail: None,
    })
}

/// A payment entry of the month; `definitive` when the complement was received from
/// an issuer definitive on the 69-B list.
pub(super) fn classify_payment(side: Side, e: &PaidEntry, definitive: bool) -> Classified<'_> {
    let of = Of {
        origin: "payment",
        uuid: &e.payment_uuid,
        related_uuid: Some(&e.related_uuid),
        date: &e.paid_at,
        counterparty: counterparty(side, &e.payment_issuer, &e.payment_receiver),
    };
    match cash::of_payment(e) {
        Ok(share) => {
            let reason = if e.payment_cancelled {
                Some(Reason::PaymentCancelled)
            } else if definitive && side == Side::Received {
                Some(Reason::IssuerDefinitive69b)
            } else {
                None
            };
            Classified {
                share,
                of,
                reason,
                detail: None,
            }
        }
        Err(detail) => {
            // Nothing to count: what it paid, in its own currency, no IVA known.
            let share = Share {
                source: Source::Payments,
                currency: e.currency.clone(),
                taxes: vec![],
                pesos: None,
                untaxed: Decimal::ZERO,
            };
            let reason = if e.payment_cancelled {
                Reason::PaymentCancelled
            } else {
                Reason::PaymentUnresolved
            };
            Classified {
                share,
                of,
                reason: Some(reason),
                detail: Some(detail),
            }
        }
    }
}

/// A share left out for `reason`, with the IVA it would have counted.
pub(super) fn excluded(side: Side, c: &Classified, reason: Reason) -> Excluded {
    let (share, of) = (&c.share, &c.of);
    let sum = |kind: TaxKind| -> Decimal {
        (share.taxes.iter())
            .filter(|t| t.kind == kind)
            .filter_map(|t| t.amount)
            .sum()
    };
    let (transferred, withheld) = (sum(TaxKind::Transferred), sum(TaxKind::Withheld));
    Excluded {
        side,
        reason,
        detail: c.detail,
        origin: of.origin,
        uuid: of.uuid.to_owned(),
        related_uuid: of.related_uuid.map(str::to_owned),
        date: of.date.to_owned(),
        counterparty_tax_id: of.counterparty.tax_id.clone(),
        counterparty_name: of.counterparty.name.clone(),
        currency: share.currency.clone(),
        source: share.source,
        iva_transferred: transferred,
        iva_withheld: withheld,
        iva_transferred_mxn: share.pesos.map(|p| p.of(transferred)),
        iva_withheld_mxn: share.pesos.map(|p| p.of(withheld)),
    }
}

impl Builder {
    /// A document of the month; `definitive` when it was received from an issuer
    /// definitive on the 69-B list.
    pub fn document(&mut self, side: Side, d: &Document, definitive: bool) {
        if let Some(c) = classify_document(side, d, definitive) {
            self.share(side, c);
        }
    }

    /// A payment entry of the month; `definitive` when the complement was received
    /// from an issuer definitive on the 69-B list.
    pub fn payment(&mut self, side: Side, e: &PaidEntry, definitive: bool) {
        self.share(side, classify_payment(side, e, definitive));
    }

    fn share(&mut self, side: Side, c: Classified) {
        if c.detail.is_none() && c.share.taxes.is_empty() {
            // No IVA either way: nothing to count or to leave out.
            return;
        }
        let no_rate = c.share.pesos.is_none().then_some(Reason::NoExchangeRate);
        if let Some(reason) = c.reason.or(no_rate) {
            self.excluded.push(excluded(side, &c, reason));
            return;
        }
        let lines = match side {
            Side::Issued => &mut self.issued,
            Side::Received => &mut self.received,
        };
        let share = c.share;
        lines.add_all(
            share.source,
            share.currency.as_deref(),
            &share.taxes,
            share.pesos,
        );
    }

    pub fn finish(self) -> Determination {
        let cash =
            |lines: Lines| lines.finish(&[Source::Pue, Source::Payments], &[Source::CreditNotes]);
        let (issued, received) = (cash(self.issued), cash(self.received));
        let net = |lines: &[TaxLine], kind: TaxKind| -> Decimal {
            two_decimals(
                (lines.iter())
                    .filter(|l| l.source == Source::Net && l.kind == kind)
                    .filter_map(|l| l.amount_mxn)
                    .sum(),
            )
        };
        let collected = net(&issued, TaxKind::Transferred);
        let withheld_by_clients = net(&issued, TaxKind::Withheld);
        let creditable = net(&received, TaxKind::Transferred);
        let withheld_from_others = net(&received, TaxKind::Withheld);
        let balance = two_decimals(collected - withheld_by_clients - creditable);
        let result = if balance > Decimal::ZERO {
            "payable"
        } else if balance < Decimal::ZERO {
            "in_favor"
        } else {
            "zero"
        };
        let total_to_pay = two_decimals(balance.max(Decimal::ZERO) + withheld_from_others);
        Determination {
            issued,
            received,
            figures: Figures {
                iva_collected: collected,
                iva_withheld_by_clients: withheld_by_clients,
                iva_creditable: creditable,
                balance,
                result,
                iva_withheld_from_others: withheld_from_others,
                total_to_pay,
            },
            excluded: self.excluded,
        }
    }
}

/// The other party: the receiver of what the taxpayer issued, the issuer of what it
/// received.
fn counterparty<'a>(side: Side, issuer: &'a Party, receiver: &'a Party) -> &'a Party {
    match side {
        Side::Issued => receiver,
        Side::Received => issuer,
    }
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;
    use crate::cfdi::ItemTax;

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).expect("a decimal")
    }

    fn tax(kind: TaxKind, rate: &str, base: &str, amount: &str) -> ItemTax {
        ItemTax {
            kind,
            tax: "002".into(),
            factor: Some("Tasa".into()),
            rate: Some(dec(rate)),
            base: Some(dec(base)),
            amount: Some(dec(amount)),
        }
    }

    fn party(rfc: &str) -> Party {
        Party {
            tax_id: rfc.into(),
            ..Party::default()
        }
    }

    fn doc(
        uuid: &str,
        kind: &str,
        currency: &str,
        rate: Option<&str>,
        taxes: Vec<ItemTax>,
    ) -> Document {
        Document {
            uuid: uuid.into(),
            invoice_type: kind.into(),
            payment_method: Some("PUE".into()),
            currency: Some(currency.into()),
            exchange_rate: rate.map(dec),
            total: dec("1"),
            issuer: party("EMI010101AAA"),
            receiver: party("REC010101AAA"),
            taxes,
            ..Document::default()
        }
    }

    #[test]
    fn collected_less_withheld_less_creditable_with_withholdings_beside() {
        use TaxKind::*;
        let mut b = Builder::default();
        // Issued: 10,000 at 16% (1,600) of which the client withheld 2/3 (1,066.67).
        b.document(
            Side::Issued,
            &doc(
                "a",
                "I",
                "MXN",
                None,
                vec![
                    tax(Transferred, "0.160000", "10000.00", "1600.00"),
                    tax(Withheld, "0.106667", "10000.00", "1066.67"),
                ],
            ),
            false,
        );
        // Issued credit note: 1,000 at 16%.
        b.document(
            Side::Issued,
            &doc(
                "b",
                "E",
                "MXN",
                None,
                vec![tax(Transferred, "0.160000", "1000.00", "160.00")],
            ),
            false,
        );
        // Received in USD at 20.00: 100 at 16% = 16 USD = 320.00 MXN, and 10% ISR
        // ignored (not IVA: `cash` keeps IVA only).
        b.document(
            Side::Received,
            &doc(
                "c",
                "I",
                "USD",
                Some("20.00"),
                vec![tax(Transferred, "0.160000", "100.00", "16.00")],
            ),
            false,
        );
        // Received: the taxpayer withheld 2/3 of 160.00 from a supplier.
        b.document(
            Side::Received,
            &doc(
                "d",
                "I",
                "MXN",
                None,
                vec![
                    tax(Transferred, "0.160000", "1000.00", "160.00"),
                    tax(Withheld, "0.106667", "1000.00", "106.67"),
                ],
            ),
            false,
        );
        // Left out: a definitive 69-B supplier's, a cancelled one's, one in EUR
        // without a rate.
        b.document(
            Side::Received,
            &doc(
                "e",
                "I",
                "MXN",
                None,
                vec![tax(Transferred, "0.160000", "500.00", "80.00")],
            ),
            true,
        );
        let mut cancelled = doc(
            "f",
            "I",
            "MXN",
            None,
            vec![tax(Transferred, "0.160000", "50.00", "8.00")],
        );
        cancelled.cancelled = true;
        b.document(Side::Issued, &cancelled, false);
        b.document(
            Side::Issued,
            &doc(
                "g",
                "I",
                "EUR",
                None,
                vec![tax(Transferred, "0.160000", "10.00", "1.60")],
            ),
            false,
        );
        let d = b.finish();
        let f = &d.figures;
        // 1,600.00 − 160.00
        assert_eq!(f.iva_collected.to_string(), "1440.00");
        assert_eq!(f.iva_withheld_by_clients.to_string(), "1066.67");
        // 320.00 + 160.00
        assert_eq!(f.iva_creditable.to_string(), "480.00");
        // 1,440.00 − 1,066.67 − 480.00
        assert_eq!(f.balance.to_string(), "-106.67");
        assert_eq!(f.result, "in_favor");
        assert_eq!(f.iva_withheld_from_others.to_string(), "106.67");
        assert_eq!(f.total_to_pay.to_string(), "106.67");
        let excluded: Vec<(&str, Reason, String, Option<String>)> = (d.excluded.iter())
            .map(|e| {
                (
                    e.uuid.as_str(),
                    e.reason,
                    e.iva_transferred.to_string(),
                    e.iva_transferred_mxn.map(|v| v.to_string()),
                )
            })
            .collect();
        assert_eq!(
            excluded,
            [
                (
                    "e",
                    Reason::IssuerDefinitive69b,
                    "80.00".into(),
                    Some("80.00".into())
                ),
                ("f", Reason::Cancelled, "8.00".into(), Some("8.00".into())),
                ("g", Reason::NoExchangeRate, "1.60".into(), None),
            ]
        );
        assert_eq!(d.excluded[0].counterparty_tax_id, "EMI010101AAA");
        assert_eq!(d.excluded[1].counterparty_tax_id, "REC010101AAA");
    }

    #[test]
    fn an_unresolved_or_cancelled_payment_is_listed_with_its_reason() {
        let mut b = Builder::default();
        let entry = PaidEntry {
            payment_uuid: "p".into(),
            related_uuid: "missing".into(),
            currency: Some("MXN".into()),
            amount_paid: Some(dec("116.00")),
            payment_issuer: party("PRO010101AAA"),
            ..PaidEntry::default()
        };
        b.payment(Side::Received, &entry, false);
        let cancelled = PaidEntry {
            payment_cancelled: true,
            ..entry.clone()
        };
        b.payment(Side::Received, &cancelled, false);
        let d = b.finish();
        assert_eq!(d.figures.result, "zero");
        assert_eq!(d.figures.balance.to_string(), "0.00");
        let reasons: Vec<_> = d.excluded.iter().map(|e| (e.reason, e.detail)).collect();
        assert_eq!(
            reasons,
            [
                (Reason::PaymentUnresolved, Some("invoice_not_found")),
                (Reason::PaymentCancelled, Some("invoice_not_found")),
            ]
        );
        assert_eq!(d.excluded[0].counterparty_tax_id, "PRO010101AAA");
        assert_eq!(d.excluded[0].related_uuid.as_deref(), Some("missing"));
    }
}
