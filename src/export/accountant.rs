//! The accountant's layout of the exports (`layout=accountant`), beside the columns API
//! clients read (`columns.rs`): Spanish headers; each SAT code in its column with its
//! catalog's description in the next; the API's words in Spanish; amounts in their
//! currency's format, dates as dates; the SAT status, the 69-B situation, the credited
//! amount and the balance as columns; totals per currency at the end. Rows are the same
//! JSON the API's layout reads (`columns.rs` says what each row kind holds).

use serde_json::Value;

use super::columns::Cell;
use crate::catalogs::{Catalog, Edition};

/// A row kind as the accountant reads it.
pub struct Table {
    /// What the file holds: `Facturas`, `Conceptos de facturas`, `Retenciones`.
    pub title: &'static str,
    /// The file name's first word: `facturas`.
    pub file_stem: &'static str,
    /// What one row is, as the totals count them: `factura`, `facturas`.
    pub noun: (&'static str, &'static str),
    pub columns: &'static [Column],
    /// Where a row's currency is (its amounts' and its totals'); None: pesos.
    pub currency: Option<&'static [&'static str]>,
    /// Where the document's version is: it picks the catalogs' edition.
    version: &'static [&'static str],
}

pub struct Column {
    pub header: &'static str,
    source: Source,
    /// Its width, in characters.
    pub width: f64,
    /// Whether the totals add it up (an amount).
    pub summed: bool,
}

/// Where a column's value comes from and how it is shown.
#[derive(Clone, Copy)]
enum Source {
    Text(&'static [&'static str]),
    /// The description of the code at the path, in a catalog (empty for a code the
    /// catalog does not know: the code's own column shows it as written).
    Describe(&'static [&'static str], Catalog),
    /// An API word in Spanish (`Words` gets None when the value is absent).
    Words(&'static [&'static str], Words),
    Money(&'static [&'static str]),
    /// A rate, and where its factor is: a Cuota is an amount per unit, not a percentage.
    Rate(&'static [&'static str], &'static [&'static str]),
    Date(&'static [&'static str]),
    Number(&'static [&'static str]),
    YesNo(&'static [&'static str]),
}

type Words = fn(Option<&str>) -> Option<&str>;

