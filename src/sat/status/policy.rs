//! When to ask the SAT about an invoice, and what an answer makes of it.
//!
//! - A first check right after an invoice is stored (extracted or imported).
//! - While it can still be cancelled (`cancellable_until`: until the end of April of
//!   the year after its issue, the deadline of the annual return of the year it was
//!   issued in, when the SAT stops accepting cancellations), every `every`; every
//!   `every_pending` while a cancellation is in process or a PPD invoice has a balance.
//!   An in-process cancellation is followed past that date too.
//! - Cancelled is final: no more checks.
//! - "Not found" is not "forged": the SAT takes time to register a new CFDI, and its
//!   601 answer also comes and goes on valid documents. Not found is asked again every
//!   quarter of `not_registered_after` (at most `every_pending`), and the invoice becomes
//!   `not_registered` once the answers have not found it for `not_registered_after`
//!   (72 hours by default) and its stamp is at least that old.
//! - On demand, at once (`POST /v1/invoices/{id}/status-check`).

use std::time::Duration;

use chrono::{DateTime, Datelike, NaiveDate, NaiveDateTime, TimeZone, Utc};

use super::answer::Answer;
use crate::domain::sat_status::{CancellationStatus, State};

/// The pace settings (`--sat-status-every`, `--sat-status-every-pending`,
/// `--sat-status-not-registered-after`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    pub every: Duration,
    pub every_pending: Duration,
    pub not_registered_after: Duration,
}

impl Default for Pace {
    fn default() -> Self {
        Pace {
            every: Duration::from_secs(7 * 86_400),
            every_pending: Duration::from_secs(86_400),
            not_registered_after: Duration::from_secs(72 * 3_600),
        }
    }
}

/// What the policy needs to know of the invoice.
#[derive(Debug, Clone, Copy, Default)]
pub struct Facts {
    /// `Fecha`, local (Mexico City) time as written.
    pub issued_at: Option<NaiveDateTime>,
    /// The stamp's `FechaTimbrado`, local time as written.
    pub certified_at: Option<NaiveDateTime>,
    /// A PPD invoice with a balance (`due_amount > 0`).
    pub outstanding: bool,
    /// The first of the latest answers in a row that did not find it.
    pub not_found_since: Option<DateTime<Utc>>,
}

/// What an answer makes of the invoice.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decision {
    pub state: State,
    pub not_found_since: Option<DateTime<Utc>>,
    /// None: no more planned checks.
    pub next_check: Option<DateTime<Utc>>,
}

/// The last day a CFDI issued on `issued` can be cancelled (inclusive): April 30 of the
/// next year (CFF article 29-A since 2022: until the month the annual return of the year
/// of issue is due, March for companies and April for individuals; the later is kept).
pub fn cancellable_until(issued: NaiveDate) -> NaiveDate {
    NaiveDate::from_ymd_opt(issued.year() + 1, 4, 30).unwrap_or(NaiveDate::MAX)
}

/// A local Mexico City time as UTC.
fn utc(local: NaiveDateTime) -> DateTime<Utc> {
    crate::domain::schedule::TIME_ZONE
        .from_local_datetime(&local)
        .earliest()
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| Utc.from_utc_datetime(&local))
}

fn plus(now: DateTime<Utc>, d: Duration) -> DateTime<Utc> {
    chrono::Duration::from_std(d)
        .ok()
        .and_then(|d| now.checked_add_signed(d))
        .unwrap_or(DateTime::<Utc>::MAX_UTC)
}

/// Whether the SAT still accepts a cancellation of a CFDI issued at `issued_at`.
fn in_window(issued_at: Option<NaiveDateTime>, now: DateTime<Utc>) -> bool {
    let Some(issued) = issued_at else {
        return true;
    };
    let until = cancellable_until(issued.date()).and_hms_opt(23, 59, 59);
    until.is_none_or(|until| now <= utc(until))
}

