//! XLSX through rust_xlsxwriter in constant-memory mode: each row goes to a temporary
//! file as it is written, and the workbook is zipped straight into the output at the
//! end, so memory stays flat whatever the row count. Amounts are numbers; dates stay
//! text as the API writes them.

use std::io::Write;

use rust_xlsxwriter::{Format, Workbook, Worksheet};

use super::columns::{Cell, Column};
use super::Sheet;

/// Rows per worksheet, Excel's limit; a longer export continues on the next sheet.
pub const MAX_ROWS: u32 = 1_048_576;
/// A number Excel holds exactly: at most 15 significant digits. Longer decimals are
/// written as text so no digit is lost.
const MAX_DIGITS: usize = 15;

pub struct XlsxSheet<W: Write + Send> {
    out: W,
    workbook: Workbook,
    header: Vec<&'static str>,
    bold: Format,
    row: u32,
    max_rows: u32,
}

impl<W: Write + Send> XlsxSheet<W> {
    pub fn new(out: W) -> Self {
        Self::with_max_rows(out, MAX_ROWS)
    }

    fn with_max_rows(out: W, max_rows: u32) -> Self {
        XlsxSheet {
            out,
            workbook: Workbook::new(),
            header: Vec::new(),
            bold: Format::new().set_bold(),
            row: 0,
            max_rows,
        }
    }

    /// Starts a sheet (with the header) when there is none or the last is full.
    fn make_room(&mut self) -> anyhow::Result<()> {
        if self.workbook.worksheets().is_empty() || self.row == self.max_rows {
            let sheet = self.workbook.add_worksheet_with_constant_memory();
            for (col, name) in (0u16..).zip(&self.header) {
                sheet.write_string_with_format(0, col, *name, &self.bold)?;
            }
            self.row = 1;
        }
        Ok(())
    }

    fn current(&mut self) -> anyhow::Result<&mut Worksheet> {
        let last = self.workbook.worksheets().len().saturating_sub(1);
        Ok(self.workbook.worksheet_from_index(last)?)
    }
}

/// The decimal text as an f64 when that is exact to Excel's precision.
pub(crate) fn number(text: &str) -> Option<f64> {
    let digits = text
        .trim_start_matches(['-', '0', '.'])
        .chars()
        .filter(char::is_ascii_digit)
        .count();
    (digits <= MAX_DIGITS).then(|| text.parse().ok()).flatten()
}

impl<W: Write + Send> Sheet for XlsxSheet<W> {
    fn header(&mut self, columns: &[Column]) -> anyhow::Result<()> {
        self.header = columns.iter().map(|c| c.name).collect();
        self.make_room()
    }

    fn row(&mut self, cells: &[Cell]) -> anyhow::Result<()> {
        self.make_room()?;
        let row = self.row;
        let sheet = self.current()?;
        for (col, cell) in (0u16..).zip(cells) {
            match cell {
                Cell::Empty => {}
                Cell::Text(s) => {
                    sheet.write_string(row, col, *s)?;
                }
                Cell::Number(n) => match number(n) {
                    Some(value) => {
                        sheet.write_number(row, col, value)?;
                    }
                    None => {
                        sheet.write_string(row, col, n)?;
                    }
                },
                Cell::Bool(b) => {
                    sheet.write_boolean(row, col, *b)?;
                }
            }
        }
        self.row += 1;
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<()> {
        if self.workbook.worksheets().is_empty() {
            self.make_room()?;
        }
        let XlsxSheet {
            mut out,
            mut workbook,
            ..
        } = *self;
        workbook.save_to_writer(&mut out)?;
        Ok(out.flush()?)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use calamine::{Data, Reader, Xlsx};

    #[test]
    fn only_decimals_excel_holds_exactly_become_numbers() {
        assert_eq!(number("1000.00"), Some(1000.0));
        assert_eq!(number("-0.000123"), Some(-0.000123));
        assert_eq!(number("123456789012345"), Some(123456789012345.0));
        assert_eq!(number("1234567890123.456"), None);
        assert_eq!(number("abc"), None);
    }

    #[test]
    fn a_full_sheet_continues_on_the_next_with_the_header() {
        let mut buf = Vec::new();
        let mut sheet = Box::new(XlsxSheet::with_max_rows(&mut buf, 3));
        sheet.header(&super::super::columns::ITEM[..1]).unwrap();
        for n in 0..5 {
            sheet.row(&[Cell::Number(n.to_string())]).unwrap();
        }
        sheet.finish().unwrap();
        let mut book = Xlsx::new(std::io::Cursor::new(buf)).unwrap();
        let names = book.sheet_names();
        assert_eq!(names.len(), 3);
        let mut column = |name: &str| -> Vec<Data> {
            let range = book.worksheet_range(name).unwrap();
            range.rows().map(|r| r[0].clone()).collect()
        };
        let header = Data::String("invoice_id".into());
        assert_eq!(
            column(&names[0]),
            vec![header.clone(), Data::Float(0.0), Data::Float(1.0)]
        );
        assert_eq!(column(&names[2]), vec![header, Data::Float(4.0)]);
    }
}
