//! The amount in words (importe con letra) every printed CFDI in Mexico carries:
//! `TREINTA Y OCHO MIL VEINTIDÓS PESOS 91/100 M.N.`, `UN MILLÓN DE DÓLARES 00/100 USD`.
//!
//! Exact for every amount a `Decimal` holds (up to 79,228 cuatrillones). The cents are
//! the amount rounded to two decimals half away from zero, as the SAT rounds amounts
//! (`10.005` reads `10 ... 01/100`, `0.995` reads `UN PESO 00/100`); a negative amount
//! reads `MENOS ...`. The number agrees with its currency: `UN PESO`, `VEINTIÚN
//! PESOS`, `UNA LIBRA ESTERLINA`, `DOSCIENTAS LIBRAS`; `DE` joins a round million to
//! the currency (`UN MILLÓN DE PESOS`, but `UN MILLÓN MIL PESOS`); `MIL`, never `UN
//! MIL`. Without a currency noun (a code no catalog knows) the number stands alone:
//! `VEINTIUNO 00/100 ABC`.

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::{Decimal, RoundingStrategy};

use super::currency::named;

/// How a number ending in one is written: before a masculine noun (`UN`, `VEINTIÚN`),
/// alone (`UNO`, `VEINTIUNO`), or before a feminine noun (`UNA`, `VEINTIUNA`, which
/// also makes the hundreds feminine: `DOSCIENTAS`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Form {
    BeforeNoun,
    Alone,
    Feminine,
}

/// Powers of a million, each with its singular and plural.
const SCALES: [(&str, &str); 4] = [
    ("MILLÓN", "MILLONES"),
    ("BILLÓN", "BILLONES"),
    ("TRILLÓN", "TRILLONES"),
    ("CUATRILLÓN", "CUATRILLONES"),
];

/// `amount` in words with its currency and cents: `currency` is the document's Moneda
/// as written (None or a 3.2 peso spelling is pesos).
pub fn amount_in_words(amount: Decimal, currency: Option<&str>) -> String {
    let named = named(currency);
    let rounded = amount
        .abs()
        .round_dp_with_strategy(2, RoundingStrategy::MidpointAwayFromZero);
    let whole = rounded.trunc();
    // Both fit: a Decimal's integer part is below 2^96, the cents below 100.
    let integer = whole.to_u128().unwrap_or_default();
    let cents = ((rounded - whole) * Decimal::ONE_HUNDRED)
        .to_u32()
        .unwrap_or_default();
    let form = match (&named.noun, named.feminine) {
        (None, _) => Form::Alone,
        (Some(_), true) => Form::Feminine,
        (Some(_), false) => Form::BeforeNoun,
    };
    let mut out = String::new();
    if amount.is_sign_negative() && !rounded.is_zero() {
        out.push_str("MENOS ");
    }
    out.push_str(&number(integer, form));
    if let Some((one, many)) = &named.noun {
        out.push(' ');
        if integer == 1 {
            out.push_str(one);
        } else {
            if integer % 1_000_000 == 0 && integer > 0 {
                out.push_str("DE ");
            }
            out.push_str(many);
        }
    }
    out.push_str(&format!(" {cents:02}/100 {}", named.closing));
    out
}

/// A whole number in words: `CERO`, `CIENTO UN`, `MIL MILLONES`.
fn number(n: u128, form: Form) -> String {
    if n == 0 {
        return "CERO".to_owned();
    }
    let mut parts = Vec::new();
    // Groups of six digits: units (below a million), millones, billones, ...
    let mut groups = Vec::new();
    let mut rest = n;
    while rest > 0 {
        groups.push((rest % 1_000_000) as u32);
        rest /= 1_000_000;
    }
    for (power, group) in groups.iter().enumerate().rev() {
        let group = *group;
        if group == 0 {
            continue;
        }
        if power == 0 {
            parts.push(below_million(group, form));
            continue;
        }
        // Beyond cuatrillones a Decimal cannot go; the largest scale repeats if it did.
        let (one, many) = SCALES[(power - 1).min(SCALES.len() - 1)];
        if group == 1 {
            parts.push(format!("UN {one}"));
        } else {
            // Millón is masculine whatever the currency: VEINTIÚN MILLONES.
            parts.push(format!("{} {many}", below_million(group, Form::BeforeNoun)));
        }
    }
    parts.join(" ")
}

