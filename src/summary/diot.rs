//! The DIOT (declaración informativa de operaciones con terceros) of a month: the
//! taxpayer's received documents and payment entries on the cash basis, the same
//! shares as the IVA determination (`iva::classify_document`, `iva::classify_payment`),
//! added up per supplier into one record each, in pesos as the summary converts them
//! (each share's amounts rounded to cents). What a CFDI cannot say comes from the
//! supplier's settings (`domain::supplier`), or their defaults. How a record becomes
//! the layouts' fields: `diot_fields`. The rules, field by field: `/docs/diot`.
//!
//! - Bases and IVA by rate: 16% (and the 15% of older documents) is the general
//!   regime; 8% the border region the supplier's settings name (north by default);
//!   0%, exempt (TipoFactor Exento) and not subject (concepts without an IVA transfer)
//!   are bases alone; IVA withheld is what the taxpayer withheld.
//! - Credit notes (type E, by their date) are returns: their bases go beside the
//!   regime's paid value, their IVA is subtracted from its IVA; 0%, exempt, not
//!   subject and withheld amounts have no returns field and are netted.
//! - A supplier definitive on the 69-B list (the list loaded last): its IVA is not
//!   creditable, for not meeting the requirements, whatever its settings say.
//! - Left out, as the IVA determination leaves them (`excluded`): cancelled documents
//!   and complements, payments the cash basis cannot count, shares without a rate to
//!   pesos; and IVA at a rate neither layout has a field for (a note on the record).

use std::collections::{BTreeMap, HashMap};

use rust_decimal::Decimal;
use serde::Serialize;

use super::cash::Share;
use super::iva::{self, Classified, Excluded, Side};
use super::lines::two_decimals;
use super::{cents, Document, PaidEntry, Source};
use crate::cfdi::TaxKind;
use crate::domain::supplier::{default_operation_type, description, operation_types};
use crate::domain::supplier::{BorderRegion, Layout, NonCreditable, Supplier, OPERATION_TYPES};

/// One IVA regime's amounts of a supplier, in pesos.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Regime {
    /// Valor de los actos pagados: the bases paid.
    pub paid: Decimal,
    /// Devoluciones, descuentos y bonificaciones: the bases of its credit notes.
    pub returns: Decimal,
    /// The IVA transferred on what was paid.
    pub iva: Decimal,
    /// The IVA of its credit notes.
    pub iva_returns: Decimal,
}

impl Regime {
    fn add(&mut self, returns: bool, base: Decimal, iva: Decimal) {
        if returns {
            self.returns += base;
            self.iva_returns += iva;
        } else {
            self.paid += base;
            self.iva += iva;
        }
    }

    /// The IVA of the month with this supplier: paid less its credit notes'.
    pub fn net_iva(&self) -> Decimal {
        self.iva - self.iva_returns
    }

    fn two_decimals(self) -> Regime {
        Regime {
            paid: two_decimals(self.paid),
            returns: two_decimals(self.returns),
            iva: two_decimals(self.iva),
            iva_returns: two_decimals(self.iva_returns),
        }
    }
}

/// A supplier's amounts of the month, in pesos (credit notes netted where a layout
/// has no returns field: `zero`, `exempt`, `not_subject`, `withheld`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Amounts {
    /// 16% (and 15%).
    pub general: Regime,
    /// 8%, in the record's `border_region`.
    pub border: Regime,
    pub zero: Decimal,
    pub exempt: Decimal,
    pub not_subject: Decimal,
    /// IVA the taxpayer withheld from the supplier.
    pub withheld: Decimal,
}

/// Where a supplier's IVA that is not creditable comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Because {
    /// The supplier's settings.
    Settings,
    /// The supplier is definitive on the 69-B list.
    #[serde(rename = "issuer_definitive_69b")]
    IssuerDefinitive69b,
}

