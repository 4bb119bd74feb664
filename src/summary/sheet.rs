//! The summary as a one-sheet XLSX for an accountant, written from its JSON (so the
//! sheet holds exactly the figures the API answers): the taxpayer by RFC and name and
//! the period, then one block per section with a bold Spanish title and headers. Codes
//! carry their catalog's description (`I - Ingreso`, `002 - IVA`), the API's words are
//! Spanish (`Facturas`, `Trasladado`, why a payment was left out), amounts are numbers
//! with a currency format (`$#,##0.00`, the currency's code after it when it is not
//! pesos) where Excel holds them exactly, rates percentages, and dates date cells
//! (`dd/mm/yyyy`).

use rust_xlsxwriter::{Format, Workbook, Worksheet, XlsxError};
use serde_json::Value;

use crate::catalogs::{Catalog, Edition};
use crate::export::xlsx::{number, DateFormats, MoneyFormats, PERCENT};

/// The taxpayer the summary is of.
pub struct Taxpayer<'a> {
    pub tax_id: &'a str,
    pub name: &'a str,
}

/// How a column shows its JSON field.
#[derive(Clone, Copy)]
enum Kind {
    /// As written.
    Text,
    /// A code with its catalog's description.
    Code(Catalog),
    /// An API word in Spanish.
    Words(fn(&str) -> &str),
    /// An amount in the line's currency (its `currency` field).
    Money,
    /// An amount in pesos.
    Pesos,
    /// A count of documents.
    Count,
    /// A rate: a percentage, but for a Cuota (an amount per unit).
    Rate,
    /// A date or timestamp.
    Date,
}

type Column = (&'static str, &'static str, Kind);

const TOTALS: &[Column] = &[
    (
        "Tipo de comprobante",
        "type",
        Kind::Code(Catalog::TipoDeComprobante),
    ),
    ("Moneda", "currency", Kind::Text),
    ("Comprobantes", "count", Kind::Count),
    ("Subtotal", "subtotal", Kind::Money),
    ("Descuento", "discount", Kind::Money),
    ("Impuestos trasladados", "taxes_transferred", Kind::Money),
    ("Impuestos retenidos", "taxes_withheld", Kind::Money),
    ("Total", "total", Kind::Money),
    (
        "Impuestos locales trasladados",
        "local_taxes_transferred",
        Kind::Money,
    ),
    (
        "Impuestos locales retenidos",
        "local_taxes_withheld",
        Kind::Money,
    ),
];

/// The net lines: the totals' columns but the type (the net is I less E).
const NET: &[Column] = match TOTALS.split_first() {
    Some((_, amounts)) => amounts,
    None => &[],
};

const TAXES: &[Column] = &[
    ("Origen", "source", Kind::Words(source)),
    ("Tipo", "kind", Kind::Words(tax_kind)),
    ("Impuesto", "tax", Kind::Code(Catalog::Impuesto)),
    ("Tipo factor", "factor", Kind::Text),
    ("Tasa o cuota", "rate", Kind::Rate),
    ("Moneda", "currency", Kind::Text),
    ("Base", "base", Kind::Money),
    ("Importe", "amount", Kind::Money),
    ("Comprobantes", "count", Kind::Count),
    ("Base en pesos", "base_mxn", Kind::Pesos),
    ("Importe en pesos", "amount_mxn", Kind::Pesos),
];

