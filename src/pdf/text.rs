//! How values read on a printed page, for every document class: a missing value is a
//! dash, a SAT code carries its catalog's description (`01 - Efectivo`), an amount its
//! `$` and separators (`crate::format`), and a total its amount in words.

use super::{Canvas, Font, LEFT, RIGHT};
use crate::catalogs::{Catalog, Edition};
use crate::cfdi::Decimal;
use crate::format;

/// The value, or a dash when it is missing or empty.
pub(super) fn or_dash(value: Option<&str>) -> &str {
    value.filter(|v| !v.is_empty()).unwrap_or("-")
}

/// A code with its description (`G03 - Gastos en general`), an unknown one as written,
/// a missing one a dash.
pub(super) fn coded(catalog: Catalog, code: Option<&str>, edition: Edition) -> String {
    match code.filter(|c| !c.is_empty()) {
        Some(code) => catalog.label(code, edition),
        None => "-".to_owned(),
    }
}

/// An amount in `currency` (`$1,500.00 USD`), or a dash.
pub(super) fn money(value: Option<Decimal>, currency: Option<&str>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| format::money(v, currency))
}

/// An amount in pesos (`$1,500.00`), or a dash: what a table cell shows, its currency
/// stated once above it.
pub(super) fn pesos(value: Option<Decimal>) -> String {
    money(value, None)
}

/// Space between a label and its amount, in points.
const GAP: f32 = 12.0;
/// Line height of a 9 point row.
const ROW: f32 = 12.0;

impl Canvas {
    /// A label wrapped from `x` up to its amount, and the amount right-aligned at the
    /// right margin on its first line (drawn after that line, so the page's text reads
    /// label then amount).
    pub(super) fn amount_row(&mut self, font: Font, x: f32, label: &str, amount: &str) {
        let width = RIGHT - x - font.width(9.0, amount) - GAP;
        let lines = font.fit(9.0, label, width.max(GAP));
        self.room(ROW * lines.len() as f32);
        for (n, line) in lines.iter().enumerate() {
            self.text(font, 9.0, x, line);
            if n == 0 {
                self.text_right(font, 9.0, RIGHT, amount);
            }
            self.down(ROW);
        }
    }

    /// `label` in bold, then `amount` in words with its currency and cents, across the
    /// page: `Importe con letra: MIL CIENTO SESENTA PESOS 00/100 M.N.`.
    pub(super) fn in_words(&mut self, label: &str, amount: Decimal, currency: Option<&str>) {
        let words = format::amount_in_words(amount, currency);
        self.paragraph(Font::Regular, 9.0, LEFT, &format!("{label}: {words}"));
    }
}
