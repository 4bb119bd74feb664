//! The service's timestamp format: UTC, six fractional digits, `Z`. Fixed width, so
//! text comparison in SQL orders timestamps correctly.

use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};

pub fn format(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

pub fn now() -> String {
    format(Utc::now())
}

/// Real time moved by a fixed offset: the schedules' clock, which a test starts at a
/// chosen instant (`--schedule-clock`) and which then runs on at real speed.
#[derive(Debug, Clone, Copy, Default)]
pub struct Clock {
    offset: chrono::Duration,
}

impl Clock {
    /// Real time, or real time moved so that it reads `start` now.
    pub fn starting_at(start: Option<DateTime<Utc>>) -> Clock {
        Clock {
            offset: start.map_or(chrono::Duration::zero(), |at| at - Utc::now()),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + self.offset
    }
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

/// The dates stored text can hold: a four-digit year, so that dates and timestamps
/// compare correctly as text (`+10000-01-01` sorts before `2026-...`).
pub const FIRST_DATE: NaiveDate = match NaiveDate::from_ymd_opt(1, 1, 1) {
    Some(d) => d,
    None => NaiveDate::MIN,
};
pub const LAST_DATE: NaiveDate = match NaiveDate::from_ymd_opt(9999, 12, 31) {
    Some(d) => d,
    None => NaiveDate::MAX,
};

/// What a bad date in input is told.
pub const DATE_RULE: &str = "must be a date (YYYY-MM-DD) from 0001-01-01 to 9999-12-31";

/// A date in input: `YYYY-MM-DD`, or an RFC 3339 timestamp whose date part is used;
/// None outside `FIRST_DATE..=LAST_DATE`.
pub fn parse_date(s: &str) -> Option<NaiveDate> {
    let s = s.trim();
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .or_else(|| DateTime::parse_from_rfc3339(s).ok().map(|t| t.date_naive()))
        .filter(|d| (FIRST_DATE..=LAST_DATE).contains(d))
}

/// The exclusive upper bound, as text, of a range whose last day is `to`. After
/// `9999-12-31` (the common way to say "no end") it is `9999-12-32`: no date, but text
/// that sorts after every date and timestamp of that day.
pub fn day_after(to: NaiveDate) -> String {
    match to.succ_opt().filter(|d| *d <= LAST_DATE) {
        Some(d) => d.format("%Y-%m-%d").to_string(),
        None => "9999-12-32".into(),
    }
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

    #[test]
    fn dates_stay_within_four_digit_years() {
        assert_eq!(parse_date("9999-12-31"), Some(LAST_DATE));
        assert_eq!(parse_date("0001-01-01"), Some(FIRST_DATE));
        assert_eq!(parse_date("+10000-01-01"), None);
        assert_eq!(parse_date("0000-12-31"), None);
        assert_eq!(parse_date("-0001-01-01"), None);
    }

    #[test]
    fn the_day_after_the_last_date_is_no_end() {
        let d = NaiveDate::from_ymd_opt(2026, 12, 31).expect("valid");
        assert_eq!(day_after(d), "2027-01-01");
        assert!(day_after(LAST_DATE).as_str() > "9999-12-31T23:59:59.999999Z");
    }
}