/// Each section: its title, the summary's key and its columns.
const SECTIONS: &[(&str, &str, &[Column])] = &[
    ("Totales por tipo de comprobante y moneda", "totals", TOTALS),
    ("Neto: facturas (I) menos notas de crédito (E)", "net", NET),
    ("Impuestos por impuesto y tasa", "taxes", TAXES),
    ("IVA en flujo de efectivo", "cash_basis_iva", TAXES),
    (
        "Pagos que no entran al IVA en flujo de efectivo",
        "unresolved_payments",
        &[
            ("Complemento de pago (id)", "payment_invoice_id", Kind::Text),
            ("UUID del documento pagado", "related_uuid", Kind::Text),
            ("Fecha de pago", "paid_at", Kind::Date),
            ("Moneda", "currency", Kind::Text),
            ("Importe pagado", "amount_paid", Kind::Money),
            ("Motivo", "reason", Kind::Words(reason)),
        ],
    ),
    ("Impuestos locales", "local_taxes", TAXES),
    ("ISR retenido en nómina", "payroll_taxes", TAXES),
    (
        "Retenido a la entidad (facturas emitidas y retenciones recibidas, en pesos)",
        "withholdings",
        &[
            ("Origen", "source", Kind::Words(source)),
            ("Impuesto", "tax", Kind::Code(Catalog::Impuesto)),
            (
                "Tipo de pago",
                "payment_type",
                Kind::Code(Catalog::TipoPagoRet),
            ),
            ("Comprobantes", "count", Kind::Count),
            ("Importe en pesos", "amount_mxn", Kind::Pesos),
        ],
    ),
    (
        "Recibidos de emisores definitivos en la lista 69-B (no deducibles)",
        "definitive_69b_issuers",
        &[
            ("RFC", "tax_id", Kind::Text),
            ("Nombre", "name", Kind::Text),
            ("Definitivo (SAT)", "definitive_sat", Kind::Date),
            ("Definitivo (DOF)", "definitive_dof", Kind::Date),
            ("Versión de la lista", "list_version", Kind::Count),
            ("Moneda", "currency", Kind::Text),
            ("Comprobantes", "count", Kind::Count),
            ("Subtotal", "subtotal", Kind::Money),
            ("Total", "total", Kind::Money),
        ],
    ),
];

/// The summary's sources (`source`), in Spanish.
fn source(word: &str) -> &str {
    match word {
        "invoices" => "Facturas",
        "pue" => "Facturas PUE",
        "payments" => "Pagos (complementos)",
        "credit_notes" => "Notas de crédito",
        "payroll" => "Nómina",
        "net" => "Neto",
        "retentions" => "Retenciones recibidas",
        "total" => "Total",
        other => other,
    }
}

fn tax_kind(word: &str) -> &str {
    match word {
        "transferred" => "Trasladado",
        "withheld" => "Retenido",
        other => other,
    }
}

/// Why a payment entry was left out of the cash basis, in words.
fn reason(word: &str) -> &str {
    match word {
        "invoice_not_found" => "No se encontró el documento pagado",
        "invoice_cancelled" => "El documento pagado está cancelado",
        "not_an_income_invoice" => "El documento pagado no es una factura de ingreso (I)",
        "currency_mismatch" => "El pago está en otra moneda que el documento pagado",
        "no_amount_paid" => "El pago no dice el importe pagado",
        "invoice_total_zero" => "El documento pagado tiene total cero",
        other => other,
    }
}

/// The direction, in Spanish.
fn direction(word: &str) -> &str {
    match word {
        "issued" => "Emitidos",
        "received" => "Recibidos",
        other => other,
    }
}

/// The cell formats, made once per workbook (one per currency an amount is in).
struct Formats {
    bold: Format,
    dates: DateFormats,
    percent: Format,
    money: MoneyFormats,
}

