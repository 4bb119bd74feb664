//! What happens to an invoice after it is issued: cancellation and, for PPD
//! invoices, the installments that pay it. When they happen is drawn from the
//! day stream along with the invoice's type (so listing the complements of a
//! day scans past days without building their invoices); the installments'
//! details come from the invoice's own payments stream.

use chrono::{Days, NaiveDate, NaiveDateTime, NaiveTime};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::catalog::PAYMENT_FORMS;
use super::seed::{choose, InvoiceSeed, STREAM_PAYMENTS};

/// The most installments a PPD invoice is paid in.
pub(super) const MAX_INSTALLMENTS: usize = 3;
/// Days from a PPD invoice to its first installment.
pub(super) const FIRST_PAYMENT_DAYS: (u64, u64) = (10, 60);
/// Days between consecutive installments.
pub(super) const NEXT_PAYMENT_DAYS: (u64, u64) = (5, 30);

#[derive(Debug, Clone, Copy)]
pub(super) struct Cancellation {
    pub days_after: u64,
    pub secs: u32,
    pub seen_late: bool,
}

/// The days a PPD invoice's installments are planned for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Schedule {
    dates: [NaiveDate; MAX_INSTALLMENTS],
    planned: usize,
    /// The last planned installment never comes.
    unpaid: bool,
}

impl Schedule {
    /// Every planned installment, including a last one that may never come.
    pub fn planned(&self) -> &[NaiveDate] {
        &self.dates[..self.planned]
    }

    /// The days of the installments actually paid.
    pub fn paid(&self) -> &[NaiveDate] {
        &self.dates[..self.planned - usize::from(self.unpaid)]
    }
}

#[derive(Debug, Clone)]
pub(super) struct Installment {
    pub date: NaiveDate,
    pub secs: u32,
    /// Share of the outstanding balance paid, in basis points (the last
    /// planned installment pays the rest).
    pub share_bp: i64,
    pub form: &'static str,
    pub withheld: bool,
    pub uuid_bytes: [u8; 16],
}

/// Business hours, in seconds after midnight: 08:00:00..=19:59:59.
const OPENING: u32 = 8 * 3600;
const CLOSING: u32 = 20 * 3600;

/// Seconds after midnight within business hours.
pub(super) fn business_secs(rng: &mut ChaCha8Rng) -> u32 {
    rng.random_range(OPENING..CLOSING)
}

/// Maps business-hours `secs` into `earliest..CLOSING`, keeping its relative
/// position: a time later than `earliest` and still in business hours.
pub(super) fn business_secs_after(secs: u32, earliest: u32) -> u32 {
    let span = CLOSING.saturating_sub(earliest);
    let offset =
        u64::from(secs.saturating_sub(OPENING)) * u64::from(span) / u64::from(CLOSING - OPENING);
    earliest + offset as u32
}

/// `day` at `secs` after midnight.
pub(super) fn at(day: NaiveDate, secs: u32) -> NaiveDateTime {
    let time = NaiveTime::from_num_seconds_from_midnight_opt(secs, 0).unwrap_or(NaiveTime::MIN);
    day.and_time(time)
}

pub(super) fn add_days(day: NaiveDate, days: u64) -> Option<NaiveDate> {
    day.checked_add_days(Days::new(days))
}

/// About 1 in 20 invoices is cancelled, 1..=3 days after issue.
pub(super) fn cancellation(rng: &mut ChaCha8Rng) -> Option<Cancellation> {
    if !rng.random_ratio(1, 20) {
        return None;
    }
    Some(Cancellation {
        days_after: rng.random_range(1..=3),
        secs: business_secs(rng),
        seen_late: rng.random_bool(0.5),
    })
}

/// When the installments of a PPD invoice issued on `day` come: the first
/// 10..=60 days after it, each next one 5..=30 days after the previous.
pub(super) fn schedule(rng: &mut ChaCha8Rng, day: NaiveDate) -> Schedule {
    // 1 in 5 stays partly unpaid: at least one installment comes, the last never.
    let unpaid = rng.random_ratio(1, 5);
    let fewest = if unpaid { 2 } else { 1 };
    let count = rng.random_range(fewest..=MAX_INSTALLMENTS as u32) as usize;
    let mut schedule = Schedule {
        dates: [day; MAX_INSTALLMENTS],
        planned: 0,
        unpaid,
    };
    let mut date = Some(day);
    for n in 0..count {
        let (least, most) = if n == 0 {
            FIRST_PAYMENT_DAYS
        } else {
            NEXT_PAYMENT_DAYS
        };
        date = date.and_then(|d| add_days(d, rng.random_range(least..=most)));
        if let Some(date) = date {
            schedule.dates[n] = date;
            schedule.planned = n + 1;
        }
    }
    // Past the last representable date: nothing is left unpaid.
    schedule.unpaid &= schedule.planned == count;
    schedule
}

/// The details of every planned installment of an invoice.
pub(super) fn installments(seed: &InvoiceSeed, schedule: &Schedule) -> Vec<Installment> {
    let mut rng = seed.stream(STREAM_PAYMENTS);
    schedule
        .planned()
        .iter()
        .map(|&date| Installment {
            date,
            secs: business_secs(&mut rng),
            share_bp: rng.random_range(2_000..=6_000),
            form: choose(&mut rng, PAYMENT_FORMS),
            withheld: rng.random_ratio(1, 20),
            uuid_bytes: rng.random(),
        })
        .collect()
}

/// The cents each planned installment pays of `total`: shares of the
/// outstanding balance, at least one cent each, the last one the rest.
pub(super) fn split(total: i64, planned: &[Installment]) -> Vec<i64> {
    let mut remaining = total;
    let mut amounts = Vec::with_capacity(planned.len());
    for (i, installment) in planned.iter().enumerate() {
        let later = (planned.len() - i - 1) as i64;
        let amount = if later == 0 {
            remaining
        } else {
            let share = super::amounts::share(remaining, installment.share_bp, 10_000);
            share.clamp(1, (remaining - later).max(1))
        };
        amounts.push(amount);
        remaining -= amount;
    }
    amounts
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn day() -> NaiveDate {
        NaiveDate::from_ymd_opt(2025, 3, 1).unwrap_or_default()
    }

    #[test]
    fn split_sums_to_total() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for (i, total) in [3, 100, 123_457, 9_999_999].into_iter().enumerate() {
            let schedule = schedule(&mut rng, day());
            let planned = installments(&InvoiceSeed::new([1; 32], i as u32), &schedule);
            let amounts = split(total, &planned);
            assert_eq!(amounts.iter().sum::<i64>(), total);
            assert!(amounts.iter().all(|&a| a >= 1));
        }
    }

    #[test]
    fn schedules_stay_in_range() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        for _ in 0..1_000 {
            let schedule = schedule(&mut rng, day());
            let planned = schedule.planned();
            assert!((1..=MAX_INSTALLMENTS).contains(&planned.len()));
            assert!(!schedule.paid().is_empty());
            assert!((10..=60).contains(&(planned[0] - day()).num_days()));
            for pair in planned.windows(2) {
                assert!((5..=30).contains(&(pair[1] - pair[0]).num_days()));
            }
        }
    }
}
