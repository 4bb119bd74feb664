//! Amounts as an accountant reads them: `$38,022.91`, `$1,500.00 USD`. Exact: the
//! digits are the decimal's own, with at least two decimals and as many more as the
//! XML wrote (`$1,941.0656`), never rounded.

use rust_decimal::Decimal;

use super::currency::is_pesos;

/// `amount` with `$`, thousands separators and at least two decimals; the currency's
/// code after it when it is not pesos (`$1,500.00 USD`, as written in the XML).
pub fn money(amount: Decimal, currency: Option<&str>) -> String {
    let mut out = String::new();
    if amount.is_sign_negative() && !amount.is_zero() {
        out.push('-');
    }
    out.push('$');
    out.push_str(&grouped(amount.abs(), 2));
    if !is_pesos(currency) {
        out.push(' ');
        out.push_str(currency.unwrap_or_default().trim());
    }
    out
}

/// A quantity or another plain number with thousands separators and its written
/// decimals: `1,500`, `2.5`, `-0.25`.
pub fn number(value: Decimal) -> String {
    let sign = if value.is_sign_negative() && !value.is_zero() {
        "-"
    } else {
        ""
    };
    format!("{sign}{}", grouped(value.abs(), 0))
}

/// A rate (TasaOCuota, a fraction) as a percentage without trailing zeros:
/// `0.160000` is `16%`, `0.106667` is `10.6667%`.
pub fn percent(rate: Decimal) -> String {
    format!("{}%", number((rate * Decimal::ONE_HUNDRED).normalize()))
}

/// A non-negative decimal's digits, the integer part in groups of three, with at least
/// `min_scale` decimals (padded in the text: a decimal at its largest cannot take more
/// scale).
fn grouped(value: Decimal, min_scale: usize) -> String {
    let text = value.to_string();
    let (integer, fraction) = text.split_once('.').unwrap_or((text.as_str(), ""));
    let mut out = String::with_capacity(text.len() + integer.len() / 3 + min_scale + 1);
    for (n, digit) in integer.chars().enumerate() {
        if n > 0 && (integer.len() - n) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if !fraction.is_empty() || min_scale > 0 {
        out.push('.');
        out.push_str(fraction);
        for _ in fraction.len()..min_scale {
            out.push('0');
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn d(text: &str) -> Decimal {
        text.parse().unwrap()
    }

    #[test]
    fn money_has_a_sign_separators_and_two_decimals_or_more() {
        let cases = [
            ("38022.91", None, "$38,022.91"),
            ("0", Some("MXN"), "$0.00"),
            ("1", Some("MXN"), "$1.00"),
            ("999.5", Some("MXN"), "$999.50"),
            ("1000", Some("MXN"), "$1,000.00"),
            ("123456789.12", Some("MXN"), "$123,456,789.12"),
            ("1941.0656", Some("MXN"), "$1,941.0656"),
            ("-1160.00", Some("MXN"), "-$1,160.00"),
            ("1500", Some("USD"), "$1,500.00 USD"),
            ("1500", Some("Pesos"), "$1,500.00"),
            ("0.000001", Some("EUR"), "$0.000001 EUR"),
        ];
        for (amount, currency, shown) in cases {
            assert_eq!(money(d(amount), currency), shown, "{amount}");
        }
        assert_eq!(
            money(Decimal::MAX, None),
            "$79,228,162,514,264,337,593,543,950,335.00"
        );
    }

    #[test]
    fn numbers_and_rates() {
        assert_eq!(number(d("1")), "1");
        assert_eq!(number(d("1.000000")), "1.000000");
        assert_eq!(number(d("1500.5")), "1,500.5");
        assert_eq!(number(d("-0.25")), "-0.25");
        assert_eq!(percent(d("0.160000")), "16%");
        assert_eq!(percent(d("0.106667")), "10.6667%");
        assert_eq!(percent(d("0")), "0%");
        assert_eq!(percent(d("0.08")), "8%");
    }
}
