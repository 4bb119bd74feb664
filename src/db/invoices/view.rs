//! The invoice view as JSON text, rendered in Rust from plain columns. SQLite's
//! `json_object` built it before: 77% of a listing page's time in the profile, the rest
//! being the 69-B lookup (17%) and reading the rows (6%). The counterparty's 69-B entry
//! comes from one join, not a subquery per row, and serde writes the text straight from
//! the row's borrowed strings. Money columns hold decimal text written from
//! rust_decimal and go out as they are, as exact JSON numbers.

use crate::db::sql::Row;
use serde::Serialize;
use serde_json::value::RawValue;

/// The view's columns, in `render`'s order; `LIST_69B_JOIN` gives the `x.` ones.
pub(super) const COLUMNS: &str = "id, entity_id, uuid, direction, type, version, series, \
    folio, issued_at, certified_at, issuer_tax_id, issuer_name, issuer_tax_regime, \
    receiver_tax_id, receiver_name, receiver_cfdi_use, currency, exchange_rate, subtotal, \
    discount, taxes_transferred, taxes_withheld, total, payment_method, payment_form, status, \
    cancelled_at, has_pdf, paid_amount, due_amount, last_payment_date, fully_paid_at, \
    payment_conflicts, items_count, sat_state, sat_cancellable, sat_cancellation_status, \
    sat_efos, sat_checked_at, sat_check_at, created_at, updated_at, x.rfc, x.name, \
    x.situation, x.presumed_sat, x.presumed_dof, x.disproved_sat, x.disproved_dof, \
    x.definitive_sat, x.definitive_dof, x.favorable_sat, x.favorable_dof, x.list_id";

/// How many of the row's first columns `render` reads.
pub(super) const WIDTH: usize = 54;

/// Where `due_amount` is among them.
pub(super) const DUE_AMOUNT: usize = 29;

/// The counterparty's entry in the 69-B list (at most one: `rfc` is its key).
pub(super) const LIST_69B_JOIN: &str = " LEFT JOIN efos_entries x ON x.rfc = upper(CASE \
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
    let text = |i| opt_text(r, i);
    let req = |i| req_text(r, i);
    let money = |i| money(r, i);
    let dates = |i| {
        Ok::<_, anyhow::Error>(Dates {
            sat: text(i)?,
            dof: text(i + 1)?,
        })
    };
    let sat_status = match text(34)? {
        Some(state) => Some(SatStatus {
            state,
            cancellable: text(35)?,
            cancellation_status: text(36)?,
            efos: text(37)?,
            checked_at: text(38)?,
            next_check_at: text(39)?,
        }),
        None => None,
    };
    let counterparty_69b = match text(42)? {
        Some(tax_id) => Some(Listed {
            tax_id,
            name: req(43)?,
            situation: req(44)?,
            presumed: dates(45)?,
            disproved: dates(47)?,
            definitive: dates(49)?,
            favorable_ruling: dates(51)?,
            list_version: r.get(53)?,
        }),
        None => None,
    };
    let view = View {
        id: req(0)?,
        entity_id: req(1)?,
        uuid: req(2)?,
        direction: req(3)?,
        kind: text(4)?,
        version: text(5)?,
        series: text(6)?,
        folio: text(7)?,
        issued_at: text(8)?,
        certified_at: text(9)?,
        issuer: Issuer {
            tax_id: text(10)?,
            name: text(11)?,
            tax_regime: text(12)?,
        },
        receiver: Receiver {
            tax_id: text(13)?,
            name: text(14)?,
            cfdi_use: text(15)?,
        },
        currency: text(16)?,
        exchange_rate: money(17)?,
        subtotal: money(18)?,
        discount: money(19)?,
        taxes_transferred: money(20)?,
        taxes_withheld: money(21)?,
        total: money(22)?,
        payment_method: text(23)?,
        payment_form: text(24)?,
        status: req(25)?,
        cancelled_at: text(26)?,
        has_pdf: r.get::<i64>(27)? != 0,
        paid_amount: money(28)?,
        due_amount: money(DUE_AMOUNT)?,
        last_payment_date: text(30)?,
        fully_paid_at: text(31)?,
        payment_conflicts: r.get::<i64>(32)? != 0,
        items_count: r.get::<Option<i64>>(33)?.unwrap_or(0),
        sat_status,
        counterparty_69b,
        created_at: req(40)?,
        updated_at: req(41)?,
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
