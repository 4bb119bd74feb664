//! The scheduler: a thread that wakes every `--schedule-tick` and, in one write
//! transaction, pauses or resumes schedules whose entity's credentials changed, then
//! claims the due schedules and queues their extractions. The slot and its runs commit
//! together, so a crash loses or repeats neither; after downtime a due schedule runs
//! once and its next slot is the first after now, however many slots were missed. Its
//! clock is `--schedule-clock` (real time, unless a test starts it elsewhere).

use crate::app::Context;
use crate::db::{self, schedules::Schedule, Conn, Tx};
use crate::domain::extraction::NewExtraction;
use crate::domain::schedule::PAUSED_INVALID_CREDENTIALS;
use crate::periodic::Periodic;
use crate::sat::Channels;
use std::sync::Arc;

/// The scheduler's thread: a `Periodic` task every `--schedule-tick`.
pub struct Scheduler(Periodic);

impl Scheduler {
    pub fn start(ctx: Arc<Context>) -> anyhow::Result<Scheduler> {
        let interval = ctx.config.schedule_tick;
        let clock = ctx.config.schedule_clock;
        let periodic = Periodic::spawn("scheduler", interval, move || {
            // The runs it queues wake the workers when it commits. Busy or failed: the
            // same schedules are due at the next tick.
            if let Err(e) = ctx.db.tx(|tx| tick(tx, &ctx.channels, clock.now())) {
                log::warn!("scheduler tick failed: {e:#}");
            }
            interval
        })?;
        Ok(Scheduler(periodic))
    }

    pub fn stop(self) {
        self.0.stop();
    }
}

/// Whether the schedule's runs may work on some channel: one of its classes has a
/// channel whose credential is in force or waiting for its check (the run waits for it).
fn credentials_usable(conn: &Conn, channels: &Channels, s: &Schedule) -> anyhow::Result<bool> {
    Ok(db::entities::get_any(conn, &s.entity_id)?.is_some_and(|e| {
        s.plan
            .classes
            .iter()
            .any(|c| channels.may_run(&e, *c, false))
    }))
}

/// One pass at `now`; returns how many extractions it queued.
pub fn tick(
    conn: &Tx,
    channels: &Channels,
    now: chrono::DateTime<chrono::Utc>,
) -> anyhow::Result<usize> {
    conn.lock(db::Lock::Scheduler)?;
    for mut s in db::schedules::credential_changes(conn)? {
        let usable = credentials_usable(conn, channels, &s)?;
        if s.active && !usable {
            s.pause(PAUSED_INVALID_CREDENTIALS);
            db::schedules::update(conn, &s)?;
        } else if !s.active && usable {
            s.resume(&crate::time::format(now));
            db::schedules::update(conn, &s)?;
        }
    }
    let mut queued = 0;
    for mut s in db::schedules::due(conn, &crate::time::format(now))? {
        if !credentials_usable(conn, channels, &s)? {
            s.pause(PAUSED_INVALID_CREDENTIALS);
        } else if s.plan.timing.is_monthly()
            || !db::extractions::schedule_has_open_run(conn, &s.id)?
        {
            // A monthly slot always runs: skipping it would leave a month unextracted
            // (its runs queue behind the entity's open ones).
            queued += run(conn, &mut s, now)?;
        }
        // A slot that found the previous run still going is skipped, not queued behind it.
        s.next_run_at = crate::time::format(s.plan.timing.next_after(now));
        db::schedules::update(conn, &s)?;
    }
    Ok(queued)
}

