//! What the CSV and XLSX writers have in common: a spreadsheet written row by row, with
//! its header first and, in the accountant's layout, its totals last.

use super::columns::Cell;

/// What a sheet says before its rows.
pub(super) struct Head {
    pub headers: Vec<&'static str>,
    /// The accountant's presentation; None for the plain sheet API clients read.
    pub dress: Option<Dress>,
}

/// The accountant's presentation of an XLSX (CSV has none of it): a sheet named for
/// what it holds, title lines above the header, a header that stays in view and
/// filters, and columns as wide as their content usually is.
pub(super) struct Dress {
    /// At most 31 characters, none of `[]:*?/\`: Excel's rules for a sheet's name.
    pub sheet_name: String,
    pub title: Vec<String>,
    /// Each column's width, in characters.
    pub widths: Vec<f64>,
}

pub(super) trait Sheet {
    fn begin(&mut self, head: Head) -> anyhow::Result<()>;
    fn row(&mut self, cells: &[Cell]) -> anyhow::Result<()>;
    /// Rows after the data, set apart from it: the totals.
    fn totals(&mut self, rows: &[Vec<Cell>]) -> anyhow::Result<()>;
    fn finish(self: Box<Self>) -> anyhow::Result<()>;
}
