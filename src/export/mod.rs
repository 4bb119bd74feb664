//! Spreadsheet exports of invoices and of their concepts (line items), and of
//! retentions, with their list's filters, as CSV or XLSX. Rows are read a page at a
//! time with the list's keyset paging (a fresh connection per page, so an export never
//! pins one) and written as they come: memory stays flat whatever the number of rows.
//! Everything here blocks; the HTTP edge runs it on the heavy pool into a spool and
//! streams what it writes.

pub mod columns;
mod csv;
mod sheet;
pub mod spool;
pub(crate) mod xlsx;

use std::io::Write;

use serde_json::{json, Value};

use crate::db::{self, invoices::Filter, Db};
use columns::{Cell, Column};
use sheet::Sheet;

/// Invoices per page read from the database.
const PAGE: i64 = 500;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Csv,
    Xlsx,
}

impl Format {
    pub fn parse(text: &str) -> Option<Format> {
        match text.trim().to_ascii_lowercase().as_str() {
            "csv" => Some(Format::Csv),
            "xlsx" => Some(Format::Xlsx),
            _ => None,
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            Format::Csv => "csv",
            Format::Xlsx => "xlsx",
        }
    }

    pub fn media_type(self) -> &'static str {
        match self {
            Format::Csv => "text/csv; charset=utf-8",
            Format::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        }
    }
}

/// What one row of an export is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rows {
    Invoices,
    Items,
}

impl Rows {
    pub fn columns(self) -> &'static [Column] {
        match self {
            Rows::Invoices => columns::INVOICE,
            Rows::Items => columns::ITEM,
        }
    }

    pub fn file_stem(self) -> &'static str {
        match self {
            Rows::Invoices => "invoices",
            Rows::Items => "invoice-items",
        }
    }
}

/// Writes the organization's invoices matching `filter` (or their concepts) to `out`;
/// returns the number of rows written.
pub fn write<W: Write + Send>(
    db: &Db,
    org_id: &str,
    filter: &Filter,
    rows: Rows,
    format: Format,
    out: W,
) -> anyhow::Result<u64> {
    let mut sheet = open_sheet(format, out)?;
    let columns = rows.columns();
    sheet.header(columns)?;
    let mut written = 0u64;
    let mut emit = |row: &Value| -> anyhow::Result<()> {
        let cells: Vec<Cell> = columns.iter().map(|c| c.cell(row)).collect();
        sheet.row(&cells)?;
        written += 1;
        Ok(())
    };
    let mut after: Option<(String, String)> = None;
    loop {
        let conn = db.conn()?;
        let key = after.as_ref().map(|(at, id)| (at.as_str(), id.as_str()));
        let page = db::invoices::list(&conn, org_id, filter, key, PAGE)?;
        for invoice in &page {
            let view: Value = serde_json::from_str(&invoice.view)?;
            match rows {
                Rows::Invoices => emit(&view)?,
                Rows::Items => each_item(&conn, org_id, &invoice.id, |line, item| {
                    let taxes = columns::item_taxes(&item);
                    emit(&json!({"invoice": &view, "line": line, "item": item, "taxes": taxes}))
                })?,
            }
        }
        match page.last() {
            Some(last) if page.len() as i64 == PAGE => {
                after = Some((last.sort_at(filter.order).to_string(), last.id.clone()));
            }
            _ => break,
        }
    }
    sheet.finish()?;
    Ok(written)
}

fn open_sheet<'w, W: Write + Send + 'w>(
    format: Format,
    out: W,
) -> anyhow::Result<Box<dyn Sheet + 'w>> {
    Ok(match format {
        Format::Csv => Box::new(csv::CsvSheet::new(out)?),
        Format::Xlsx => Box::new(xlsx::XlsxSheet::new(out)),
    })
}

/// Writes the organization's retentions matching `filter` to `out` (the columns of
/// [`columns::RETENTION`]), a page at a time like invoices; returns the rows written.
pub fn write_retentions<W: Write + Send>(
    db: &Db,
    org_id: &str,
    filter: &db::retentions::Filter,
    format: Format,
    out: W,
) -> anyhow::Result<u64> {
    let mut sheet = open_sheet(format, out)?;
    let columns = columns::RETENTION;
    sheet.header(columns)?;
    let mut written = 0u64;
    let mut after: Option<(String, String)> = None;
    loop {
        let conn = db.conn()?;
        let key = after.as_ref().map(|(at, id)| (at.as_str(), id.as_str()));
        let page = db::retentions::list(&conn, org_id, filter, key, PAGE)?;
        for retention in &page {
            let row = columns::retention_row(serde_json::from_str(&retention.view)?);
            let cells: Vec<Cell> = columns.iter().map(|c| c.cell(&row)).collect();
            sheet.row(&cells)?;
            written += 1;
        }
        match page.last() {
            Some(last) if page.len() as i64 == PAGE => {
                let at = if filter.updated_order {
                    &last.updated_at
                } else {
                    &last.issued_at
                };
                after = Some((at.clone(), last.id.clone()));
            }
            _ => break,
        }
    }
    sheet.finish()?;
    Ok(written)
}

/// Calls `f` with each concept of an invoice and its 1-based position, a stored page
/// of concepts at a time.
fn each_item(
    conn: &crate::db::Conn,
    org_id: &str,
    invoice_id: &str,
    mut f: impl FnMut(usize, Value) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let mut start = 0;
    loop {
        let items = db::invoices::items(conn, org_id, invoice_id, start, db::invoices::ITEMS_PAGE)?
            .unwrap_or_default();
        let count = items.len();
        for (n, item) in (start + 1..).zip(items) {
            f(n, item)?;
        }
        if count < db::invoices::ITEMS_PAGE {
            return Ok(());
        }
        start += count;
    }
}
