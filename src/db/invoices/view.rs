//! The invoice view as JSON text, rendered in Rust from plain columns. SQLite's
//! `json_object` built it before: 77% of a listing page's time in the profile, the rest
//! being the 69-B lookup (17%) and reading the rows (6%). The counterparty's 69-B entry
//! comes from one join, not a subquery per row, and serde writes the text straight from
//! the row's borrowed strings. Money columns hold decimal text written from
//! rust_decimal and go out as they are, as exact JSON numbers.

use crate::db::sql::Row;
use serde::Serialize;
use serde_json::value::RawValue;

crate::db::sql::columns! {
    /// The view's columns, in `render`'s order; `JOINS` gives the `so.` and `x.` ones.
    Id = "id",
    EntityId = "entity_id",
    Uuid = "uuid",
    Direction = "direction",
    Type = "type",
    Version = "version",
    Series = "series",
    Folio = "folio",
    IssuedAt = "issued_at",
    CertifiedAt = "certified_at",
    IssuerTaxId = "issuer_tax_id",
    IssuerName = "issuer_name",
    IssuerTaxRegime = "issuer_tax_regime",
    ReceiverTaxId = "receiver_tax_id",
    ReceiverName = "receiver_name",
    ReceiverCfdiUse = "receiver_cfdi_use",
    Currency = "currency",
    ExchangeRate = "exchange_rate",
    Subtotal = "subtotal",
    Discount = "discount",
    TaxesTransferred = "taxes_transferred",
    TaxesWithheld = "taxes_withheld",
    Total = "total",
    PaymentMethod = "payment_method",
    PaymentForm = "payment_form",
    Status = "status",
    CancelledAt = "cancelled_at",
    HasPdf = "has_pdf",
    PaidAmount = "paid_amount",
    DueAmount = "due_amount",
    LastPaymentDate = "last_payment_date",
    FullyPaidAt = "fully_paid_at",
    PaymentConflicts = "payment_conflicts",
    ItemsCount = "items_count",
    SatState = "sat_state",
    SatCancellable = "sat_cancellable",
    SatCancellationStatus = "sat_cancellation_status",
    SatEfos = "sat_efos",
    SatCheckedAt = "sat_checked_at",
    SatCheckAt = "sat_check_at",
    SealObject = "so.object",
    CreatedAt = "created_at",
    UpdatedAt = "updated_at",
    List69bRfc = "x.rfc",
    List69bName = "x.name",
    List69bSituation = "x.situation",
    List69bPresumedSat = "x.presumed_sat",
    List69bPresumedDof = "x.presumed_dof",
    List69bDisprovedSat = "x.disproved_sat",
    List69bDisprovedDof = "x.disproved_dof",
    List69bDefinitiveSat = "x.definitive_sat",
    List69bDefinitiveDof = "x.definitive_dof",
    List69bFavorableSat = "x.favorable_sat",
    List69bFavorableDof = "x.favorable_dof",
    List69bListId = "x.list_id",
}

/// The invoice's `seal` object (`db::seals`), and the counterparty's entry in the 69-B
/// list (at most one: `rfc` is its key).
pub(super) const JOINS: &str = " LEFT JOIN seal_objects so ON so.key = seal_key \
    LEFT JOIN efos_entries x ON x.rfc = upper(CASE \
    WHEN direction = 'issued' THEN receiver_tax_id ELSE issuer_tax_id END)";

#[derive(Serialize)]
struct View<'a> {
    id: &'a str,
    entity_id: &'a str,
    uuid: &'a str,
    direction: &'a str,
    #[serde(rename = "type")]
    kind: Option<&'a str>,
    version: Option<&'a str>,
    series: Option<&'a str>,
    folio: Option<&'a str>,
    issued_at: Option<&'a str>,
    certified_at: Option<&'a str>,
    issuer: Issuer<'a>,
    receiver: Receiver<'a>,
    currency: Option<&'a str>,
    exchange_rate: Option<&'a RawValue>,
    subtotal: Option<&'a RawValue>,
    discount: Option<&'a RawValue>,
    taxes_transferred: Option<&'a RawValue>,
    taxes_withheld: Option<&'a RawValue>,
    total: Option<&'a RawValue>,
    payment_method: Option<&'a str>,
    payment_form: Option<&'a str>,
    status: &'a str,
    cancelled_at: Option<&'a str>,
    has_pdf: bool,
    paid_amount: Option<&'a RawValue>,
    due_amount: Option<&'a RawValue>,
    last_payment_date: Option<&'a str>,
    fully_paid_at: Option<&'a str>,
    payment_conflicts: bool,
    items_count: i64,
    sat_status: Option<SatStatus<'a>>,
    /// The stored `seal` object (`db::seals`), spliced as it is; null until verified.
    seal: Option<&'a RawValue>,
    counterparty_69b: Option<Listed<'a>>,
    created_at: &'a str,
    updated_at: &'a str,
}

#[derive(Serialize)]
struct Issuer<'a> {
    tax_id: Option<&'a str>,
    name: Option<&'a str>,
    tax_regime: Option<&'a str>,
}

#[derive(Serialize)]
struct Receiver<'a> {
    tax_id: Option<&'a str>,
    name: Option<&'a str>,
    cfdi_use: Option<&'a str>,
}

#[derive(Serialize)]
struct SatStatus<'a> {
    state: &'a str,
    cancellable: Option<&'a str>,
    cancellation_status: Option<&'a str>,
    efos: Option<&'a str>,
    checked_at: Option<&'a str>,
    next_check_at: Option<&'a str>,
}

