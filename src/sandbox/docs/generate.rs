//! The base invoices of a day (every type but `P`), built from the day's
//! stream and each invoice's own streams.

use chrono::{Datelike, NaiveDate};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rust_decimal::Decimal;

use super::catalog::{COMPANIES, EMPLOYEES, INCOME_USES, PAYMENT_FORMS};
use super::lifecycle::{
    add_days, at, business_secs, business_secs_after, cancellation, schedule, Cancellation,
    Schedule,
};
use super::seed::{choose, fiscal_uuid, hash_seed, index, InvoiceSeed, STREAM_META, STREAM_RENDER};
use super::{amounts, Currency, Details, Direction, Entity, Kind, SandboxInvoice};

/// One invoice position of a day, as the day stream draws it: its type and
/// lifecycle. The rest comes from the invoice's own streams.
pub(super) struct Slot {
    pub index: u32,
    pub kind: Kind,
    pub seed: InvoiceSeed,
    pub cancellation: Option<Cancellation>,
    /// When a PPD invoice's installments come.
    pub schedule: Option<Schedule>,
}

/// An `I`/PUE invoice that a later credit note of the same day can refer to
/// (never a PPD one, whose balance the payment complements settle in full).
pub(super) struct Related {
    uuid: String,
    company: usize,
    secs: u32,
}

/// A built invoice with what its neighbours and payments need.
pub(super) struct Built {
    pub invoice: SandboxInvoice,
    pub total_cents: i64,
    company: usize,
    /// Issue time, in seconds after midnight.
    secs: u32,
}

/// The day's slots: ~5 (3..=7), or ~500 (480..=520) for `BIG…` tax ids.
pub(super) fn day_slots(entity: &Entity, day: NaiveDate) -> Vec<Slot> {
    let day_seed = hash_seed(&entity.label(day, "invoices"));
    let mut rng = ChaCha8Rng::from_seed(day_seed);
    let count = if entity.is_big() {
        rng.random_range(480..=520u32)
    } else {
        rng.random_range(3..=7u32)
    };
    (0..count)
        .map(|index| {
            let kind = base_kind(rng.random_range(0..100));
            let cancellation = cancellation(&mut rng);
            let schedule = (kind == Kind::IncomePpd).then(|| schedule(&mut rng, day));
            Slot {
                index,
                kind,
                seed: InvoiceSeed::new(day_seed, index),
                cancellation,
                schedule,
            }
        })
        .collect()
}

/// Base mix: I/PUE 50%, I/PPD 25%, E 10%, N 8%, T 7%.
fn base_kind(percentile: u32) -> Kind {
    match percentile {
        0..50 => Kind::IncomePue,
        50..75 => Kind::IncomePpd,
        75..85 => Kind::Credit,
        85..93 => Kind::Payroll,
        _ => Kind::Transfer,
    }
}

/// The day's invoices without payment complements, in slot order. A credit
/// note refers to the latest active `I`/PUE invoice before it, if any.
pub(super) fn base_invoices(entity: &Entity, day: NaiveDate) -> Vec<SandboxInvoice> {
    let mut related: Option<Related> = None;
    day_slots(entity, day)
        .iter()
        .map(|slot| {
            let built = base_invoice(entity, day, slot, related.as_ref());
            let invoice = built.invoice;
            if slot.kind == Kind::IncomePue && invoice.cancelled_at.is_none() {
                related = Some(Related {
                    uuid: invoice.uuid.clone(),
                    company: built.company,
                    secs: built.secs,
                });
            }
            invoice
        })
        .collect()
}

/// Per-invoice draws from the metadata stream, always in this order.
struct Meta {
    uuid_bytes: [u8; 16],
    company: usize,
    employee: usize,
    secs: u32,
    usd: bool,
    rate_e4: i64,
    payment_form: &'static str,
    income_use: &'static str,
    withheld: bool,
    pdf: bool,
}

fn meta(seed: &InvoiceSeed) -> Meta {
    let mut rng = seed.stream(STREAM_META);
    Meta {
        uuid_bytes: rng.random(),
        company: index(&mut rng, COMPANIES.len()),
        employee: index(&mut rng, EMPLOYEES.len()),
        secs: business_secs(&mut rng),
        // 15% of I/PUE invoices are in USD: about 1 in 10 of all I invoices.
        usd: rng.random_ratio(3, 20),
        rate_e4: rng.random_range(168_000..=205_000),
        payment_form: choose(&mut rng, PAYMENT_FORMS),
        income_use: choose(&mut rng, INCOME_USES),
        withheld: rng.random_ratio(1, 20),
        pdf: rng.random_ratio(6, 7),
    }
}

/// Tax id, name, regime and postal code of one side of an invoice.
struct Party {
    rfc: String,
    name: String,
    regime: &'static str,
    zip: String,
}

