//! Spreadsheet exports of any document class with its list's filters, as CSV or XLSX,
//! written once for every class: a class's row kinds (`Rows`: invoices, their concepts,
//! retentions) name its columns and how a document becomes rows. Rows are read a page at a
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

use crate::db::{self, classes::Stored, Conn, Db};
use crate::domain::class::{InvoiceClass, RetentionClass};
use columns::{Cell, Column};
use sheet::Sheet;
use std::marker::PhantomData;

/// Documents per page read from the database.
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

/// Where each row of an export goes: called once per row, in the list's order.
type Emit<'e> = &'e mut dyn FnMut(&Value) -> anyhow::Result<()>;

/// A row kind of an export: a class's documents, each written as one row (or one per
/// concept) with these columns.
pub struct Rows<C: Stored> {
    pub columns: &'static [Column],
    pub file_stem: &'static str,
    /// Turns one document's view into its rows.
    expand: fn(&Conn, &str, Value, Emit) -> anyhow::Result<()>,
    class: PhantomData<C>,
}

/// One row per invoice: the list's invoice object.
pub const INVOICES: Rows<InvoiceClass> = Rows {
    columns: columns::INVOICE,
    file_stem: "invoices",
    expand: |_, _, view, emit| emit(&view),
    class: PhantomData,
};

/// One row per concept of each invoice, with the invoice's identity.
pub const ITEMS: Rows<InvoiceClass> = Rows {
    columns: columns::ITEM,
    file_stem: "invoice-items",
    expand: |conn, org_id, view, emit| {
        let id = view["id"].as_str().unwrap_or_default().to_string();
        each_item(conn, org_id, &id, |line, item| {
            let taxes = columns::item_taxes(&item);
            emit(&json!({"invoice": &view, "line": line, "item": item, "taxes": taxes}))
        })
    },
    class: PhantomData,
};

/// One row per retention, its withheld taxes added up by tax.
pub const RETENTIONS: Rows<RetentionClass> = Rows {
    columns: columns::RETENTION,
    file_stem: "retentions",
    expand: |_, _, view, emit| emit(&columns::retention_row(view)),
    class: PhantomData,
};

/// Writes the organization's documents of a class matching `filter` to `out`, as
/// `rows` lays them out; returns the number of rows written.
pub fn write<C: Stored, W: Write + Send>(
    db: &Db,
    org_id: &str,
    filter: &C::Filter,
    rows: &Rows<C>,
    format: Format,
    out: W,
) -> anyhow::Result<u64> {
    let mut sheet = open_sheet(format, out)?;
    let columns = rows.columns;
    sheet.header(columns)?;
    let mut written = 0u64;
    let mut emit = |row: &Value| -> anyhow::Result<()> {
        let cells: Vec<Cell> = columns.iter().map(|c| c.cell(row)).collect();
        sheet.row(&cells)?;
        written += 1;
        Ok(())
    };
    let order = C::order(filter);
    let mut after: Option<(String, String)> = None;
    loop {
        let conn = db.conn()?;
        let key = after.as_ref().map(|(at, id)| (at.as_str(), id.as_str()));
        let page = C::list(&conn, org_id, filter, key, PAGE)?;
        for document in &page {
            (rows.expand)(
                &conn,
                org_id,
                serde_json::from_str(&document.view)?,
                &mut emit,
            )?;
        }
        match page.last() {
            Some(last) if page.len() as i64 == PAGE => {
                after = Some((last.sort_at(order).to_string(), last.id.clone()));
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

/// Calls `f` with each concept of an invoice and its 1-based position, a stored page
/// of concepts at a time.
fn each_item(
    conn: &Conn,
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