const fn text(header: &'static str, path: &'static [&'static str], width: f64) -> Column {
    col(header, Source::Text(path), width, false)
}

const fn col(header: &'static str, source: Source, width: f64, summed: bool) -> Column {
    Column {
        header,
        source,
        width,
        summed,
    }
}

const fn money(header: &'static str, path: &'static [&'static str], summed: bool) -> Column {
    col(header, Source::Money(path), 15.0, summed)
}

/// A code's column and its description's beside it.
macro_rules! code {
    ($header:literal, $path:expr, $catalog:expr, $width:expr) => {
        [
            text($header, $path, 9.0),
            col(
                concat!($header, " (descripción)"),
                Source::Describe($path, $catalog),
                $width,
                false,
            ),
        ]
    };
}

// ------------------------------------------------------------------------------------
// Words

fn direction(v: Option<&str>) -> Option<&str> {
    Some(match v? {
        "issued" => "Emitida",
        "received" => "Recibida",
        other => other,
    })
}

fn status(v: Option<&str>) -> Option<&str> {
    Some(match v? {
        "active" => "Vigente",
        "cancelled" => "Cancelada",
        other => other,
    })
}

/// `sat_status.state`; an invoice the SAT has not been asked about yet says so.
fn sat_state(v: Option<&str>) -> Option<&str> {
    Some(match v {
        None => "Sin consultar",
        Some("active") => "Vigente",
        Some("cancelled") => "Cancelada",
        Some("not_found") => "No encontrada (aún)",
        Some("not_registered") => "No registrada en el SAT",
        Some(other) => other,
    })
}

/// `counterparty_69b.situation`; a counterparty off the list says so.
fn situation_69b(v: Option<&str>) -> Option<&str> {
    Some(match v {
        None => "No está en la lista",
        Some("presumed") => "Presunto",
        Some("disproved") => "Desvirtuado",
        Some("definitive") => "Definitivo",
        Some("favorable_ruling") => "Sentencia favorable",
        Some(other) => other,
    })
}

fn nationality(v: Option<&str>) -> Option<&str> {
    Some(match v? {
        "Nacional" => "Nacional",
        "Extranjero" => "Extranjero",
        other => other,
    })
}

// ------------------------------------------------------------------------------------
// The layouts

/// The invoice columns both invoice layouts start with, under `at` (the invoice view's
/// place in the row).
macro_rules! invoice_identity {
    ($($at:literal,)*) => {
        [
            col("Fecha de emisión", Source::Date(&[$($at,)* "issued_at"]), 19.0, false),
            text("Serie", &[$($at,)* "series"], 8.0),
            text("Folio", &[$($at,)* "folio"], 12.0),
            text("UUID (folio fiscal)", &[$($at,)* "uuid"], 38.0),
        ]
    };
}

/// One row per invoice.
pub static INVOICES: Table = Table {
    title: "Facturas",
    file_stem: "facturas",
    noun: ("factura", "facturas"),
    columns: &INVOICE_COLUMNS,
    currency: Some(&["currency"]),
    version: &["version"],
};

const INVOICE_COLUMNS: [Column; 43] = {
    let [date, series, folio, uuid] = invoice_identity!();
    let [kind, kind_d] = code!(
        "Tipo de comprobante",
        &["type"],
        Catalog::TipoDeComprobante,
        12.0
    );
    let [regime, regime_d] = code!(
        "Régimen fiscal del emisor",
        &["issuer", "tax_regime"],
        Catalog::RegimenFiscal,
        30.0
    );
    let [usage, usage_d] = code!(
        "Uso CFDI",
        &["receiver", "cfdi_use"],
        Catalog::UsoCfdi,
        28.0
    );
    let [currency, currency_d] = code!("Moneda", &["currency"], Catalog::Moneda, 16.0);
    let [method, method_d] = code!(
        "Método de pago",
        &["payment_method"],
        Catalog::MetodoPago,
        26.0
    );
    let [form, form_d] = code!("Forma de pago", &["payment_form"], Catalog::FormaPago, 26.0);
    [
        date,
        series,
        folio,
        uuid,
        kind,
        kind_d,
        col(
            "Dirección",
            Source::Words(&["direction"], direction),
            10.0,
            false,
        ),
        text("Versión", &["version"], 8.0),
        text("RFC del emisor", &["issuer", "tax_id"], 15.0),
        text("Nombre del emisor", &["issuer", "name"], 32.0),
        regime,
        regime_d,
        text("RFC del receptor", &["receiver", "tax_id"], 15.0),
        text("Nombre del receptor", &["receiver", "name"], 32.0),
        usage,
        usage_d,
        currency,
        currency_d,
        col(
            "Tipo de cambio",
            Source::Number(&["exchange_rate"]),
            10.0,
            false,
        ),
        money("Subtotal", &["subtotal"], true),
        money("Descuento", &["discount"], true),
        money("Impuestos trasladados", &["taxes_transferred"], true),
        money("Impuestos retenidos", &["taxes_withheld"], true),
        money("Total", &["total"], true),
        method,
        method_d,
        form,
        form_d,
        col("Estado", Source::Words(&["status"], status), 10.0, false),
        col(
            "Fecha de cancelación",
            Source::Date(&["cancelled_at"]),
            19.0,
            false,
        ),
        col(
            "Estado en el SAT",
            Source::Words(&["sat_status", "state"], sat_state),
            14.0,
            false,
        ),
        col(
            "Cancelable",
            Source::Words(&["sat_status", "cancellable"], cancellable),
            16.0,
            false,
        ),
        col(
            "Estatus de cancelación en el SAT",
            Source::Words(&["sat_status", "cancellation_status"], cancellation),
            18.0,
            false,
        ),
        col(
            "Contraparte en la lista 69-B",
            Source::Words(&["counterparty_69b", "situation"], situation_69b),
            16.0,
            false,
        ),
        money("Pagado", &["paid_amount"], true),
        money("Saldo pendiente", &["due_amount"], true),
        money(
            "Acreditado por notas de crédito",
            &["credited_amount"],
            true,
        ),
        money(
            "Saldo después de notas de crédito",
            &["balance_after_credits"],
            true,
        ),
        col(
            "Último pago",
            Source::Date(&["last_payment_date"]),
            19.0,
            false,
        ),
        col("Pagada el", Source::Date(&["fully_paid_at"]), 19.0, false),
        col(
            "Pagos en conflicto",
            Source::YesNo(&["payment_conflicts"]),
            10.0,
            false,
        ),
        col("Conceptos", Source::Number(&["items_count"]), 10.0, false),
        col("PDF del SAT", Source::YesNo(&["has_pdf"]), 8.0, false),
    ]
};

/// `sat_status.cancellable`.
fn cancellable(v: Option<&str>) -> Option<&str> {
    Some(match v? {
        "not_cancellable" => "No cancelable",
        "without_acceptance" => "Cancelable sin aceptación",
        "with_acceptance" => "Cancelable con aceptación",
        other => other,
    })
}

/// `sat_status.cancellation_status`.
fn cancellation(v: Option<&str>) -> Option<&str> {
    Some(match v? {
        "in_process" => "En proceso",
        "deadline_passed" => "Plazo vencido",
        "cancelled_with_acceptance" => "Cancelada con aceptación",
        "cancelled_without_acceptance" => "Cancelada sin aceptación",
        "rejected" => "Solicitud rechazada",
        other => other,
    })
}

/// One row per concept, after its invoice's identity.
pub static ITEMS: Table = Table {
    title: "Conceptos de facturas",
    file_stem: "conceptos",
    noun: ("concepto", "conceptos"),
    columns: &ITEM_COLUMNS,
    currency: Some(&["invoice", "currency"]),
    version: &["invoice", "version"],
};

/// A concept's tax: its rate (or quota) and its amount.
macro_rules! item_tax {
    ($name:literal, $key:literal) => {
        [
            col(
                concat!($name, " (tasa o cuota)"),
                Source::Rate(
                    &["taxes", concat!($key, "_rate")],
                    &["taxes", concat!($key, "_factor")],
                ),
                10.0,
                false,
            ),
            money($name, &["taxes", $key], true),
        ]
    };
}

const ITEM_COLUMNS: [Column; 33] = {
    let [date, series, folio, uuid] = invoice_identity!("invoice",);
    let [kind, kind_d] = code!(
        "Tipo de comprobante",
        &["invoice", "type"],
        Catalog::TipoDeComprobante,
        12.0
    );
    let [product, product_d] = code!(
        "Clave de producto o servicio",
        &["item", "product_code"],
        Catalog::ClaveProdServ,
        30.0
    );
    let [unit, unit_d] = code!(
        "Clave de unidad",
        &["item", "unit"],
        Catalog::ClaveUnidad,
        16.0
    );
    let [iva_t_rate, iva_t] = item_tax!("IVA trasladado", "iva_transferred");
    let [ieps_t_rate, ieps_t] = item_tax!("IEPS trasladado", "ieps_transferred");
    let [iva_w_rate, iva_w] = item_tax!("IVA retenido", "iva_withheld");
    let [isr_w_rate, isr_w] = item_tax!("ISR retenido", "isr_withheld");
    let [ieps_w_rate, ieps_w] = item_tax!("IEPS retenido", "ieps_withheld");
    [
        date,
        series,
        folio,
        uuid,
        kind,
        kind_d,
        col(
            "Dirección",
            Source::Words(&["invoice", "direction"], direction),
            10.0,
            false,
        ),
        text("RFC del emisor", &["invoice", "issuer", "tax_id"], 15.0),
        text("Nombre del emisor", &["invoice", "issuer", "name"], 32.0),
        text("RFC del receptor", &["invoice", "receiver", "tax_id"], 15.0),
        text(
            "Nombre del receptor",
            &["invoice", "receiver", "name"],
            32.0,
        ),
        text("Moneda", &["invoice", "currency"], 8.0),
        col(
            "Estado",
            Source::Words(&["invoice", "status"], status),
            10.0,
            false,
        ),
        col("Línea", Source::Number(&["line"]), 6.0, false),
        product,
        product_d,
        text("Descripción", &["item", "description"], 40.0),
        col(
            "Cantidad",
            Source::Number(&["item", "quantity"]),
            10.0,
            false,
        ),
        unit,
        unit_d,
        money("Valor unitario", &["item", "unit_price"], false),
        money("Descuento", &["item", "discount"], true),
        money("Importe", &["item", "amount"], true),
        iva_t_rate,
        iva_t,
        ieps_t_rate,
        ieps_t,
        iva_w_rate,
        iva_w,
        isr_w_rate,
        isr_w,
        ieps_w_rate,
        ieps_w,
    ]
};

/// One row per retention (amounts in pesos: the CFDI de Retenciones has no currency).
pub static RETENTIONS: Table = Table {
    title: "Retenciones",
    file_stem: "retenciones",
    noun: ("constancia", "constancias"),
    columns: &RETENTION_COLUMNS,
    currency: None,
    version: &["retention", "version"],
};

const RETENTION_COLUMNS: [Column; 26] = {
    let [key, key_d] = code!(
        "Clave de retención",
        &["retention", "retention_key"],
        Catalog::CveRetenc,
        30.0
    );
    [
        col(
            "Fecha de emisión",
            Source::Date(&["retention", "issued_at"]),
            19.0,
            false,
        ),
        text("Folio interno", &["retention", "internal_folio"], 12.0),
        text("UUID (folio fiscal)", &["retention", "uuid"], 38.0),
        col(
            "Dirección",
            Source::Words(&["retention", "direction"], direction),
            10.0,
            false,
        ),
        text("Versión", &["retention", "version"], 8.0),
        key,
        key_d,
        text(
            "Descripción de la retención (documento)",
            &["retention", "retention_description"],
            28.0,
        ),
        text("RFC del emisor", &["retention", "issuer", "tax_id"], 15.0),
        text("Nombre del emisor", &["retention", "issuer", "name"], 32.0),
        col(
            "Nacionalidad del receptor",
            Source::Words(&["receiver", "nationality"], nationality),
            12.0,
            false,
        ),
        text(
            "RFC o registro fiscal del receptor",
            &["receiver", "tax_id"],
            15.0,
        ),
        text("Nombre del receptor", &["receiver", "name"], 32.0),
        col(
            "Ejercicio",
            Source::Number(&["retention", "period", "year"]),
            9.0,
            false,
        ),
        col(
            "Mes inicial",
            Source::Number(&["retention", "period", "start_month"]),
            8.0,
            false,
        ),
        col(
            "Mes final",
            Source::Number(&["retention", "period", "end_month"]),
            8.0,
            false,
        ),
        money(
            "Monto total de la operación",
            &["retention", "totals", "operation"],
            true,
        ),
        money("Monto gravado", &["retention", "totals", "taxed"], true),
        money("Monto exento", &["retention", "totals", "exempt"], true),
        money(
            "Monto total retenido",
            &["retention", "totals", "withheld"],
            true,
        ),
        money("ISR retenido", &["withheld", "isr"], true),
        money("IVA retenido", &["withheld", "iva"], true),
        money("IEPS retenido", &["withheld", "ieps"], true),
        text("Complementos", &["complements"], 20.0),
        col(
            "Estado",
            Source::Words(&["retention", "status"], status),
            10.0,
            false,
        ),
        col(
            "Fecha de cancelación",
            Source::Date(&["retention", "cancelled_at"]),
            19.0,
            false,
        ),
    ]
};

// ------------------------------------------------------------------------------------
// Reading a row

fn at<'a>(row: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter()
        .try_fold(row, |v, key| v.get(*key))
        .filter(|v| !v.is_null())
}

fn str_at<'a>(row: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(row, path).and_then(Value::as_str)
}