pub fn decide(pace: &Pace, facts: &Facts, answer: &Answer, now: DateTime<Utc>) -> Decision {
    let regular = |pending: bool| {
        let open = in_window(facts.issued_at, now);
        match (pending, open) {
            (true, _) => Some(plus(now, pace.every_pending)),
            (false, true) => Some(plus(now, pace.every)),
            (false, false) => None,
        }
    };
    match answer.state {
        State::Cancelled => Decision {
            state: State::Cancelled,
            not_found_since: None,
            next_check: None,
        },
        State::Active => {
            let in_process = answer.cancellation_status == Some(CancellationStatus::InProcess);
            let owed = facts.outstanding && in_window(facts.issued_at, now);
            let pending = in_process || (owed && pace.every_pending < pace.every);
            Decision {
                state: State::Active,
                not_found_since: None,
                next_check: regular(pending),
            }
        }
        State::NotFound | State::NotRegistered => {
            let since = facts.not_found_since.unwrap_or(now);
            let delay = chrono::Duration::from_std(pace.not_registered_after)
                .unwrap_or(chrono::Duration::MAX);
            let stamped_long_ago = facts
                .certified_at
                .is_none_or(|at| now.signed_duration_since(utc(at)) >= delay);
            let long_not_found = now.signed_duration_since(since) >= delay;
            if stamped_long_ago && long_not_found {
                return Decision {
                    state: State::NotRegistered,
                    not_found_since: Some(since),
                    next_check: regular(false),
                };
            }
            let again = (pace.not_registered_after / 4).min(pace.every_pending);
            Decision {
                state: State::NotFound,
                not_found_since: Some(since),
                next_check: Some(plus(now, again.max(Duration::from_millis(100)))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::sat_status::{Cancellable, Efos};
    use crate::sat::status::Code;

    fn at(s: &str) -> DateTime<Utc> {
        crate::time::parse(s).expect("time")
    }

    fn local(s: &str) -> Option<NaiveDateTime> {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%dT%H:%M:%S").ok()
    }

    fn answer(state: State, cancellation: Option<CancellationStatus>) -> Answer {
        Answer {
            code: if state == State::NotFound {
                Code::NotFound
            } else {
                Code::Found
            },
            state,
            cancellable: Some(Cancellable::WithAcceptance),
            cancellation_status: cancellation,
            efos: Efos::NotListed,
        }
    }

    const DAY: i64 = 86_400;

    #[test]
    fn the_cancellation_window_ends_in_april_of_the_next_year() {
        let d = |s| NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("date");
        assert_eq!(cancellable_until(d("2025-01-02")), d("2026-04-30"));
        assert_eq!(cancellable_until(d("2025-12-31")), d("2026-04-30"));
    }

    #[test]
    fn an_active_invoice_is_asked_weekly_in_its_window_then_no_more() {
        let pace = Pace::default();
        let facts = Facts {
            issued_at: local("2026-01-10T10:00:00"),
            ..Facts::default()
        };
        let now = at("2026-02-01T00:00:00Z");
        let d = decide(&pace, &facts, &answer(State::Active, None), now);
        assert_eq!(d.state, State::Active);
        assert_eq!(d.next_check, Some(now + chrono::Duration::seconds(7 * DAY)));
        let after = at("2027-05-01T12:00:00Z");
        assert_eq!(
            decide(&pace, &facts, &answer(State::Active, None), after).next_check,
            None
        );
    }

    #[test]
    fn pending_cancellations_and_balances_are_asked_daily() {
        let pace = Pace::default();
        let now = at("2026-02-01T00:00:00Z");
        let daily = Some(now + chrono::Duration::seconds(DAY));
        let facts = Facts {
            issued_at: local("2026-01-10T10:00:00"),
            ..Facts::default()
        };
        let in_process = answer(State::Active, Some(CancellationStatus::InProcess));
        assert_eq!(decide(&pace, &facts, &in_process, now).next_check, daily);
        let owed = Facts {
            outstanding: true,
            ..facts
        };
        assert_eq!(
            decide(&pace, &owed, &answer(State::Active, None), now).next_check,
            daily
        );
        // A cancellation in process is followed past the window.
        let late = at("2027-06-01T00:00:00Z");
        assert!(decide(&pace, &facts, &in_process, late)
            .next_check
            .is_some());
    }

    #[test]
    fn cancelled_is_final() {
        let d = decide(
            &Pace::default(),
            &Facts::default(),
            &answer(State::Cancelled, Some(CancellationStatus::DeadlinePassed)),
            at("2026-02-01T00:00:00Z"),
        );
        assert_eq!((d.state, d.next_check), (State::Cancelled, None));
    }

    #[test]
    fn not_found_becomes_not_registered_only_after_the_delay() {
        let pace = Pace::default();
        let first = at("2026-02-01T00:00:00Z");
        let old_stamp = Facts {
            issued_at: local("2026-01-10T10:00:00"),
            certified_at: local("2026-01-10T10:00:05"),
            ..Facts::default()
        };
        let nf = answer(State::NotFound, None);
        let d = decide(&pace, &old_stamp, &nf, first);
        assert_eq!(d.state, State::NotFound, "one answer is not enough");
        assert_eq!(d.not_found_since, Some(first));
        assert_eq!(d.next_check, Some(first + chrono::Duration::hours(18)));
        let later = Facts {
            not_found_since: Some(first),
            ..old_stamp
        };
        let at_71h = first + chrono::Duration::hours(71);
        assert_eq!(decide(&pace, &later, &nf, at_71h).state, State::NotFound);
        let at_72h = first + chrono::Duration::hours(72);
        let d = decide(&pace, &later, &nf, at_72h);
        assert_eq!(d.state, State::NotRegistered);
        assert!(d.next_check.is_some(), "asked weekly while in its window");
        // A fresh stamp waits for its own 72 hours even after long not-found answers.
        let fresh = Facts {
            certified_at: local("2026-02-03T12:00:00"),
            ..later
        };
        assert_eq!(decide(&pace, &fresh, &nf, at_72h).state, State::NotFound);
    }

    #[test]
    fn a_found_answer_clears_the_not_found_streak() {
        let facts = Facts {
            not_found_since: Some(at("2026-02-01T00:00:00Z")),
            ..Facts::default()
        };
        let d = decide(
            &Pace::default(),
            &facts,
            &answer(State::Active, None),
            at("2026-02-02T00:00:00Z"),
        );
        assert_eq!((d.state, d.not_found_since), (State::Active, None));
    }
}
