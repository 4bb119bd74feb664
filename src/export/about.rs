//! What an accountant's file is about, said where the accountant looks: its name
//! (`facturas-AAA010101AAA-emitidas-2026-09.xlsx`), its sheet's (`Emitidas AAA010101AAA
//! 2026-09`), the title above its header and the labels of its totals.

use chrono::{Datelike, NaiveDate};

use super::accountant::Table;
use crate::domain::totals::Totals;
use crate::format::date_time;

/// The filters that say whose documents and which: the taxpayer (by RFC and name),
/// the direction, the period and the search. Each is optional: a file of every
/// taxpayer's documents says so.
#[derive(Debug, Default, Clone)]
pub struct About {
    pub tax_id: Option<String>,
    pub name: Option<String>,
    /// `issued` or `received`.
    pub direction: Option<String>,
    /// Dates (`2026-09-01`, invoices) or months (`2026-09`, retentions), as given.
    pub from: Option<String>,
    pub to: Option<String>,
    pub search: Option<String>,
}

impl About {
    fn direction(&self, capital: bool) -> Option<&'static str> {
        Some(match (self.direction.as_deref()?, capital) {
            ("issued", false) => "emitidas",
            ("issued", true) => "Emitidas",
            ("received", false) => "recibidas",
            ("received", true) => "Recibidas",
            _ => return None,
        })
    }

    /// The period in a few characters: a whole month `2026-09`, a whole year `2026`,
    /// else both ends (`2026-09-01_2026-09-15`); None when unbounded.
    fn period_short(&self) -> Option<String> {
        let (from, to) = (self.from.as_deref()?, self.to.as_deref()?);
        if from == to {
            return Some(from.to_owned());
        }
        let day = |t: &str| NaiveDate::parse_from_str(t, "%Y-%m-%d").ok();
        if let (Some(f), Some(t)) = (day(from), day(to)) {
            let month_end = f
                .checked_add_months(chrono::Months::new(1))
                .and_then(|next| next.pred_opt());
            if f.day() == 1 && Some(t) == month_end {
                return Some(f.format("%Y-%m").to_string());
            }
            if f.ordinal() == 1 && t.year() == f.year() && t.month() == 12 && t.day() == 31 {
                return Some(f.year().to_string());
            }
        }
        if from.len() == 7 && from.ends_with("-01") && to == format!("{}-12", &from[..4]) {
            return Some(from[..4].to_owned());
        }
        Some(format!("{from}_{to}"))
    }

    /// The file's name: the row kind's stem, the taxpayer's RFC, the direction and the
    /// period, as many as the filters give, in letters, digits and `-` only.
    pub fn file_name(&self, table: &Table, extension: &str) -> String {
        let mut parts = vec![table.file_stem.to_owned()];
        parts.extend(self.tax_id.as_deref().map(safe));
        parts.extend(self.direction(false).map(str::to_owned));
        parts.extend(self.period_short().map(|p| safe(&p)));
        format!("{}.{extension}", parts.join("-"))
    }

    /// The sheet's name: the direction (or what the rows are), the RFC and the period,
    /// leaving out from the end what does not fit Excel's 31 characters.
    pub fn sheet_name(&self, table: &Table) -> String {
        let mut parts: Vec<String> = vec![self.direction(true).unwrap_or(table.title).to_owned()];
        parts.extend(self.tax_id.clone());
        parts.extend(self.period_short());
        while parts.len() > 1 && parts.join(" ").chars().count() > 31 {
            parts.pop();
        }
        parts.join(" ")
    }

    /// The lines above the header: what, whose, which period, and the search.
    pub fn title(&self, table: &Table) -> Vec<String> {
        let what = match self.direction(false) {
            Some(direction) => format!("{} {direction}", table.title),
            None => format!("{} emitidas y recibidas", table.title),
        };
        let whose = match (&self.tax_id, &self.name) {
            (Some(rfc), Some(name)) => format!("{rfc} · {name}"),
            (Some(rfc), None) => rfc.clone(),
            _ => "todos los contribuyentes".to_owned(),
        };
        let shown = |t: &str| match t.len() {
            7 => format!("{}/{}", &t[5..], &t[..4]),
            _ => date_time(t),
        };
        let period = match (self.from.as_deref(), self.to.as_deref()) {
            (Some(f), Some(t)) => format!("Periodo: del {} al {}", shown(f), shown(t)),
            (Some(f), None) => format!("Periodo: desde el {}", shown(f)),
            (None, Some(t)) => format!("Periodo: hasta el {}", shown(t)),
            (None, None) => "Periodo: todas las fechas".to_owned(),
        };
        let mut lines = vec![format!("{what} de {whose}"), period];
        if let Some(search) = &self.search {
            lines.push(format!("Búsqueda: «{search}»"));
        }
        lines
    }

    /// Each totals row's label, in `totals.groups()`' order: `Total MXN (12 facturas)`;
    /// one `Total (0 facturas)` when nothing matched.
    pub fn labels(&self, table: &Table, totals: &Totals) -> Vec<String> {
        let count = |n: u64| match n {
            1 => format!("1 {}", table.noun.0),
            n => format!("{n} {}", table.noun.1),
        };
        let groups = totals.groups();
        if groups.is_empty() {
            return vec![format!("Total ({})", count(0))];
        }
        groups
            .into_iter()
            .map(
                |(currency, group)| match currency.filter(|_| table.currency.is_some()) {
                    Some(c) => format!("Total {c} ({})", count(group.count)),
                    None => format!("Total ({})", count(group.count)),
                },
            )
            .collect()
    }
}