/// The workbook's bytes.
pub fn write(summary: &Value, taxpayer: &Taxpayer) -> Result<Vec<u8>, XlsxError> {
    let mut book = Workbook::new();
    let mut formats = Formats {
        bold: Format::new().set_bold(),
        dates: DateFormats::day_first(),
        percent: Format::new().set_num_format(PERCENT),
        money: MoneyFormats::default(),
    };
    let sheet = book.add_worksheet().set_name("Resumen")?;
    sheet.set_column_width(0, 28)?;
    sheet.set_column_range_width(1, 11, 16)?;
    sheet.write_string_with_format(0, 0, "Resumen fiscal del periodo", &formats.bold)?;
    let text = |key: &str| summary[key].as_str().unwrap_or_default();
    for (row, label, value) in [
        (1, "RFC", taxpayer.tax_id),
        (2, "Nombre", taxpayer.name),
        (3, "Comprobantes", direction(text("direction"))),
    ] {
        sheet.write_string_with_format(row, 0, label, &formats.bold)?;
        sheet.write_string(row, 1, value)?;
    }
    for (row, label, key) in [(4, "Desde", "from"), (5, "Hasta", "to")] {
        sheet.write_string_with_format(row, 0, label, &formats.bold)?;
        formats.dates.write(sheet, row, 1, text(key))?;
    }
    let mut row = sections(sheet, 6, summary, SECTIONS, &mut formats)?;
    row += 1;
    sheet.write_string_with_format(row, 0, "Excluidos", &formats.bold)?;
    for (label, key) in [
        ("Comprobantes cancelados", "cancelled_documents"),
        ("Pagos de complementos cancelados", "cancelled_payments"),
    ] {
        row += 1;
        sheet.write_string_with_format(row, 0, label, &formats.bold)?;
        if let Some(n) = summary["excluded"][key].as_u64() {
            sheet.write_number(row, 1, n as f64)?;
        }
    }
    book.save_to_buffer()
}

/// Each section below `row`: its bold title, its headers and a row per line of
/// `view[key]`; the row after the last.
fn sections(
    sheet: &mut Worksheet,
    mut row: u32,
    view: &Value,
    sections: &[(&str, &str, &[Column])],
    formats: &mut Formats,
) -> Result<u32, XlsxError> {
    for (title, key, columns) in sections {
        row += 1;
        sheet.write_string_with_format(row, 0, *title, &formats.bold)?;
        row += 1;
        for (col, (header, _, _)) in (0u16..).zip(columns.iter()) {
            sheet.write_string_with_format(row, col, *header, &formats.bold)?;
        }
        row += 1;
        for line in view[*key].as_array().into_iter().flatten() {
            for (col, column) in (0u16..).zip(columns.iter()) {
                cell(sheet, row, col, line, column, formats)?;
            }
            row += 1;
        }
    }
    Ok(row)
}

/// The IVA determination's sections (`iva`): each side's cash-basis lines and what
/// was left out.
const IVA_SECTIONS: &[(&str, &str, &[Column])] = &[
    (
        "IVA trasladado a clientes (emitidos, flujo de efectivo)",
        "issued",
        TAXES,
    ),
    (
        "IVA trasladado por proveedores (recibidos, flujo de efectivo)",
        "received",
        TAXES,
    ),
    ("IVA que no entra en la determinación", "excluded", EXCLUDED),
];

/// What the IVA determination (and the DIOT) leave out, with the reason.
const EXCLUDED: &[Column] = &[
    ("Lado", "side", Kind::Words(direction)),
    ("Motivo", "reason", Kind::Words(iva_reason)),
    ("Detalle", "detail", Kind::Words(reason)),
    ("Origen", "origin", Kind::Words(origin)),
    ("UUID", "uuid", Kind::Text),
    ("UUID del documento pagado", "related_uuid", Kind::Text),
    ("Fecha", "date", Kind::Date),
    ("RFC de la contraparte", "counterparty_tax_id", Kind::Text),
    ("Nombre de la contraparte", "counterparty_name", Kind::Text),
    ("Moneda", "currency", Kind::Text),
    ("IVA trasladado", "iva_transferred", Kind::Money),
    ("IVA retenido", "iva_withheld", Kind::Money),
    (
        "IVA trasladado en pesos",
        "iva_transferred_mxn",
        Kind::Pesos,
    ),
    ("IVA retenido en pesos", "iva_withheld_mxn", Kind::Pesos),
];

/// Why IVA was left out of the determination, in words.
fn iva_reason(word: &str) -> &str {
    match word {
        "cancelled" => "Comprobante cancelado",
        "payment_cancelled" => "Complemento de pago cancelado",
        "payment_unresolved" => "Pago que el flujo de efectivo no puede contar",
        "no_exchange_rate" => "Otra moneda sin tipo de cambio",
        "issuer_definitive_69b" => "Emisor definitivo en la lista 69-B (IVA no acreditable)",
        other => other,
    }
}

