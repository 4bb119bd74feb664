//! Time on the e.firma channel: request windows (Mexico City local time, as the SAT
//! counts) and the waits between checks.

use super::envelope::{DocumentStatus, Query, RequestType, WindowQuery};
use crate::db::sat_requests::{Kind, SatRequest};
use crate::domain::extraction::{Direction, Period};
use chrono::{NaiveDateTime, NaiveTime};
use std::time::Duration;

/// The longest wait between two checks of a request.
pub const MAX_WAIT: Duration = Duration::from_secs(15 * 60);
const LOCAL: &str = "%Y-%m-%dT%H:%M:%S";

/// `--sat-ws-poll`, doubled at each check, capped at 15 minutes.
pub fn poll_wait(first: Duration, checks: u32) -> Duration {
    first
        .saturating_mul(1u32 << checks.min(16))
        .min(MAX_WAIT.max(first))
}

/// The period as whole local days: the first day's midnight to the last day's 23:59:59.
pub fn whole_days(period: Period) -> (String, String) {
    let start = period.from.and_time(NaiveTime::MIN);
    let end = period
        .to
        .and_hms_opt(23, 59, 59)
        .unwrap_or_else(|| period.to.and_time(NaiveTime::MIN));
    (fmt(start), fmt(end))
}

pub fn fmt(t: NaiveDateTime) -> String {
    t.format(LOCAL).to_string()
}

pub fn local(s: &str) -> anyhow::Result<NaiveDateTime> {
    Ok(NaiveDateTime::parse_from_str(s, LOCAL)?)
}

/// What a stored request asks the SAT: one invoice by UUID, or its window's.
pub fn request_query(q: &SatRequest) -> anyhow::Result<Query> {
    if let Some(folio) = &q.folio {
        return Ok(Query::Uuid(folio.clone()));
    }
    Ok(Query::Window(WindowQuery {
        direction: q.direction,
        request_type: match q.kind {
            Kind::Metadata => RequestType::Metadata,
            Kind::Cfdi => RequestType::Cfdi,
        },
        start: local(&q.window_start)?,
        end: local(&q.window_end)?,
        // The SAT serves received XML only for active CFDI.
        status: match (q.kind, q.direction) {
            (Kind::Cfdi, Direction::Received) => DocumentStatus::Active,
            _ => DocumentStatus::All,
        },
        counterpart: None,
        document_type: None,
        complement: None,
        on_behalf_of: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_the_setting_up_to_fifteen_minutes() {
        let first = Duration::from_secs(10);
        assert_eq!(poll_wait(first, 0), Duration::from_secs(10));
        assert_eq!(poll_wait(first, 3), Duration::from_secs(80));
        assert_eq!(poll_wait(first, 40), MAX_WAIT);
        assert_eq!(
            poll_wait(Duration::from_millis(50), 1),
            Duration::from_millis(100)
        );
    }

    #[test]
    fn a_period_is_asked_as_whole_local_days() {
        let day = |d| chrono::NaiveDate::from_ymd_opt(2026, 1, d).expect("date");
        assert_eq!(
            whole_days(Period {
                from: day(1),
                to: day(31)
            }),
            (
                "2026-01-01T00:00:00".to_string(),
                "2026-01-31T23:59:59".to_string()
            )
        );
    }
}
