//! Schedules: an entity kept in sync by extractions the service starts on its own.

use super::calendar;
use super::class::DocumentClass;
use super::extraction::{Direction, Period};
use super::{optional_string, required_string};
use crate::domain::FieldErrors;
use chrono::{DateTime, Days, NaiveTime, Utc};
use serde_json::{Map, Value};
use std::time::Duration;

/// SAT dates are Mexico City local time; `daily_at`, `monthly` and each run's period
/// are read there.
pub use super::calendar::TIME_ZONE;
pub const DEFAULT_LOOKBACK_DAYS: i64 = 7;
/// About the six years of CFDI the SAT keeps online.
pub const MAX_LOOKBACK_DAYS: i64 = 6 * 365;
/// The longest `every`: a month.
pub const MAX_EVERY: Duration = Duration::from_secs(31 * 24 * 3600);
/// A monthly schedule's time when its `monthly` object names none.
pub const DEFAULT_MONTHLY_AT: NaiveTime = match NaiveTime::from_hms_opt(6, 0, 0) {
    Some(t) => t,
    None => NaiveTime::MIN,
};
/// The most months a monthly run extracts before the previous one: with it, a year.
pub const MAX_MONTHS_BEFORE: u32 = 11;
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
    /// Once a month on `day` (1 to 31; a shorter month's last day) at this Mexico City
    /// time.
    Monthly { day: u32, at: NaiveTime },
}

impl Timing {
    /// The first slot strictly after `now`.
    pub fn next_after(&self, now: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            Timing::Every(every) => {
                now + chrono::Duration::from_std(*every).unwrap_or(chrono::Duration::days(31))
            }
            Timing::DailyAt(at) => {
                let today = calendar::local_date(now);
                (0..3)
                    .filter_map(|d| today.checked_add_days(Days::new(d)))
                    .map(|day| calendar::instant(day.and_time(*at)))
                    .find(|t| *t > now)
                    .unwrap_or(now + chrono::Duration::days(1))
            }
            Timing::Monthly { day, at } => calendar::next_monthly(*day, *at, now),
        }
    }

    /// Whether this is a calendar timing, whose runs extract whole months.
    pub fn is_monthly(&self) -> bool {
        matches!(self, Timing::Monthly { .. })
    }

    /// `every` as the API shows it (`6h`, `1h 30m`, `31d`).
    pub fn every_text(&self) -> Option<String> {
        match self {
            Timing::Every(d) => Some(interval_text(*d)),
            _ => None,
        }
    }

    pub fn daily_at_text(&self) -> Option<String> {
        match self {
            Timing::DailyAt(t) => Some(t.format("%H:%M").to_string()),
            _ => None,
        }
    }
}

/// What each run extracts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span {
    /// The last `n` days up to the run's day (`lookback_days`).
    Days(i64),
    /// The calendar month before the slot's, and the `n` months before it
    /// (`monthly.months_before`).
    Months(u32),
}

/// What a schedule does: when it runs, and the extractions each run starts (one per
/// direction and document class, over its span).
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub directions: Vec<Direction>,
    pub classes: Vec<DocumentClass>,
    pub timing: Timing,
    pub span: Span,
}

impl Plan {
    /// The period a run at `now` extracts: the last days up to today, or the calendar
    /// months before the latest monthly slot (so a run late after downtime still
    /// extracts the month that slot closed).
    pub fn period(&self, now: DateTime<Utc>) -> Period {
        match (self.span, self.timing) {
            (Span::Months(before), Timing::Monthly { day, at }) => {
                calendar::months_before(calendar::last_monthly(day, at, now), before)
            }
            (Span::Months(before), _) => calendar::months_before(now, before),
            (Span::Days(days), _) => run_period(now, days),
        }
    }

