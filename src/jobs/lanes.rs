//! Which jobs a worker takes (its lane) and how it claims them: SAT workers keep
//! one free for validations, delivery workers share themselves between organizations
//! and take a few deliveries at a time, and a delivery worker claims its next ones while
//! recording its last ones.

use crate::app::Context;
use crate::db::{self, jobs::Job};

/// Which jobs a worker thread takes. Deliveries have threads of their own, so receivers
/// that never answer cannot hold up validations and extractions, and those never wait
/// behind deliveries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Lane {
    Sat(Lanes),
    Deliveries(DeliveryShare),
}

impl Lane {
    /// Which wakes the lane's workers sleep on.
    pub(super) fn work(self) -> db::Work {
        match self {
            Lane::Sat(_) => db::Work::Sat,
            Lane::Deliveries(_) => db::Work::Deliveries,
        }
    }
}

/// How the SAT workers are split: from two workers on, extractions leave one free
/// for credential validations, so those never wait behind long extractions. A single
/// worker does both.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Lanes {
    workers: usize,
    extractions: usize,
}

impl Lanes {
    pub(super) fn for_workers(workers: usize) -> Lanes {
        let all = workers.max(1);
        Lanes {
            workers: all,
            extractions: all.saturating_sub(1).max(1),
        }
    }

    fn allowed(self, (validations, extractions): (usize, usize)) -> db::jobs::Allowed {
        let sat_free = validations + extractions < self.workers;
        db::jobs::Allowed {
            validations: sat_free,
            extractions: sat_free && extractions < self.extractions,
        }
    }
}

/// How the delivery workers are shared between organizations: one organization runs at
/// most half of them at once (`per_org`), and the last quarter (`reserve`) of the
/// workers, when they are all that is free, go only to organizations with no delivery
/// running. So tenants whose receivers never answer hold at most three quarters of
/// the workers, and anyone else's next delivery still goes out at once; and a second
/// busy organization beside a fan-out gets a quarter of the workers, not one: with one
/// it fell behind 100 events a second on PostgreSQL, and its commit-to-arrival grew to
/// seconds (`bench/run engines`, row 6d).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DeliveryShare {
    workers: usize,
    per_org: usize,
    reserve: usize,
}

impl DeliveryShare {
    pub(super) fn for_workers(workers: usize) -> DeliveryShare {
        DeliveryShare {
            workers: workers.max(1),
            per_org: (workers / 2).max(1),
            reserve: workers / 4,
        }
    }

    /// How many running deliveries an organization may have for it to get the next one,
    /// given how many run in all.
    fn org_limit(self, running: usize) -> usize {
        if running + self.reserve >= self.workers {
            1
        } else {
            self.per_org
        }
    }

    /// How many of an organization's due deliveries to one webhook a claim takes, given
    /// how many batches run in all: its backlog spread over the workers it may still
    /// start, so a short backlog goes out on several workers at once instead of in turn
    /// on one (a second organization's events beside a fan-out waited behind 30 others
    /// in one worker's batch), while an organization that holds its share (a fan-out)
    /// takes whole batches.
    fn batch(self, running: usize, backlog: db::jobs::Backlog) -> usize {
        let share_left = self.org_limit(running).saturating_sub(backlog.org_running);
        let free = self
            .workers
            .saturating_sub(self.reserve)
            .saturating_sub(running);
        backlog.due.div_ceil(share_left.min(free).max(1))
    }
}

/// The most deliveries a worker claims at once, all to one webhook: it sends them in
/// turn and records them in one transaction. A fan-out was bound by one commit per
/// delivery and by the workers' contention for the write turn (twice the workers
/// delivered fewer). An organization's share counts batches, that is workers; a batch
/// is one webhook's, so a hanging receiver holds back only its own deliveries, and
/// after a slow send the rest of its batch goes back to the queue (`delivery::run`).
pub(super) const DELIVERY_BATCH: usize = 8;

/// The same on PostgreSQL, where instances and workers write side by side but a claim
/// still takes the claims' lock until its transaction commits: the workers waited on it
/// in turn for the claim's and the commit's round trips, and a fan-out spent its time
/// there (`bench/run engines`). A larger batch takes it four times less per delivery.
const DELIVERY_BATCH_POSTGRES: usize = 32;

