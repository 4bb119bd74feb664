//! The SAT's 69-B list (taxpayers presumed to invoice simulated operations, Article 69-B
//! of the CFF) as the service's values.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{json, Value};

wire_enum!(
    /// A taxpayer's situation on the list.
    Situation {
        /// `Presunto`: presumed; the taxpayer may still disprove it.
        Presumed => "presumed",
        /// `Desvirtuado`: disproved; off the hook.
        Disproved => "disproved",
        /// `Definitivo`: confirmed: its invoices back no deductible expense.
        Definitive => "definitive",
        /// `Sentencia Favorable`: a court ruled for the taxpayer.
        FavorableRuling => "favorable_ruling",
    }
);

impl Situation {
    /// The list's column 4, folded (lower case, no accents).
    pub fn from_list(folded: &str) -> Option<Situation> {
        match folded {
            "presunto" => Some(Situation::Presumed),
            "desvirtuado" => Some(Situation::Disproved),
            "definitivo" => Some(Situation::Definitive),
            "sentencia favorable" => Some(Situation::FavorableRuling),
            _ => None,
        }
    }
}

/// One taxpayer on the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub rfc: String,
    pub name: String,
    pub situation: Situation,
    /// Publication on the SAT's page and in the DOF, per stage.
    pub presumed: Published,
    pub disproved: Published,
    pub definitive: Published,
    pub favorable: Published,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Published {
    pub sat: Option<NaiveDate>,
    pub dof: Option<NaiveDate>,
}

impl Published {
    fn view(&self) -> Value {
        let day = |d: Option<NaiveDate>| d.map(|d| d.format("%Y-%m-%d").to_string());
        json!({ "sat": day(self.sat), "dof": day(self.dof) })
    }
}

/// An entry of the list loaded last, with that load's version: which answer a flag
/// came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub entry: Entry,
    pub list_version: i64,
}

impl Listed {
    /// The shape of an invoice's `counterparty_69b` (which SQLite renders itself) and of
    /// an entity's `list_69b`.
    pub fn view(&self) -> Value {
        let e = &self.entry;
        json!({
            "tax_id": e.rfc, "name": e.name, "situation": e.situation.as_str(),
            "presumed": e.presumed.view(), "disproved": e.disproved.view(),
            "definitive": e.definitive.view(), "favorable_ruling": e.favorable.view(),
            "list_version": self.list_version,
        })
    }
}

/// A processed invoice whose counterparty is listed, as its totals read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlaggedInvoice {
    /// `issued` or `received`.
    pub direction: String,
    pub currency: Option<String>,
    pub subtotal: Decimal,
    pub total: Decimal,
    pub cancelled: bool,
}

/// Counts and sums of one direction and currency.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Totals {
    pub direction: String,
    pub currency: Option<String>,
    pub count: u64,
    pub subtotal: Decimal,
    pub total: Decimal,
}

/// An entity's invoices with one counterparty: all of them counted, the cancelled ones
/// apart and left out of the totals (as in the summary).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tally {
    pub invoices: u64,
    pub cancelled: u64,
    totals: BTreeMap<(String, Option<String>), Totals>,
}

impl Tally {
    pub fn add(&mut self, invoice: &FlaggedInvoice) {
        self.invoices += 1;
        if invoice.cancelled {
            self.cancelled += 1;
            return;
        }
        let key = (invoice.direction.clone(), invoice.currency.clone());
        let line = self.totals.entry(key).or_insert_with(|| Totals {
            direction: invoice.direction.clone(),
            currency: invoice.currency.clone(),
            ..Totals::default()
        });
        line.count += 1;
        line.subtotal += invoice.subtotal;
        line.total += invoice.total;
    }

    /// By direction (issued first), then currency.
    pub fn totals(&self) -> impl Iterator<Item = &Totals> {
        self.totals.values()
    }

    /// Sets `invoices`, `cancelled_invoices` and `totals` on `view`.
    pub fn write_into(&self, view: &mut Value) {
        view["invoices"] = json!(self.invoices);
        view["cancelled_invoices"] = json!(self.cancelled);
        view["totals"] = json!(self.totals().collect::<Vec<_>>());
    }
}

/// Each listed counterparty of an entity with its tally, in RFC order, from invoices
/// handed one at a time with their counterparty's entry.
#[derive(Debug, Default)]
pub struct Exposures(BTreeMap<String, (Listed, Tally)>);

impl Exposures {
    pub fn add(&mut self, listed: &Listed, invoice: &FlaggedInvoice) {
        self.0
            .entry(listed.entry.rfc.clone())
            .or_insert_with(|| (listed.clone(), Tally::default()))
            .1
            .add(invoice);
    }

