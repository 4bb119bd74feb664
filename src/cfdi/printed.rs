//! How Anexo 20 prints a CFDI's figures in its verification expression (the QR code
//! and the SAT's status service share them): the total and the seal's tail.

use rust_decimal::{Decimal, RoundingStrategy};

fn six_decimals(total: Decimal) -> Decimal {
    let mut t = total.round_dp_with_strategy(6, RoundingStrategy::MidpointAwayFromZero);
    t.rescale(6);
    t
}

/// CFDI 3.3 / 4.0 ("18.6"): at most six decimals, trailing zeros dropped, at least one
/// decimal kept (`1000.00` -> `1000.0`, `0.1234565` -> `0.123457`).
pub fn total(total: Decimal) -> String {
    let text = six_decimals(total).to_string();
    let trimmed = text.trim_end_matches('0');
    if trimmed.ends_with('.') {
        format!("{trimmed}0")
    } else {
        trimmed.to_owned()
    }
}

/// CFDI 3.2 ("10.6"): six decimals, zero padded to 17 characters
/// (`123.45` -> `0000000123.450000`).
pub fn legacy_total(total: Decimal) -> String {
    format!("{:0>17}", six_decimals(total).to_string())
}

/// The last eight characters of the issuer's seal (`fe`), or all of a shorter one.
pub fn seal_tail(seal: &str) -> &str {
    let tail = seal.char_indices().rev().nth(7).map_or(0, |(at, _)| at);
    &seal[tail..]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).unwrap()
    }

    /// phpcfdi/cfdi-expresiones' unit tests (FACTS.md §3).
    #[test]
    fn totals_are_written_as_the_sat_reads_them() {
        assert_eq!(total(d("123.45")), "123.45");
        assert_eq!(total(d("1000.00000")), "1000.0");
        assert_eq!(total(d("0")), "0.0");
        assert_eq!(total(d("0.1234565")), "0.123457");
        assert_eq!(total(d("1160")), "1160.0");
        assert_eq!(total(d("0.50")), "0.5");
        assert_eq!(total(d("1234.123456")), "1234.123456");
        assert_eq!(legacy_total(d("123.45")), "0000000123.450000");
        assert_eq!(legacy_total(d("2000000.00")), "0002000000.000000");
        assert_eq!(legacy_total(d("0")), "0000000000.000000");
        assert_eq!(legacy_total(d("2578.93")), "0000002578.930000");
    }

    #[test]
    fn the_seal_tail_is_its_last_eight_characters() {
        assert_eq!(seal_tail("abc…/OAgdg=="), "/OAgdg==");
        assert_eq!(seal_tail("short"), "short");
        assert_eq!(seal_tail(""), "");
    }
}
