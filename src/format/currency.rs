//! A document's currency (its Moneda as written) as the printed form names it.

use crate::catalogs::{Catalog, Edition};

/// Whether `currency` means Mexican pesos: none stated, `MXN`, or what CFDI 3.2's free
/// text wrote for it (`Pesos`, `MN`, `M.N.`, `Peso Mexicano`, `MXP`), in any case.
pub fn is_pesos(currency: Option<&str>) -> bool {
    let Some(currency) = currency.map(str::trim).filter(|c| !c.is_empty()) else {
        return true;
    };
    let upper = currency.to_uppercase();
    matches!(
        upper.as_str(),
        "MXN"
            | "MXP"
            | "MN"
            | "M.N."
            | "M.N"
            | "PESO"
            | "PESOS"
            | "PESO MEXICANO"
            | "PESOS MEXICANOS"
    )
}

/// How the amount in words names a currency: `UN PESO`, `DOS PESOS`, `UNA LIBRA
/// ESTERLINA`, then `00/100` and the closing (`M.N.`, or the code).
pub(super) struct Named {
    /// Singular and plural, upper case; None when the words name no currency (a code
    /// no catalog knows, or `XXX`, no currency at all).
    pub noun: Option<(String, String)>,
    pub feminine: bool,
    /// What follows the cents: `M.N.` for pesos, else the code.
    pub closing: String,
}

/// The currencies with a Spanish name of their own (singular, plural, feminine):
/// c_Moneda's descriptions are singular, and some are not what Mexico calls them.
const NAMED: &[(&str, &str, &str, bool)] = &[
    ("USD", "DÓLAR", "DÓLARES", false),
    ("EUR", "EURO", "EUROS", false),
    ("CAD", "DÓLAR CANADIENSE", "DÓLARES CANADIENSES", false),
    ("AUD", "DÓLAR AUSTRALIANO", "DÓLARES AUSTRALIANOS", false),
    ("GBP", "LIBRA ESTERLINA", "LIBRAS ESTERLINAS", true),
    ("JPY", "YEN", "YENES", false),
    ("CHF", "FRANCO SUIZO", "FRANCOS SUIZOS", false),
    ("CNY", "YUAN", "YUANES", false),
    ("BRL", "REAL BRASILEÑO", "REALES BRASILEÑOS", false),
    ("ARS", "PESO ARGENTINO", "PESOS ARGENTINOS", false),
    ("CLP", "PESO CHILENO", "PESOS CHILENOS", false),
    ("COP", "PESO COLOMBIANO", "PESOS COLOMBIANOS", false),
    ("KRW", "WON", "WONES", false),
    ("INR", "RUPIA INDIA", "RUPIAS INDIAS", true),
];

/// Pesos as `PESO(S) ... M.N.`; a currency of [`NAMED`] by its Spanish name; another
/// one c_Moneda knows by the catalog's description, upper case and invariable; any
/// other code (and `XXX`) by no noun at all, the code closing the words.
pub(super) fn named(currency: Option<&str>) -> Named {
    if is_pesos(currency) {
        return Named {
            noun: Some(("PESO".to_owned(), "PESOS".to_owned())),
            feminine: false,
            closing: "M.N.".to_owned(),
        };
    }
    let code = currency.unwrap_or_default().trim();
    let upper = code.to_uppercase();
    if let Some((_, one, many, feminine)) = NAMED.iter().find(|n| n.0 == upper) {
        return Named {
            noun: Some(((*one).to_owned(), (*many).to_owned())),
            feminine: *feminine,
            closing: upper,
        };
    }
    let noun = (upper != "XXX")
        .then(|| Catalog::Moneda.description(&upper, Edition::Cfdi40))
        .flatten()
        .map(|name| (name.to_uppercase(), name.to_uppercase()));
    Named {
        noun,
        feminine: false,
        closing: code.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pesos_in_every_spelling() {
        for c in [
            None,
            Some(""),
            Some("MXN"),
            Some(" mxn "),
            Some("Pesos"),
            Some("M.N."),
        ] {
            assert!(is_pesos(c), "{c:?}");
        }
        for c in [Some("USD"), Some("XXX"), Some("Dólares")] {
            assert!(!is_pesos(c), "{c:?}");
        }
    }

    #[test]
    fn other_currencies_are_named_from_the_catalog() {
        let named = named(Some("SEK"));
        assert_eq!(
            named.noun,
            Some(("CORONA SUECA".to_owned(), "CORONA SUECA".to_owned()))
        );
        assert_eq!(named.closing, "SEK");
        assert!(super::named(Some("XXX")).noun.is_none());
        assert!(super::named(Some("ZZZ")).noun.is_none());
    }
}
