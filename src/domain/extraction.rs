//! Extractions: one run against the tax authority for an entity, a period and a direction.

use super::class::DocumentClass;
use super::{optional_string, required_object, required_string};
use crate::domain::FieldErrors;
use chrono::NaiveDate;
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Issued,
    Received,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Issued => "issued",
            Direction::Received => "received",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "issued" => Some(Direction::Issued),
            "received" => Some(Direction::Received),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Pending,
    Running,
    Finished,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Finished => "finished",
            Status::Failed => "failed",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(Status::Pending),
            "running" => Some(Status::Running),
            "finished" => Some(Status::Finished),
            "failed" => Some(Status::Failed),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailedReason {
    InvalidCredentials,
    CredentialsNotValidated,
    SatUnavailable,
    InternalError,
    /// e.firma channel: the SAT's lifetime limit of requests with these parameters (5002).
    SatRequestLimit,
    /// e.firma channel: the SAT rejected the request, or it expired twice.
    SatRequestRejected,
}

impl FailedReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FailedReason::InvalidCredentials => "invalid_credentials",
            FailedReason::CredentialsNotValidated => "credentials_not_validated",
            FailedReason::SatUnavailable => "sat_unavailable",
            FailedReason::InternalError => "internal_error",
            FailedReason::SatRequestLimit => "sat_request_limit",
            FailedReason::SatRequestRejected => "sat_request_rejected",
        }
    }
}

/// The channel of the contract's runs (the CIEC portal): a run through it keeps the
/// contract's exact shape, without a `channel` field.
pub const CONTRACT_CHANNEL: &str = "ciec";

/// The SAT keeps about six years of CFDI online; a longer period is a mistake, and an
/// unbounded one would keep a worker busy for hours.
pub const MAX_PERIOD_DAYS: i64 = 6 * 366;

/// The first day a period may start: the SAT's electronic invoices (CFD) begin in 2004.
pub const FIRST_PERIOD_DAY: NaiveDate = match NaiveDate::from_ymd_opt(2004, 1, 1) {
    Some(d) => d,
    None => NaiveDate::MIN,
};
/// How far past today a period may end: a CFDI is stamped within days of its date, so
/// a later day holds nothing; a year leaves room for a period written ahead (a whole
/// month or year) and for time zones.
pub const MAX_DAYS_AHEAD: u64 = 366;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Period {
    pub from: NaiveDate,
    pub to: NaiveDate,
}

/// The most CFDI one extraction fetches by UUID (`options.uuids`): the SAT answers one
/// request (the web service) or one search (the portal) per UUID.
pub const MAX_UUIDS: usize = 500;

#[derive(Debug, Clone, PartialEq)]
pub struct NewExtraction {
    pub entity_id: String,
    pub period: Period,
    pub direction: Direction,
    pub document_class: DocumentClass,
    /// The CFDI to fetch by UUID (upper case, each once), instead of the period's; empty
    /// for a run of the period (`options.uuids`).
    pub uuids: Vec<String>,
}

/// A date field: `YYYY-MM-DD` or RFC 3339.
fn date_field(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
    errors: &mut FieldErrors,
) -> Option<NaiveDate> {
    let s = required_string(obj, key, field, errors)?;
    let date = crate::time::parse_date(&s);
    if date.is_none() {
        errors.add(field, crate::time::DATE_RULE);
    }
    date
}

impl NewExtraction {
    pub fn parse(body: &Map<String, Value>) -> Result<NewExtraction, FieldErrors> {
        Self::parse_on(body, chrono::Utc::now().date_naive())
    }