/// One supplier's record of the month (the API's view of it: `diot_fields::view`).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub third_party_type: &'static str,
    pub operation_type: String,
    /// The supplier's RFC as its CFDI write it.
    pub tax_id: String,
    /// Its name as the last of its CFDI of the month read writes it.
    pub name: Option<String>,
    /// Whether settings are saved for it (else every default applies).
    pub saved: bool,
    pub tax_effects: bool,
    pub border_region: BorderRegion,
    pub non_creditable: Option<NonCreditable>,
    pub non_creditable_because: Option<Because>,
    pub definitive_69b: bool,
    pub foreign_tax_id: Option<String>,
    pub foreign_name: Option<String>,
    pub country: Option<String>,
    pub jurisdiction: Option<String>,
    pub legacy_country: Option<String>,
    pub legacy_nationality: Option<String>,
    /// Documents and payment entries counted.
    pub count: u64,
    pub amounts: Amounts,
    /// What the record could not take as the CFDI say it, in Spanish.
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diot {
    pub layout: &'static str,
    pub records: Vec<Record>,
    pub excluded: Vec<Excluded>,
}

/// Gathers the month's received documents and payment entries, one at a time.
pub struct Builder {
    layout: Layout,
    saved: HashMap<String, Supplier>,
    records: BTreeMap<String, Record>,
    excluded: Vec<Excluded>,
}

impl Builder {
    /// The DIOT in `layout`, with the taxpayer's saved supplier settings.
    pub fn new(layout: Layout, saved: Vec<Supplier>) -> Builder {
        Builder {
            layout,
            saved: (saved.into_iter()).map(|s| (s.tax_id.clone(), s)).collect(),
            records: BTreeMap::new(),
            excluded: Vec::new(),
        }
    }

    /// A received document of the month; `definitive` when its issuer is definitive
    /// on the 69-B list.
    pub fn document(&mut self, d: &Document, definitive: bool) {
        if let Some(c) = iva::classify_document(Side::Received, d, false) {
            self.share(c, definitive);
        }
    }

    /// A received payment complement's entry of the month.
    pub fn payment(&mut self, e: &PaidEntry, definitive: bool) {
        self.share(iva::classify_payment(Side::Received, e, false), definitive);
    }

    fn share(&mut self, c: Classified, definitive: bool) {
        let nothing = c.share.taxes.is_empty() && c.share.untaxed.is_zero();
        if c.detail.is_none() && nothing {
            return;
        }
        let no_rate = c
            .share
            .pesos
            .is_none()
            .then_some(iva::Reason::NoExchangeRate);
        if let Some(reason) = c.reason.or(no_rate) {
            self.excluded
                .push(iva::excluded(Side::Received, &c, reason));
            return;
        }
        let party = c.of.counterparty;
        let tax_id = party.tax_id.trim().to_uppercase();
        let layout = self.layout;
        let saved = self.saved.get(&tax_id);
        let record = (self.records.entry(tax_id.clone()))
            .or_insert_with(|| new_record(&tax_id, saved, layout));
        if party.name.is_some() {
            record.name.clone_from(&party.name);
        }
        if definitive && !record.definitive_69b {
            record.definitive_69b = true;
            record.non_creditable = Some(NonCreditable::Requirements);
            record.non_creditable_because = Some(Because::IssuerDefinitive69b);
        }
        record.count += 1;
        add(record, &c.share, c.of.uuid);
    }

    pub fn finish(self) -> Diot {
        let records = (self.records.into_values())
            .map(|mut r| {
                r.amounts = Amounts {
                    general: r.amounts.general.two_decimals(),
                    border: r.amounts.border.two_decimals(),
                    zero: two_decimals(r.amounts.zero),
                    exempt: two_decimals(r.amounts.exempt),
                    not_subject: two_decimals(r.amounts.not_subject),
                    withheld: two_decimals(r.amounts.withheld),
                };
                r
            })
            .collect();
        Diot {
            layout: self.layout.as_str(),
            records,
            excluded: self.excluded,
        }
    }
}

