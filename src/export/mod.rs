//! Spreadsheet exports of any document class with its list's filters, as CSV or XLSX,
//! written once for every class: a class's row kinds (`Rows`: invoices, their concepts,
//! retentions) name its columns and how a document becomes rows, in two layouts: the
//! documented columns API clients read, and the accountant's (`accountant.rs`: Spanish,
//! codes described, amounts in currency formats, totals per currency, a file named for
//! what it holds, `about.rs`). Rows are read a page at a
//! time with the list's keyset paging (a fresh connection per page, so an export never
//! pins one) and written as they come: memory stays flat whatever the number of rows.
//! Everything here blocks; the HTTP edge runs it on the heavy pool into a spool and
//! streams what it writes.

mod about;
pub mod accountant;
pub mod columns;
mod csv;
mod sheet;
pub mod spool;
pub(crate) mod xlsx;

use std::io::Write;

use serde_json::{json, Value};

use crate::db::{self, classes::Stored, Conn, Db};
use crate::domain::class::{InvoiceClass, RetentionClass};
use crate::domain::totals::{sum_or_zero, Totals};
pub use about::About;
use accountant::Table;
use columns::{Cell, Column};
use sheet::{Dress, Head, Sheet};
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

/// Who a file is laid out for (`layout`): API clients, with the documented columns
/// (the default), or an accountant (`accountant.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Api,
    Accountant,
}

impl Layout {
    pub const WIRE: &'static [&'static str] = &["api", "accountant"];

    pub fn parse(text: &str) -> Option<Layout> {
        match text.trim().to_ascii_lowercase().as_str() {
            "api" => Some(Layout::Api),
            "accountant" => Some(Layout::Accountant),
            _ => None,
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
    /// The same rows as the accountant reads them.
    pub accountant: &'static Table,
    /// What the accountant's rows add to a page of views (what an invoice's credit
    /// notes take off it), before they are expanded.
    enrich: fn(&Conn, &str, &mut [Value]) -> anyhow::Result<()>,
    /// Turns one document's view into its rows.
    expand: fn(&Conn, &str, Value, Emit) -> anyhow::Result<()>,
    class: PhantomData<C>,
}

/// One row per invoice: the list's invoice object.
pub const INVOICES: Rows<InvoiceClass> = Rows {
    columns: columns::INVOICE,
    file_stem: "invoices",
    accountant: &accountant::INVOICES,
    enrich: credits,
    expand: |_, _, view, emit| emit(&view),
    class: PhantomData,
};

/// One row per concept of each invoice, with the invoice's identity.
pub const ITEMS: Rows<InvoiceClass> = Rows {
    columns: columns::ITEM,
    file_stem: "invoice-items",
    accountant: &accountant::ITEMS,
    enrich: |_, _, _| Ok(()),
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
    accountant: &accountant::RETENTIONS,
    enrich: |_, _, _| Ok(()),
    expand: |_, _, view, emit| emit(&columns::retention_row(view)),
    class: PhantomData,
};

/// Each invoice's `credited_amount` and `balance_after_credits`, as its single read
/// shows them (the list's view has neither).
fn credits(conn: &Conn, org_id: &str, views: &mut [Value]) -> anyhow::Result<()> {
    let ids: Vec<&str> = views.iter().filter_map(|v| v["id"].as_str()).collect();
    let credits = db::invoices::credits_of(conn, org_id, &ids)?;
    let number = |d: rust_decimal::Decimal| serde_json::from_str(&d.to_string());
    for view in views.iter_mut() {
        let id = view["id"].as_str().unwrap_or_default();
        if let Some((credited, left)) = credits.get(id).copied() {
            view["credited_amount"] = number(credited)?;
            view["balance_after_credits"] = left.map(number).transpose()?.unwrap_or_default();
        }
    }
    Ok(())
}

/// Writes the organization's documents of a class matching `filter` to `out`, as
/// `rows` lays them out for `layout` (`about` names them in the accountant's title and
/// sheet); returns the number of rows written.
#[allow(clippy::too_many_arguments)]
pub fn write<C: Stored, W: Write + Send>(
    db: &Db,
    org_id: &str,
    filter: &C::Filter,
    rows: &Rows<C>,
    layout: Layout,
    about: &About,
    format: Format,
    out: W,
) -> anyhow::Result<u64> {
    let mut sheet = open_sheet(format, out)?;
    let table = rows.accountant;
    let accountant = layout == Layout::Accountant;
    sheet.begin(match layout {
        Layout::Api => Head {
            headers: rows.columns.iter().map(|c| c.name).collect(),
            dress: None,
        },
        Layout::Accountant => Head {
            headers: table.columns.iter().map(|c| c.header).collect(),
            dress: Some(Dress {
                sheet_name: about.sheet_name(table),
                title: about.title(table),
                widths: table.columns.iter().map(|c| c.width).collect(),
            }),
        },
    })?;
    let mut totals = Totals::new(&table.summed());
    let mut written = 0u64;
    let mut emit = |row: &Value| -> anyhow::Result<()> {
        if accountant {
            totals.add(table.currency(row), &table.amounts(row));
            sheet.row(&table.cells(row))?;
        } else {
            let cells: Vec<Cell> = rows.columns.iter().map(|c| c.cell(row)).collect();
            sheet.row(&cells)?;
        }
        written += 1;
        Ok(())
    };
    let order = C::order(filter);
    let mut after: Option<(String, String)> = None;
    loop {
        let conn = db.conn()?;
        let key = after.as_ref().map(|(at, id)| (at.as_str(), id.as_str()));
        let page = C::list(&conn, org_id, filter, key, PAGE)?;
        let mut views = page
            .iter()
            .map(|document| serde_json::from_str(&document.view))
            .collect::<Result<Vec<Value>, _>>()?;
        if accountant {
            (rows.enrich)(&conn, org_id, &mut views)?;
        }
        for view in views {
            (rows.expand)(&conn, org_id, view, &mut emit)?;
        }
        match page.last() {
            Some(last) if page.len() as i64 == PAGE => {
                after = Some((last.sort_at(order).to_string(), last.id.clone()));
            }
            _ => break,
        }
    }
    if accountant {
        sheet.totals(&totals_rows(table, &totals, &about.labels(table, &totals)))?;
    }
    sheet.finish()?;
    Ok(written)
}

/// The totals' rows, one per currency: `labels` first (`About::labels`), the currency
/// in its column, each summed column's sum in its own.
fn totals_rows<'a>(table: &Table, totals: &'a Totals, labels: &'a [String]) -> Vec<Vec<Cell<'a>>> {
    let currency_column = table.currency_column();
    let mut out = Vec::new();
    for ((currency, group), label) in totals.groups().into_iter().zip(labels) {
        let mut cells: Vec<Cell> = table.columns.iter().map(|_| Cell::Empty).collect();
        cells[0] = Cell::Text(label);
        if let (Some(i), Some(code)) = (currency_column, currency) {
            cells[i] = Cell::Text(code);
        }
        let summed = table.columns.iter().enumerate().filter(|(_, c)| c.summed);
        for ((i, _), sum) in summed.zip(&group.sums) {
            cells[i] = Cell::Money(sum_or_zero(*sum).to_string(), currency);
        }
        out.push(cells);
    }
    if out.is_empty() {
        let mut cells: Vec<Cell> = table.columns.iter().map(|_| Cell::Empty).collect();
        if let Some(label) = labels.first() {
            cells[0] = Cell::Text(label);
        }
        out.push(cells);
    }
    out
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