/// 1 to 999,999: `MIL`, `VEINTIÚN MIL`, `DOSCIENTAS MIL UNA`.
fn below_million(n: u32, form: Form) -> String {
    let (thousands, rest) = (n / 1000, n % 1000);
    let mut out = match thousands {
        0 => String::new(),
        1 => "MIL".to_owned(),
        _ => {
            // VEINTIÚN MIL even standing alone; feminine agreement stays (DOSCIENTAS MIL).
            let before_mil = if form == Form::Alone {
                Form::BeforeNoun
            } else {
                form
            };
            format!("{} MIL", below_thousand(thousands, before_mil))
        }
    };
    if rest > 0 {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&below_thousand(rest, form));
    }
    out
}

/// 1 to 999: `CIEN`, `CIENTO UN`, `QUINIENTAS`.
fn below_thousand(n: u32, form: Form) -> String {
    if n == 100 {
        return "CIEN".to_owned();
    }
    let (hundreds, rest) = (n / 100, n % 100);
    let mut out = String::new();
    if hundreds > 0 {
        let word = [
            "CIENTO",
            "DOSCIENTOS",
            "TRESCIENTOS",
            "CUATROCIENTOS",
            "QUINIENTOS",
            "SEISCIENTOS",
            "SETECIENTOS",
            "OCHOCIENTOS",
            "NOVECIENTOS",
        ][hundreds as usize - 1];
        match word.strip_suffix("OS") {
            Some(stem) if form == Form::Feminine && hundreds > 1 => {
                out.push_str(stem);
                out.push_str("AS");
            }
            _ => out.push_str(word),
        }
    }
    if rest > 0 {
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(&below_hundred(rest, form));
    }
    out
}

const UNITS: [&str; 30] = [
    "",
    "UNO",
    "DOS",
    "TRES",
    "CUATRO",
    "CINCO",
    "SEIS",
    "SIETE",
    "OCHO",
    "NUEVE",
    "DIEZ",
    "ONCE",
    "DOCE",
    "TRECE",
    "CATORCE",
    "QUINCE",
    "DIECISÉIS",
    "DIECISIETE",
    "DIECIOCHO",
    "DIECINUEVE",
    "VEINTE",
    "VEINTIUNO",
    "VEINTIDÓS",
    "VEINTITRÉS",
    "VEINTICUATRO",
    "VEINTICINCO",
    "VEINTISÉIS",
    "VEINTISIETE",
    "VEINTIOCHO",
    "VEINTINUEVE",
];

const TENS: [&str; 10] = [
    "",
    "",
    "",
    "TREINTA",
    "CUARENTA",
    "CINCUENTA",
    "SESENTA",
    "SETENTA",
    "OCHENTA",
    "NOVENTA",
];

/// 1 to 99.
fn below_hundred(n: u32, form: Form) -> String {
    if n < 30 {
        return ending_in_one(UNITS[n as usize], n % 10 == 1 && n != 11, form);
    }
    let (tens, unit) = (n / 10, n % 10);
    if unit == 0 {
        return TENS[tens as usize].to_owned();
    }
    let unit = ending_in_one(UNITS[unit as usize], unit == 1, form);
    format!("{} Y {unit}", TENS[tens as usize])
}

