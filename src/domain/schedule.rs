//! Schedules: an entity kept in sync by extractions the service starts on its own.

use super::extraction::{Direction, Period};
use super::{optional_string, required_string};
use crate::domain::FieldErrors;
use chrono::{DateTime, Days, NaiveTime, TimeZone, Utc};
use chrono_tz::Tz;
use serde_json::{Map, Value};
use std::time::Duration;

/// SAT dates are Mexico City local time; `daily_at` and each run's period are read there.
pub const TIME_ZONE: Tz = chrono_tz::America::Mexico_City;
pub const DEFAULT_LOOKBACK_DAYS: i64 = 7;
/// About the six years of CFDI the SAT keeps online.
pub const MAX_LOOKBACK_DAYS: i64 = 6 * 365;
/// The longest `every`: a month.
pub const MAX_EVERY: Duration = Duration::from_secs(31 * 24 * 3600);
/// Why the service paused a schedule on its own.
pub const PAUSED_INVALID_CREDENTIALS: &str = "invalid_credentials";
/// A schedule its owner paused through PATCH.
pub const PAUSED_BY_USER: &str = "paused_by_user";

/// How often a schedule runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// A fixed interval, measured from each run's start.
    Every(Duration),
    /// Once a day at this Mexico City time.
    DailyAt(NaiveTime),
}

impl Timing {
    /// The first slot strictly after `now`.
    pub fn next_after(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            Timing::Every(every) => {
                now + chrono::Duration::from_std(*every).unwrap_or(chrono::Duration::days(31))
            }
            Timing::DailyAt(at) => {
                let today = now.with_timezone(&TIME_ZONE).date_naive();
                (0..3)
                    .filter_map(|d| today.checked_add_days(Days::new(d)))
                    .filter_map(|day| TIME_ZONE.from_local_datetime(&day.and_time(*at)).earliest())
                    .map(|t| t.with_timezone(&Utc))
                    .find(|t| *t > now)
                    .unwrap_or(now + chrono::Duration::days(1))
            }
        }
    }

    /// `every` as the API shows it (`6h`, `1h 30m`, `31d`).
    pub fn every_text(&self) -> Option<String> {
        match self {
            Timing::Every(d) => Some(interval_text(*d)),
            Timing::DailyAt(_) => None,
        }
    }

    pub fn daily_at_text(&self) -> Option<String> {
        match self {
            Timing::DailyAt(t) => Some(t.format("%H:%M").to_string()),
            Timing::Every(_) => None,
        }
    }
}

/// An interval in whole days, hours, minutes and seconds (`31d`, `1d 12h`, `1h 30m`):
/// exact, and read back as written. humantime's own format counts months of 30.44
/// days, which turns `31d` into `1month 13h 26m 24s`.
pub fn interval_text(d: Duration) -> String {
    let secs = d.as_secs();
    let parts = [
        (secs / 86_400, "d"),
        (secs / 3600 % 24, "h"),
        (secs / 60 % 60, "m"),
        (secs % 60, "s"),
    ];
    let text: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, unit)| format!("{n}{unit}"))
        .collect();
    if text.is_empty() {
        "0s".into()
    } else {
        text.join(" ")
    }
}

/// The period a run starting at `now` looks at: the last `lookback_days` days up to
/// today, Mexico City time.
pub fn run_period(now: DateTime<Utc>, lookback_days: i64) -> Period {
    let to = now.with_timezone(&TIME_ZONE).date_naive();
    let from = to
        .checked_sub_days(Days::new(lookback_days.max(0) as u64))
        .unwrap_or(to);
    Period { from, to }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewSchedule {
    pub entity_id: String,
    pub directions: Vec<Direction>,
    pub timing: Timing,
    pub lookback_days: i64,
}

/// A PATCH: every field optional; `status` is `active` or `paused`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchedulePatch {
    pub directions: Option<Vec<Direction>>,
    pub timing: Option<Timing>,
    pub lookback_days: Option<i64>,
    pub active: Option<bool>,
}

impl NewSchedule {
    /// `min_every` is the `--schedule-min-interval` setting.
    pub fn parse(body: &Map<String, Value>, min_every: Duration) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        let entity_id =
            required_string(body, "entity_id", "entity_id", &mut errors).and_then(|s| {
                let id = uuid::Uuid::parse_str(s.trim()).ok().map(|u| u.to_string());
                if id.is_none() {
                    errors.add("entity_id", "must be a UUID");
                }
                id
            });
        let directions = parse_directions(body.get("directions"), &mut errors)
            .unwrap_or_else(|| vec![Direction::Issued, Direction::Received]);
        let timing = parse_timing(body, min_every, &mut errors);
        if timing.is_none() && !errors.contains("every") && !errors.contains("daily_at") {
            errors.add("every", "give every (an interval) or daily_at (HH:MM)");
        }
        let lookback_days =
            parse_lookback(body.get("lookback_days"), &mut errors).unwrap_or(DEFAULT_LOOKBACK_DAYS);
        match (entity_id, timing) {
            (Some(entity_id), Some(timing)) if errors.is_empty() => Ok(NewSchedule {
                entity_id,
                directions,
                timing,
                lookback_days,
            }),
            _ => Err(errors),
        }
    }
}

