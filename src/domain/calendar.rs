//! Calendar time in Mexico City, where the SAT's dates and the schedules' slots are
//! read: a wall-clock time as an instant (with the DST gaps and repeats of the years
//! Mexico City kept summer time, until October 2022), monthly slots on a day of the
//! month, and calendar months as an extraction's period.

use super::extraction::Period;
use chrono::{
    DateTime, Datelike, Duration, LocalResult, Months, NaiveDate, NaiveDateTime, NaiveTime,
    TimeZone, Utc,
};
use chrono_tz::Tz;

/// SAT dates are Mexico City local time; schedules are read there too.
pub const TIME_ZONE: Tz = chrono_tz::America::Mexico_City;

/// The instant a Mexico City clock shows `local`. A time the clock skipped (the start of
/// summer time, before 2022) is read as the same time an hour later, as a wall clock
/// moved forward shows it; a time it showed twice (the end of summer time) is the first.
pub fn instant(local: NaiveDateTime) -> DateTime<Utc> {
    let mut probe = local;
    for _ in 0..3 {
        match TIME_ZONE.from_local_datetime(&probe) {
            LocalResult::Single(t) | LocalResult::Ambiguous(t, _) => return t.with_timezone(&Utc),
            LocalResult::None => probe += Duration::hours(1),
        }
    }
    // Mexico City's gaps were an hour long: unreachable with the time zone database.
    Utc.from_utc_datetime(&local)
}

/// The Mexico City date at `t`.
pub fn local_date(t: DateTime<Utc>) -> NaiveDate {
    t.with_timezone(&TIME_ZONE).date_naive()
}

/// The first day of `date`'s month.
pub fn first_of_month(date: NaiveDate) -> NaiveDate {
    date.with_day(1).unwrap_or(date)
}

/// Day `day` of the month that starts on `first`; a month shorter than that takes its
/// last day (day 31 is the 30th of April and the 28th or 29th of February).
pub fn day_of_month(first: NaiveDate, day: u32) -> NaiveDate {
    let last = (first + Months::new(1)).pred_opt().unwrap_or(first);
    first.with_day(day.clamp(1, last.day())).unwrap_or(last)
}

/// A monthly slot's instant in the month that starts on `first`.
fn slot_in(first: NaiveDate, day: u32, at: NaiveTime) -> DateTime<Utc> {
    instant(day_of_month(first, day).and_time(at))
}

/// The first monthly slot (day `day` at `at`, Mexico City) strictly after `now`.
pub fn next_monthly(day: u32, at: NaiveTime, now: DateTime<Utc>) -> DateTime<Utc> {
    let first = first_of_month(local_date(now));
    (0..3)
        .map(|k| slot_in(first + Months::new(k), day, at))
        .find(|t| *t > now)
        .unwrap_or(now + Duration::days(31))
}

/// The latest monthly slot at or before `now`.
pub fn last_monthly(day: u32, at: NaiveTime, now: DateTime<Utc>) -> DateTime<Utc> {
    let first = first_of_month(local_date(now));
    (0..3)
        .map(|k| slot_in(first - Months::new(k), day, at))
        .find(|t| *t <= now)
        .unwrap_or(now)
}