/// A number (or a number's text) as its exact decimal digits.
fn digits(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// The catalogs' edition of a document's version: CFDI 4.0 and RET 2.0 read 4.0's,
/// older ones 3.3's.
fn edition(version: Option<&str>) -> Edition {
    match version.map(str::trim) {
        Some("4.0" | "2.0") | None => Edition::Cfdi40,
        Some(_) => Edition::Cfdi33,
    }
}

impl Table {
    /// The row's currency (None: pesos, or none written).
    pub fn currency<'a>(&self, row: &'a Value) -> Option<&'a str> {
        str_at(row, self.currency?)
    }

    /// The row's cells, in the columns' order.
    pub fn cells<'a>(&self, row: &'a Value) -> Vec<Cell<'a>> {
        let edition = edition(str_at(row, self.version));
        let currency = self.currency(row);
        self.columns
            .iter()
            .map(|c| c.cell(row, edition, currency))
            .collect()
    }

    /// The exact text of each summed column's amount (None where the row has none).
    pub fn amounts(&self, row: &Value) -> Vec<Option<rust_decimal::Decimal>> {
        self.columns
            .iter()
            .filter(|c| c.summed)
            .map(|c| match c.source {
                Source::Money(path) => at(row, path).and_then(digits).and_then(|d| d.parse().ok()),
                _ => None,
            })
            .collect()
    }

    /// The headers of the summed columns, in order (the totals' names).
    pub fn summed(&self) -> Vec<&'static str> {
        self.columns
            .iter()
            .filter(|c| c.summed)
            .map(|c| c.header)
            .collect()
    }

    /// Where a row's currency code is shown, for the totals row of that currency.
    pub fn currency_column(&self) -> Option<usize> {
        let path = self.currency?;
        self.columns
            .iter()
            .position(|c| matches!(c.source, Source::Text(p) if p == path))
    }
}