impl SchedulePatch {
    pub fn parse(body: &Map<String, Value>, min_every: Duration) -> Result<Self, FieldErrors> {
        let mut errors = FieldErrors::new();
        if body.get("entity_id").is_some_and(|v| !v.is_null()) {
            errors.add(
                "entity_id",
                "can't be changed; create a schedule for the other entity",
            );
        }
        let patch = SchedulePatch {
            directions: parse_directions(body.get("directions"), &mut errors),
            timing: parse_timing(body, min_every, &mut errors),
            lookback_days: parse_lookback(body.get("lookback_days"), &mut errors),
            active: match optional_string(body, "status", "status", &mut errors).as_deref() {
                None => None,
                Some("active") => Some(true),
                Some("paused") => Some(false),
                Some(_) => {
                    errors.add("status", "must be active or paused");
                    None
                }
            },
        };
        if errors.is_empty() {
            Ok(patch)
        } else {
            Err(errors)
        }
    }
}

/// None when absent or null (the caller's default applies).
fn parse_directions(value: Option<&Value>, errors: &mut FieldErrors) -> Option<Vec<Direction>> {
    const MESSAGE: &str = "must be a non-empty array of issued and/or received";
    let items = match value {
        None | Some(Value::Null) => return None,
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(_) => {
            errors.add("directions", MESSAGE);
            return None;
        }
    };
    let mut directions = vec![];
    for item in items {
        match item.as_str().and_then(Direction::parse) {
            Some(d) if !directions.contains(&d) => directions.push(d),
            Some(_) => {}
            None => {
                errors.add("directions", MESSAGE);
                return None;
            }
        }
    }
    directions.sort_by_key(|d| d.as_str());
    Some(directions)
}

/// `every` or `daily_at`, never both; None when neither is given (or on an error).
fn parse_timing(
    body: &Map<String, Value>,
    min_every: Duration,
    errors: &mut FieldErrors,
) -> Option<Timing> {
    let every = optional_string(body, "every", "every", errors);
    let daily_at = optional_string(body, "daily_at", "daily_at", errors);
    match (every, daily_at) {
        (Some(_), Some(_)) => {
            errors.add("every", "give either every or daily_at, not both");
            None
        }
        (Some(every), None) => match humantime::parse_duration(every.trim()) {
            Err(_) => {
                errors.add("every", "must be an interval such as 6h, 90m or 1d");
                None
            }
            Ok(d) if d < min_every => {
                let min = interval_text(min_every);
                errors.add("every", &format!("must be at least {min}"));
                None
            }
            Ok(d) if d.subsec_nanos() != 0 => {
                errors.add("every", "must be a whole number of seconds");
                None
            }
            Ok(d) if d > MAX_EVERY => {
                errors.add("every", "must be at most 31 days");
                None
            }
            Ok(d) => Some(Timing::Every(d)),
        },
        (None, Some(at)) => {
            let at = at.trim();
            let time = (at.len() == 5)
                .then(|| NaiveTime::parse_from_str(at, "%H:%M").ok())
                .flatten();
            if time.is_none() {
                errors.add("daily_at", "must be a time HH:MM (00:00 to 23:59)");
            }
            time.map(Timing::DailyAt)
        }
        (None, None) => None,
    }
}

