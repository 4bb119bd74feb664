//! The columns of the exports: a header named like the API's field and where the value
//! is in the row's JSON (the invoice view `GET /v1/invoices` returns, and for line
//! items also the concept and its position; for retentions the retention view
//! `GET /v1/retentions` returns with its withheld taxes added up, see
//! [`retention_row`]).

use rust_decimal::Decimal;
use serde_json::Value;

/// How a column's value is written in a spreadsheet (CSV writes them all as text).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Text,
    /// Decimal text, written as stored.
    Number,
    Bool,
    /// A date or timestamp as the API writes it: a date cell in a spreadsheet.
    Date,
}

pub struct Column {
    pub name: &'static str,
    path: &'static [&'static str],
    pub kind: Kind,
}

const fn col(name: &'static str, path: &'static [&'static str], kind: Kind) -> Column {
    Column { name, path, kind }
}

use Kind::{Bool, Date, Number, Text};

/// One row per invoice, in the list's order (newest `issued_at` first).
pub const INVOICE: &[Column] = &[
    col("id", &["id"], Text),
    col("entity_id", &["entity_id"], Text),
    col("uuid", &["uuid"], Text),
    col("direction", &["direction"], Text),
    col("type", &["type"], Text),
    col("version", &["version"], Text),
    col("series", &["series"], Text),
    col("folio", &["folio"], Text),
    col("issued_at", &["issued_at"], Date),
    col("certified_at", &["certified_at"], Date),
    col("issuer_tax_id", &["issuer", "tax_id"], Text),
    col("issuer_name", &["issuer", "name"], Text),
    col("issuer_tax_regime", &["issuer", "tax_regime"], Text),
    col("receiver_tax_id", &["receiver", "tax_id"], Text),
    col("receiver_name", &["receiver", "name"], Text),
    col("receiver_cfdi_use", &["receiver", "cfdi_use"], Text),
    col("currency", &["currency"], Text),
    col("exchange_rate", &["exchange_rate"], Number),
    col("subtotal", &["subtotal"], Number),
    col("discount", &["discount"], Number),
    col("taxes_transferred", &["taxes_transferred"], Number),
    col("taxes_withheld", &["taxes_withheld"], Number),
    col("total", &["total"], Number),
    col("payment_method", &["payment_method"], Text),
    col("payment_form", &["payment_form"], Text),
    col("status", &["status"], Text),
    col("cancelled_at", &["cancelled_at"], Date),
    col("paid_amount", &["paid_amount"], Number),
    col("due_amount", &["due_amount"], Number),
    col("last_payment_date", &["last_payment_date"], Date),
    col("fully_paid_at", &["fully_paid_at"], Date),
    col("payment_conflicts", &["payment_conflicts"], Bool),
    col("has_pdf", &["has_pdf"], Bool),
    col("items_count", &["items_count"], Number),
];

/// One row per concept: the invoice's identity, then the concept as the parser reads it.
pub const ITEM: &[Column] = &[
    col("invoice_id", &["invoice", "id"], Text),
    col("uuid", &["invoice", "uuid"], Text),
    col("direction", &["invoice", "direction"], Text),
    col("type", &["invoice", "type"], Text),
    col("issued_at", &["invoice", "issued_at"], Date),
    col("issuer_tax_id", &["invoice", "issuer", "tax_id"], Text),
    col("receiver_tax_id", &["invoice", "receiver", "tax_id"], Text),
    col("currency", &["invoice", "currency"], Text),
    col("status", &["invoice", "status"], Text),
    col("line", &["line"], Number),
    col("product_code", &["item", "product_code"], Text),
    col("description", &["item", "description"], Text),
    col("quantity", &["item", "quantity"], Number),
    col("unit", &["item", "unit"], Text),
    col("unit_price", &["item", "unit_price"], Number),
    col("discount", &["item", "discount"], Number),
    col("amount", &["item", "amount"], Number),
    col(
        "iva_transferred_rate",
        &["taxes", "iva_transferred_rate"],
        Number,
    ),
    col("iva_transferred", &["taxes", "iva_transferred"], Number),
    col(
        "ieps_transferred_rate",
        &["taxes", "ieps_transferred_rate"],
        Number,
    ),
    col("ieps_transferred", &["taxes", "ieps_transferred"], Number),
    col("iva_withheld_rate", &["taxes", "iva_withheld_rate"], Number),
    col("iva_withheld", &["taxes", "iva_withheld"], Number),
    col("isr_withheld_rate", &["taxes", "isr_withheld_rate"], Number),
    col("isr_withheld", &["taxes", "isr_withheld"], Number),
    col(
        "ieps_withheld_rate",
        &["taxes", "ieps_withheld_rate"],
        Number,
    ),
    col("ieps_withheld", &["taxes", "ieps_withheld"], Number),
];

/// One row per retention (the second row kind): its identity, parties, period and
/// totals, what it withheld by tax, and the codes of its complements.
pub const RETENTION: &[Column] = &[
    col("id", &["retention", "id"], Text),
    col("entity_id", &["retention", "entity_id"], Text),
    col("uuid", &["retention", "uuid"], Text),
    col("direction", &["retention", "direction"], Text),
    col("version", &["retention", "version"], Text),
    col("internal_folio", &["retention", "internal_folio"], Text),
    col("issued_at", &["retention", "issued_at"], Date),
    col("certified_at", &["retention", "certified_at"], Date),
    col("retention_key", &["retention", "retention_key"], Text),
    col(
        "retention_description",
        &["retention", "retention_description"],
        Text,
    ),
    col("issuer_tax_id", &["retention", "issuer", "tax_id"], Text),
    col("issuer_name", &["retention", "issuer", "name"], Text),
    col("receiver_nationality", &["receiver", "nationality"], Text),
    col("receiver_tax_id", &["receiver", "tax_id"], Text),
    col("receiver_name", &["receiver", "name"], Text),
    col("period_year", &["retention", "period", "year"], Number),
    col(
        "period_start_month",
        &["retention", "period", "start_month"],
        Number,
    ),
    col(
        "period_end_month",
        &["retention", "period", "end_month"],
        Number,
    ),
    col(
        "total_operation",
        &["retention", "totals", "operation"],
        Number,
    ),
    col("total_taxed", &["retention", "totals", "taxed"], Number),
    col("total_exempt", &["retention", "totals", "exempt"], Number),
    col(
        "total_withheld",
        &["retention", "totals", "withheld"],
        Number,
    ),
    col("isr_withheld", &["withheld", "isr"], Number),
    col("iva_withheld", &["withheld", "iva"], Number),
    col("ieps_withheld", &["withheld", "ieps"], Number),
    col("complements", &["complements"], Text),
    col("status", &["retention", "status"], Text),
    col("cancelled_at", &["retention", "cancelled_at"], Date),
];

/// A retention view as one export row: the view, its receiver (national or foreign)
/// flattened, its withheld taxes added up exactly by tax (1.0's `01` and 2.0's `001`
/// alike) and its complements' codes (their names where the SAT has no code).
pub fn retention_row(view: Value) -> Value {
    let receiver = &view["receiver"];
    let party = if receiver["national"].is_object() {
        &receiver["national"]
    } else {
        &receiver["foreign"]
    };
    let flat = serde_json::json!({
        "nationality": receiver["nationality"],
        "tax_id": party["tax_id"],
        "name": party["name"],
    });
    let mut withheld = serde_json::Map::new();
    for t in view["withheld_taxes"].as_array().into_iter().flatten() {
        let name = match t["tax"].as_str() {
            Some("001" | "01") => "isr",
            Some("002" | "02") => "iva",
            Some("003" | "03") => "ieps",
            _ => continue,
        };
        if let Some(amount) = decimal(&t["amount"]) {
            let sum = withheld.get(name).and_then(decimal).unwrap_or_default() + amount;
            let number = serde_json::from_str(&sum.to_string()).unwrap_or(Value::Null);
            withheld.insert(name.to_owned(), number);
        }
    }
    let complements: Vec<&str> = view["complements"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["code"].as_str().or_else(|| c["name"].as_str()))
        .collect();
    serde_json::json!({
        "receiver": flat,
        "withheld": withheld,
        "complements": complements.join(" "),
        "retention": view,
    })
}

/// A concept's `taxes` (as the parser stores them) by tax and kind: for each, the
/// amounts added up exactly, and the rate (TasaOCuota) and factor (TipoFactor) when
/// every entry has the same (`Exento` for exempt entries, nothing when they differ).
pub fn item_taxes(item: &Value) -> Value {
    let mut out = serde_json::Map::new();
    let entries = item.get("taxes").and_then(Value::as_array);
    for entry in entries.into_iter().flatten() {
        let name = match entry.get("tax").and_then(Value::as_str) {
            Some("001") => "isr",
            Some("002") => "iva",
            Some("003") => "ieps",
            _ => continue,
        };
        let Some(kind) = entry.get("kind").and_then(Value::as_str) else {
            continue;
        };
        let key = format!("{name}_{kind}");
        let rate = if entry.get("factor").and_then(Value::as_str) == Some("Exento") {
            Value::String("Exento".into())
        } else {
            entry.get("rate").cloned().unwrap_or(Value::Null)
        };
        // The rate, and its factor beside it (a Cuota is an amount per unit, not a
        // percentage), when every entry has the same.
        let factor = entry.get("factor").cloned().unwrap_or(Value::Null);
        for (key, value) in [
            (format!("{key}_rate"), rate),
            (format!("{key}_factor"), factor),
        ] {
            match out.get(&key) {
                None => {
                    out.insert(key, value);
                }
                Some(seen) if *seen != value => {
                    out.insert(key, Value::Null);
                }
                Some(_) => {}
            }
        }
        if let Some(amount) = entry.get("amount").and_then(decimal) {
            let sum = out.get(&key).and_then(decimal).unwrap_or_default() + amount;
            let number = serde_json::from_str(&sum.to_string()).unwrap_or(Value::Null);
            out.insert(key, number);
        }
    }
    Value::Object(out)
}

fn decimal(v: &Value) -> Option<Decimal> {
    v.as_number().and_then(|n| n.to_string().parse().ok())
}

/// A value ready for a writer.
#[derive(Debug, PartialEq)]
pub enum Cell<'a> {
    Empty,
    Text(&'a str),
    /// Exact decimal text (serde_json keeps a number's digits as written).
    Number(String),
    Bool(bool),
    /// A date or timestamp's text (a `Date` column).
    Date(&'a str),
    /// An amount's exact decimal text and its currency (None: pesos): a number in the
    /// currency's format (the accountant's sheets).
    Money(String, Option<&'a str>),
    /// A rate (a fraction's decimal text): a percentage (the accountant's sheets).
    Percent(String),
}

impl Column {
    pub fn cell<'a>(&self, row: &'a Value) -> Cell<'a> {
        let value = self.path.iter().try_fold(row, |v, key| v.get(*key));
        match value {
            None | Some(Value::Null) => Cell::Empty,
            Some(Value::String(s)) if self.kind == Kind::Date => Cell::Date(s),
            Some(Value::String(s)) => Cell::Text(s),
            Some(Value::Number(n)) => Cell::Number(n.to_string()),
            Some(Value::Bool(b)) => Cell::Bool(*b),
            // No column points at an array or object; print it rather than lose it.
            Some(other) => Cell::Number(other.to_string()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn cells_follow_their_path_and_keep_decimal_text() {
        let row: Value = serde_json::from_str(
            r#"{"issuer":{"tax_id":"AAA"},"total":1000.00,"has_pdf":false,"folio":null}"#,
        )
        .unwrap();
        let by_name = |n: &str| INVOICE.iter().find(|c| c.name == n).unwrap();
        assert_eq!(by_name("issuer_tax_id").cell(&row), Cell::Text("AAA"));
        assert_eq!(by_name("total").cell(&row), Cell::Number("1000.00".into()));
        assert_eq!(by_name("has_pdf").cell(&row), Cell::Bool(false));
        assert_eq!(by_name("folio").cell(&row), Cell::Empty);
        assert_eq!(by_name("series").cell(&row), Cell::Empty);
    }

    #[test]
    fn concept_taxes_are_summed_by_tax_and_kind_with_their_common_rate() {
        let item: Value = serde_json::from_str(
            r#"{"taxes":[
                {"kind":"transferred","tax":"002","factor":"Tasa","rate":0.160000,"amount":10.05},
                {"kind":"transferred","tax":"002","factor":"Tasa","rate":0.160000,"amount":0.10},
                {"kind":"withheld","tax":"002","factor":"Tasa","rate":0.106667,"amount":1.00},
                {"kind":"withheld","tax":"002","factor":"Tasa","rate":0.040000,"amount":2.00},
                {"kind":"transferred","tax":"003","factor":"Exento"},
                {"kind":"withheld","tax":"001","factor":"Tasa","rate":0.100000,"amount":125.03},
                {"kind":"transferred","tax":"999","factor":"Tasa","rate":1,"amount":1}
            ]}"#,
        )
        .unwrap();
        let taxes = item_taxes(&item);
        let row = serde_json::json!({ "taxes": taxes });
        let cell = |n: &str| ITEM.iter().find(|c| c.name == n).unwrap().cell(&row);
        let num = |s: &str| Cell::Number(s.to_string());
        assert_eq!(cell("iva_transferred_rate"), num("0.160000"));
        assert_eq!(cell("iva_transferred"), num("10.15"));
        assert_eq!(cell("iva_withheld_rate"), Cell::Empty, "two rates");
        assert_eq!(cell("iva_withheld"), num("3.00"));
        assert_eq!(cell("ieps_transferred_rate"), Cell::Text("Exento"));
        assert_eq!(cell("ieps_transferred"), Cell::Empty);
        assert_eq!(cell("isr_withheld"), num("125.03"));
        assert_eq!(cell("ieps_withheld"), Cell::Empty);
        assert_eq!(item_taxes(&serde_json::json!({})), serde_json::json!({}));
    }

    #[test]
    fn a_retention_row_adds_up_its_withheld_taxes_by_tax_in_both_spellings() {
        let view: Value = serde_json::from_str(
            r#"{"uuid":"U","receiver":{"nationality":"Extranjero","national":null,
                "foreign":{"tax_id":"998877","name":"WORLD"}},
               "withheld_taxes":[
                {"tax":"01","amount":647.379200},{"tax":"001","amount":0.620800},
                {"tax":"02","amount":10.00},{"tax":null,"amount":1}],
               "complements":[{"code":"dividendos","name":"Dividendos"},{"code":null,"name":"Otro"}]}"#,
        )
        .unwrap();
        let row = retention_row(view);
        let cell = |n: &str| RETENTION.iter().find(|c| c.name == n).unwrap().cell(&row);
        assert_eq!(cell("uuid"), Cell::Text("U"));
        assert_eq!(cell("receiver_tax_id"), Cell::Text("998877"));
        assert_eq!(cell("receiver_nationality"), Cell::Text("Extranjero"));
        assert_eq!(cell("isr_withheld"), Cell::Number("648.000000".into()));
        assert_eq!(cell("iva_withheld"), Cell::Number("10.00".into()));
        assert_eq!(cell("ieps_withheld"), Cell::Empty);
        assert_eq!(cell("complements"), Cell::Text("dividendos Otro"));
    }

    #[test]
    fn column_names_are_unique() {
        for columns in [INVOICE, ITEM, RETENTION] {
            let mut names: Vec<_> = columns.iter().map(|c| c.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), columns.len());
        }
    }
}