    /// Whether two plans would start the same extraction at the same slot: the same
    /// timing and a direction and class in common.
    pub fn collides_with(&self, other: &Plan) -> bool {
        self.timing == other.timing
            && self.directions.iter().any(|d| other.directions.contains(d))
            && self.classes.iter().any(|c| other.classes.contains(c))
    }

    /// The runs of one slot: each direction of each class.
    pub fn runs(&self) -> impl Iterator<Item = (Direction, DocumentClass)> + '_ {
        self.classes
            .iter()
            .flat_map(|c| self.directions.iter().map(move |d| (*d, *c)))
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
    let to = calendar::local_date(now);
    let from = to
        .checked_sub_days(Days::new(lookback_days.max(0) as u64))
        .unwrap_or(to);
    Period { from, to }
}

#[derive(Debug, Clone, PartialEq)]
pub struct NewSchedule {
    pub entity_id: String,
    pub plan: Plan,
}

/// A PATCH: every field optional; `status` is `active` or `paused`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SchedulePatch {
    pub directions: Option<Vec<Direction>>,
    pub classes: Option<Vec<DocumentClass>>,
    /// A new timing, with the months a monthly one extracts before the previous.
    pub timing: Option<(Timing, Option<u32>)>,
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
        let classes = parse_classes(body.get("document_classes"), &mut errors)
            .unwrap_or_else(|| vec![DocumentClass::Invoices]);
        let timing = parse_timing(body, min_every, &mut errors);
        if timing.is_none() && !TIMING_FIELDS.iter().any(|f| errors.contains(f)) {
            errors.add("every", TIMING_RULE);
        }
        let lookback = parse_lookback(body.get("lookback_days"), &mut errors);
        let span = match timing {
            Some((Timing::Monthly { .. }, months)) => {
                if lookback.is_some() {
                    errors.add("lookback_days", LOOKBACK_NOT_MONTHLY);
                }
                Span::Months(months.unwrap_or(0))
            }
            _ => Span::Days(lookback.unwrap_or(DEFAULT_LOOKBACK_DAYS)),
        };
        match (entity_id, timing) {
            (Some(entity_id), Some((timing, _))) if errors.is_empty() => Ok(NewSchedule {
                entity_id,
                plan: Plan {
                    directions,
                    classes,
                    timing,
                    span,
                },
            }),
            _ => Err(errors),
        }
    }
}

const TIMING_FIELDS: [&str; 3] = ["every", "daily_at", "monthly"];
const TIMING_RULE: &str =
    "give exactly one of every (an interval), daily_at (HH:MM) or monthly ({day, at})";
const LOOKBACK_NOT_MONTHLY: &str = "applies to every and daily_at schedules; a monthly schedule extracts whole calendar months (monthly.months_before)";

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
            classes: parse_classes(body.get("document_classes"), &mut errors),
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
        errors.into_result().map(|_| patch)
    }

    /// Applies the patch to `plan`; a 422 when `lookback_days` is given for what is
    /// (or becomes) a monthly schedule. True when the timing changed.
    pub fn apply(&self, plan: &mut Plan) -> Result<bool, FieldErrors> {
        if let Some(directions) = &self.directions {
            plan.directions = directions.clone();
        }
        if let Some(classes) = &self.classes {
            plan.classes = classes.clone();
        }
        if let Some((timing, months)) = self.timing {
            plan.timing = timing;
            plan.span = match (timing, plan.span) {
                (Timing::Monthly { .. }, _) => Span::Months(months.unwrap_or(0)),
                (_, Span::Days(days)) => Span::Days(days),
                (_, Span::Months(_)) => Span::Days(DEFAULT_LOOKBACK_DAYS),
            };
        }
        if let Some(days) = self.lookback_days {
            if plan.timing.is_monthly() {
                return Err(FieldErrors::single("lookback_days", LOOKBACK_NOT_MONTHLY));
            }
            plan.span = Span::Days(days);
        }
        Ok(self.timing.is_some())
    }
}

