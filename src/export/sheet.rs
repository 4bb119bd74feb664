//! What the CSV and XLSX writers have in common: a spreadsheet written row by row.

use super::columns::{Cell, Column};

pub(super) trait Sheet {
    fn header(&mut self, columns: &[Column]) -> anyhow::Result<()>;
    fn row(&mut self, cells: &[Cell]) -> anyhow::Result<()>;
    fn finish(self: Box<Self>) -> anyhow::Result<()>;
}
