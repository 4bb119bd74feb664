//! XLSX through rust_xlsxwriter in constant-memory mode: each row goes to a temporary
//! file as it is written, and the workbook is zipped straight into the output at the
//! end, so memory stays flat whatever the row count. Amounts are numbers; dates and
//! timestamps are date cells (`yyyy-mm-dd` / `yyyy-mm-dd hh:mm:ss`) holding the
//! wall-clock time as written, so a spreadsheet filters them by month.

use std::io::Write;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike};
use rust_xlsxwriter::{ExcelDateTime, Format, Workbook, Worksheet, XlsxError};

use super::columns::{Cell, Column};
use super::sheet::Sheet;

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
    dates: DateFormats,
    row: u32,
    max_rows: u32,
}

/// The number formats of date cells: a day, and a day with its time.
pub(crate) struct DateFormats {
    day: Format,
    time: Format,
}

impl Default for DateFormats {
    fn default() -> Self {
        DateFormats {
            day: Format::new().set_num_format("yyyy-mm-dd"),
            time: Format::new().set_num_format("yyyy-mm-dd hh:mm:ss"),
        }
    }
}

impl DateFormats {
    /// Day first, as Mexico writes dates (`dd/mm/yyyy`, `dd/mm/yyyy hh:mm:ss`): the
    /// accountant's sheets.
    pub(crate) fn day_first() -> Self {
        DateFormats {
            day: Format::new().set_num_format("dd/mm/yyyy"),
            time: Format::new().set_num_format("dd/mm/yyyy hh:mm:ss"),
        }
    }

    /// `text` as a date cell when it is a date or timestamp Excel can hold (years 1900
    /// to 9999), else as text: nothing written is lost.
    pub(crate) fn write(
        &self,
        sheet: &mut Worksheet,
        row: u32,
        col: u16,
        text: &str,
    ) -> Result<(), XlsxError> {
        match excel_date(text) {
            Some((date, true)) => sheet.write_datetime_with_format(row, col, date, &self.time)?,
            Some((date, false)) => sheet.write_datetime_with_format(row, col, date, &self.day)?,
            None => sheet.write_string(row, col, text)?,
        };
        Ok(())
    }
}

/// A date (`2025-01-24`) or a timestamp (`2025-01-24T10:10:41`, with fractions of a
/// second or an offset as RFC 3339 writes them) as Excel's date, and whether it has a
/// time. The wall-clock time is kept as written: Excel has no time zones.
fn excel_date(text: &str) -> Option<(ExcelDateTime, bool)> {
    let text = text.trim();
    let at = NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .or_else(|| {
            DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|t| t.naive_local())
        });
    let (day, time) = match at {
        Some(at) => (at.date(), Some(at.time())),
        None => (NaiveDate::parse_from_str(text, "%Y-%m-%d").ok()?, None),
    };
    let year = u16::try_from(day.year()).ok()?;
    let date = ExcelDateTime::from_ymd(year, day.month() as u8, day.day() as u8).ok()?;
    match time {
        None => Some((date, false)),
        Some(t) => {
            let seconds = f64::from(t.second()) + f64::from(t.nanosecond()) / 1e9;
            let date = date
                .and_hms(t.hour() as u16, t.minute() as u8, seconds)
                .ok()?;
            Some((date, true))
        }
    }
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
            dates: DateFormats::default(),
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
        let last = self.workbook.worksheets().len().saturating_sub(1);
        let sheet = self.workbook.worksheet_from_index(last)?;
        for (col, cell) in (0u16..).zip(cells) {
            write_cell(sheet, row, col, cell, &self.dates)?;
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

fn write_cell(
    sheet: &mut Worksheet,
    row: u32,
    col: u16,
    cell: &Cell,
    dates: &DateFormats,
) -> Result<(), XlsxError> {
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
        Cell::Date(s) => dates.write(sheet, row, col, s)?,
    }
    Ok(())
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

    #[test]
    fn dates_and_timestamps_are_date_cells_and_anything_else_stays_text() {
        let mut buf = Vec::new();
        let mut sheet = Box::new(XlsxSheet::new(&mut buf));
        sheet.header(&super::super::columns::INVOICE[..5]).unwrap();
        sheet
            .row(&[
                Cell::Date("2025-01-24T10:10:41"),
                Cell::Date("2025-01-24"),
                Cell::Date("2026-03-01T12:00:00.5Z"),
                Cell::Date("24/01/2025"),
                Cell::Date("+10000-01-01"),
            ])
            .unwrap();
        sheet.finish().unwrap();
        let mut book = Xlsx::new(std::io::Cursor::new(buf)).unwrap();
        let range = book.worksheet_range("Sheet1").unwrap();
        let row: Vec<Data> = range.rows().nth(1).unwrap().to_vec();
        // Excel's serial: days since 1899-12-30, the time as the fraction of a day.
        let serial = |cell: &Data| match cell {
            Data::DateTime(d) => d.as_f64(),
            other => panic!("not a date cell: {other:?}"),
        };
        let close = |a: f64, b: f64| assert!((a - b).abs() < 1e-9, "{a} != {b}");
        close(serial(&row[0]), 45681.0 + 36641.0 / 86400.0); // 10:10:41
        close(serial(&row[1]), 45681.0);
        close(serial(&row[2]), 46082.5 + 0.5 / 86400.0);
        assert_eq!(row[3], Data::String("24/01/2025".into()));
        assert_eq!(row[4], Data::String("+10000-01-01".into()));
    }
}