#[derive(Serialize)]
struct Listed<'a> {
    tax_id: &'a str,
    name: &'a str,
    situation: &'a str,
    presumed: Dates<'a>,
    disproved: Dates<'a>,
    definitive: Dates<'a>,
    favorable_ruling: Dates<'a>,
    list_version: i64,
}

/// When the SAT and the DOF published one step of the list.
#[derive(Serialize)]
struct Dates<'a> {
    sat: Option<&'a str>,
    dof: Option<&'a str>,
}

/// The row's view (its first `WIDTH` columns, as `COLUMNS` names them) as JSON text.
pub(super) fn render(r: &Row) -> anyhow::Result<String> {
    use Col::*;
    let text = |c: Col| opt_text(r, c.at());
    let req = |c: Col| req_text(r, c.at());
    let money = |c: Col| money(r, c.at());
    let flag = |c: Col| Ok::<_, anyhow::Error>(r.get::<i64>(c.at())? != 0);
    let dates = |sat: Col, dof: Col| {
        Ok::<_, anyhow::Error>(Dates {
            sat: text(sat)?,
            dof: text(dof)?,
        })
    };
    let sat_status = match text(SatState)? {
        Some(state) => Some(SatStatus {
            state,
            cancellable: text(SatCancellable)?,
            cancellation_status: text(SatCancellationStatus)?,
            efos: text(SatEfos)?,
            checked_at: text(SatCheckedAt)?,
            next_check_at: text(SatCheckAt)?,
        }),
        None => None,
    };
    let counterparty_69b = match text(List69bRfc)? {
        Some(tax_id) => Some(Listed {
            tax_id,
            name: req(List69bName)?,
            situation: req(List69bSituation)?,
            presumed: dates(List69bPresumedSat, List69bPresumedDof)?,
            disproved: dates(List69bDisprovedSat, List69bDisprovedDof)?,
            definitive: dates(List69bDefinitiveSat, List69bDefinitiveDof)?,
            favorable_ruling: dates(List69bFavorableSat, List69bFavorableDof)?,
            list_version: r.get(List69bListId.at())?,
        }),
        None => None,
    };
    let view = View {
        id: req(Id)?,
        entity_id: req(EntityId)?,
        uuid: req(Uuid)?,
        direction: req(Direction)?,
        kind: text(Type)?,
        version: text(Version)?,
        series: text(Series)?,
        folio: text(Folio)?,
        issued_at: text(IssuedAt)?,
        certified_at: text(CertifiedAt)?,
        issuer: Issuer {
            tax_id: text(IssuerTaxId)?,
            name: text(IssuerName)?,
            tax_regime: text(IssuerTaxRegime)?,
        },
        receiver: Receiver {
            tax_id: text(ReceiverTaxId)?,
            name: text(ReceiverName)?,
            cfdi_use: text(ReceiverCfdiUse)?,
        },
        currency: text(Currency)?,
        exchange_rate: money(ExchangeRate)?,
        subtotal: money(Subtotal)?,
        discount: money(Discount)?,
        taxes_transferred: money(TaxesTransferred)?,
        taxes_withheld: money(TaxesWithheld)?,
        total: money(Total)?,
        payment_method: text(PaymentMethod)?,
        payment_form: text(PaymentForm)?,
        status: req(Status)?,
        cancelled_at: text(CancelledAt)?,
        has_pdf: flag(HasPdf)?,
        paid_amount: money(PaidAmount)?,
        due_amount: money(DueAmount)?,
        last_payment_date: text(LastPaymentDate)?,
        fully_paid_at: text(FullyPaidAt)?,
        payment_conflicts: flag(PaymentConflicts)?,
        items_count: r.get::<Option<i64>>(ItemsCount.at())?.unwrap_or(0),
        sat_status,
        seal: text(SealObject)?
            .map(serde_json::from_str::<&RawValue>)
            .transpose()?,
        counterparty_69b,
        created_at: req(CreatedAt)?,
        updated_at: req(UpdatedAt)?,
    };
    Ok(serde_json::to_string(&view)?)
}

/// Column `i` as text borrowed from the row (no copy); NULL is `None`.
fn opt_text<'r>(r: &'r Row, i: usize) -> anyhow::Result<Option<&'r str>> {
    r.text(i)
}

/// Column `i` as borrowed text that must not be NULL.
fn req_text<'r>(r: &'r Row, i: usize) -> anyhow::Result<&'r str> {
    r.text(i)?
        .ok_or_else(|| anyhow::anyhow!("column {i} is NULL, not text"))
}

/// Decimal text as an exact JSON number; anything else (never written) is null.
fn money<'r>(r: &'r Row, i: usize) -> anyhow::Result<Option<&'r RawValue>> {
    Ok(opt_text(r, i)?.and_then(number))
}

fn number(text: &str) -> Option<&RawValue> {
    let starts_as_number = text.starts_with(|c: char| c.is_ascii_digit() || c == '-');
    starts_as_number
        .then(|| serde_json::from_str::<&RawValue>(text).ok())
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::number;

    #[test]
    fn decimal_text_goes_out_as_the_same_digits() {
        assert_eq!(number("1234.50").map(|n| n.get()), Some("1234.50"));
        assert_eq!(number("-0.000001").map(|n| n.get()), Some("-0.000001"));
        assert_eq!(number("0").map(|n| n.get()), Some("0"));
    }

    #[test]
    fn text_that_is_not_a_number_is_null() {
        for text in ["", "abc", "\"1\"", "1.2.3", "true", "[1]", "1 2"] {
            assert!(number(text).is_none(), "{text}");
        }
    }
}
