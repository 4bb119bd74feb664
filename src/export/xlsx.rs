//! XLSX through rust_xlsxwriter in constant-memory mode: each row goes to a temporary
//! file as it is written, and the workbook is zipped straight into the output at the
//! end, so memory stays flat whatever the row count. Amounts are numbers; dates and
//! timestamps are date cells (`yyyy-mm-dd` / `yyyy-mm-dd hh:mm:ss`) holding the
//! wall-clock time as written, so a spreadsheet filters them by month. The accountant's
//! sheets (`sheet::Dress`) add a title, a frozen header with filters, column widths,
//! currency formats on amounts, day-first dates and bold totals below the rows.

use std::io::Write;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, Timelike};
use std::collections::HashMap;

use rust_xlsxwriter::{
    Color, ExcelDateTime, Format, FormatAlign, FormatBorder, Workbook, Worksheet, XlsxError,
};

use super::columns::Cell;
use super::sheet::{Head, Sheet};
use crate::format::is_pesos;

/// Rows per worksheet, Excel's limit; a longer export continues on the next sheet.
pub const MAX_ROWS: u32 = 1_048_576;
/// A number Excel holds exactly: at most 15 significant digits. Longer decimals are
/// written as text so no digit is lost.
const MAX_DIGITS: usize = 15;

pub struct XlsxSheet<W: Write + Send> {
    out: W,
    workbook: Workbook,
    head: Head,
    formats: Formats,
    /// The next row to write on the current sheet, and the first after its header.
    row: u32,
    first_data_row: u32,
    /// Whether the current sheet's filter is set (its data rows are all written).
    filtered: bool,
    max_rows: u32,
}

/// The cell formats of a workbook, made once.
struct Formats {
    /// The header of the API's sheet, and of the accountant's (wrapped, shaded, ruled).
    bold: Format,
    header: Format,
    dates: DateFormats,
    money: MoneyFormats,
    percent: Format,
}

/// A rate's format: a percentage with two to four decimals (`16.00%`, `10.6667%`).
pub(crate) const PERCENT: &str = "0.00##%";

/// The currency formats of amounts, one per currency and weight: `$#,##0.00` in pesos,
/// `$#,##0.00 "USD"` in another currency.
#[derive(Default)]
pub(crate) struct MoneyFormats(HashMap<(String, bool), Format>);

impl MoneyFormats {
    pub(crate) fn format(&mut self, currency: Option<&str>, bold: bool) -> &Format {
        let code = if is_pesos(currency) {
            String::new()
        } else {
            // A code is letters; anything else would break the format's quotes.
            currency
                .unwrap_or_default()
                .chars()
                .filter(|c| c.is_alphanumeric())
                .collect()
        };
        self.0
            .entry((code, bold))
            .or_insert_with_key(|(code, bold)| {
                let format = if code.is_empty() {
                    Format::new().set_num_format("$#,##0.00")
                } else {
                    Format::new().set_num_format(format!("$#,##0.00 \"{code}\""))
                };
                if *bold {
                    format.set_bold()
                } else {
                    format
                }
            })
    }
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
            head: Head {
                headers: Vec::new(),
                dress: None,
            },
            formats: Formats {
                bold: Format::new().set_bold(),
                header: Format::new()
                    .set_bold()
                    .set_text_wrap()
                    .set_align(FormatAlign::Top)
                    .set_background_color(Color::RGB(0xDD_EB_F7))
                    .set_border_bottom(FormatBorder::Thin),
                dates: DateFormats::default(),
                money: MoneyFormats::default(),
                percent: Format::new().set_num_format(PERCENT),
            },
            row: 0,
            first_data_row: 0,
            filtered: false,
            max_rows,
        }
    }

    /// The sheet being written.
    fn current(&mut self) -> anyhow::Result<&mut Worksheet> {
        let last = self.workbook.worksheets().len().saturating_sub(1);
        Ok(self.workbook.worksheet_from_index(last)?)
    }

    /// Starts a sheet (with the title and header) when there is none or the last is
    /// full.
    fn make_room(&mut self) -> anyhow::Result<()> {
        if !self.workbook.worksheets().is_empty() && self.row < self.max_rows {
            return Ok(());
        }
        self.close_sheet()?;
        let number = self.workbook.worksheets().len() + 1;
        let Formats { bold, header, .. } = &self.formats;
        let sheet = self.workbook.add_worksheet_with_constant_memory();
        let mut row = 0;
        match &self.head.dress {
            None => {
                for (col, name) in (0u16..).zip(&self.head.headers) {
                    sheet.write_string_with_format(0, col, *name, bold)?;
                }
            }
            Some(dress) => {
                sheet.set_name(sheet_name(&dress.sheet_name, number))?;
                for (col, width) in (0u16..).zip(&dress.widths) {
                    sheet.set_column_width(col, *width)?;
                }
                for line in &dress.title {
                    sheet.write_string_with_format(row, 0, line, bold)?;
                    row += 1;
                }
                if !dress.title.is_empty() {
                    row += 1;
                }
                for (col, name) in (0u16..).zip(&self.head.headers) {
                    sheet.write_string_with_format(row, col, *name, header)?;
                }
                // The header stays in view however far down the accountant scrolls.
                sheet.set_freeze_panes(row + 1, 0)?;
            }
        }
        self.first_data_row = row + 1;
        self.row = row + 1;
        self.filtered = false;
        Ok(())
    }

    /// Filters on the header of the accountant's sheet being closed, over its rows.
    fn close_sheet(&mut self) -> anyhow::Result<()> {
        if self.head.dress.is_none() || self.workbook.worksheets().is_empty() || self.filtered {
            return Ok(());
        }
        let (header, last) = (self.first_data_row - 1, self.row - 1);
        let columns = self.head.headers.len().max(1) as u16 - 1;
        self.current()?.autofilter(header, 0, last, columns)?;
        self.filtered = true;
        Ok(())
    }

    /// One row of cells at the current row; `bold` for the totals.
    fn write_row(&mut self, cells: &[Cell], bold: bool) -> anyhow::Result<()> {
        self.make_room()?;
        let row = self.row;
        let last = self.workbook.worksheets().len().saturating_sub(1);
        let sheet = self.workbook.worksheet_from_index(last)?;
        for (col, cell) in (0u16..).zip(cells) {
            write_cell(sheet, row, col, cell, &mut self.formats, bold)?;
        }
        self.row += 1;
        Ok(())
    }
}

