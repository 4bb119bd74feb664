//! The service's timestamp format: UTC, six fractional digits, `Z`. Fixed width, so
//! text comparison in SQL orders timestamps correctly.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

pub fn format(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

pub fn now() -> String {
    format(Utc::now())
}

/// `now + d`, in the service's format.
pub fn after(d: std::time::Duration) -> String {
    let d = chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX);
    format(
        Utc::now()
            .checked_add_signed(d)
            .unwrap_or(DateTime::<Utc>::MAX_UTC),
    )
}

/// An RFC 3339 timestamp (any offset) as UTC.
pub fn parse(s: &str) -> Option<DateTime<Utc>> {
    DateTime::parse_from_rfc3339(s.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

/// A date in input: `YYYY-MM-DD`, or an RFC 3339 timestamp whose date part is used.
pub fn parse_date(s: &str) -> Option<NaiveDate> {
    let s = s.trim();
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .or_else(|| DateTime::parse_from_rfc3339(s).ok().map(|t| t.date_naive()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_has_six_fraction_digits_and_z() {
        let t = DateTime::parse_from_rfc3339("2026-11-21T10:15:30.123Z")
            .expect("valid")
            .with_timezone(&Utc);
        assert_eq!(format(t), "2026-11-21T10:15:30.123000Z");
    }

    #[test]
    fn dates_accept_plain_dates_and_timestamps() {
        let d = NaiveDate::from_ymd_opt(2026, 1, 31).expect("valid");
        assert_eq!(parse_date("2026-01-31"), Some(d));
        assert_eq!(parse_date("2026-01-31T23:00:00-06:00"), Some(d));
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("yesterday"), None);
    }
}