/// The most deliveries a worker claims at once on this engine.
pub(super) fn delivery_batch(conn: &db::Conn) -> usize {
    match conn.engine() {
        db::Engine::Sqlite => DELIVERY_BATCH,
        db::Engine::Postgres => DELIVERY_BATCH_POSTGRES,
    }
}

/// Claims the lane's next job in `tx` (a batch of deliveries) and marks it running.
/// Claims of one lane take turns across instances: the counts they read decide them.
pub(super) fn claim(tx: &db::Tx, lane: Lane, now: &str) -> anyhow::Result<Vec<Job>> {
    tx.lock(db::Lock::Claims(lane.work()))?;
    match lane {
        Lane::Sat(lanes) => {
            let allowed = lanes.allowed(db::jobs::running_sat_jobs(tx)?);
            Ok(db::jobs::claim(tx, now, allowed)?.into_iter().collect())
        }
        Lane::Deliveries(share) => claim_deliveries(tx, share, now, delivery_batch(tx)),
    }
}

/// Claims up to `batch` next due deliveries within the organizations' shares, spread
/// over the workers their shares leave (`DeliveryShare`).
fn claim_deliveries(
    tx: &db::Conn,
    share: DeliveryShare,
    now: &str,
    batch: usize,
) -> anyhow::Result<Vec<Job>> {
    let running = db::jobs::running_deliveries(tx)?;
    db::jobs::claim_deliveries(tx, now, share.org_limit(running), batch, |backlog| {
        share.batch(running, backlog)
    })
}

/// Who claims a next job in the transaction that records an outcome: a delivery worker
/// (not while stopping), so that a busy one commits once per batch instead of twice.
/// Validations and extractions are long: their workers claim on their own.
#[derive(Debug, Clone, Copy)]
pub(super) struct ClaimNext(Option<DeliveryShare>);

impl ClaimNext {
    pub(super) fn new(ctx: &Context, lane: Lane) -> ClaimNext {
        match lane {
            Lane::Deliveries(share) if !ctx.stopping() => ClaimNext(Some(share)),
            _ => ClaimNext(None),
        }
    }