fn origin(word: &str) -> &str {
    match word {
        "document" => "Comprobante",
        "payment" => "Pago (complemento)",
        other => other,
    }
}

/// The IVA determination (`GET /v1/entities/{id}/iva`'s JSON) as a one-sheet XLSX:
/// the taxpayer and month, the figures in pesos, then the lines and what was left out.
pub fn write_iva(view: &Value, taxpayer: &Taxpayer) -> Result<Vec<u8>, XlsxError> {
    let mut book = Workbook::new();
    let mut formats = Formats {
        bold: Format::new().set_bold(),
        dates: DateFormats::day_first(),
        percent: Format::new().set_num_format(PERCENT),
        money: MoneyFormats::default(),
    };
    let sheet = book.add_worksheet().set_name("IVA del mes")?;
    sheet.set_column_width(0, 40)?;
    sheet.set_column_range_width(1, 13, 16)?;
    let title = "Determinación de IVA del mes (borrador, flujo de efectivo)";
    sheet.write_string_with_format(0, 0, title, &formats.bold)?;
    let text = |key: &str| view[key].as_str().unwrap_or_default();
    for (row, label, value) in [
        (1, "RFC", taxpayer.tax_id),
        (2, "Nombre", taxpayer.name),
        (3, "Mes", text("month")),
    ] {
        sheet.write_string_with_format(row, 0, label, &formats.bold)?;
        sheet.write_string(row, 1, value)?;
    }
    let figures = &view["figures"];
    let mut row = 5u32;
    for (label, key) in [
        ("IVA causado (cobrado)", "iva_collected"),
        ("(−) IVA retenido por clientes", "iva_withheld_by_clients"),
        ("(−) IVA acreditable (pagado)", "iva_creditable"),
        ("Saldo", "balance"),
    ] {
        sheet.write_string_with_format(row, 0, label, &formats.bold)?;
        cell(
            sheet,
            row,
            1,
            figures,
            &("", key, Kind::Pesos),
            &mut formats,
        )?;
        row += 1;
    }
    let result = match figures["result"].as_str() {
        Some("payable") => "A cargo",
        Some("in_favor") => "A favor",
        _ => "Sin saldo",
    };
    sheet.write_string_with_format(row, 0, "Resultado", &formats.bold)?;
    sheet.write_string(row, 1, result)?;
    row += 1;
    for (label, key) in [
        (
            "IVA retenido a terceros (a enterar)",
            "iva_withheld_from_others",
        ),
        ("Total a pagar", "total_to_pay"),
    ] {
        sheet.write_string_with_format(row, 0, label, &formats.bold)?;
        cell(
            sheet,
            row,
            1,
            figures,
            &("", key, Kind::Pesos),
            &mut formats,
        )?;
        row += 1;
    }
    sections(sheet, row, view, IVA_SECTIONS, &mut formats)?;
    book.save_to_buffer()
}

