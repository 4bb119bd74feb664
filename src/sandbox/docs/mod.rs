//! Documents of the sandbox tax authority: deterministic CFDI 4.0 invoices
//! (metadata, stamped XML and a printable PDF) for any entity, direction and
//! day, with no clock, no network and no state.
//!
//! Everything is a pure function of `(tax_id, direction, day)`: each day has a
//! ChaCha8 generator seeded with SHA-256 of
//! `"{tax_id}|{direction}|{day}|invoices"`, whose stream 0 draws how many
//! invoices there are, their types and lifecycles (cancellation, installment
//! days). Invoice `i` of the day draws its details from other streams of the
//! same seed, one per purpose (metadata, lines, installments, seals), so each
//! part can be recomputed on its own and cheaply: listing the payment
//! complements of a day replays only the day streams of earlier days.
//!
//! The rules (also documented for API users under `/docs`):
//! - about 5 invoices a day (3..=7), about 500 (480..=520) for a `tax_id`
//!   starting with `BIG`; base mix `I`/PUE 50%, `I`/PPD 25%, `E` 10%, `N` 8%,
//!   `T` 7%;
//! - every `I`/PPD invoice is paid by 1 to 3 `P` complements (Pagos 2.0), the
//!   first 10..=60 days after the invoice, the next 5..=30 days after the
//!   previous; 1 in 5 stays partly unpaid (its last installment never comes);
//!   a cancelled PPD invoice is never paid;
//! - 1 in 20 base invoices is cancelled 1..=3 days after issue (half of them
//!   are listed as active the first time); `P` complements are never
//!   cancelled, so the installment chain stays consistent;
//! - `E` credit notes refer to the latest active `I`/PUE invoice of the day
//!   before them, when there is one, and credit the same customer;
//! - 1 in 20 invoices has its XML withheld on the first extraction;
//! - 6 in 7 `I`/`E`/`N` invoices have a PDF, `P` and `T` never;
//! - 15% of `I`/PUE invoices are in USD (about 1 in 10 `I`), all others MXN.

mod amounts;
mod catalog;
mod generate;
mod lifecycle;
mod payments;
mod pdf;
mod retentions;
mod sealing;
mod seed;
mod stamp;
mod xml;

#[cfg(test)]
mod tests;

pub use retentions::{
    render_retention_xml, retentions_for_period, SandboxRetention, SandboxWithheld,
};
pub use sealing::{authority_certificate, sat_certificate, SAT_CERTIFICATE_NUMBER};

use chrono::{NaiveDate, NaiveDateTime};
use rust_decimal::Decimal;

/// Which side of the invoice the entity is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The entity issued the invoice (it is the Emisor).
    Issued,
    /// The entity received the invoice (it is the Receptor).
    Received,
}

impl Direction {
    fn label(self) -> &'static str {
        match self {
            Direction::Issued => "issued",
            Direction::Received => "received",
        }
    }
}

/// One installment paid by a `P` complement.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxPayment {
    /// UUID of the PPD invoice being paid (`IdDocumento`).
    pub related_uuid: String,
    pub related_serie: String,
    pub related_folio: String,
    /// `NumParcialidad`, from 1.
    pub installment: u32,
    /// `ImpSaldoAnt`.
    pub previous_balance: Decimal,
    /// `ImpPagado` (also the Pago's `Monto`).
    pub amount: Decimal,
    /// `ImpSaldoInsoluto`.
    pub outstanding_balance: Decimal,
    /// `FechaPago`.
    pub paid_at: NaiveDateTime,
    /// `FormaDePagoP` (c_FormaPago).
    pub payment_form: &'static str,
}

/// Metadata of one sandbox invoice, as the tax authority lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxInvoice {
    /// Upper-case fiscal UUID (the TimbreFiscalDigital's UUID).
    pub uuid: String,
    /// `TipoDeComprobante`: 'I', 'E', 'T', 'N' or 'P'.
    pub invoice_type: char,
    pub issuer_tax_id: String,
    pub issuer_name: String,
    pub receiver_tax_id: String,
    pub receiver_name: String,
    /// `Fecha`, within the listed day, in business hours.
    pub issued_at: NaiveDateTime,
    /// `Total` exactly as in the XML (0 for `T` and `P`), in the invoice's currency.
    pub total: Decimal,
    /// Some for about 1 in 20 base invoices: 1..=3 days after issue.
    pub cancelled_at: Option<NaiveDateTime>,
    /// For half of the cancelled ones: listed as active by the first
    /// extraction that lists it, cancelled afterwards.
    pub cancellation_seen_late: bool,
    /// About 1 in 20: the XML is not available on the first extraction that
    /// lists the invoice.
    pub xml_withheld_first: bool,
    /// About 6 in 7 `I`/`E`/`N` invoices; never `P` or `T`.
    pub has_pdf: bool,
    details: Details,
}

