//! Dates as Mexico writes them: day, month, year (`30/10/2026 12:43:36`).

use chrono::{NaiveDate, NaiveDateTime};

/// `2026-10-30T12:43:36` as `30/10/2026 12:43:36`, `2026-10-30` as `30/10/2026`.
/// Fractions of a second and an offset are kept as written (`30/10/2026 12:43:36
/// -06:00`); text that is neither a date nor a timestamp stays as it is.
pub fn date_time(text: &str) -> String {
    let text = text.trim();
    if let Some(head) = text.get(..19) {
        if let Ok(at) = NaiveDateTime::parse_from_str(head, "%Y-%m-%dT%H:%M:%S") {
            let shown = at.format("%d/%m/%Y %H:%M:%S").to_string();
            let rest = &text[19..];
            return match rest.chars().next() {
                None => shown,
                Some('.') => format!("{shown}{rest}"),
                Some(_) => format!("{shown} {rest}"),
            };
        }
    }
    match NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        Ok(day) => day.format("%d/%m/%Y").to_string(),
        Err(_) => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn day_first_with_the_time() {
        assert_eq!(date_time("2026-10-30T12:43:36"), "30/10/2026 12:43:36");
        assert_eq!(date_time("2026-10-30"), "30/10/2026");
        assert_eq!(date_time(" 2026-01-05 "), "05/01/2026");
        assert_eq!(
            date_time("2025-01-01T00:00:00-06:00"),
            "01/01/2025 00:00:00 -06:00"
        );
        assert_eq!(
            date_time("2025-01-01T10:00:00.25"),
            "01/01/2025 10:00:00.25"
        );
        // Not a date: as written.
        for text in ["", "30/10/2026", "2026-13-01", "mañana"] {
            assert_eq!(date_time(text), text);
        }
    }
}