impl Column {
    fn cell<'a>(&self, row: &'a Value, edition: Edition, currency: Option<&'a str>) -> Cell<'a> {
        let text = |s: Option<&'a str>| s.map_or(Cell::Empty, Cell::Text);
        match self.source {
            Source::Text(path) => match at(row, path) {
                Some(Value::String(s)) => Cell::Text(s),
                Some(Value::Number(n)) => Cell::Number(n.to_string()),
                _ => Cell::Empty,
            },
            Source::Describe(path, catalog) => {
                text(str_at(row, path).and_then(|code| catalog.describe(code, edition)))
            }
            Source::Words(path, words) => text(words(str_at(row, path))),
            Source::Money(path) => at(row, path)
                .and_then(digits)
                .map_or(Cell::Empty, |d| Cell::Money(d, currency)),
            Source::Rate(path, factor) => match at(row, path) {
                Some(Value::String(s)) => Cell::Text(s),
                Some(Value::Number(n)) if str_at(row, factor) == Some("Cuota") => {
                    Cell::Number(n.to_string())
                }
                Some(Value::Number(n)) => Cell::Percent(n.to_string()),
                _ => Cell::Empty,
            },
            Source::Date(path) => text(str_at(row, path)).date(),
            Source::Number(path) => at(row, path)
                .and_then(digits)
                .map_or(Cell::Empty, Cell::Number),
            Source::YesNo(path) => match at(row, path).and_then(Value::as_bool) {
                Some(true) => Cell::Text("Sí"),
                Some(false) => Cell::Text("No"),
                None => Cell::Empty,
            },
        }
    }
}