impl SandboxInvoice {
    /// `MetodoPago`: "PUE", "PPD", or None for `T` and `P`.
    pub fn payment_method(&self) -> Option<&'static str> {
        self.details.kind.payment_method()
    }

    /// `FormaPago`, None for `T` and `P`.
    pub fn payment_form(&self) -> Option<&'static str> {
        self.details.payment_form
    }

    /// `Moneda`: "MXN", "USD" or "XXX" (for `T` and `P`).
    pub fn currency(&self) -> &'static str {
        self.details.currency.code()
    }

    pub fn serie(&self) -> &'static str {
        self.details.serie
    }

    pub fn folio(&self) -> &str {
        &self.details.folio
    }

    /// The installment a `P` complement pays.
    pub fn payment(&self) -> Option<&SandboxPayment> {
        self.details.payment.as_ref()
    }

    /// The invoice an `E` credit note refers to (`CfdiRelacionado`), if any.
    pub fn related_uuid(&self) -> Option<&str> {
        self.details.related_uuid.as_deref()
    }
}

/// The invoices of one day for an entity, ordered by issue time then UUID
/// (metadata only: cheap, no XML).
pub fn invoices_for_day(tax_id: &str, direction: Direction, day: NaiveDate) -> Vec<SandboxInvoice> {
    invoices_for_period(tax_id, direction, day, day)
}

/// The invoices of an inclusive range of days, in the same order.
pub fn invoices_for_period(
    tax_id: &str,
    direction: Direction,
    from: NaiveDate,
    to: NaiveDate,
) -> Vec<SandboxInvoice> {
    let entity = Entity::new(tax_id, direction);
    let mut invoices: Vec<SandboxInvoice> = days(from, to)
        .flat_map(|day| generate::base_invoices(&entity, day))
        .collect();
    invoices.extend(payments::payments_between(&entity, from, to));
    invoices.sort_by(|a, b| (a.issued_at, &a.uuid).cmp(&(b.issued_at, &b.uuid)));
    invoices
}

/// Where the sandbox starts looking for an invoice asked by UUID in a run whose period
/// starts `from`: the first day an invoice its payment complements of the period can
/// pay was issued (the last installment comes at most 120 days after it).
pub fn uuid_search_start(from: NaiveDate) -> NaiveDate {
    from.checked_sub_days(chrono::Days::new(payments::LATEST_PAYMENT_DAYS))
        .unwrap_or(NaiveDate::MIN)
}

/// The invoice `uuid` (any case) issued from `from` to `to` for `(tax_id, direction)`,
/// if the sandbox generates one there; payment complements are not searched (replaying
/// them costs far more, and a summary misses the invoices they pay, not them).
pub fn find_invoice(
    tax_id: &str,
    direction: Direction,
    from: NaiveDate,
    to: NaiveDate,
    uuid: &str,
) -> Option<SandboxInvoice> {
    let entity = Entity::new(tax_id, direction);
    days(from, to).find_map(|day| {
        generate::base_invoices(&entity, day)
            .into_iter()
            .find(|invoice| invoice.uuid.eq_ignore_ascii_case(uuid))
    })
}

/// The CFDI 4.0 XML of an invoice listed for `(tax_id, direction)`, stamped
/// with a TimbreFiscalDigital 1.1 (and a Pagos 2.0 complement for 'P').
/// Only fails if the XML writer does, which it cannot on a `Vec`.
pub fn render_xml(
    tax_id: &str,
    direction: Direction,
    invoice: &SandboxInvoice,
) -> std::io::Result<Vec<u8>> {
    debug_assert!(belongs_to(tax_id, direction, invoice));
    xml::render(invoice)
}

/// A one-page PDF rendering of the invoice, None when it has no PDF.
pub fn render_pdf(tax_id: &str, direction: Direction, invoice: &SandboxInvoice) -> Option<Vec<u8>> {
    debug_assert!(belongs_to(tax_id, direction, invoice));
    invoice.has_pdf.then(|| pdf::render(invoice))
}