    /// Each counterparty's entry with its tally.
    pub fn views(&self) -> Vec<Value> {
        self.0
            .values()
            .map(|(listed, tally)| {
                let mut view = listed.view();
                tally.write_into(&mut view);
                view
            })
            .collect()
    }

    /// One line per counterparty and currency of the non-cancelled invoices, flat (the
    /// summary's `definitive_69b_issuers`, a sheet section too).
    pub fn lines(&self) -> Vec<Value> {
        let mut lines = vec![];
        for (listed, tally) in self.0.values() {
            let e = &listed.entry;
            let day = |d: Option<NaiveDate>| d.map(|d| d.format("%Y-%m-%d").to_string());
            for t in tally.totals() {
                lines.push(json!({
                    "tax_id": e.rfc, "name": e.name, "situation": e.situation.as_str(),
                    "definitive_sat": day(e.definitive.sat),
                    "definitive_dof": day(e.definitive.dof),
                    "list_version": listed.list_version,
                    "currency": t.currency, "count": t.count,
                    "subtotal": t.subtotal, "total": t.total,
                }));
            }
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn listed(rfc: &str, situation: Situation) -> Listed {
        Listed {
            entry: Entry {
                rfc: rfc.into(),
                name: format!("{rfc} SA"),
                situation,
                presumed: Published::default(),
                disproved: Published::default(),
                definitive: Published {
                    sat: NaiveDate::from_ymd_opt(2024, 9, 2),
                    dof: None,
                },
                favorable: Published::default(),
            },
            list_version: 7,
        }
    }

    fn invoice(direction: &str, currency: &str, subtotal: &str, total: &str) -> FlaggedInvoice {
        FlaggedInvoice {
            direction: direction.into(),
            currency: Some(currency.into()),
            subtotal: subtotal.parse().expect("decimal"),
            total: total.parse().expect("decimal"),
            cancelled: false,
        }
    }

    #[test]
    fn a_tally_sums_exactly_per_direction_and_currency_and_counts_cancelled_apart() {
        let mut tally = Tally::default();
        tally.add(&invoice("received", "MXN", "862.07", "1000.00"));
        tally.add(&invoice("received", "MXN", "0.1", "0.10"));
        tally.add(&invoice("received", "USD", "100", "116"));
        tally.add(&invoice("issued", "MXN", "10.005", "11.61"));
        let mut cancelled = invoice("received", "MXN", "5000", "5800");
        cancelled.cancelled = true;
        tally.add(&cancelled);
        assert_eq!((tally.invoices, tally.cancelled), (5, 1));
        let lines: Vec<_> = tally
            .totals()
            .map(|t| {
                (
                    t.direction.as_str(),
                    t.currency.as_deref(),
                    t.count,
                    t.subtotal.to_string(),
                    t.total.to_string(),
                )
            })
            .collect();
        // 862.07 + 0.1 = 862.17; 1000.00 + 0.10 = 1000.10 (scale kept, no float).
        assert_eq!(
            lines,
            [
                ("issued", Some("MXN"), 1, "10.005".into(), "11.61".into()),
                (
                    "received",
                    Some("MXN"),
                    2,
                    "862.17".into(),
                    "1000.10".into()
                ),
                ("received", Some("USD"), 1, "100".into(), "116".into()),
            ]
        );
    }

    #[test]
    fn exposures_group_by_counterparty_and_flatten_per_currency() {
        let mut all = Exposures::default();
        let (b, a) = (
            listed("BBB010101AAA", Situation::Presumed),
            listed("AAA010101AAA", Situation::Definitive),
        );
        all.add(&b, &invoice("issued", "MXN", "1", "1.16"));
        all.add(&a, &invoice("received", "MXN", "2", "2.32"));
        all.add(&a, &invoice("received", "USD", "3", "3.48"));
        all.add(&a, &invoice("received", "MXN", "4", "4.64"));
        let views = all.views();
        assert_eq!(views.len(), 2);
        assert_eq!(views[0]["tax_id"], json!("AAA010101AAA"), "RFC order");
        assert_eq!(views[0]["invoices"], json!(3));
        assert_eq!(views[0]["totals"][0]["total"].to_string(), "6.96");
        assert_eq!(
            views[0]["definitive"],
            json!({"sat": "2024-09-02", "dof": null})
        );
        assert_eq!(views[0]["list_version"], json!(7));
        let lines = all.lines();
        assert_eq!(lines.len(), 3, "A in MXN and USD, B in MXN");
        assert_eq!(lines[1]["currency"], json!("USD"));
        assert_eq!(lines[1]["definitive_sat"], json!("2024-09-02"));
        assert_eq!(lines[2]["tax_id"], json!("BBB010101AAA"));
    }
}