impl<'a> Cell<'a> {
    /// A text cell as a date cell.
    fn date(self) -> Cell<'a> {
        match self {
            Cell::Text(s) => Cell::Date(s),
            other => other,
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cell<'a>(table: &Table, row: &'a Value, header: &str) -> Cell<'a> {
        let i = table
            .columns
            .iter()
            .position(|c| c.header == header)
            .unwrap_or_else(|| panic!("no column {header}"));
        table.cells(row).swap_remove(i)
    }

    #[test]
    fn codes_sit_beside_their_descriptions_in_the_documents_edition() {
        let row = json!({"version": "4.0", "type": "I", "payment_form": "03",
            "receiver": {"cfdi_use": "G03"}, "currency": "USD", "issuer": {"tax_regime": "Regimen X"}});
        let c = |h| cell(&INVOICES, &row, h);
        assert_eq!(c("Tipo de comprobante"), Cell::Text("I"));
        assert_eq!(
            c("Tipo de comprobante (descripción)"),
            Cell::Text("Ingreso")
        );
        assert_eq!(
            c("Forma de pago (descripción)"),
            Cell::Text("Transferencia electrónica de fondos")
        );
        assert_eq!(c("Uso CFDI (descripción)"), Cell::Text("Gastos en general"));
        // A code no catalog knows stays in its column, with no description.
        assert_eq!(c("Régimen fiscal del emisor"), Cell::Text("Regimen X"));
        assert_eq!(c("Régimen fiscal del emisor (descripción)"), Cell::Empty);
        // 3.3's catalog for a 3.3 document: P01 (Por definir) is 3.3's.
        let old = json!({"version": "3.3", "receiver": {"cfdi_use": "P01"}});
        assert_eq!(
            cell(&INVOICES, &old, "Uso CFDI (descripción)"),
            Cell::Text("Por definir")
        );
    }

    #[test]
    fn words_amounts_and_dates_read_as_an_accountant_reads_them() {
        let row: Value = serde_json::from_str(
            r#"{"direction": "received", "status": "cancelled", "currency": "USD",
            "total": 1000.50, "sat_status": null, "counterparty_69b": {"situation": "definitive"},
            "issued_at": "2026-09-30T12:00:00", "payment_conflicts": false}"#,
        )
        .unwrap();
        let c = |h| cell(&INVOICES, &row, h);
        assert_eq!(c("Dirección"), Cell::Text("Recibida"));
        assert_eq!(c("Estado"), Cell::Text("Cancelada"));
        assert_eq!(c("Estado en el SAT"), Cell::Text("Sin consultar"));
        assert_eq!(c("Contraparte en la lista 69-B"), Cell::Text("Definitivo"));
        assert_eq!(c("Total"), Cell::Money("1000.50".into(), Some("USD")));
        assert_eq!(c("Subtotal"), Cell::Empty);
        assert_eq!(c("Fecha de emisión"), Cell::Date("2026-09-30T12:00:00"));
        assert_eq!(c("Pagos en conflicto"), Cell::Text("No"));
        let listed = json!({"sat_status": {"state": "not_registered"}});
        assert_eq!(
            cell(&INVOICES, &listed, "Contraparte en la lista 69-B"),
            Cell::Text("No está en la lista")
        );
        assert_eq!(
            cell(&INVOICES, &listed, "Estado en el SAT"),
            Cell::Text("No registrada en el SAT")
        );
    }

    #[test]
    fn rates_are_percentages_but_a_quota_and_exempt_are_not() {
        let row: Value = serde_json::from_str(
            r#"{"invoice": {"version": "4.0"}, "taxes": {
            "iva_transferred_rate": 0.160000, "iva_transferred_factor": "Tasa",
            "ieps_transferred_rate": 0.298800, "ieps_transferred_factor": "Cuota",
            "iva_withheld_rate": "Exento"}}"#,
        )
        .unwrap();
        let c = |h| cell(&ITEMS, &row, h);
        assert_eq!(
            c("IVA trasladado (tasa o cuota)"),
            Cell::Percent("0.160000".into())
        );
        assert_eq!(
            c("IEPS trasladado (tasa o cuota)"),
            Cell::Number("0.298800".into())
        );
        assert_eq!(c("IVA retenido (tasa o cuota)"), Cell::Text("Exento"));
    }

    #[test]
    fn the_summed_columns_are_amounts_read_exactly() {
        for layout in [&INVOICES, &ITEMS, &RETENTIONS] {
            assert!(!layout.summed().is_empty());
            for c in layout.columns.iter().filter(|c| c.summed) {
                assert!(matches!(c.source, Source::Money(_)), "{}", c.header);
            }
            let mut headers: Vec<_> = layout.columns.iter().map(|c| c.header).collect();
            headers.sort_unstable();
            headers.dedup();
            assert_eq!(headers.len(), layout.columns.len(), "{}", layout.title);
        }
        let row: Value =
            serde_json::from_str(r#"{"subtotal": 0.1, "total": "0.30", "discount": null}"#)
                .unwrap();
        let amounts = INVOICES.amounts(&row);
        assert_eq!(amounts[0], Some("0.1".parse().unwrap()));
        assert_eq!(amounts[1], None);
        assert_eq!(amounts[4], Some("0.30".parse().unwrap()));
        assert_eq!(INVOICES.currency_column(), Some(16));
        assert_eq!(RETENTIONS.currency_column(), None);
    }
}