/// Queues one extraction per direction and document class, each over the slot's period.
fn run(conn: &Tx, s: &mut Schedule, now: chrono::DateTime<chrono::Utc>) -> anyhow::Result<usize> {
    let period = s.plan.period(now);
    let mut queued = 0;
    for (direction, document_class) in s.plan.runs() {
        let new = NewExtraction {
            entity_id: s.entity_id.clone(),
            period,
            direction,
            document_class,
            uuids: Vec::new(),
        };
        db::extractions::queue(conn, &s.org_id, &new, Some(&s.id))?;
        queued += 1;
    }
    s.last_run_at = Some(crate::time::format(now));
    s.updated_at = crate::time::now();
    Ok(queued)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::class::DocumentClass;
    use crate::domain::extraction::Direction;
    use crate::domain::schedule::{NewSchedule, Plan, Span, Timing};
    use std::time::Duration;

    fn setup() -> (db::Memory, db::entities::Entity, Schedule) {
        let conn = db::Memory::new();
        let org = db::orgs::insert(&conn, "Org").expect("org");
        let entity =
            db::entities::insert(&conn, &org.id, "AAA010101AAA", "E", b"x").expect("entity");
        let new = NewSchedule {
            entity_id: entity.id.clone(),
            plan: Plan {
                directions: vec![Direction::Issued, Direction::Received],
                classes: vec![DocumentClass::Invoices],
                timing: Timing::Every(Duration::from_secs(3600)),
                span: Span::Days(7),
            },
        };
        let s = db::schedules::insert(&conn, &org.id, &new, chrono::Utc::now()).expect("schedule");
        (conn, entity, s)
    }

    fn reload(conn: &Conn, s: &Schedule) -> Schedule {
        db::schedules::get(conn, &s.org_id, &s.id)
            .expect("get")
            .expect("found")
    }

    /// The CIEC channel, over a portal the scheduler never calls.
    fn channels() -> Channels {
        struct Unreachable;
        impl crate::sat::ciec::Authority for Unreachable {
            fn validate(
                &self,
                _: &crate::sat::ciec::Credential,
            ) -> Result<(), crate::sat::SatError> {
                Err(crate::sat::SatError::Unavailable(
                    "not in these tests".into(),
                ))
            }
            fn login(
                &self,
                _: &crate::sat::ciec::Credential,
                _: &crate::sat::RunContext,
            ) -> Result<Box<dyn crate::sat::ciec::Session>, crate::sat::SatError> {
                Err(crate::sat::SatError::Unavailable(
                    "not in these tests".into(),
                ))
            }
        }
        let ciec = crate::sat::ciec::CiecChannel::new(Arc::new(Unreachable));
        Channels::new(vec![Arc::new(ciec)])
    }

    fn set_credential(conn: &Conn, entity: &db::entities::Entity, status: &str) {
        db::testing::set_credential_status(conn, &entity.id, status);
    }

    #[test]
    fn a_due_slot_queues_each_direction_once_and_skips_while_its_run_is_open() {
        let (conn, _, s) = setup();
        let now = chrono::Utc::now();
        assert_eq!(conn.tx(|tx| tick(tx, &channels(), now)).expect("tick"), 2);
        let after = reload(&conn, &s);
        assert_eq!(
            after.next_run_at,
            crate::time::format(now + chrono::Duration::hours(1))
        );
        assert_eq!(
            conn.tx(|tx| tick(tx, &channels(), now)).expect("not due"),
            0
        );
        // Two hours later the runs are still pending: the slot is skipped, not queued.
        let later = now + chrono::Duration::hours(2);
        assert_eq!(
            conn.tx(|tx| tick(tx, &channels(), later)).expect("skipped"),
            0
        );
        assert!(reload(&conn, &s).next_run_at > crate::time::format(later));
        db::testing::finish_extractions(&conn);
        assert_eq!(
            conn.tx(|tx| tick(tx, &channels(), later + chrono::Duration::hours(2)))
                .expect("runs"),
            2
        );
    }

    #[test]
    fn invalid_credentials_pause_and_valid_ones_resume() {
        let (conn, entity, s) = setup();
        set_credential(&conn, &entity, "invalid");
        assert_eq!(
            conn.tx(|tx| tick(tx, &channels(), chrono::Utc::now()))
                .expect("tick"),
            0
        );
        let paused = reload(&conn, &s);
        assert!(!paused.active);
        assert_eq!(
            paused.paused_reason.as_deref(),
            Some(PAUSED_INVALID_CREDENTIALS)
        );
        set_credential(&conn, &entity, "valid");
        assert_eq!(
            conn.tx(|tx| tick(tx, &channels(), chrono::Utc::now()))
                .expect("tick"),
            2
        );
        let resumed = reload(&conn, &s);
        assert!(resumed.active && resumed.paused_reason.is_none());
    }
}