fn parse_lookback(value: Option<&Value>, errors: &mut FieldErrors) -> Option<i64> {
    let value = value.filter(|v| !v.is_null())?;
    let days = value
        .as_i64()
        .filter(|d| (1..=MAX_LOOKBACK_DAYS).contains(d));
    if days.is_none() {
        errors.add(
            "lookback_days",
            &format!("must be a whole number of days from 1 to {MAX_LOOKBACK_DAYS}"),
        );
    }
    days
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const HOUR: Duration = Duration::from_secs(3600);
    const ENTITY: &str = "0196b0a0-0000-7000-8000-000000000001";

    fn parse(v: Value) -> Result<NewSchedule, FieldErrors> {
        NewSchedule::parse(v.as_object().expect("object"), HOUR)
    }

    fn utc(s: &str) -> DateTime<Utc> {
        crate::time::parse(s).expect("timestamp")
    }

    #[test]
    fn defaults_are_both_directions_and_seven_days() {
        let s = parse(json!({"entity_id": ENTITY, "every": "6h"})).expect("valid");
        assert_eq!(s.directions, [Direction::Issued, Direction::Received]);
        assert_eq!(s.lookback_days, DEFAULT_LOOKBACK_DAYS);
        assert_eq!(s.timing, Timing::Every(6 * HOUR));
        assert_eq!(s.timing.every_text().as_deref(), Some("6h"));
    }

    #[test]
    fn every_reads_back_in_days_hours_minutes_and_seconds() {
        for (written, shown) in [
            ("31d", "31d"),
            ("6h", "6h"),
            ("90m", "1h 30m"),
            ("1d 12h", "1d 12h"),
            ("36h", "1d 12h"),
            ("1h 0m 1s", "1h 1s"),
            ("1week", "7d"),
        ] {
            let d = humantime::parse_duration(written).expect("valid");
            assert_eq!(interval_text(d), shown, "{written}");
        }
        let s = parse(json!({"entity_id": ENTITY, "daily_at": "07:30",
            "directions": ["received", "received"], "lookback_days": 30}))
        .expect("valid");
        assert_eq!(s.directions, [Direction::Received]);
        assert_eq!(s.timing.daily_at_text().as_deref(), Some("07:30"));
    }

    #[test]
    fn each_rule_fails_on_its_field() {
        let cases = [
            (json!({"every": "6h"}), "entity_id"),
            (json!({"entity_id": "x", "every": "6h"}), "entity_id"),
            (json!({"entity_id": ENTITY}), "every"),
            (
                json!({"entity_id": ENTITY, "every": "6h", "daily_at": "07:00"}),
                "every",
            ),
            (json!({"entity_id": ENTITY, "every": "30m"}), "every"),
            (json!({"entity_id": ENTITY, "every": "soon"}), "every"),
            (json!({"entity_id": ENTITY, "every": "40d"}), "every"),
            (json!({"entity_id": ENTITY, "every": "2h 500ms"}), "every"),
            (
                json!({"entity_id": ENTITY, "daily_at": "24:00"}),
                "daily_at",
            ),
            (json!({"entity_id": ENTITY, "daily_at": "7:00"}), "daily_at"),
            (json!({"entity_id": ENTITY, "daily_at": 7}), "daily_at"),
            (
                json!({"entity_id": ENTITY, "every": "6h", "directions": []}),
                "directions",
            ),
            (
                json!({"entity_id": ENTITY, "every": "6h", "directions": ["both"]}),
                "directions",
            ),
            (
                json!({"entity_id": ENTITY, "every": "6h", "lookback_days": 0}),
                "lookback_days",
            ),
            (
                json!({"entity_id": ENTITY, "every": "6h", "lookback_days": 2191}),
                "lookback_days",
            ),
            (
                json!({"entity_id": ENTITY, "every": "6h", "lookback_days": 1.5}),
                "lookback_days",
            ),
        ];
        for (body, field) in cases {
            let errors = parse(body.clone()).expect_err("invalid");
            assert!(
                errors.contains(field),
                "{body} should fail on {field}: {errors:?}"
            );
        }
    }

    #[test]
    fn patches_take_any_subset_but_never_the_entity() {
        let p = |v: Value| SchedulePatch::parse(v.as_object().expect("object"), HOUR);
        assert_eq!(p(json!({})).expect("empty"), SchedulePatch::default());
        let patch = p(json!({"status": "paused", "daily_at": "23:59"})).expect("valid");
        assert_eq!(patch.active, Some(false));
        assert!(matches!(patch.timing, Some(Timing::DailyAt(_))));
        assert!(p(json!({"entity_id": ENTITY}))
            .expect_err("bad")
            .contains("entity_id"));
        assert!(p(json!({"status": "done"}))
            .expect_err("bad")
            .contains("status"));
    }

    #[test]
    fn daily_slots_are_mexico_city_time() {
        // Mexico City has been UTC-6 all year since 2022.
        let at = Timing::DailyAt(NaiveTime::from_hms_opt(7, 0, 0).expect("time"));
        assert_eq!(
            at.next_after(utc("2026-03-10T12:00:00Z")),
            utc("2026-03-10T13:00:00Z")
        );
        assert_eq!(
            at.next_after(utc("2026-03-10T13:00:00Z")),
            utc("2026-03-11T13:00:00Z")
        );
        let every = Timing::Every(6 * HOUR);
        assert_eq!(
            every.next_after(utc("2026-03-10T12:00:00Z")),
            utc("2026-03-10T18:00:00Z")
        );
    }

    #[test]
    fn a_run_looks_back_from_the_mexico_city_date() {
        // 03:00 UTC on the 11th is still the 10th in Mexico City.
        let p = run_period(utc("2026-03-11T03:00:00Z"), 7);
        assert_eq!(p.from.to_string(), "2026-03-03");
        assert_eq!(p.to.to_string(), "2026-03-10");
    }
}
