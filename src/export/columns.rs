//! The columns of the exports: a header named like the API's field and where the value
//! is in the row's JSON (the invoice view `GET /v1/invoices` returns, and for line
//! items also the concept and its position).

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

/// A concept's `taxes` (as the parser stores them) by tax and kind: for each, the
/// amounts added up exactly, and the rate (TasaOCuota) when every entry has the same
/// one (`Exento` for exempt entries, nothing when rates differ).
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
        let rate_key = format!("{key}_rate");
        match out.get(&rate_key) {
            None => {
                out.insert(rate_key, rate);
            }
            Some(seen) if *seen != rate => {
                out.insert(rate_key, Value::Null);
            }
            Some(_) => {}
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
    fn column_names_are_unique() {
        for columns in [INVOICE, ITEM] {
            let mut names: Vec<_> = columns.iter().map(|c| c.name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), columns.len());
        }
    }
}
