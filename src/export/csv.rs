//! CSV: UTF-8 with a byte-order mark (so spreadsheets read accents and Ñ as UTF-8),
//! RFC 4180 (comma separated, CRLF line ends, fields quoted when they hold a comma,
//! a quote or a line break, quotes doubled), every value as its text.

use std::io::Write;

use super::columns::{Cell, Column};
use super::Sheet;

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

pub struct CsvSheet<W: Write> {
    out: csv::Writer<W>,
}

impl<W: Write> CsvSheet<W> {
    pub fn new(mut out: W) -> anyhow::Result<Self> {
        out.write_all(UTF8_BOM)?;
        let out = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(out);
        Ok(CsvSheet { out })
    }
}

impl<W: Write> Sheet for CsvSheet<W> {
    fn header(&mut self, columns: &[Column]) -> anyhow::Result<()> {
        Ok(self.out.write_record(columns.iter().map(|c| c.name))?)
    }

    fn row(&mut self, cells: &[Cell]) -> anyhow::Result<()> {
        for cell in cells {
            match cell {
                Cell::Empty => self.out.write_field("")?,
                Cell::Text(s) => self.out.write_field(s)?,
                Cell::Number(n) => self.out.write_field(n)?,
                Cell::Bool(b) => self.out.write_field(if *b { "true" } else { "false" })?,
            }
        }
        Ok(self.out.write_record(None::<&[u8]>)?)
    }

    fn finish(self: Box<Self>) -> anyhow::Result<()> {
        let mut out = self.out.into_inner().map_err(|e| e.into_error())?;
        Ok(out.flush()?)
    }
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
}