/// `UNO` / `VEINTIUNO` in the form the noun after it asks for.
fn ending_in_one(word: &str, ends_in_one: bool, form: Form) -> String {
    if !ends_in_one {
        return word.to_owned();
    }
    match form {
        Form::Alone => word.to_owned(),
        Form::Feminine => format!("{}A", &word[..word.len() - 1]),
        // VEINTIUNO -> VEINTIÚN: the stress mark moves onto the shortened word.
        Form::BeforeNoun if word == "UNO" => "UN".to_owned(),
        Form::BeforeNoun => format!("{}ÚN", &word[..word.len() - "UNO".len()]),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn pesos(amount: &str) -> String {
        amount_in_words(amount.parse().unwrap(), Some("MXN"))
    }

    #[test]
    fn edge_amounts_in_pesos() {
        let cases = [
            ("0", "CERO PESOS 00/100 M.N."),
            ("0.00", "CERO PESOS 00/100 M.N."),
            ("1", "UN PESO 00/100 M.N."),
            ("1.50", "UN PESO 50/100 M.N."),
            ("0.01", "CERO PESOS 01/100 M.N."),
            ("2", "DOS PESOS 00/100 M.N."),
            ("11", "ONCE PESOS 00/100 M.N."),
            ("16", "DIECISÉIS PESOS 00/100 M.N."),
            ("20", "VEINTE PESOS 00/100 M.N."),
            ("21", "VEINTIÚN PESOS 00/100 M.N."),
            ("22", "VEINTIDÓS PESOS 00/100 M.N."),
            ("30", "TREINTA PESOS 00/100 M.N."),
            ("31", "TREINTA Y UN PESOS 00/100 M.N."),
            ("99", "NOVENTA Y NUEVE PESOS 00/100 M.N."),
            ("100", "CIEN PESOS 00/100 M.N."),
            ("101", "CIENTO UN PESOS 00/100 M.N."),
            ("115", "CIENTO QUINCE PESOS 00/100 M.N."),
            ("200", "DOSCIENTOS PESOS 00/100 M.N."),
            ("500", "QUINIENTOS PESOS 00/100 M.N."),
            ("777", "SETECIENTOS SETENTA Y SIETE PESOS 00/100 M.N."),
            ("999", "NOVECIENTOS NOVENTA Y NUEVE PESOS 00/100 M.N."),
            ("1000", "MIL PESOS 00/100 M.N."),
            ("1001", "MIL UN PESOS 00/100 M.N."),
            ("1100", "MIL CIEN PESOS 00/100 M.N."),
            ("2000", "DOS MIL PESOS 00/100 M.N."),
            ("21000", "VEINTIÚN MIL PESOS 00/100 M.N."),
            ("100000", "CIEN MIL PESOS 00/100 M.N."),
            ("101000", "CIENTO UN MIL PESOS 00/100 M.N."),
            ("38022.91", "TREINTA Y OCHO MIL VEINTIDÓS PESOS 91/100 M.N."),
            ("1000000", "UN MILLÓN DE PESOS 00/100 M.N."),
            ("1000000.50", "UN MILLÓN DE PESOS 50/100 M.N."),
            ("1000001", "UN MILLÓN UN PESOS 00/100 M.N."),
            ("1001000", "UN MILLÓN MIL PESOS 00/100 M.N."),
            ("2000000", "DOS MILLONES DE PESOS 00/100 M.N."),
            ("21000000", "VEINTIÚN MILLONES DE PESOS 00/100 M.N."),
            ("1000000000", "MIL MILLONES DE PESOS 00/100 M.N."),
            ("1001000000", "MIL UN MILLONES DE PESOS 00/100 M.N."),
            (
                "999999999.99",
                "NOVECIENTOS NOVENTA Y NUEVE MILLONES NOVECIENTOS NOVENTA Y NUEVE MIL \
                 NOVECIENTOS NOVENTA Y NUEVE PESOS 99/100 M.N.",
            ),
            ("1000000000000", "UN BILLÓN DE PESOS 00/100 M.N."),
            ("2000000000001", "DOS BILLONES UN PESOS 00/100 M.N."),
        ];
        for (amount, words) in cases {
            assert_eq!(pesos(amount), words, "{amount}");
        }
    }

    #[test]
    fn cents_round_half_away_from_zero() {
        assert_eq!(pesos("10.005"), "DIEZ PESOS 01/100 M.N.");
        assert_eq!(pesos("10.004999"), "DIEZ PESOS 00/100 M.N.");
        assert_eq!(pesos("0.995"), "UN PESO 00/100 M.N.");
        assert_eq!(pesos("999999.999"), "UN MILLÓN DE PESOS 00/100 M.N.");
        assert_eq!(
            pesos("-1160.5"),
            "MENOS MIL CIENTO SESENTA PESOS 50/100 M.N."
        );
        assert_eq!(pesos("-0.001"), "CERO PESOS 00/100 M.N.");
    }

    #[test]
    fn the_largest_amount_a_decimal_holds() {
        let words = amount_in_words(Decimal::MAX, Some("MXN"));
        // 79,228,162,514,264,337,593,543,950,335.
        assert_eq!(
            words,
            "SETENTA Y NUEVE MIL DOSCIENTOS VEINTIOCHO CUATRILLONES CIENTO SESENTA Y DOS MIL \
             QUINIENTOS CATORCE TRILLONES DOSCIENTOS SESENTA Y CUATRO MIL TRESCIENTOS TREINTA Y \
             SIETE BILLONES QUINIENTOS NOVENTA Y TRES MIL QUINIENTOS CUARENTA Y TRES MILLONES \
             NOVECIENTOS CINCUENTA MIL TRESCIENTOS TREINTA Y CINCO PESOS 00/100 M.N."
        );
        // Six decimals, as the XML may write them.
        let small = Decimal::new(1, 28);
        assert_eq!(amount_in_words(small, None), "CERO PESOS 00/100 M.N.");
    }

    #[test]
    fn other_currencies() {
        let words =
            |amount: &str, currency: &str| amount_in_words(amount.parse().unwrap(), Some(currency));
        assert_eq!(words("1", "USD"), "UN DÓLAR 00/100 USD");
        assert_eq!(words("0", "USD"), "CERO DÓLARES 00/100 USD");
        assert_eq!(words("1500.5", "USD"), "MIL QUINIENTOS DÓLARES 50/100 USD");
        assert_eq!(words("1000000", "USD"), "UN MILLÓN DE DÓLARES 00/100 USD");
        assert_eq!(words("21", "EUR"), "VEINTIÚN EUROS 00/100 EUR");
        // A feminine currency: the number agrees with it.
        assert_eq!(words("1", "GBP"), "UNA LIBRA ESTERLINA 00/100 GBP");
        assert_eq!(words("21", "GBP"), "VEINTIUNA LIBRAS ESTERLINAS 00/100 GBP");
        assert_eq!(
            words("201201", "GBP"),
            "DOSCIENTAS UNA MIL DOSCIENTAS UNA LIBRAS ESTERLINAS 00/100 GBP"
        );
        assert_eq!(
            words("200000000", "GBP"),
            "DOSCIENTOS MILLONES DE LIBRAS ESTERLINAS 00/100 GBP"
        );
        // The rest by c_Moneda's name.
        assert_eq!(words("3", "SEK"), "TRES CORONA SUECA 00/100 SEK");
        // A code no catalog knows: the number alone, the code as written.
        assert_eq!(words("21", "Abc"), "VEINTIUNO 00/100 Abc");
        assert_eq!(words("21000", "Abc"), "VEINTIÚN MIL 00/100 Abc");
        assert_eq!(words("0", "XXX"), "CERO 00/100 XXX");
        // CFDI 3.2's peso spellings, and no currency at all, are pesos.
        assert_eq!(words("1", "Pesos"), "UN PESO 00/100 M.N.");
        assert_eq!(
            amount_in_words(Decimal::TEN, None),
            "DIEZ PESOS 00/100 M.N."
        );
    }
}
