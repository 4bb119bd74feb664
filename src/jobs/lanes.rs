//! Which jobs a worker takes (its lane) and how it claims them: SAT workers keep
//! one free for validations, delivery workers share themselves between organizations,
//! and a delivery worker claims its next delivery while recording its last one.

use super::outcome::{settle, Outcome};
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
/// most half of them at once (`per_org`), and the last `per_org` free workers go only
/// to organizations with no delivery running. So a few tenants whose receivers
/// never answer hold at most the other workers, and anyone else's next delivery still
/// goes out at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct DeliveryShare {
    workers: usize,
    per_org: usize,
}

impl DeliveryShare {
    pub(super) fn for_workers(workers: usize) -> DeliveryShare {
        DeliveryShare {
            workers: workers.max(1),
            per_org: (workers / 2).max(1),
        }
    }

    /// How many running deliveries an organization may have for it to get the next one,
    /// given how many run in all.
    fn org_limit(self, running: usize) -> usize {
        if running + self.per_org >= self.workers {
            1
        } else {
            self.per_org
        }
    }
}

/// Claims the lane's next job in `tx` and marks it running.
pub(super) fn claim(tx: &db::Conn, lane: Lane, now: &str) -> anyhow::Result<Option<Job>> {
    match lane {
        Lane::Sat(lanes) => {
            let allowed = lanes.allowed(db::jobs::running_sat_jobs(tx)?);
            db::jobs::claim(tx, now, allowed)
        }
        Lane::Deliveries(share) => claim_delivery(tx, share, now),
    }
}

/// Claims the next due delivery within the organizations' shares (`DeliveryShare`).
fn claim_delivery(tx: &db::Conn, share: DeliveryShare, now: &str) -> anyhow::Result<Option<Job>> {
    let limit = share.org_limit(db::jobs::running_deliveries(tx)?);
    db::jobs::claim_delivery(tx, now, limit)
}

/// Who claims a next job in the transaction that records an outcome: a delivery worker
/// (not while stopping), so that a busy one commits once per delivery instead of twice.
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
}

/// Records `outcome` like `settle`, then, for a delivery worker, claims its next delivery
/// in the same transaction. The claim follows the settle so that the finished job no
/// longer counts against its organization's share. The claimed job is `running` from
/// the commit on, as after `claim`: a crash before it runs puts it back (`recover`).
pub(super) fn settle_and_claim(
    tx: &db::Conn,
    job: &Job,
    outcome: &Outcome,
    next: ClaimNext,
) -> anyhow::Result<Option<Job>> {
    settle(tx, job, outcome)?;
    match next.0 {
        Some(share) => claim_delivery(tx, share, &crate::time::now()),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::jobs::Kind;
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
    fn deliveries_are_shared_half_per_org_with_the_rest_kept_for_idle_orgs() {
        let share = DeliveryShare::for_workers(16);
        assert_eq!(share.per_org, 8);
        assert_eq!(share.org_limit(0), 8);
        assert_eq!(share.org_limit(7), 8);
        // The last eight free workers: only organizations with nothing running.
        assert_eq!(share.org_limit(8), 1);
        assert_eq!(share.org_limit(15), 1);
        let one = DeliveryShare::for_workers(1);
        assert_eq!((one.per_org, one.org_limit(0)), (1, 1));
        assert_eq!(DeliveryShare::for_workers(8).org_limit(3), 4);
        assert_eq!(DeliveryShare::for_workers(8).org_limit(4), 1);
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
        // Four workers: two per organization, the last two free ones for idle organizations.
        let share = DeliveryShare::for_workers(4);
        let next = ClaimNext(Some(share));
        let now = crate::time::now();
        let claim = || claim_delivery(&conn, share, &now).expect("claim");
        let (d0, d1, d3) = (claim(), claim(), claim());
        let ids = |jobs: &[&Option<Job>]| -> Vec<String> {
            jobs.iter()
                .map(|j| j.as_ref().map_or("-".into(), |j| j.target_id.clone()))
                .collect()
        };
        assert_eq!(
            ids(&[&d0, &d1, &d3]),
            ["d0", "d1", "d3"],
            "b's job while a holds two"
        );
        let record = |job: &Option<Job>, outcome: &Outcome, next: ClaimNext| {
            settle_and_claim(&conn, job.as_ref().expect("job"), outcome, next).expect("record")
        };
        // b done: a's two running deliveries are its share of the last free workers.
        assert!(
            record(&d3, &Outcome::Done, next).is_none(),
            "a holds its share"
        );
        // d0 done: a runs one, may run two: the same transaction claims d2.
        let d2 = record(&d0, &Outcome::Done, next);
        assert_eq!(ids(&[&d2]), ["d2"]);
        // d1 retried later: neither it nor c's future job is due.
        let retry = Outcome::Retry {
            after: Duration::from_secs(60),
            error: "HTTP 500".into(),
        };
        assert!(record(&d1, &retry, next).is_none(), "nothing due");
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
        assert!(record(&d2, &Outcome::Done, ClaimNext(None)).is_none());
    }
}
