//! What a list's documents add up to: how many, and the exact sum of each amount per
//! currency (amounts in different currencies never add up). The API's totals
//! (`GET /v1/invoices/totals`, `/v1/retentions/totals`) and the accountant's
//! spreadsheets (their totals rows) are both made by this one accumulator.

use rust_decimal::Decimal;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The running totals of one document class: `names` are its amounts, in order.
#[derive(Debug, Clone)]
pub struct Totals {
    names: Vec<&'static str>,
    count: u64,
    /// By currency (upper case, trimmed; None when the document names none).
    groups: BTreeMap<Option<String>, Group>,
}

/// The documents of one currency.
#[derive(Debug, Clone)]
pub struct Group {
    pub count: u64,
    /// Each amount's sum; None while no document of the currency had that amount.
    pub sums: Vec<Option<Decimal>>,
}

impl Totals {
    pub fn new(names: &[&'static str]) -> Totals {
        Totals {
            names: names.to_vec(),
            count: 0,
            groups: BTreeMap::new(),
        }
    }

    /// Counts one document of `currency` and adds its amounts (in `names`' order; None
    /// where it has none).
    pub fn add(&mut self, currency: Option<&str>, amounts: &[Option<Decimal>]) {
        let key = currency
            .map(|c| c.trim().to_uppercase())
            .filter(|c| !c.is_empty());
        let group = self.groups.entry(key).or_insert_with(|| Group {
            count: 0,
            sums: vec![None; self.names.len()],
        });
        group.count += 1;
        for (sum, amount) in group.sums.iter_mut().zip(amounts) {
            if let Some(amount) = amount {
                *sum = Some(sum.unwrap_or_default() + amount);
            }
        }
        self.count += 1;
    }

    pub fn names(&self) -> &[&'static str] {
        &self.names
    }

    pub fn count(&self) -> u64 {
        self.count
    }

    /// Each currency's group, the most documents first (then by currency).
    pub fn groups(&self) -> Vec<(Option<&str>, &Group)> {
        let mut groups: Vec<_> = self
            .groups
            .iter()
            .map(|(currency, group)| (currency.as_deref(), group))
            .collect();
        groups.sort_by(|a, b| b.1.count.cmp(&a.1.count).then(a.0.cmp(&b.0)));
        groups
    }

    /// `{count, currencies: [{currency, count, <name>: sum...}]}`, sums as exact JSON
    /// numbers (`0.00` for an amount no document of the currency had).
    pub fn view(&self) -> Value {
        let currencies: Vec<Value> = self
            .groups()
            .into_iter()
            .map(|(currency, group)| {
                let mut line = Map::new();
                line.insert("currency".into(), json!(currency));
                line.insert("count".into(), json!(group.count));
                for (name, sum) in self.names.iter().zip(&group.sums) {
                    line.insert((*name).into(), number(sum_or_zero(*sum)));
                }
                Value::Object(line)
            })
            .collect();
        json!({ "count": self.count, "currencies": currencies })
    }
}

/// A sum as written: `0.00` when nothing was added.
pub fn sum_or_zero(sum: Option<Decimal>) -> Decimal {
    sum.unwrap_or_else(|| Decimal::new(0, 2))
}

/// An exact decimal as a JSON number with its digits (serde_json keeps them).
fn number(d: Decimal) -> Value {
    serde_json::from_str(&d.to_string()).unwrap_or(Value::Null)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn d(s: &str) -> Option<Decimal> {
        Some(s.parse().unwrap())
    }

    #[test]
    fn amounts_add_up_exactly_per_currency() {
        let mut t = Totals::new(&["subtotal", "total"]);
        t.add(Some("MXN"), &[d("0.10"), d("0.116")]);
        t.add(Some(" mxn "), &[d("0.20"), d("0.232")]);
        t.add(Some("USD"), &[d("100.00"), None]);
        t.add(None, &[None, d("1")]);
        t.add(Some("MXN"), &[None, d("1000000000000.01")]);
        assert_eq!(t.count(), 5);
        let view = t.view();
        let expected: Value = serde_json::from_str(
            r#"{"count":5,"currencies":[{"count":3,"currency":"MXN","subtotal":0.30,"total":1000000000000.358},{"count":1,"currency":null,"subtotal":0.00,"total":1},{"count":1,"currency":"USD","subtotal":100.00,"total":0.00}]}"#,
        )
        .unwrap();
        assert_eq!(view, expected);
        let groups = t.groups();
        assert_eq!(groups[0].0, Some("MXN"));
        assert_eq!(groups[0].1.sums[0], d("0.30"));
    }

    #[test]
    fn nothing_counted_is_zero_documents() {
        let t = Totals::new(&["total"]);
        assert_eq!(t.view(), json!({"count": 0, "currencies": []}));
    }
}