/// None when absent or null (the caller's default applies).
fn parse_directions(value: Option<&Value>, errors: &mut FieldErrors) -> Option<Vec<Direction>> {
    const MESSAGE: &str = "must be a non-empty array of issued and/or received";
    let mut directions = parse_set(value, "directions", MESSAGE, Direction::parse, errors)?;
    directions.sort_by_key(|d| d.as_str());
    Some(directions)
}

/// `document_classes`: None when absent or null (invoices, as before the field).
fn parse_classes(value: Option<&Value>, errors: &mut FieldErrors) -> Option<Vec<DocumentClass>> {
    const MESSAGE: &str = "must be a non-empty array of invoices and/or retentions";
    let mut classes = parse_set(
        value,
        "document_classes",
        MESSAGE,
        DocumentClass::parse,
        errors,
    )?;
    classes.sort_by_key(|c| c.as_str());
    Some(classes)
}

/// A non-empty array of names, each parsed by `parse`, repeats dropped.
fn parse_set<T: PartialEq>(
    value: Option<&Value>,
    field: &str,
    message: &str,
    parse: impl Fn(&str) -> Option<T>,
    errors: &mut FieldErrors,
) -> Option<Vec<T>> {
    let items = match value {
        None | Some(Value::Null) => return None,
        Some(Value::Array(items)) if !items.is_empty() => items,
        Some(_) => {
            errors.add(field, message);
            return None;
        }
    };
    let mut out = vec![];
    for item in items {
        match item.as_str().and_then(&parse) {
            Some(v) if !out.contains(&v) => out.push(v),
            Some(_) => {}
            None => {
                errors.add(field, message);
                return None;
            }
        }
    }
    Some(out)
}

/// Exactly one of `every`, `daily_at` and `monthly`; None when none is given (or on an
/// error). A monthly timing comes with its `months_before`, when given.
fn parse_timing(
    body: &Map<String, Value>,
    min_every: Duration,
    errors: &mut FieldErrors,
) -> Option<(Timing, Option<u32>)> {
    let given = TIMING_FIELDS
        .iter()
        .filter(|f| body.get(**f).is_some_and(|v| !v.is_null()))
        .count();
    if given > 1 {
        errors.add("every", TIMING_RULE);
        return None;
    }
    if let Some(every) = optional_string(body, "every", "every", errors) {
        return parse_every(&every, min_every, errors).map(|d| (Timing::Every(d), None));
    }
    if let Some(at) = optional_string(body, "daily_at", "daily_at", errors) {
        let time = parse_time(&at);
        if time.is_none() {
            errors.add("daily_at", TIME_RULE);
        }
        return time.map(|t| (Timing::DailyAt(t), None));
    }
    match body.get("monthly") {
        None | Some(Value::Null) => None,
        Some(Value::Object(monthly)) => parse_monthly(monthly, errors),
        Some(_) => {
            errors.add(
                "monthly",
                "must be an object: {\"day\": 1, \"at\": \"06:00\"}",
            );
            None
        }
    }
}

const TIME_RULE: &str = "must be a time HH:MM (00:00 to 23:59)";

fn parse_time(text: &str) -> Option<NaiveTime> {
    let text = text.trim();
    (text.len() == 5)
        .then(|| NaiveTime::parse_from_str(text, "%H:%M").ok())
        .flatten()
}

/// An interval. Months and years have no fixed length, so they are refused with the
/// calendar form named, rather than read as humantime's 30.44 or 365.25 days.
fn parse_every(text: &str, min_every: Duration, errors: &mut FieldErrors) -> Option<Duration> {
    if names_calendar_unit(text) {
        errors.add(
            "every",
            "months and years have no fixed length: for a monthly schedule give monthly instead of every, e.g. {\"monthly\": {\"day\": 1, \"at\": \"06:00\"}} (a day of the month and a Mexico City time)",
        );
        return None;
    }
    match humantime::parse_duration(text.trim()) {
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
        Ok(d) => Some(d),
    }
}