    /// `parse` as of the day `today`.
    fn parse_on(body: &Map<String, Value>, today: NaiveDate) -> Result<NewExtraction, FieldErrors> {
        let mut errors = FieldErrors::new();
        let entity_id =
            required_string(body, "entity_id", "entity_id", &mut errors).and_then(|s| {
                let id = uuid::Uuid::parse_str(s.trim()).ok().map(|u| u.to_string());
                if id.is_none() {
                    errors.add("entity_id", "must be a UUID");
                }
                id
            });
        let options = required_object(body, "options", "options", &mut errors);
        let mut period = None;
        let mut direction = None;
        if let Some(options) = options {
            if let Some(p) = required_object(options, "period", "options.period", &mut errors) {
                let from = date_field(p, "from", "options.period.from", &mut errors);
                let to = date_field(p, "to", "options.period.to", &mut errors);
                let last = today
                    .checked_add_days(chrono::Days::new(MAX_DAYS_AHEAD))
                    .unwrap_or(today);
                if from.is_some_and(|d| d < FIRST_PERIOD_DAY) {
                    errors.add(
                        "options.period.from",
                        "must be on or after 2004-01-01 (the first electronic invoices)",
                    );
                } else if from.is_some_and(|d| d > last) {
                    errors.add(
                        "options.period.from",
                        "must be within a year from today (no CFDI is dated later)",
                    );
                } else if to.is_some_and(|d| d > last) {
                    errors.add(
                        "options.period.to",
                        "must be within a year from today (no CFDI is dated later)",
                    );
                } else if let (Some(from), Some(to)) = (from, to) {
                    if to < from {
                        errors.add(
                            "options.period.to",
                            "must be on or after options.period.from",
                        );
                    } else if (to - from).num_days() >= MAX_PERIOD_DAYS {
                        errors.add(
                            "options.period.to",
                            "must be at most 6 years after options.period.from",
                        );
                    } else {
                        period = Some(Period { from, to });
                    }
                }
            }
            if let Some(d) = required_string(
                options,
                "download_type",
                "options.download_type",
                &mut errors,
            ) {
                direction = Direction::parse(&d);
                if direction.is_none() {
                    errors.add("options.download_type", "must be issued or received");
                }
            }
        }
        let document_class = options.map_or(DocumentClass::Invoices, |options| {
            document_class(options, &mut errors)
        });
        let uuids = options
            .and_then(|options| options.get("uuids"))
            .filter(|v| !v.is_null())
            .map_or_else(Vec::new, |v| parse_uuids(v, &mut errors));
        if !uuids.is_empty() && document_class != DocumentClass::Invoices {
            errors.add(
                "options.uuids",
                "fetches invoices only: leave options.document_class out (or invoices)",
            );
        }
        match (entity_id, period, direction) {
            (Some(entity_id), Some(period), Some(direction)) if errors.is_empty() => {
                Ok(NewExtraction {
                    entity_id,
                    period,
                    direction,
                    document_class,
                    uuids,
                })
            }
            _ => Err(errors),
        }
    }
}

/// `options.uuids`: 1 to `MAX_UUIDS` fiscal UUIDs (any case), upper-cased, repeats
/// dropped, in the order given.
fn parse_uuids(value: &Value, errors: &mut FieldErrors) -> Vec<String> {
    let field = "options.uuids";
    let Some(items) = value.as_array().filter(|a| !a.is_empty()) else {
        errors.add(
            field,
            "must be a non-empty array of fiscal UUIDs (folios fiscales)",
        );
        return Vec::new();
    };
    if items.len() > MAX_UUIDS {
        errors.add(
            field,
            &format!("must hold at most {MAX_UUIDS} UUIDs: split them into several extractions"),
        );
        return Vec::new();
    }
    let mut uuids: Vec<String> = Vec::with_capacity(items.len());
    for item in items {
        let uuid = item
            .as_str()
            .map(str::trim)
            .filter(|s| s.len() == 36)
            .and_then(|s| uuid::Uuid::parse_str(s).ok())
            .map(|u| u.hyphenated().to_string().to_ascii_uppercase());
        match uuid {
            Some(u) if !uuids.contains(&u) => uuids.push(u),
            Some(_) => {}
            None => {
                errors.add(
                    field,
                    "each must be a fiscal UUID such as 70A17DCA-B359-4483-8B50-854F9433E42D",
                );
                return Vec::new();
            }
        }
    }
    uuids
}