    /// For a delivery worker, its next deliveries, claimed in `tx` after its last ones
    /// were recorded there, so that those no longer count against their organization's
    /// share. They are `running` from the commit on, as after `claim`: a crash before
    /// they run puts them back (`recover`).
    /// `batch`: at most how many (`delivery_batch`, or one after a slow send).
    pub(super) fn claim(self, tx: &db::Tx, batch: usize) -> anyhow::Result<Vec<Job>> {
        match self.0 {
            Some(share) => {
                tx.lock(db::Lock::Claims(db::Work::Deliveries))?;
                claim_deliveries(tx, share, &crate::time::now(), batch)
            }
            None => Ok(Vec::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::jobs::Kind;
    use crate::jobs::outcome::{settle, Outcome};
    use std::time::Duration;

    #[test]
    fn lanes_keep_a_worker_for_validations_from_two_workers() {
        let four = Lanes::for_workers(4);
        assert_eq!(
            four,
            Lanes {
                workers: 4,
                extractions: 3
            }
        );
        let busy = four.allowed((0, 3));
        assert!(busy.validations && !busy.extractions);
        assert!(!four.allowed((1, 3)).validations);
        let one = Lanes::for_workers(1);
        assert!(one.allowed((0, 0)).extractions);
        assert!(!one.allowed((0, 1)).validations);
        assert_eq!(
            Lanes::for_workers(2),
            Lanes {
                workers: 2,
                extractions: 1
            }
        );
    }

    #[test]
    fn deliveries_are_shared_half_per_org_with_a_quarter_kept_for_idle_orgs() {
        let share = DeliveryShare::for_workers(16);
        assert_eq!((share.per_org, share.reserve), (8, 4));
        assert_eq!(share.org_limit(0), 8);
        // A fan-out's eight and a second busy organization's first three: it may take
        // a fourth.
        assert_eq!(share.org_limit(11), 8);
        // The last four free workers: only organizations with nothing running.
        assert_eq!(share.org_limit(12), 1);
        assert_eq!(share.org_limit(15), 1);
        let one = DeliveryShare::for_workers(1);
        assert_eq!((one.per_org, one.reserve, one.org_limit(0)), (1, 0, 1));
        let two = DeliveryShare::for_workers(2);
        assert_eq!((two.org_limit(0), two.org_limit(1)), (1, 1));
        assert_eq!(DeliveryShare::for_workers(8).org_limit(5), 4);
        assert_eq!(DeliveryShare::for_workers(8).org_limit(6), 1);
    }

    #[test]
    fn a_short_backlog_is_spread_over_the_workers_left_and_a_long_one_goes_in_whole_batches() {
        let share = DeliveryShare::for_workers(16);
        let backlog = |org_running, due| db::jobs::Backlog { org_running, due };
        // Beside a fan-out's eight batches, a second organization may start four: its
        // 27 due deliveries go out seven at a time, then the rest over the three left.
        assert_eq!(share.batch(8, backlog(0, 27)), 7);
        assert_eq!(share.batch(9, backlog(1, 20)), 7);
        assert_eq!(share.batch(11, backlog(3, 6)), 6);
        // The fan-out, recording its batch with seven others running: whole batches
        // (the claim takes no more than its most).
        assert_eq!(share.batch(11, backlog(7, 64)), 64);
        // Its first claims spread the window over the eight it may start.
        assert_eq!(share.batch(0, backlog(0, 64)), 8);
        // The last free workers: one batch for an organization with none running.
        assert_eq!(share.batch(13, backlog(0, 40)), 40);
        assert_eq!(DeliveryShare::for_workers(1).batch(0, backlog(0, 9)), 9);
    }

    #[test]
    fn recording_a_delivery_claims_the_next_due_one_within_its_orgs_share() {
        let conn = db::Memory::new();
        let (past, later) = ("2000-01-01T00:00:00.000000Z", "2999-01-01T00:00:00.000000Z");
        for (i, (org, run_at)) in [
            ("a", past),
            ("a", past),
            ("a", past),
            ("b", past),
            ("c", later),
        ]
        .into_iter()
        .enumerate()
        {
            let target = format!("d{i}");
            conn.tx(|tx| {
                db::jobs::enqueue_for_org(
                    tx,
                    Kind::DeliverWebhook,
                    &target,
                    None,
                    Some(org),
                    run_at,
                )
            })
            .expect("enqueue");
        }
        // Four workers: two per organization, the last free one for idle organizations.
        let share = DeliveryShare::for_workers(4);
        let next = ClaimNext(Some(share));
        let claim =
            || claim_deliveries(&conn, share, &crate::time::now(), DELIVERY_BATCH).expect("claim");
        let ids =
            |jobs: &[Job]| -> Vec<String> { jobs.iter().map(|j| j.target_id.clone()).collect() };
        // No webhook in their serial keys: batches of one. a runs two, then b's while a
        // holds its two.
        let (d0, d1, b) = (claim(), claim(), claim());
        assert_eq!(ids(&d0), ["d0"]);
        assert_eq!(ids(&d1), ["d1"]);
        assert_eq!(ids(&b), ["d3"], "b's job while a holds two");
        assert!(
            claim().is_empty(),
            "a and b at the last free worker's limit"
        );
        // What a delivery worker's record does (`delivery::run`): settle, then claim.
        let record = |job: &Job, outcome: &Outcome, next: ClaimNext| {
            settle(&conn, job, outcome).expect("settle");
            conn.tx(|tx| next.claim(tx, DELIVERY_BATCH)).expect("claim")
        };
        // b done: a's two running deliveries are its half.
        assert!(
            record(&b[0], &Outcome::Done, next).is_empty(),
            "a holds its half"
        );
        // d0 done: a runs one, may run two: the same transaction claims d2.
        let d2 = record(&d0[0], &Outcome::Done, next);
        assert_eq!(ids(&d2), ["d2"]);
        // d1 retried later: neither it nor c's future job is due.
        let retry = Outcome::Retry {
            after: Duration::from_secs(60),
            error: "HTTP 500".into(),
        };
        assert!(record(&d1[0], &retry, next).is_empty(), "nothing due");
        let rows = db::testing::jobs(&conn);
        let rows: Vec<(&str, &str, i64)> = rows
            .iter()
            .map(|(t, s, a)| (t.as_str(), s.as_str(), *a))
            .collect();
        assert_eq!(
            rows,
            [
                ("d1", "queued", 1),
                ("d2", "running", 1),
                ("d4", "queued", 0)
            ],
            "done jobs deleted, the claimed one running"
        );
        // Without a share (the SAT lane, or stopping) the record only settles.
        assert!(record(&d2[0], &Outcome::Done, ClaimNext(None)).is_empty());
    }
}