/// Text for a file name: ASCII letters, digits, `-` and `_`; anything else (an RFC's
/// `Ñ` or `&`) becomes `_`.
fn safe(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | '-' | '_' => c,
            _ => '_',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::accountant::{INVOICES, RETENTIONS};
    use super::*;

    fn about(direction: Option<&str>, from: Option<&str>, to: Option<&str>) -> About {
        About {
            tax_id: Some("AAA010101AAA".into()),
            name: Some("COMERCIALIZADORA DEMO".into()),
            direction: direction.map(Into::into),
            from: from.map(Into::into),
            to: to.map(Into::into),
            search: None,
        }
    }

    #[test]
    fn names_say_whose_which_direction_and_period() {
        let a = about(Some("issued"), Some("2026-09-01"), Some("2026-09-30"));
        assert_eq!(
            a.file_name(&INVOICES, "xlsx"),
            "facturas-AAA010101AAA-emitidas-2026-09.xlsx"
        );
        assert_eq!(a.sheet_name(&INVOICES), "Emitidas AAA010101AAA 2026-09");
        assert_eq!(
            a.title(&INVOICES),
            [
                "Facturas emitidas de AAA010101AAA · COMERCIALIZADORA DEMO",
                "Periodo: del 01/09/2026 al 30/09/2026"
            ]
        );
        let b = about(Some("received"), Some("2026-09-01"), Some("2026-09-15"));
        assert_eq!(
            b.file_name(&INVOICES, "csv"),
            "facturas-AAA010101AAA-recibidas-2026-09-01_2026-09-15.csv"
        );
        // The period does not fit the sheet's 31 characters: the title has it.
        assert_eq!(b.sheet_name(&INVOICES), "Recibidas AAA010101AAA");
        let year = about(None, Some("2026-01-01"), Some("2026-12-31"));
        assert_eq!(year.sheet_name(&INVOICES), "Facturas AAA010101AAA 2026");
        let months = about(Some("received"), Some("2026-01"), Some("2026-12"));
        assert_eq!(
            months.file_name(&RETENTIONS, "xlsx"),
            "retenciones-AAA010101AAA-recibidas-2026.xlsx"
        );
        assert_eq!(
            months.title(&RETENTIONS)[1],
            "Periodo: del 01/2026 al 12/2026"
        );
        let all = About::default();
        assert_eq!(all.file_name(&INVOICES, "csv"), "facturas.csv");
        assert_eq!(all.sheet_name(&INVOICES), "Facturas");
        assert_eq!(
            all.title(&INVOICES),
            [
                "Facturas emitidas y recibidas de todos los contribuyentes",
                "Periodo: todas las fechas"
            ]
        );
        let odd = About {
            tax_id: Some("E&Ñ831019M53".into()),
            ..About::default()
        };
        assert_eq!(odd.file_name(&INVOICES, "csv"), "facturas-E__831019M53.csv");
    }

    #[test]
    fn totals_are_labelled_by_currency_and_count() {
        let mut totals = Totals::new(&["Total"]);
        let a = About::default();
        assert_eq!(a.labels(&INVOICES, &totals), ["Total (0 facturas)"]);
        totals.add(Some("MXN"), &[None]);
        totals.add(Some("USD"), &[None]);
        totals.add(Some("MXN"), &[None]);
        assert_eq!(
            a.labels(&INVOICES, &totals),
            ["Total MXN (2 facturas)", "Total USD (1 factura)"]
        );
        let mut pesos = Totals::new(&["Total"]);
        pesos.add(Some("MXN"), &[None]);
        assert_eq!(a.labels(&RETENTIONS, &pesos), ["Total (1 constancia)"]);
    }
}
