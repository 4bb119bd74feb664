//! The status checker: asks the SAT's status service (`sat::status`) about stored
//! invoices, one at a time on a thread of its own, so checks never take a worker from
//! extractions, validations or deliveries. Its queue is each invoice's next check time
//! (`db::invoices::sat_status`), planned by `sat::status::policy`.
//!
//! - Rate: at most `--sat-status-rate` checks a second, service-wide (one thread per
//!   server, one server per data directory). Checks asked for on demand come first,
//!   taking turns between organizations (`store::next_due`).
//! - Outage: an answer that is not the service's (unreachable, timeout, HTTP error,
//!   SOAP fault, garbage) pauses every check, 1 s, 2 s, 4 s ... up to 5 minutes; the
//!   pause is kept in `settings`, so a restart keeps backing off, and the first good
//!   answer ends it. The invoice keeps its place: it is due again after the pause.
//! - An answer, its consequences (a cancellation through `ingest::apply_status`, the
//!   same code as a cancellation an extraction sees) and its `invoice.updated` commit
//!   in one transaction. A check cut short by a stop changed nothing: it is due again.

use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDateTime, Utc};

use crate::app::Context;
use crate::cfdi::Cfdi;
use crate::db::classes::Stored;
use crate::db::Work;
use crate::db::{self, invoices::sat_status as store, Tx};
use crate::domain::class::InvoiceClass;
use crate::domain::sat_status::{Efos, State};
use crate::ingest::{apply_status, Owner};
use crate::sat::status::policy::{self, Facts, Pace};
use crate::sat::status::{expression, Answer, Checks, StatusError, Subject};

/// The longest the checker sleeps without looking again.
const IDLE_POLL: Duration = Duration::from_secs(1);
/// Where the outage's pause is kept.
const OUTAGE_SETTING: &str = "sat_status_outage";

/// The outage's state: failures in a row, and the pause they set.
#[derive(Debug, Clone, Default, PartialEq)]
struct Outage {
    failures: u32,
    until: Option<DateTime<Utc>>,
}

impl Outage {
    fn load(conn: &db::Conn) -> anyhow::Result<Outage> {
        let Some(text) = db::settings::get(conn, OUTAGE_SETTING)? else {
            return Ok(Outage::default());
        };
        let (failures, until) = text.split_once(' ').unwrap_or((&text, ""));
        Ok(Outage {
            failures: failures.parse().unwrap_or(0),
            until: crate::time::parse(until),
        })
    }

    fn save(&self, tx: &Tx) -> anyhow::Result<()> {
        let until = self.until.map(crate::time::format).unwrap_or_default();
        db::settings::set(tx, OUTAGE_SETTING, &format!("{} {until}", self.failures))
    }

    fn pause(&self) -> Option<Duration> {
        self.until.and_then(|u| (u - Utc::now()).to_std().ok())
    }
}

pub(super) fn run_loop(ctx: &Context, checker: &Checks) {
    let interval = Duration::from_secs_f64(1.0 / checker.rate.max(0.001));
    let mut outage = match ctx.db.conn().and_then(|c| Outage::load(&c)) {
        Ok(o) => o,
        Err(e) => {
            log::error!("sat status: cannot read the outage state: {e:#}");
            Outage::default()
        }
    };
    if outage.failures > 0 {
        log::info!(
            "sat status: resuming after {} failed check(s), paused until {:?}",
            outage.failures,
            outage.until
        );
    }
    let mut last_start: Option<Instant> = None;
    // Whose check went last: checks on demand take turns between organizations.
    let mut last_org: Option<String> = None;
    while !ctx.stopping() {
        let seen = ctx.db.waker().current(Work::StatusChecks);
        if let Some(pause) = outage.pause() {
            ctx.db
                .waker()
                .wait(Work::StatusChecks, seen, pause.min(IDLE_POLL));
            continue;
        }
        if let Some(gap) = last_start.and_then(|l| interval.checked_sub(l.elapsed())) {
            ctx.db
                .waker()
                .wait(Work::StatusChecks, seen, gap.min(IDLE_POLL));
            continue;
        }
        let now = crate::time::now();
        let next = ctx
            .db
            .conn()
            .and_then(|c| store::next_due(&c, &now, last_org.as_deref()));
        match next {
            Ok(Some(due)) => {
                last_start = Some(Instant::now());
                last_org = Some(due.org_id.clone());
                if let Err(e) = check(ctx, checker, &due, &mut outage) {
                    log::error!("sat status: checking invoice {} failed: {e:#}", due.id);
                    ctx.db.waker().wait(Work::StatusChecks, seen, IDLE_POLL);
                }
            }
            Ok(None) => ctx
                .db
                .waker()
                .wait(Work::StatusChecks, seen, sleep_budget(ctx)),
            Err(e) => {
                log::error!("sat status: cannot read the queue: {e:#}");
                ctx.db.waker().wait(Work::StatusChecks, seen, IDLE_POLL);
            }
        }
    }
}