/// The other side: an employee for payroll the entity issues, else a company.
fn counterparty(entity: &Entity, kind: Kind, meta: &Meta) -> Party {
    if kind == Kind::Payroll && entity.direction == Direction::Issued {
        let employee = &EMPLOYEES[meta.employee];
        return Party {
            rfc: employee.rfc.to_owned(),
            name: employee.name.to_owned(),
            regime: "605",
            zip: employee.zip.to_owned(),
        };
    }
    let company = &COMPANIES[meta.company];
    Party {
        rfc: company.rfc.to_owned(),
        name: company.name.to_owned(),
        regime: company.regime,
        zip: company.zip.to_owned(),
    }
}

fn own_party(entity: &Entity, kind: Kind) -> Party {
    // An entity receiving payroll is the employee: salaried regime.
    let salaried = kind == Kind::Payroll && entity.direction == Direction::Received;
    Party {
        rfc: entity.tax_id.to_owned(),
        name: entity.name.clone(),
        regime: if salaried { "605" } else { entity.regime },
        zip: entity.zip.clone(),
    }
}

fn use_cfdi(kind: Kind, meta: &Meta) -> &'static str {
    match kind {
        Kind::IncomePue | Kind::IncomePpd => meta.income_use,
        Kind::Credit => "G02",
        Kind::Payroll => "CN01",
        Kind::Transfer => "S01",
        Kind::Payment => "CP01",
    }
}

fn payment_form(kind: Kind, meta: &Meta) -> Option<&'static str> {
    match kind {
        Kind::IncomePue | Kind::Credit => Some(meta.payment_form),
        // Not yet paid, and payroll always declares "99" (por definir).
        Kind::IncomePpd | Kind::Payroll => Some("99"),
        Kind::Transfer | Kind::Payment => None,
    }
}

fn currency(kind: Kind, meta: &Meta) -> Currency {
    match kind {
        Kind::IncomePue if meta.usd => Currency::Usd {
            rate_e4: meta.rate_e4,
        },
        Kind::Transfer | Kind::Payment => Currency::Xxx,
        _ => Currency::Mxn,
    }
}

/// Folios grow with the day and the slot, unique per entity and direction.
fn folio(day: NaiveDate, index: u32) -> String {
    (i64::from(day.num_days_from_ce()) * 1_000 + i64::from(index) + 1).to_string()
}

/// Builds the invoice of `slot` on `day`.
pub(super) fn base_invoice(
    entity: &Entity,
    day: NaiveDate,
    slot: &Slot,
    related: Option<&Related>,
) -> Built {
    let kind = slot.kind;
    let mut meta = meta(&slot.seed);
    let related = related.filter(|_| kind == Kind::Credit);
    if let Some(related) = related {
        // Credit the same customer, after the invoice.
        meta.company = related.company;
        meta.secs = business_secs_after(meta.secs, related.secs);
    }
    let own = own_party(entity, kind);
    let other = counterparty(entity, kind, &meta);
    let (issuer, receiver) = match entity.direction {
        Direction::Issued => (own, other),
        Direction::Received => (other, own),
    };
    let currency = currency(kind, &meta);
    let total_cents = amounts::amounts(kind, &slot.seed, currency).total;
    let cancelled_at = slot
        .cancellation
        .and_then(|c| add_days(day, c.days_after).map(|d| at(d, c.secs)));
    let invoice = SandboxInvoice {
        uuid: fiscal_uuid(meta.uuid_bytes),
        invoice_type: kind.letter(),
        issuer_tax_id: issuer.rfc,
        issuer_name: issuer.name,
        receiver_tax_id: receiver.rfc,
        receiver_name: receiver.name,
        issued_at: at(day, meta.secs),
        total: Decimal::new(total_cents, 2),
        cancelled_at,
        cancellation_seen_late: cancelled_at.is_some()
            && slot.cancellation.is_some_and(|c| c.seen_late),
        xml_withheld_first: meta.withheld,
        has_pdf: meta.pdf && !matches!(kind, Kind::Transfer | Kind::Payment),
        details: Details {
            kind,
            seed: slot.seed,
            render_stream: STREAM_RENDER,
            serie: kind.serie(),
            folio: folio(day, slot.index),
            currency,
            payment_form: payment_form(kind, &meta),
            use_cfdi: use_cfdi(kind, &meta),
            issuer_regime: issuer.regime,
            issuer_zip: issuer.zip,
            receiver_regime: receiver.regime,
            receiver_zip: receiver.zip,
            employee: (kind == Kind::Payroll).then_some(meta.employee),
            related_uuid: related.map(|r| r.uuid.clone()),
            payment: None,
        },
    };
    Built {
        invoice,
        total_cents,
        company: meta.company,
        secs: meta.secs,
    }
}
