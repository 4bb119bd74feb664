//! `P` complements (Pagos 2.0): each active PPD invoice is paid in
//! installments on later days. To list the complements of a period we replay
//! the day streams of the days that could hold their invoices (cheap: types
//! and schedules only), and build an invoice and its complements only when
//! one of its installments falls inside the period.

use chrono::{Days, NaiveDate, TimeDelta};
use rust_decimal::Decimal;

use super::generate::{base_invoice, day_slots, Built};
use super::lifecycle::{
    at, installments, split, Installment, Schedule, FIRST_PAYMENT_DAYS, MAX_INSTALLMENTS,
    NEXT_PAYMENT_DAYS,
};
use super::seed::{fiscal_uuid, STREAM_RENDER_PAYMENT};
use super::{days, Currency, Details, Entity, Kind, SandboxInvoice, SandboxPayment};

/// The latest an installment can come after its invoice.
pub(super) const LATEST_PAYMENT_DAYS: u64 =
    FIRST_PAYMENT_DAYS.1 + NEXT_PAYMENT_DAYS.1 * (MAX_INSTALLMENTS as u64 - 1);

/// Every complement issued from `from` to `to` (inclusive) for the entity.
pub(super) fn payments_between(
    entity: &Entity,
    from: NaiveDate,
    to: NaiveDate,
) -> Vec<SandboxInvoice> {
    let scan_from = from
        .checked_sub_days(Days::new(LATEST_PAYMENT_DAYS))
        .unwrap_or(NaiveDate::MIN);
    let Some(scan_to) = to.checked_sub_days(Days::new(FIRST_PAYMENT_DAYS.0)) else {
        return Vec::new();
    };
    let in_period = |date: NaiveDate| from <= date && date <= to;
    let mut payments = Vec::new();
    for day in days(scan_from, scan_to) {
        for slot in day_slots(entity, day) {
            // A cancelled invoice is never paid.
            let Some(schedule) = slot.schedule.filter(|_| slot.cancellation.is_none()) else {
                continue;
            };
            if schedule.paid().iter().any(|&date| in_period(date)) {
                let ppd = base_invoice(entity, day, &slot, None);
                let paid = complements(&ppd, &schedule);
                payments.extend(paid.filter(|p| in_period(p.issued_at.date())));
            }
        }
    }
    payments
}

/// All the complements that pay `ppd`, in installment order.
fn complements<'a>(
    ppd: &'a Built,
    schedule: &Schedule,
) -> impl Iterator<Item = SandboxInvoice> + 'a {
    let planned = installments(&ppd.invoice.details.seed, schedule);
    let amounts = split(ppd.total_cents, &planned);
    let mut balance = ppd.total_cents;
    planned
        .into_iter()
        .take(schedule.paid().len())
        .zip(amounts)
        .zip(1u32..)
        .map(move |((installment, amount), number)| {
            let complement = complement(&ppd.invoice, &installment, number, balance, amount);
            balance -= amount;
            complement
        })
}

/// The `P` CFDI of installment `number`, issued by the PPD invoice's issuer
/// to its receiver on the payment day.
fn complement(
    ppd: &SandboxInvoice,
    installment: &Installment,
    number: u32,
    balance: i64,
    amount: i64,
) -> SandboxInvoice {
    let issued_at = at(installment.date, installment.secs);
    let payment = SandboxPayment {
        related_uuid: ppd.uuid.clone(),
        related_serie: ppd.details.serie.to_owned(),
        related_folio: ppd.details.folio.clone(),
        installment: number,
        previous_balance: Decimal::new(balance, 2),
        amount: Decimal::new(amount, 2),
        outstanding_balance: Decimal::new(balance - amount, 2),
        // Received an hour before the complement is issued (still in the day:
        // complements are issued from 08:00).
        paid_at: issued_at
            .checked_sub_signed(TimeDelta::hours(1))
            .unwrap_or(issued_at),
        payment_form: installment.form,
    };
    SandboxInvoice {
        uuid: fiscal_uuid(installment.uuid_bytes),
        invoice_type: 'P',
        issuer_tax_id: ppd.issuer_tax_id.clone(),
        issuer_name: ppd.issuer_name.clone(),
        receiver_tax_id: ppd.receiver_tax_id.clone(),
        receiver_name: ppd.receiver_name.clone(),
        issued_at,
        total: Decimal::ZERO,
        cancelled_at: None,
        cancellation_seen_late: false,
        xml_withheld_first: installment.withheld,
        has_pdf: false,
        details: Details {
            kind: Kind::Payment,
            seed: ppd.details.seed,
            render_stream: STREAM_RENDER_PAYMENT + u64::from(number),
            serie: Kind::Payment.serie(),
            folio: format!("{}{number}", ppd.details.folio),
            currency: Currency::Xxx,
            payment_form: None,
            use_cfdi: "CP01",
            issuer_regime: ppd.details.issuer_regime,
            issuer_zip: ppd.details.issuer_zip.clone(),
            receiver_regime: ppd.details.receiver_regime,
            receiver_zip: ppd.details.receiver_zip.clone(),
            employee: None,
            related_uuid: None,
            payment: Some(payment),
        },
    }
}