/// The calendar month before the one `slot` falls in (Mexico City), and the `before`
/// months before it: one period from the first day of the earliest to the last day of
/// the latest.
pub fn months_before(slot: DateTime<Utc>, before: u32) -> Period {
    let this = first_of_month(local_date(slot));
    let to = this.pred_opt().unwrap_or(this);
    let from = this
        .checked_sub_months(Months::new(before + 1))
        .unwrap_or(first_of_month(to));
    Period { from, to }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        crate::time::parse(s).expect("timestamp")
    }

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("date")
    }

    fn hm(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).expect("time")
    }

    fn local(s: &str) -> NaiveDateTime {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M").expect("local time")
    }

    #[test]
    fn mexico_city_is_utc_minus_six_all_year_since_2022_and_kept_summer_time_before() {
        assert_eq!(
            instant(local("2026-07-01T06:00")),
            utc("2026-07-01T12:00:00Z")
        );
        assert_eq!(
            instant(local("2026-01-01T06:00")),
            utc("2026-01-01T12:00:00Z")
        );
        // 2021: summer time (UTC-5) from the first Sunday of April to the last of October.
        assert_eq!(
            instant(local("2021-07-01T06:00")),
            utc("2021-07-01T11:00:00Z")
        );
        assert_eq!(
            instant(local("2021-12-01T06:00")),
            utc("2021-12-01T12:00:00Z")
        );
        // The last change: 2022-10-30, back to UTC-6 for good.
        assert_eq!(
            instant(local("2022-10-29T06:00")),
            utc("2022-10-29T11:00:00Z")
        );
        assert_eq!(
            instant(local("2023-04-02T06:00")),
            utc("2023-04-02T12:00:00Z")
        );
    }

    #[test]
    fn a_skipped_time_is_an_hour_later_and_a_repeated_one_the_first() {
        // 2021-04-04 02:00 became 03:00: 02:30 never showed; a clock shows 03:30.
        assert_eq!(
            instant(local("2021-04-04T02:30")),
            utc("2021-04-04T08:30:00Z")
        );
        // 2021-10-31 02:00 became 01:00: 01:30 showed twice; the first was still UTC-5.
        assert_eq!(
            instant(local("2021-10-31T01:30")),
            utc("2021-10-31T06:30:00Z")
        );
    }

    #[test]
    fn monthly_slots_follow_the_calendar() {
        let six = hm(6, 0);
        // Created on the 1st before its time: that day; after it, the next month's.
        assert_eq!(
            next_monthly(1, six, utc("2026-11-01T11:59:00Z")),
            utc("2026-11-01T12:00:00Z")
        );
        assert_eq!(
            next_monthly(1, six, utc("2026-11-01T12:00:00Z")),
            utc("2026-12-01T12:00:00Z")
        );
        // Across the year's end.
        assert_eq!(
            next_monthly(1, six, utc("2026-12-15T00:00:00Z")),
            utc("2027-01-01T12:00:00Z")
        );
        // 00:30 UTC on the 1st is still the last day of the month in Mexico City.
        assert_eq!(
            next_monthly(1, six, utc("2026-12-01T00:30:00Z")),
            utc("2026-12-01T12:00:00Z")
        );
        // Before 2022 the same wall-clock slot moves with summer time.
        assert_eq!(
            next_monthly(1, six, utc("2021-06-15T00:00:00Z")),
            utc("2021-07-01T11:00:00Z")
        );
        assert_eq!(
            last_monthly(1, six, utc("2026-11-28T19:00:00Z")),
            utc("2026-11-01T12:00:00Z")
        );
        assert_eq!(
            last_monthly(1, six, utc("2026-12-01T11:59:59Z")),
            utc("2026-11-01T12:00:00Z")
        );
        assert_eq!(
            last_monthly(15, six, utc("2027-01-10T00:00:00Z")),
            utc("2026-12-15T12:00:00Z")
        );
    }

    #[test]
    fn day_31_is_a_short_month_s_last_day() {
        let at = hm(23, 0);
        let first = |s| first_of_month(date(s));
        assert_eq!(day_of_month(first("2026-02-01"), 31), date("2026-02-28"));
        assert_eq!(day_of_month(first("2028-02-01"), 31), date("2028-02-29"));
        assert_eq!(day_of_month(first("2026-04-01"), 31), date("2026-04-30"));
        assert_eq!(day_of_month(first("2026-12-01"), 31), date("2026-12-31"));
        assert_eq!(day_of_month(first("2026-02-01"), 29), date("2026-02-28"));
        // From the last slot of January, the next is February's last day, then March 31.
        let jan = next_monthly(31, at, utc("2026-01-15T00:00:00Z"));
        assert_eq!(
            jan,
            utc("2026-02-01T05:00:00Z"),
            "Jan 31 23:00 is Feb 1 05:00 UTC"
        );
        let feb = next_monthly(31, at, jan);
        assert_eq!(feb, utc("2026-03-01T05:00:00Z"), "Feb 28 23:00");
        assert_eq!(next_monthly(31, at, feb), utc("2026-04-01T05:00:00Z"));
    }

    #[test]
    fn a_slot_extracts_the_previous_calendar_month_and_the_months_before_it() {
        let p = months_before(utc("2026-11-01T12:00:00Z"), 0);
        assert_eq!((p.from, p.to), (date("2026-10-01"), date("2026-10-31")));
        let p = months_before(utc("2026-11-01T12:00:00Z"), 2);
        assert_eq!((p.from, p.to), (date("2026-08-01"), date("2026-10-31")));
        // At the year's end: January's slot extracts December, and the months before it
        // reach into the year before.
        let p = months_before(utc("2027-01-01T12:00:00Z"), 0);
        assert_eq!((p.from, p.to), (date("2026-12-01"), date("2026-12-31")));
        let p = months_before(utc("2027-02-01T12:00:00Z"), 2);
        assert_eq!((p.from, p.to), (date("2026-11-01"), date("2027-01-31")));
        // March's slot extracts a February of 28 or 29 days.
        let p = months_before(utc("2028-03-01T12:00:00Z"), 0);
        assert_eq!((p.from, p.to), (date("2028-02-01"), date("2028-02-29")));
        // 03:00 UTC on Dec 1 is still November 30 in Mexico City: October.
        let p = months_before(utc("2026-12-01T03:00:00Z"), 0);
        assert_eq!((p.from, p.to), (date("2026-10-01"), date("2026-10-31")));
        // Eleven months before December: the whole year.
        let p = months_before(utc("2027-01-01T12:00:00Z"), 11);
        assert_eq!((p.from, p.to), (date("2026-01-01"), date("2026-12-31")));
    }
}
