//! CSV: UTF-8 with a byte-order mark (so spreadsheets read accents and Ñ as UTF-8),
//! RFC 4180 (comma separated, CRLF line ends, fields quoted when they hold a comma,
//! a quote or a line break, quotes doubled), every value as its text: amounts as their
//! exact decimal digits; in the accountant's layout dates day first and rates as
//! percentages (`16%`), its totals after an empty line.
//!
//! Text that a spreadsheet would read as a formula (starting with `=`, `+`, `-`, `@`,
//! a tab or a carriage return, e.g. a supplier named `=HYPERLINK(...)`) gets a leading
//! `'`, as OWASP advises for CSV injection. So does each part of a text after a `;`:
//! spreadsheets set to split on semicolons (Excel in Spanish) start a cell there, and
//! RFC 4180 quoting (for commas) does not protect it. Amounts are never text here
//! (they are written as numbers), so a negative amount stays a number.

use std::io::Write;

use super::columns::Cell;
use super::sheet::{Head, Sheet};
use crate::format::{date_time, percent};

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

pub struct CsvSheet<W: Write> {
    /// None only while the totals' empty line is written under it.
    out: Option<csv::Writer<W>>,
    /// Dates day first (`30/09/2026 12:43:36`), as the accountant's sheets write them.
    day_first: bool,
}

impl<W: Write> CsvSheet<W> {
    pub fn new(mut out: W) -> anyhow::Result<Self> {
        out.write_all(UTF8_BOM)?;
        Ok(CsvSheet {
            out: Some(writer(out)),
            day_first: false,
        })
    }

    fn out(&mut self) -> anyhow::Result<&mut csv::Writer<W>> {
        self.out
            .as_mut()
            .ok_or_else(|| anyhow::anyhow!("the CSV writer is gone"))
    }
}

fn writer<W: Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .terminator(csv::Terminator::CRLF)
        .from_writer(out)
}

impl<W: Write> Sheet for CsvSheet<W> {
    fn begin(&mut self, head: Head) -> anyhow::Result<()> {
        self.day_first = head.dress.is_some();
        Ok(self.out()?.write_record(&head.headers)?)
    }

    fn row(&mut self, cells: &[Cell]) -> anyhow::Result<()> {
        let day_first = self.day_first;
        let out = self.out()?;
        for cell in cells {
            match cell {
                Cell::Empty => out.write_field("")?,
                Cell::Date(s) if day_first => out.write_field(defuse(&date_time(s)).as_ref())?,
                Cell::Text(s) | Cell::Date(s) => out.write_field(defuse(s).as_ref())?,
                Cell::Number(n) | Cell::Money(n, _) => out.write_field(n)?,
                Cell::Percent(n) => match n.parse() {
                    Ok(rate) => out.write_field(percent(rate))?,
                    Err(_) => out.write_field(defuse(n).as_ref())?,
                },
                Cell::Bool(b) => out.write_field(if *b { "true" } else { "false" })?,
            }
        }
        Ok(out.write_record(None::<&[u8]>)?)
    }

    /// After an empty line (written under the CSV writer: it would quote an empty record).
    fn totals(&mut self, rows: &[Vec<Cell>]) -> anyhow::Result<()> {
        let out = self
            .out
            .take()
            .ok_or_else(|| anyhow::anyhow!("the CSV writer is gone"))?;
        let mut inner = out.into_inner().map_err(|e| e.into_error())?;
        inner.write_all(b"\r\n")?;
        self.out = Some(writer(inner));
        for cells in rows {
            self.row(cells)?;
        }
        Ok(())
    }

    fn finish(self: Box<Self>) -> anyhow::Result<()> {
        let out = self
            .out
            .ok_or_else(|| anyhow::anyhow!("the CSV writer is gone"))?;
        let mut out = out.into_inner().map_err(|e| e.into_error())?;
        Ok(out.flush()?)
    }
}

/// Whether a spreadsheet opening the CSV would take the text for a formula.
fn is_formula_like(text: &str) -> bool {
    text.starts_with(['=', '+', '-', '@', '\t', '\r'])
}

/// `text` with an apostrophe before the field and before each part after a `;` that a
/// spreadsheet would take for a formula; unchanged (not copied) when none would.
fn defuse(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.split(';').any(is_formula_like) {
        return text.into();
    }
    let parts: Vec<String> = text
        .split(';')
        .map(|part| match is_formula_like(part) {
            true => format!("'{part}"),
            false => part.to_owned(),
        })
        .collect();
    parts.join(";").into()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn quotes_only_what_rfc_4180_needs_with_crlf_and_a_bom() {
        let mut buf = Vec::new();
        let mut sheet = Box::new(CsvSheet::new(&mut buf).unwrap());
        sheet
            .row(&[
                Cell::Text("Ñandú, S.A."),
                Cell::Text("say \"hi\""),
                Cell::Text("two\nlines"),
                Cell::Number("1000.00".into()),
                Cell::Empty,
                Cell::Bool(true),
            ])
            .unwrap();
        sheet.finish().unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "\u{feff}\"Ñandú, S.A.\",\"say \"\"hi\"\"\",\"two\nlines\",1000.00,,true\r\n"
        );
    }

    #[test]
    fn text_that_looks_like_a_formula_gets_an_apostrophe_but_numbers_never() {
        let mut buf = Vec::new();
        let mut sheet = Box::new(CsvSheet::new(&mut buf).unwrap());
        sheet
            .row(&[
                Cell::Text("=HYPERLINK(\"http://x\",\"y\")"),
                Cell::Text("+1"),
                Cell::Text("-2"),
                Cell::Text("@SUM(A1)"),
                Cell::Text("\tx"),
                Cell::Text("\rx"),
                Cell::Text("a=b"),
                Cell::Text("Renta;=HYPERLINK(\"x\");+1; -2"),
                Cell::Text("a;b"),
                Cell::Number("-5.00".into()),
            ])
            .unwrap();
        sheet.finish().unwrap();
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            "\u{feff}\"'=HYPERLINK(\"\"http://x\"\",\"\"y\"\")\",'+1,'-2,'@SUM(A1),'\tx,\"'\rx\",a=b,\"Renta;'=HYPERLINK(\"\"x\"\");'+1; -2\",a;b,-5.00\r\n"
        );
    }
}
