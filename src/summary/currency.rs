//! Which currencies are pesos. CFDI 3.3 and 4.0 write Moneda from the SAT's catalog
//! (`MXN`); CFDI 3.2's Moneda was free text, and real 3.2 documents spell pesos many
//! ways (`Pesos`, `M.N.`, `Pesos Mexicanos`, `MXP`, the ISO code before 1993, ...),
//! usually without a TipoCambio: the summary reads each of them as MXN at rate 1.

/// The peso spellings, as `key` writes them: upper case, without accents, blanks or
/// punctuation (`M.N.`, `m n` and `MN` are one spelling).
const PESO_SPELLINGS: &[&str] = &[
    "MXN",
    "MXP",
    "MN",
    "PESO",
    "PESOS",
    "PESOMN",
    "PESOSMN",
    "PESOMXN",
    "PESOSMXN",
    "PESOMEXICANO",
    "PESOSMEXICANOS",
    "MONEDANACIONAL",
    "PESOSMONEDANACIONAL",
];

/// A currency as `PESO_SPELLINGS` compares it: its letters and digits, upper case,
/// accents dropped.
fn key(currency: &str) -> String {
    currency
        .chars()
        .map(|c| match c {
            'á' | 'à' | 'Á' | 'À' => 'A',
            'é' | 'è' | 'É' | 'È' => 'E',
            'í' | 'ì' | 'Í' | 'Ì' => 'I',
            'ó' | 'ò' | 'Ó' | 'Ò' => 'O',
            'ú' | 'ù' | 'ü' | 'Ú' | 'Ù' | 'Ü' => 'U',
            c => c.to_ascii_uppercase(),
        })
        .filter(char::is_ascii_alphanumeric)
        .collect()
}

/// Pesos: no currency stated, `MXN`, or another spelling of pesos (`PESO_SPELLINGS`).
pub fn is_pesos(currency: Option<&str>) -> bool {
    currency.is_none_or(|c| PESO_SPELLINGS.contains(&key(c).as_str()))
}

/// Whether two stated currencies are one: the same code (case aside), or both pesos
/// however spelled. A missing one cannot contradict the other.
pub fn same_currency(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => {
            a.trim().eq_ignore_ascii_case(b.trim()) || (is_pesos(Some(a)) && is_pesos(Some(b)))
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::{is_pesos, same_currency};

    #[test]
    fn the_spellings_of_pesos_in_real_cfdi_32_are_pesos() {
        for c in [
            "MXN",
            "mxn",
            " MXN ",
            "Pesos",
            "PESOS",
            "pesos",
            "Peso",
            "M.N.",
            "M.N",
            "MN",
            "m.n.",
            "M. N.",
            "Pesos Mexicanos",
            "PESOS MEXICANOS",
            "Peso Mexicano",
            "Pesos M.N.",
            "PESOS (MXN)",
            "MXP",
            "Moneda Nacional",
            "MONEDA NACIONAL",
            "Pésos",
            "Pesos Moneda Nacional",
        ] {
            assert!(is_pesos(Some(c)), "{c}");
        }
        assert!(is_pesos(None), "no Moneda reads as pesos");
    }

    #[test]
    fn other_currencies_and_unclear_spellings_are_not() {
        for c in [
            "USD",
            "Dolares",
            "EUR",
            "XXX",
            "Pesos Chilenos",
            "CLP",
            "$",
            "",
            "MXNUSD",
            "US Dollar",
        ] {
            assert!(!is_pesos(Some(c)), "{c}");
        }
    }

    #[test]
    fn currencies_match_by_code_or_as_pesos() {
        assert!(same_currency(Some("Pesos"), Some("MXN")));
        assert!(same_currency(Some("usd"), Some("USD")));
        assert!(same_currency(None, Some("USD")));
        assert!(!same_currency(Some("USD"), Some("MXN")));
        assert!(!same_currency(Some("Pesos"), Some("USD")));
    }
}