/// One field of a line as its column shows it: text as a string cell (never a
/// formula), an amount or count as a number when Excel holds it exactly (else its
/// digits as text), a date as a date cell; null is an empty cell.
fn cell(
    sheet: &mut Worksheet,
    row: u32,
    col: u16,
    line: &Value,
    (_, key, kind): &Column,
    formats: &mut Formats,
) -> Result<(), XlsxError> {
    let value = &line[*key];
    let decimal = |value: &Value| match value {
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    };
    match (kind, value) {
        (_, Value::Null) => {}
        (Kind::Date, Value::String(s)) => formats.dates.write(sheet, row, col, s)?,
        (Kind::Code(catalog), Value::String(s)) => {
            sheet.write_string(row, col, catalog.label(s, Edition::Cfdi40))?;
        }
        (Kind::Words(words), Value::String(s)) => {
            sheet.write_string(row, col, words(s))?;
        }
        (Kind::Money | Kind::Pesos | Kind::Rate | Kind::Count, Value::Number(_)) => {
            let text = decimal(value).unwrap_or_default();
            let Some(x) = number(&text) else {
                sheet.write_string(row, col, text)?;
                return Ok(());
            };
            let format = match kind {
                Kind::Money => Some(formats.money.format(line["currency"].as_str(), false)),
                Kind::Pesos => Some(formats.money.format(None, false)),
                Kind::Rate if line["factor"].as_str() != Some("Cuota") => Some(&formats.percent),
                _ => None,
            };
            match format {
                Some(format) => sheet.write_number_with_format(row, col, x, format)?,
                None => sheet.write_number(row, col, x)?,
            };
        }
        (_, Value::String(s)) => {
            sheet.write_string(row, col, s)?;
        }
        (_, Value::Number(n)) => {
            sheet.write_string(row, col, n.to_string())?;
        }
        (_, Value::Bool(b)) => {
            sheet.write_boolean(row, col, *b)?;
        }
        _ => {}
    }
    Ok(())
}

/// The DIOT's review sheet's sections, over `diot_rows`' flattened records.
const DIOT_SECTIONS: &[(&str, &str, &[Column])] = &[
    (
        "Proveedores (montos en pesos con centavos; el archivo los redondea a pesos)",
        "records",
        &[
            ("RFC", "tax_id", Kind::Text),
            ("Nombre", "name", Kind::Text),
            ("Tipo de tercero", "third_party_type", Kind::Text),
            ("Tipo de operación", "operation_type", Kind::Text),
            ("Efectos fiscales", "tax_effects", Kind::Text),
            ("IVA no acreditable", "non_creditable", Kind::Text),
            ("Configuración", "saved", Kind::Text),
            ("Comprobantes y pagos", "count", Kind::Count),
            ("Valor pagado 16%", "general_paid", Kind::Pesos),
            ("Devoluciones 16%", "general_returns", Kind::Pesos),
            ("IVA 16%", "general_iva", Kind::Pesos),
            ("IVA de devoluciones 16%", "general_iva_returns", Kind::Pesos),
            ("Región fronteriza (8%)", "border_region", Kind::Text),
            ("Valor pagado 8%", "border_paid", Kind::Pesos),
            ("Devoluciones 8%", "border_returns", Kind::Pesos),
            ("IVA 8%", "border_iva", Kind::Pesos),
            ("IVA de devoluciones 8%", "border_iva_returns", Kind::Pesos),
            ("Tasa 0%", "zero", Kind::Pesos),
            ("Exentos", "exempt", Kind::Pesos),
            ("No objeto", "not_subject", Kind::Pesos),
            ("IVA retenido", "withheld", Kind::Pesos),
            ("Notas", "notes", Kind::Text),
        ],
    ),
    (
        "Proveedores definitivos en la lista 69-B (su IVA va a no acreditable por no cumplir requisitos)",
        "definitive_69b",
        &[
            ("RFC", "tax_id", Kind::Text),
            ("Nombre", "name", Kind::Text),
            ("IVA 16%", "general_iva", Kind::Pesos),
            ("IVA 8%", "border_iva", Kind::Pesos),
        ],
    ),
    ("Lo que la DIOT no incluye", "excluded", EXCLUDED),
];

/// A code object (`{code, description}`) as `04 - Proveedor nacional`.
fn code_label(v: &Value) -> Value {
    match (v["code"].as_str(), v["description"].as_str()) {
        (Some(code), Some(d)) => Value::String(format!("{code} - {d}")),
        (Some(code), None) => Value::String(code.to_owned()),
        _ => Value::Null,
    }
}

