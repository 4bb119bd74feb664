//! CFDI relations (CfdiRelacionados, c_TipoRelacion): what each code means, as the
//! invoice object names it.

/// Each TipoRelacion code and its name; another code shows with a null name.
pub const KINDS: &[(&str, &str)] = &[
    ("01", "credit_note"),
    ("02", "debit_note"),
    ("03", "return"),
    ("04", "substitution"),
    ("05", "transfer"),
    ("06", "invoice_of_transfers"),
    ("07", "advance_applied"),
    ("08", "installments"),
    ("09", "deferred_payments"),
];

/// The name of a TipoRelacion code.
pub fn name(code: &str) -> Option<&'static str> {
    KINDS.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

#[cfg(test)]
mod tests {
    #[test]
    fn codes_have_names_and_unknown_ones_none() {
        assert_eq!(super::name("01"), Some("credit_note"));
        assert_eq!(super::name("04"), Some("substitution"));
        assert_eq!(super::name("07"), Some("advance_applied"));
        assert_eq!(super::name("10"), None);
    }
}