/// The accountant's sheet `number` of a workbook: its name, then `(2)`, `(3)`... on the
/// sheets a long export continues on, within Excel's 31 characters.
fn sheet_name(name: &str, number: usize) -> String {
    let suffix = if number > 1 {
        format!(" ({number})")
    } else {
        String::new()
    };
    let room = 31 - suffix.chars().count();
    let base: String = name
        .chars()
        .filter(|c| !"[]:*?/\\".contains(*c))
        .take(room)
        .collect();
    let base = base.trim();
    format!("{}{suffix}", if base.is_empty() { "Hoja" } else { base })
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
    fn begin(&mut self, head: Head) -> anyhow::Result<()> {
        if head.dress.is_some() {
            self.formats.dates = DateFormats::day_first();
        }
        self.head = head;
        self.make_room()
    }

    fn row(&mut self, cells: &[Cell]) -> anyhow::Result<()> {
        self.write_row(cells, false)
    }

    fn totals(&mut self, rows: &[Vec<Cell>]) -> anyhow::Result<()> {
        // Apart from the data, below a blank row, so the header's filter leaves them out.
        self.close_sheet()?;
        self.make_room()?;
        self.row += 1;
        for cells in rows {
            self.write_row(cells, true)?;
        }
        Ok(())
    }

    fn finish(mut self: Box<Self>) -> anyhow::Result<()> {
        if self.workbook.worksheets().is_empty() {
            self.make_room()?;
        }
        self.close_sheet()?;
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
    formats: &mut Formats,
    bold: bool,
) -> Result<(), XlsxError> {
    match cell {
        Cell::Empty => {}
        Cell::Text(s) if bold => {
            sheet.write_string_with_format(row, col, *s, &formats.bold)?;
        }
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
        Cell::Money(n, currency) => match number(n) {
            Some(value) => {
                let format = formats.money.format(*currency, bold);
                sheet.write_number_with_format(row, col, value, format)?;
            }
            None => {
                sheet.write_string(row, col, n)?;
            }
        },
        Cell::Percent(n) => match number(n) {
            Some(value) => {
                sheet.write_number_with_format(row, col, value, &formats.percent)?;
            }
            None => {
                sheet.write_string(row, col, n)?;
            }
        },
        Cell::Bool(b) => {
            sheet.write_boolean(row, col, *b)?;
        }
        Cell::Date(s) => formats.dates.write(sheet, row, col, s)?,
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use calamine::{Data, Reader, Xlsx};

    fn plain(headers: &[&'static str]) -> Head {
        Head {
            headers: headers.to_vec(),
            dress: None,
        }
    }

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
        sheet.begin(plain(&["invoice_id"])).unwrap();
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
        sheet.begin(plain(&["a", "b", "c", "d", "e"])).unwrap();
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