/// A DIOT record flattened into the review sheet's columns.
fn diot_row(r: &Value) -> Value {
    let mut row = serde_json::Map::new();
    for key in ["tax_id", "name", "count"] {
        row.insert(key.into(), r[key].clone());
    }
    for key in ["third_party_type", "operation_type", "tax_effects"] {
        row.insert(key.into(), code_label(&r[key]));
    }
    row.insert(
        "border_region".into(),
        r["border_region"]["description"].clone(),
    );
    row.insert(
        "non_creditable".into(),
        r["non_creditable"]["description"].clone(),
    );
    let saved = if r["saved"].as_bool() == Some(true) {
        "Guardada"
    } else {
        "Valores por omisión"
    };
    row.insert("saved".into(), saved.into());
    let a = &r["amounts"];
    for regime in ["general", "border"] {
        for key in ["paid", "returns", "iva", "iva_returns"] {
            row.insert(format!("{regime}_{key}"), a[regime][key].clone());
        }
    }
    for key in ["zero", "exempt", "not_subject", "withheld"] {
        row.insert(key.into(), a[key].clone());
    }
    let notes: Vec<&str> = (r["notes"].as_array().into_iter().flatten())
        .filter_map(Value::as_str)
        .collect();
    row.insert("notes".into(), notes.join(" ").into());
    Value::Object(row)
}

/// The DIOT (`GET /v1/entities/{id}/diot`'s JSON) for review: a sheet with the
/// suppliers' records in pesos with cents, the definitive 69-B suppliers and what was
/// left out; and a sheet with the batch file's fields, labelled, one row per record.
pub fn write_diot(view: &Value, taxpayer: &Taxpayer) -> Result<Vec<u8>, XlsxError> {
    let mut book = Workbook::new();
    let mut formats = Formats {
        bold: Format::new().set_bold(),
        dates: DateFormats::day_first(),
        percent: Format::new().set_num_format(PERCENT),
        money: MoneyFormats::default(),
    };
    let records: Vec<Value> = (view["records"].as_array().into_iter().flatten())
        .map(diot_row)
        .collect();
    let definitive: Vec<Value> = (view["records"].as_array().into_iter().flatten())
        .zip(&records)
        .filter(|(r, _)| r["definitive_69b"].as_bool() == Some(true))
        .map(|(_, row)| row.clone())
        .collect();
    let rows = serde_json::json!({
        "records": records,
        "definitive_69b": definitive,
        "excluded": view["excluded"],
    });
    let sheet = book.add_worksheet().set_name("DIOT")?;
    sheet.set_column_width(0, 40)?;
    sheet.set_column_range_width(1, 21, 16)?;
    let title =
        "DIOT del mes (borrador, flujo de efectivo): valide el archivo con la herramienta del SAT";
    sheet.write_string_with_format(0, 0, title, &formats.bold)?;
    let text = |key: &str| view[key].as_str().unwrap_or_default();
    let layout = format!("{} campos", text("layout"));
    for (row, label, value) in [
        (1, "RFC", taxpayer.tax_id),
        (2, "Nombre", taxpayer.name),
        (3, "Mes", text("month")),
        (4, "Formato", layout.as_str()),
    ] {
        sheet.write_string_with_format(row, 0, label, &formats.bold)?;
        sheet.write_string(row, 1, value)?;
    }
    sections(sheet, 5, &rows, DIOT_SECTIONS, &mut formats)?;
    let file = book.add_worksheet().set_name("Archivo")?;
    for (row, record) in (0u32..).zip(view["records"].as_array().into_iter().flatten()) {
        let fields = record["fields"].as_array().into_iter().flatten();
        for (col, field) in (0u16..).zip(fields) {
            if row == 0 {
                let header = format!(
                    "{}. {}",
                    field["number"],
                    field["label"].as_str().unwrap_or_default()
                );
                file.write_string_with_format(0, col, header, &formats.bold)?;
            }
            // The file's text, as the SAT's upload reads it.
            match field["value"].as_str() {
                Some(value) if !value.is_empty() => {
                    file.write_string(row + 1, col, value)?;
                }
                _ => {}
            }
        }
    }
    book.save_to_buffer()
}