/// When the invoice was stamped (`FechaTimbrado`) and by which PAC (`RfcProvCertif`),
/// as its XML says.
pub fn certification(invoice: &SandboxInvoice) -> (NaiveDateTime, &'static str) {
    let stamp = stamp::Stamp::new(invoice);
    (stamp.stamped_at, stamp.pac)
}

fn belongs_to(tax_id: &str, direction: Direction, invoice: &SandboxInvoice) -> bool {
    match direction {
        Direction::Issued => invoice.issuer_tax_id == tax_id,
        Direction::Received => invoice.receiver_tax_id == tax_id,
    }
}

/// Days from `from` to `to`, inclusive (empty when `from > to`).
fn days(from: NaiveDate, to: NaiveDate) -> impl Iterator<Item = NaiveDate> {
    from.iter_days().take_while(move |day| *day <= to)
}

/// What kind of CFDI an invoice is; `I` splits by payment method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    IncomePue,
    IncomePpd,
    Credit,
    Payroll,
    Transfer,
    Payment,
}

impl Kind {
    fn letter(self) -> char {
        match self {
            Kind::IncomePue | Kind::IncomePpd => 'I',
            Kind::Credit => 'E',
            Kind::Payroll => 'N',
            Kind::Transfer => 'T',
            Kind::Payment => 'P',
        }
    }

    fn payment_method(self) -> Option<&'static str> {
        match self {
            Kind::IncomePue | Kind::Credit | Kind::Payroll => Some("PUE"),
            Kind::IncomePpd => Some("PPD"),
            Kind::Transfer | Kind::Payment => None,
        }
    }

    fn serie(self) -> &'static str {
        match self {
            Kind::IncomePue | Kind::IncomePpd => "F",
            Kind::Credit => "NC",
            Kind::Payroll => "NOM",
            Kind::Transfer => "T",
            Kind::Payment => "CP",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Currency {
    Mxn,
    /// Exchange rate in ten-thousandths of a peso.
    Usd {
        rate_e4: i64,
    },
    /// "No currency", required by `P` and used by `T`.
    Xxx,
}

impl Currency {
    fn code(self) -> &'static str {
        match self {
            Currency::Mxn => "MXN",
            Currency::Usd { .. } => "USD",
            Currency::Xxx => "XXX",
        }
    }

    /// A catalog price in MXN cents, expressed in this currency.
    fn price_of(self, cents: i64) -> i64 {
        match self {
            Currency::Usd { rate_e4 } => amounts::share(cents, 10_000, rate_e4).max(1),
            Currency::Mxn | Currency::Xxx => cents,
        }
    }
}

/// Fields needed to render an invoice again that the public metadata lacks.
#[derive(Debug, Clone, PartialEq)]
struct Details {
    kind: Kind,
    /// Seed of the invoice (for `P`, of the PPD invoice it pays).
    seed: seed::InvoiceSeed,
    /// Purpose of the `seed` stream that seals and stamps draw from.
    render_stream: u64,
    serie: &'static str,
    folio: String,
    currency: Currency,
    payment_form: Option<&'static str>,
    use_cfdi: &'static str,
    issuer_regime: &'static str,
    /// `LugarExpedicion`.
    issuer_zip: String,
    receiver_regime: &'static str,
    receiver_zip: String,
    /// Index in `catalog::EMPLOYEES` of a payroll receipt's employee.
    employee: Option<usize>,
    related_uuid: Option<String>,
    payment: Option<SandboxPayment>,
}

/// The taxpayer whose invoices are generated.
struct Entity<'a> {
    tax_id: &'a str,
    direction: Direction,
    name: String,
    regime: &'static str,
    zip: String,
}

impl<'a> Entity<'a> {
    fn new(tax_id: &'a str, direction: Direction) -> Self {
        // 13-character RFCs belong to individuals, 12-character ones to companies.
        let regime = if tax_id.chars().count() == 13 {
            "612"
        } else {
            "601"
        };
        let hash = seed::hash_seed(&format!("{tax_id}|zip"));
        let zip = 1_000 + u32::from_le_bytes([hash[0], hash[1], hash[2], 0]) % 99_000;
        Entity {
            tax_id,
            direction,
            name: format!("CONTRIBUYENTE {tax_id}"),
            regime,
            zip: format!("{zip:05}"),
        }
    }

    /// The seed label of one purpose on one day.
    fn label(&self, day: NaiveDate, purpose: &str) -> String {
        format!("{}|{}|{day}|{purpose}", self.tax_id, self.direction.label())
    }

    fn is_big(&self) -> bool {
        self.tax_id.starts_with("BIG")
    }
}