/// Whether an interval's text names a month or a year, in humantime's units (`M`,
/// `month`, `y`, `year`) or in Spanish (`mes`, `año`).
fn names_calendar_unit(text: &str) -> bool {
    const UNITS: [&str; 11] = [
        "month", "months", "mo", "y", "year", "years", "yr", "mes", "meses", "año", "años",
    ];
    // Case matters for one unit only: `M` is a month to humantime, `m` a minute.
    text.split(|c: char| !c.is_alphabetic())
        .any(|word| word == "M" || UNITS.contains(&word.to_lowercase().as_str()))
}

/// `monthly`: `{"day": 1..31, "at": "HH:MM" (default 06:00), "months_before": 0..11}`.
fn parse_monthly(
    monthly: &Map<String, Value>,
    errors: &mut FieldErrors,
) -> Option<(Timing, Option<u32>)> {
    let day = match monthly.get("day") {
        None | Some(Value::Null) => {
            errors.add("monthly.day", super::BLANK);
            None
        }
        Some(v) => {
            let day = v.as_u64().filter(|d| (1..=31).contains(d));
            if day.is_none() {
                errors.add(
                    "monthly.day",
                    "must be a day of the month from 1 to 31 (31 is a shorter month's last day)",
                );
            }
            day.map(|d| d as u32)
        }
    };
    let at = match optional_string(monthly, "at", "monthly.at", errors) {
        None => Some(DEFAULT_MONTHLY_AT),
        Some(text) => {
            let at = parse_time(&text);
            if at.is_none() {
                errors.add("monthly.at", TIME_RULE);
            }
            at
        }
    };
    let months = match monthly.get("months_before") {
        None | Some(Value::Null) => None,
        Some(v) => {
            let n = v
                .as_u64()
                .filter(|n| *n <= u64::from(MAX_MONTHS_BEFORE))
                .map(|n| n as u32);
            if n.is_none() {
                errors.add(
                    "monthly.months_before",
                    &format!("must be a whole number of months from 0 to {MAX_MONTHS_BEFORE}"),
                );
            }
            n
        }
    };
    Some((Timing::Monthly { day: day?, at: at? }, months))
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

    fn patch(v: Value) -> Result<SchedulePatch, FieldErrors> {
        SchedulePatch::parse(v.as_object().expect("object"), HOUR)
    }

    fn utc(s: &str) -> DateTime<Utc> {
        crate::time::parse(s).expect("timestamp")
    }

    fn hm(h: u32, m: u32) -> NaiveTime {
        NaiveTime::from_hms_opt(h, m, 0).expect("time")
    }

    #[test]
    fn defaults_are_both_directions_invoices_and_seven_days() {
        let s = parse(json!({"entity_id": ENTITY, "every": "6h"})).expect("valid");
        assert_eq!(s.plan.directions, [Direction::Issued, Direction::Received]);
        assert_eq!(s.plan.classes, [DocumentClass::Invoices]);
        assert_eq!(s.plan.span, Span::Days(DEFAULT_LOOKBACK_DAYS));
        assert_eq!(s.plan.timing, Timing::Every(6 * HOUR));
        assert_eq!(s.plan.timing.every_text().as_deref(), Some("6h"));
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
        assert_eq!(s.plan.directions, [Direction::Received]);
        assert_eq!(s.plan.timing.daily_at_text().as_deref(), Some("07:30"));
    }

    #[test]
    fn monthly_takes_a_day_a_time_and_months_before_with_both_classes() {
        let s = parse(json!({"entity_id": ENTITY, "monthly": {"day": 1},
            "document_classes": ["retentions", "invoices", "retentions"]}))
        .expect("valid");
        assert_eq!(
            s.plan.timing,
            Timing::Monthly {
                day: 1,
                at: DEFAULT_MONTHLY_AT
            }
        );
        assert_eq!(s.plan.span, Span::Months(0));
        assert_eq!(
            s.plan.classes,
            [DocumentClass::Invoices, DocumentClass::Retentions]
        );
        assert_eq!(s.plan.runs().count(), 4, "two directions of two classes");
        let s = parse(json!({"entity_id": ENTITY,
            "monthly": {"day": 31, "at": "23:30", "months_before": 11}}))
        .expect("valid");
        assert_eq!(
            s.plan.timing,
            Timing::Monthly {
                day: 31,
                at: hm(23, 30)
            }
        );
        assert_eq!(s.plan.span, Span::Months(11));
        assert_eq!(s.plan.timing.every_text(), None);
        assert_eq!(s.plan.timing.daily_at_text(), None);
    }

    #[test]
    fn months_and_years_as_every_are_refused_naming_the_calendar_form() {
        for written in [
            "1M", "1month", "2 months", "1 mes", "3 meses", "1y", "1year", "1 año", "1mo",
        ] {
            let errors = parse(json!({"entity_id": ENTITY, "every": written})).expect_err(written);
            let body = errors.to_json().to_string();
            assert!(body.contains("monthly"), "{written}: {body}");
        }
        // Minutes are not months; a week has a fixed length.
        parse(json!({"entity_id": ENTITY, "every": "90m"})).expect("minutes");
        parse(json!({"entity_id": ENTITY, "every": "1w"})).expect("a week");
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
            (
                json!({"entity_id": ENTITY, "daily_at": "07:00", "monthly": {"day": 1}}),
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
            (json!({"entity_id": ENTITY, "monthly": 1}), "monthly"),
            (json!({"entity_id": ENTITY, "monthly": {}}), "monthly.day"),
            (
                json!({"entity_id": ENTITY, "monthly": {"day": 0}}),
                "monthly.day",
            ),
            (
                json!({"entity_id": ENTITY, "monthly": {"day": 32}}),
                "monthly.day",
            ),
            (
                json!({"entity_id": ENTITY, "monthly": {"day": "1"}}),
                "monthly.day",
            ),
            (
                json!({"entity_id": ENTITY, "monthly": {"day": 1, "at": "6:00"}}),
                "monthly.at",
            ),
            (
                json!({"entity_id": ENTITY, "monthly": {"day": 1, "months_before": 12}}),
                "monthly.months_before",
            ),
            (
                json!({"entity_id": ENTITY, "monthly": {"day": 1, "months_before": -1}}),
                "monthly.months_before",
            ),
            (
                json!({"entity_id": ENTITY, "monthly": {"day": 1}, "lookback_days": 7}),
                "lookback_days",
            ),
            (
                json!({"entity_id": ENTITY, "every": "6h", "directions": []}),
                "directions",
            ),
            (
                json!({"entity_id": ENTITY, "every": "6h", "directions": ["both"]}),
                "directions",
            ),
            (
                json!({"entity_id": ENTITY, "every": "6h", "document_classes": []}),
                "document_classes",
            ),
            (
                json!({"entity_id": ENTITY, "every": "6h", "document_classes": ["nomina"]}),
                "document_classes",
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
        assert_eq!(patch(json!({})).expect("empty"), SchedulePatch::default());
        let p = patch(json!({"status": "paused", "daily_at": "23:59"})).expect("valid");
        assert_eq!(p.active, Some(false));
        assert!(matches!(p.timing, Some((Timing::DailyAt(_), None))));
        assert!(patch(json!({"entity_id": ENTITY}))
            .expect_err("bad")
            .contains("entity_id"));
        assert!(patch(json!({"status": "done"}))
            .expect_err("bad")
            .contains("status"));
    }

    #[test]
    fn a_patch_moves_between_days_and_months() {
        let mut plan =
            parse(json!({"entity_id": ENTITY, "daily_at": "07:00", "lookback_days": 30}))
                .expect("valid")
                .plan;
        let to_monthly = patch(json!({"monthly": {"day": 5, "months_before": 2},
            "document_classes": ["invoices", "retentions"]}))
        .expect("valid");
        assert!(to_monthly.apply(&mut plan).expect("applies"));
        assert_eq!(plan.span, Span::Months(2));
        assert_eq!(plan.classes.len(), 2);
        // Days make no sense for it now.
        let days = patch(json!({"lookback_days": 3})).expect("valid");
        assert!(days
            .apply(&mut plan.clone())
            .expect_err("monthly")
            .contains("lookback_days"));
        // Back to an interval: the default lookback, or the one given with it.
        let back = patch(json!({"every": "6h", "lookback_days": 3})).expect("valid");
        back.apply(&mut plan).expect("applies");
        assert_eq!(
            (plan.timing, plan.span),
            (Timing::Every(6 * HOUR), Span::Days(3))
        );
        let status = patch(json!({"status": "active"})).expect("valid");
        assert!(!status.apply(&mut plan).expect("applies"), "timing kept");
    }

    #[test]
    fn plans_collide_on_the_same_slot_with_a_run_in_common() {
        let plan = |v: Value| parse(v).expect("valid").plan;
        let issued =
            plan(json!({"entity_id": ENTITY, "monthly": {"day": 1}, "directions": ["issued"]}));
        let received =
            plan(json!({"entity_id": ENTITY, "monthly": {"day": 1}, "directions": ["received"]}));
        let both = plan(json!({"entity_id": ENTITY, "monthly": {"day": 1, "months_before": 2}}));
        let later = plan(json!({"entity_id": ENTITY, "monthly": {"day": 1, "at": "07:00"}}));
        let retentions = plan(json!({"entity_id": ENTITY, "monthly": {"day": 1},
            "document_classes": ["retentions"]}));
        assert!(!issued.collides_with(&received));
        assert!(both.collides_with(&issued) && received.collides_with(&both));
        assert!(!later.collides_with(&both), "another time");
        assert!(!retentions.collides_with(&both), "another class");
    }

    #[test]
    fn daily_slots_are_mexico_city_time() {
        // Mexico City has been UTC-6 all year since 2022.
        let at = Timing::DailyAt(hm(7, 0));
        assert_eq!(
            at.next_after(utc("2026-03-10T12:00:00Z")),
            utc("2026-03-10T13:00:00Z")
        );
        assert_eq!(
            at.next_after(utc("2026-03-10T13:00:00Z")),
            utc("2026-03-11T13:00:00Z")
        );
        // Before, summer time: 07:00 was 12:00 UTC in July 2021.
        assert_eq!(
            at.next_after(utc("2021-07-10T00:00:00Z")),
            utc("2021-07-10T12:00:00Z")
        );
        // A time the clock skipped runs an hour later, not a day later.
        let skipped = Timing::DailyAt(hm(2, 30));
        assert_eq!(
            skipped.next_after(utc("2021-04-04T06:00:00Z")),
            utc("2021-04-04T08:30:00Z")
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

    #[test]
    fn a_monthly_run_extracts_the_months_its_latest_slot_closed() {
        let plan = parse(json!({"entity_id": ENTITY,
            "monthly": {"day": 1, "at": "06:00", "months_before": 1}}))
        .expect("valid")
        .plan;
        let at = |s| {
            let p = plan.period(utc(s));
            (p.from.to_string(), p.to.to_string())
        };
        let sep_oct = ("2026-09-01".to_string(), "2026-10-31".to_string());
        assert_eq!(at("2026-11-01T12:00:00Z"), sep_oct);
        // Run late (after downtime), the slot it runs for is still November's.
        assert_eq!(at("2026-11-28T19:00:00Z"), sep_oct);
        assert_eq!(at("2026-12-01T11:59:00Z"), sep_oct);
        assert_eq!(
            at("2027-01-01T12:00:00Z"),
            ("2026-11-01".to_string(), "2026-12-31".to_string())
        );
    }
}