/// Until the next planned check, at most `IDLE_POLL`.
fn sleep_budget(ctx: &Context) -> Duration {
    let next = ctx
        .db
        .conn()
        .ok()
        .and_then(|c| store::next_due_at(&c).ok().flatten())
        .and_then(|t| crate::time::parse(&t));
    next.and_then(|n| (n - Utc::now()).to_std().ok())
        .map_or(IDLE_POLL, |d| d.clamp(Duration::from_millis(1), IDLE_POLL))
}

/// One check: the printed expression from the stored XML, the call (no transaction
/// held), then its outcome.
fn check(
    ctx: &Context,
    checker: &Checks,
    due: &store::Due,
    outage: &mut Outage,
) -> anyhow::Result<()> {
    let xml = db::documents::get(&ctx.db.conn()?, &due.id, "xml")?;
    let expression = xml.and_then(|xml| {
        let cfdi = Cfdi::parse(&xml).ok()?;
        Some((expression::of_xml(&xml, &cfdi)?, cfdi.issued_at))
    });
    let Some((text, issued_at)) = expression else {
        log::warn!("sat status: invoice {} has no printed expression", due.id);
        return ctx.db.tx(|tx| store::give_up(tx, &due.id));
    };
    let subject = Subject {
        expression: &text,
        issued_at: &issued_at,
    };
    let result = checker.service.check(&subject);
    ctx.db.tx(|tx| match &result {
        Ok(answer) => {
            record(tx, &checker.pace, due, answer)?;
            if outage.failures > 0 {
                let ended = Outage::default();
                ended.save(tx)?;
            }
            Ok(())
        }
        Err(e) => failed(tx, outage, e),
    })?;
    match result {
        Ok(_) => {
            if outage.failures > 0 {
                log::info!("sat status: the service answers again");
            }
            *outage = Outage::default();
        }
        Err(_) => {
            outage.failures += 1;
            outage.until = Some(pause_end(outage.failures));
        }
    }
    Ok(())
}

fn pause_end(failures: u32) -> DateTime<Utc> {
    let pause = chrono::Duration::from_std(super::outcome::backoff(failures)).unwrap_or_default();
    Utc::now() + pause
}

/// An outage: the pause grows and is kept.
fn failed(tx: &Tx, outage: &Outage, e: &StatusError) -> anyhow::Result<()> {
    let failures = outage.failures + 1;
    log::warn!(
        "sat status: {e} (failure {failures} in a row; checks pause {}s)",
        super::outcome::backoff(failures).as_secs()
    );
    Outage {
        failures,
        until: Some(pause_end(failures)),
    }
    .save(tx)
}

/// A CFDI's local time as written (`2026-01-10T10:00:00`, fractions allowed).
fn local(text: Option<&str>) -> Option<NaiveDateTime> {
    let text = text?.trim();
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f"))
        .ok()
}

/// Stores an answer with the policy's next check; a cancellation goes through
/// `apply_status`; the invoice's event (if the answer changed it) commits with it.
fn record(tx: &Tx, pace: &Pace, due: &store::Due, answer: &Answer) -> anyhow::Result<()> {
    let now = Utc::now();
    let facts = Facts {
        issued_at: local(due.issued_at.as_deref()),
        certified_at: local(due.certified_at.as_deref()),
        outstanding: due.outstanding,
        not_found_since: due.not_found_since.as_deref().and_then(crate::time::parse),
    };
    let decision = policy::decide(pace, &facts, answer, now);
    let batch = format!("sat-status-{}", uuid::Uuid::new_v4());
    let owner = Owner {
        org_id: &due.org_id,
        entity_id: &due.entity_id,
        batch: &batch,
    };
    let now_text = crate::time::format(now);
    // A cancellation recomputes the entity's balances (`db::Lock::Entity`).
    tx.lock(db::Lock::Entity(&due.entity_id))?;
    db::changes::mark(tx, &InvoiceClass::TRACKED, &batch, &due.id)?;
    let found = decision.state != State::NotFound && decision.state != State::NotRegistered;
    store::record(
        tx,
        &due.id,
        &store::Record {
            state: decision.state.as_str(),
            cancellable: answer.cancellable.filter(|_| found).map(|c| c.as_str()),
            cancellation_status: answer.cancellation_status.map(|c| c.as_str()),
            efos: if found { answer.efos } else { Efos::Unknown }.as_str(),
            not_found_since: decision.not_found_since.map(crate::time::format),
            next_check: decision.next_check.map(crate::time::format),
        },
        &now_text,
    )?;
    if decision.state == State::Cancelled && due.status != "cancelled" {
        if let Some(known) = db::invoices::write::known(tx, &due.entity_id, &due.uuid)? {
            // The status service gives no cancellation date: `cancelled_at` stays null.
            apply_status(tx, owner, &known, &due.uuid, "cancelled", None, &now_text)?;
        }
    }
    while crate::events::documents::flush(tx, &batch, crate::events::documents::CHUNK)?
        == crate::events::documents::CHUNK as usize
    {}
    Ok(())
}