/// A supplier's record before its amounts: its saved settings, or the defaults. An
/// operation type the layout has not for the supplier's type falls back to the
/// default, with a note.
fn new_record(tax_id: &str, saved: Option<&Supplier>, layout: Layout) -> Record {
    let resolved = Supplier::resolve(tax_id, saved, layout);
    let third = resolved.third_party_type;
    let mut notes = Vec::new();
    let operation_type = if operation_types(third, layout)
        .contains(&resolved.operation_type.as_str())
    {
        resolved.operation_type
    } else {
        let default = default_operation_type(third, layout);
        notes.push(format!(
            "El tipo de operación {} ({}) no existe para el tipo de tercero {third} en el formato de {} campos: se usa {default}.",
            resolved.operation_type,
            description(OPERATION_TYPES, &resolved.operation_type).unwrap_or("?"),
            layout.fields(),
        ));
        default.to_owned()
    };
    let text = |f: fn(&Supplier) -> &Option<String>| saved.and_then(|s| f(s).clone());
    Record {
        third_party_type: third,
        operation_type,
        tax_id: tax_id.to_owned(),
        name: None,
        saved: saved.is_some(),
        tax_effects: resolved.tax_effects,
        border_region: resolved.border_region,
        non_creditable: resolved.non_creditable,
        non_creditable_because: resolved.non_creditable.map(|_| Because::Settings),
        definitive_69b: false,
        foreign_tax_id: text(|s| &s.foreign_tax_id),
        foreign_name: text(|s| &s.foreign_name),
        country: text(|s| &s.country),
        jurisdiction: text(|s| &s.jurisdiction),
        legacy_country: text(|s| &s.legacy_country),
        legacy_nationality: text(|s| &s.legacy_nationality),
        count: 0,
        amounts: Amounts::default(),
        notes,
    }
}

/// The rates of the general regime: 16%, and the 15% documents before 2010 have.
fn is_general(rate: Decimal) -> bool {
    rate == Decimal::new(16, 2) || rate == Decimal::new(15, 2)
}