/// `options.document_class`: absent (or null) is `invoices`, so clients that do not
/// name it see no change.
fn document_class(options: &Map<String, Value>, errors: &mut FieldErrors) -> DocumentClass {
    let field = "options.document_class";
    if options.get("document_class").is_none_or(Value::is_null) {
        return DocumentClass::Invoices;
    }
    let named = optional_string(options, "document_class", field, errors);
    match named.as_deref().map(DocumentClass::parse) {
        Some(Some(class)) => class,
        Some(None) => {
            errors.add(field, "must be invoices or retentions");
            DocumentClass::Invoices
        }
        None => DocumentClass::Invoices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(v: Value) -> Result<NewExtraction, FieldErrors> {
        let today = NaiveDate::from_ymd_opt(2026, 11, 26).expect("valid");
        NewExtraction::parse_on(v.as_object().expect("object"), today)
    }

    fn body(from: &str, to: &str, kind: &str) -> Value {
        json!({
            "entity_id": "0196b0a0-0000-7000-8000-000000000001",
            "options": { "period": { "from": from, "to": to }, "download_type": kind }
        })
    }

    #[test]
    fn valid_bodies_parse_including_same_day_and_timestamps() {
        let e = parse(body("2026-01-01", "2026-01-01", "issued")).expect("valid");
        assert_eq!(e.period.from, e.period.to);
        let e = parse(body(
            "2026-01-01T00:00:00Z",
            "2026-01-31T23:59:59-06:00",
            "received",
        ))
        .expect("valid");
        assert_eq!(e.direction, Direction::Received);
        // The edges: the first day there are CFD, and a year from today.
        parse(body("2004-01-01", "2004-01-31", "issued")).expect("valid");
        parse(body("2027-11-01", "2027-11-27", "issued")).expect("valid");
        // Six years to the day.
        parse(body("2020-01-01", "2025-12-31", "issued")).expect("valid");
    }

    #[test]
    fn the_document_class_defaults_to_invoices_and_takes_retentions() {
        let with = |class: Value| {
            let mut b = body("2026-01-01", "2026-01-31", "received");
            b["options"]["document_class"] = class;
            parse(b)
        };
        let default = parse(body("2026-01-01", "2026-01-31", "received")).expect("valid");
        assert_eq!(default.document_class, DocumentClass::Invoices);
        assert_eq!(
            with(Value::Null).expect("null").document_class,
            DocumentClass::Invoices
        );
        assert_eq!(
            with(json!("retentions")).expect("valid").document_class,
            DocumentClass::Retentions
        );
        for bad in [
            json!("Retenciones"),
            json!(""),
            json!(3),
            json!(["invoices"]),
        ] {
            let errors = with(bad.clone()).expect_err("invalid");
            assert!(
                errors.contains("options.document_class"),
                "{bad}: {errors:?}"
            );
        }
    }

    #[test]
    fn uuids_are_upper_cased_once_each_and_bounded() {
        let with = |uuids: Value| {
            let mut b = body("2026-10-01", "2026-10-31", "issued");
            b["options"]["uuids"] = uuids;
            parse(b)
        };
        let lower = "70a17dca-b359-4483-8b50-854f9433e42d";
        let e = with(json!([
            lower,
            lower.to_uppercase(),
            " 96623061-61FE-49DE-B298-C7156476AA8B "
        ]))
        .expect("valid");
        assert_eq!(
            e.uuids,
            [
                "70A17DCA-B359-4483-8B50-854F9433E42D",
                "96623061-61FE-49DE-B298-C7156476AA8B"
            ]
        );
        assert!(with(Value::Null).expect("null").uuids.is_empty());
        let many: Vec<String> = (0..=MAX_UUIDS)
            .map(|i| format!("00000000-0000-4000-8000-{i:012}"))
            .collect();
        let fits = with(json!(many[..MAX_UUIDS])).expect("the bound");
        assert_eq!(fits.uuids.len(), MAX_UUIDS);
        for bad in [
            json!([]),
            json!("70A17DCA-B359-4483-8B50-854F9433E42D"),
            json!(["70A17DCAB3594483 8B50854F9433E42D"]),
            json!(["{70A17DCA-B359-4483-8B50-854F9433E42D}"]),
            json!([7]),
            json!(many),
        ] {
            let errors = with(bad.clone()).expect_err("invalid");
            assert!(errors.contains("options.uuids"), "{bad}: {errors:?}");
        }
        let mut retentions = body("2026-10-01", "2026-10-31", "issued");
        retentions["options"]["uuids"] = json!([lower]);
        retentions["options"]["document_class"] = json!("retentions");
        assert!(parse(retentions)
            .expect_err("invoices only")
            .contains("options.uuids"));
    }

    #[test]
    fn each_rule_fails_on_its_dotted_field() {
        let cases = [
            (
                body("2026-02-01", "2026-01-01", "issued"),
                "options.period.to",
            ),
            (
                body("2026-13-01", "2026-01-01", "issued"),
                "options.period.from",
            ),
            (body("2026-01-01", "soon", "issued"), "options.period.to"),
            (
                body("0001-01-01", "0001-01-31", "issued"),
                "options.period.from",
            ),
            (
                body("2003-12-31", "2004-01-31", "issued"),
                "options.period.from",
            ),
            (
                body("9999-01-01", "9999-12-31", "issued"),
                "options.period.from",
            ),
            (
                body("2026-01-01", "9999-12-31", "issued"),
                "options.period.to",
            ),
            (
                body("2026-01-01", "+10000-01-01", "issued"),
                "options.period.to",
            ),
            (
                body("2004-01-01", "2026-01-01", "issued"),
                "options.period.to",
            ),
            (
                body("2026-01-01", "2026-01-02", "both"),
                "options.download_type",
            ),
            (
                json!({"entity_id": "nope", "options": {"period": {"from": "2026-01-01", "to": "2026-01-01"}, "download_type": "issued"}}),
                "entity_id",
            ),
            (
                json!({"options": {"period": {"from": "2026-01-01", "to": "2026-01-01"}, "download_type": "issued"}}),
                "entity_id",
            ),
            (
                json!({"entity_id": "0196b0a0-0000-7000-8000-000000000001"}),
                "options",
            ),
            (
                json!({"entity_id": "0196b0a0-0000-7000-8000-000000000001", "options": {"download_type": "issued"}}),
                "options.period",
            ),
            (
                json!({"entity_id": "0196b0a0-0000-7000-8000-000000000001", "options": []}),
                "options",
            ),
        ];
        for (b, field) in cases {
            let errors = parse(b.clone()).expect_err("invalid");
            assert!(
                errors.contains(field),
                "{b} should fail on {field}: {errors:?}"
            );
        }
    }
}
