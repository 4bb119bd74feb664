//! The summary as a one-sheet XLSX, written from its JSON (so the sheet holds exactly
//! what the API answers): the period, then one block per section with a bold title
//! and header, amounts as numbers where Excel holds them exactly and dates as date
//! cells (as the exports do).

use rust_xlsxwriter::{Format, Workbook, Worksheet, XlsxError};
use serde_json::Value;

use crate::export::xlsx::{number, DateFormats};

/// Each section: its title, the summary's key and the columns of its rows.
const SECTIONS: &[(&str, &str, &[&str])] = &[
    (
        "Totals by type and currency",
        "totals",
        &[
            "type",
            "currency",
            "count",
            "subtotal",
            "discount",
            "taxes_transferred",
            "taxes_withheld",
            "total",
            "local_taxes_transferred",
            "local_taxes_withheld",
        ],
    ),
    (
        "Net: invoices (I) minus credit notes (E)",
        "net",
        &[
            "currency",
            "count",
            "subtotal",
            "discount",
            "taxes_transferred",
            "taxes_withheld",
            "total",
            "local_taxes_transferred",
            "local_taxes_withheld",
        ],
    ),
    ("Taxes by tax and rate", "taxes", TAX_COLUMNS),
    ("Cash-basis IVA", "cash_basis_iva", TAX_COLUMNS),
    (
        "Payments left out of the cash basis",
        "unresolved_payments",
        &[
            "payment_invoice_id",
            "related_uuid",
            "paid_at",
            "currency",
            "amount_paid",
            "reason",
        ],
    ),
    ("Local taxes", "local_taxes", TAX_COLUMNS),
    ("Payroll ISR withheld", "payroll_taxes", TAX_COLUMNS),
    (
        "Withheld from the entity (issued invoices and received retentions, in pesos)",
        "withholdings",
        &[
            "source",
            "tax",
            "tax_name",
            "payment_type",
            "count",
            "amount_mxn",
        ],
    ),
    (
        "Received from definitive 69-B issuers (not deductible)",
        "definitive_69b_issuers",
        &[
            "tax_id",
            "name",
            "definitive_sat",
            "definitive_dof",
            "list_version",
            "currency",
            "count",
            "subtotal",
            "total",
        ],
    ),
];

const TAX_COLUMNS: &[&str] = &[
    "source",
    "kind",
    "tax",
    "tax_name",
    "factor",
    "rate",
    "currency",
    "base",
    "amount",
    "count",
    "base_mxn",
    "amount_mxn",
];

/// The fields that hold a date or a timestamp: date cells.
const DATES: &[&str] = &["from", "to", "paid_at", "definitive_sat", "definitive_dof"];

/// The period's fields, then the exclusions, as name / value rows.
const HEAD: &[&str] = &["entity_id", "direction", "from", "to"];
const EXCLUDED: &[&str] = &["cancelled_documents", "cancelled_payments"];

/// The workbook's bytes.
pub fn write(summary: &Value) -> Result<Vec<u8>, XlsxError> {
    let mut book = Workbook::new();
    let bold = Format::new().set_bold();
    let dates = DateFormats::default();
    let sheet = book.add_worksheet().set_name("Summary")?;
    let mut row = 0u32;
    for name in HEAD {
        sheet.write_string_with_format(row, 0, *name, &bold)?;
        cell(sheet, row, 1, &summary[*name], name, &dates)?;
        row += 1;
    }
    for (title, key, columns) in SECTIONS {
        row += 1;
        sheet.write_string_with_format(row, 0, *title, &bold)?;
        row += 1;
        for (col, name) in (0u16..).zip(columns.iter()) {
            sheet.write_string_with_format(row, col, *name, &bold)?;
        }
        row += 1;
        for line in summary[*key].as_array().into_iter().flatten() {
            for (col, name) in (0u16..).zip(columns.iter()) {
                cell(sheet, row, col, &line[*name], name, &dates)?;
            }
            row += 1;
        }
    }
    row += 1;
    sheet.write_string_with_format(row, 0, "Excluded", &bold)?;
    for name in EXCLUDED {
        row += 1;
        sheet.write_string_with_format(row, 0, *name, &bold)?;
        cell(sheet, row, 1, &summary["excluded"][*name], name, &dates)?;
    }
    book.save_to_buffer()
}

/// Text as a string cell (never a formula), a date field as a date cell, a number as
/// a number when exact.
fn cell(
    sheet: &mut Worksheet,
    row: u32,
    col: u16,
    value: &Value,
    name: &str,
    dates: &DateFormats,
) -> Result<(), XlsxError> {
    match value {
        Value::String(s) if DATES.contains(&name) => dates.write(sheet, row, col, s)?,
        Value::String(s) => {
            sheet.write_string(row, col, s)?;
        }
        Value::Number(n) => {
            let text = n.to_string();
            match number(&text) {
                Some(x) => sheet.write_number(row, col, x)?,
                None => sheet.write_string(row, col, text)?,
            };
        }
        Value::Bool(b) => {
            sheet.write_boolean(row, col, *b)?;
        }
        _ => {}
    }
    Ok(())
}