/// A share's amounts into its supplier's record, in pesos (`pesos` is known here).
fn add(record: &mut Record, share: &Share, uuid: &str) {
    let Some(pesos) = share.pesos else {
        return;
    };
    let returns = share.source == Source::CreditNotes;
    let sign = if returns {
        Decimal::NEGATIVE_ONE
    } else {
        Decimal::ONE
    };
    let a = &mut record.amounts;
    // CFDI 3.2 states no base: it is the amount ÷ the rate, and what the concepts (which
    // then count as untaxed) add up to beyond it is the not-subject part.
    let mut derived = Decimal::ZERO;
    for t in &share.taxes {
        let base = match (t.base, t.rate, t.amount) {
            (Some(base), _, _) => base,
            (None, Some(rate), Some(amount)) if !rate.is_zero() => {
                let base = cents(amount / rate);
                derived += base;
                base
            }
            _ => Decimal::ZERO,
        };
        let base = pesos.of(base);
        let amount = pesos.of(t.amount.unwrap_or_default());
        if t.kind == TaxKind::Withheld {
            a.withheld += sign * amount;
            continue;
        }
        if t.factor.as_deref() == Some("Exento") {
            a.exempt += sign * base;
            continue;
        }
        match t.rate {
            Some(rate) if rate.is_zero() => a.zero += sign * base,
            Some(rate) if is_general(rate) => a.general.add(returns, base, amount),
            Some(rate) if rate == Decimal::new(8, 2) => a.border.add(returns, base, amount),
            rate => record.notes.push(format!(
                "El CFDI {uuid} tiene IVA a la tasa {}, que la DIOT no tiene: su base de {base} e IVA de {amount} no se declaran.",
                rate.map_or_else(|| "sin tasa".to_owned(), |r| r.normalize().to_string()),
            )),
        }
    }
    a.not_subject += sign * pesos.of((share.untaxed - derived).max(Decimal::ZERO));
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use serde_json::json;

    use super::*;
    use crate::cfdi::{ItemTax, Party};

    pub(crate) fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).expect("a decimal")
    }

    fn tax(
        kind: TaxKind,
        factor: &str,
        rate: Option<&str>,
        base: &str,
        amount: Option<&str>,
    ) -> ItemTax {
        ItemTax {
            kind,
            tax: "002".into(),
            factor: Some(factor.into()),
            rate: rate.map(dec),
            base: Some(dec(base)),
            amount: amount.map(dec),
        }
    }

    fn doc(
        uuid: &str,
        issuer: &str,
        kind: &str,
        rate: Option<&str>,
        taxes: Vec<ItemTax>,
    ) -> Document {
        Document {
            uuid: uuid.into(),
            invoice_type: kind.into(),
            payment_method: Some("PUE".into()),
            currency: Some(if rate.is_some() { "USD" } else { "MXN" }.into()),
            exchange_rate: rate.map(dec),
            total: dec("1"),
            issuer: Party {
                tax_id: issuer.into(),
                name: Some(format!("Proveedor {issuer}")),
                ..Party::default()
            },
            receiver: Party {
                tax_id: "AAA010101AAA".into(),
                ..Party::default()
            },
            taxes,
            ..Document::default()
        }
    }

    fn settings(rfc: &str, body: serde_json::Value) -> Supplier {
        Supplier::parse(rfc, body.as_object().expect("an object")).expect("valid")
    }

    #[test]
    fn rates_credit_notes_and_withholdings_by_supplier() {
        use TaxKind::*;
        let mut b = Builder::new(
            Layout::Fields54,
            vec![settings(
                "SUR010101AB1",
                json!({"border_region": "south", "operation_type": "02"}),
            )],
        );
        // 1,000.00 at 16% and 500.00 exempt; 106.67 withheld.
        let mut first = doc(
            "a",
            "PRO010101AB1",
            "I",
            None,
            vec![
                tax(
                    Transferred,
                    "Tasa",
                    Some("0.160000"),
                    "1000.00",
                    Some("160.00"),
                ),
                tax(Transferred, "Exento", None, "500.00", None),
                tax(
                    Withheld,
                    "Tasa",
                    Some("0.106667"),
                    "1000.00",
                    Some("106.67"),
                ),
            ],
        );
        first.untaxed = dec("250.00");
        b.document(&first, false);
        // A credit note: 100.00 at 16%.
        b.document(
            &doc(
                "b",
                "PRO010101AB1",
                "E",
                None,
                vec![tax(
                    Transferred,
                    "Tasa",
                    Some("0.160000"),
                    "100.00",
                    Some("16.00"),
                )],
            ),
            false,
        );
        // In USD at 18.50: 100.00 at 8% in the south, 10.00 at 0%.
        b.document(
            &doc(
                "c",
                "SUR010101AB1",
                "I",
                Some("18.50"),
                vec![
                    tax(
                        Transferred,
                        "Tasa",
                        Some("0.080000"),
                        "100.00",
                        Some("8.00"),
                    ),
                    tax(Transferred, "Tasa", Some("0.000000"), "10.00", Some("0.00")),
                ],
            ),
            false,
        );
        // A definitive 69-B supplier, and a cancelled document of it.
        b.document(
            &doc(
                "d",
                "DEF010101AB2",
                "I",
                None,
                vec![tax(
                    Transferred,
                    "Tasa",
                    Some("0.160000"),
                    "300.00",
                    Some("48.00"),
                )],
            ),
            true,
        );
        let mut cancelled = doc(
            "e",
            "DEF010101AB2",
            "I",
            None,
            vec![tax(
                Transferred,
                "Tasa",
                Some("0.160000"),
                "1.00",
                Some("0.16"),
            )],
        );
        cancelled.cancelled = true;
        b.document(&cancelled, true);
        // A rate no layout has.
        b.document(
            &doc(
                "f",
                "ODD010101AB3",
                "I",
                None,
                vec![tax(
                    Transferred,
                    "Tasa",
                    Some("0.110000"),
                    "10.00",
                    Some("1.10"),
                )],
            ),
            false,
        );
        let d = b.finish();
        assert_eq!(d.layout, "54");
        let rfcs: Vec<&str> = d.records.iter().map(|r| r.tax_id.as_str()).collect();
        assert_eq!(
            rfcs,
            [
                "DEF010101AB2",
                "ODD010101AB3",
                "PRO010101AB1",
                "SUR010101AB1"
            ]
        );
        let def = &d.records[0];
        assert!(def.definitive_69b);
        assert_eq!(def.non_creditable, Some(NonCreditable::Requirements));
        assert_eq!(
            def.non_creditable_because,
            Some(Because::IssuerDefinitive69b)
        );
        assert_eq!(def.amounts.general.iva.to_string(), "48.00");
        assert_eq!(def.count, 1);
        assert_eq!(d.excluded.len(), 1);
        assert_eq!(d.excluded[0].reason, iva::Reason::Cancelled);
        assert_eq!(d.records[1].notes.len(), 1, "{:?}", d.records[1].notes);
        let pro = &d.records[2];
        assert_eq!(
            (pro.third_party_type, pro.operation_type.as_str()),
            ("04", "85")
        );
        assert_eq!(pro.name.as_deref(), Some("Proveedor PRO010101AB1"));
        let g = &pro.amounts.general;
        assert_eq!(
            [g.paid, g.returns, g.iva, g.iva_returns, g.net_iva()].map(|v| v.to_string()),
            ["1000.00", "100.00", "160.00", "16.00", "144.00"]
        );
        assert_eq!(pro.amounts.exempt.to_string(), "500.00");
        assert_eq!(pro.amounts.not_subject.to_string(), "250.00");
        assert_eq!(pro.amounts.withheld.to_string(), "106.67");
        let sur = &d.records[3];
        assert_eq!(
            (sur.operation_type.as_str(), sur.border_region),
            ("02", BorderRegion::South)
        );
        // 100.00 × 18.50, 8.00 × 18.50, 10.00 × 18.50.
        assert_eq!(sur.amounts.border.paid.to_string(), "1850.00");
        assert_eq!(sur.amounts.border.iva.to_string(), "148.00");
        assert_eq!(sur.amounts.zero.to_string(), "185.00");
    }

    #[test]
    fn a_cfdi_32_base_is_its_iva_over_the_rate() {
        // The shared 3.2 sample: IVA 646.21 at 16%, subtotal 4,038.79, no base stated.
        let mut d = doc(
            "a",
            "CTO021007DZ8",
            "I",
            None,
            vec![tax(
                TaxKind::Transferred,
                "Tasa",
                Some("0.16"),
                "0",
                Some("646.21"),
            )],
        );
        d.taxes[0].base = None;
        d.untaxed = dec("4038.79");
        let mut b = Builder::new(Layout::Fields24, vec![]);
        b.document(&d, false);
        let r = &b.finish().records[0];
        // 646.21 ÷ 0.16 = 4,038.8125: 4,038.81; nothing beyond it is not subject.
        assert_eq!(r.amounts.general.paid.to_string(), "4038.81");
        assert_eq!(r.amounts.general.iva.to_string(), "646.21");
        assert_eq!(r.amounts.not_subject.to_string(), "0.00");
    }

    #[test]
    fn an_operation_the_layout_lacks_falls_back_with_a_note() {
        // 02 is in the 2025 layout only.
        let saved = vec![settings("PRO010101AB1", json!({"operation_type": "02"}))];
        let mut b = Builder::new(Layout::Fields24, saved);
        b.document(
            &doc(
                "a",
                "PRO010101AB1",
                "I",
                None,
                vec![tax(
                    TaxKind::Transferred,
                    "Tasa",
                    Some("0.160000"),
                    "1.00",
                    Some("0.16"),
                )],
            ),
            false,
        );
        let d = b.finish();
        assert_eq!(d.records[0].operation_type, "85");
        assert!(d.records[0].saved);
        assert!(
            d.records[0].notes[0].contains("02"),
            "{:?}",
            d.records[0].notes
        );
    }
}
