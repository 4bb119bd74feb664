//! The lists' search (`q`): what a person types to find a document, a UUID, a folio or
//! series, an RFC or part of a name, as one value each class's SQL matches against its
//! own columns (`db::invoices`, `db::retentions`).

use super::FieldErrors;

/// The longest search accepted: longer than any UUID, RFC or folio, and a name is
/// found by a part of it.
pub const MAX_LEN: usize = 100;

/// A validated search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Search {
    /// A whole fiscal UUID, upper case: an exact match, through the `(org_id, uuid)`
    /// indexes.
    Uuid(String),
    /// Anything else: a `LIKE` pattern (`%text%`, its `%`, `_` and `\` escaped with `\`)
    /// that any of the class's searched columns may contain, ignoring case.
    Contains(String),
}

impl Search {
    /// `q` trimmed; None when it is absent or blank, an error on `q` when too long.
    pub fn parse(text: Option<&str>, errors: &mut FieldErrors) -> Option<Search> {
        let text = text?.trim();
        if text.is_empty() {
            return None;
        }
        if text.chars().count() > MAX_LEN {
            errors.add("q", &format!("must be at most {MAX_LEN} characters"));
            return None;
        }
        if let Ok(uuid) = uuid::Uuid::parse_str(text) {
            if text.len() == 36 {
                return Some(Search::Uuid(uuid.to_string().to_uppercase()));
            }
        }
        let mut pattern = String::with_capacity(text.len() + 2);
        pattern.push('%');
        for c in text.to_uppercase().chars() {
            if matches!(c, '%' | '_' | '\\') {
                pattern.push('\\');
            }
            pattern.push(c);
        }
        pattern.push('%');
        Some(Search::Contains(pattern))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (Option<Search>, FieldErrors) {
        let mut errors = FieldErrors::new();
        (Search::parse(Some(text), &mut errors), errors)
    }

    #[test]
    fn a_whole_uuid_is_an_exact_match_in_upper_case() {
        let (s, _) = parse(" c2832671-da6d-11ef-a83d-00155d012007 ");
        assert_eq!(
            s,
            Some(Search::Uuid("C2832671-DA6D-11EF-A83D-00155D012007".into()))
        );
        // Part of one is a substring like any other text.
        let (s, _) = parse("c2832671-da6d");
        assert_eq!(s, Some(Search::Contains("%C2832671-DA6D%".into())));
    }

    #[test]
    fn other_text_is_a_pattern_with_its_wildcards_escaped() {
        assert_eq!(
            parse("pase, servicios").0,
            Some(Search::Contains("%PASE, SERVICIOS%".into()))
        );
        assert_eq!(
            parse("100%_a\\b").0,
            Some(Search::Contains("%100\\%\\_A\\\\B%".into()))
        );
        assert_eq!(parse("ñandú").0, Some(Search::Contains("%ÑANDÚ%".into())));
        assert_eq!(parse("   ").0, None);
        assert_eq!(Search::parse(None, &mut FieldErrors::new()), None);
    }

    #[test]
    fn too_long_is_an_error_on_q() {
        let (s, errors) = parse(&"x".repeat(MAX_LEN + 1));
        assert_eq!(s, None);
        assert!(errors.contains("q"));
        assert!(parse(&"x".repeat(MAX_LEN)).1.is_empty());
    }
}
