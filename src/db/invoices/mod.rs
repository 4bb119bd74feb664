//! SQL for `invoices`, `documents` and `payment_entries`. Rows with `xml_processed = 0`
//! are metadata-only and never leave this module through the API's queries.

mod class;
#[cfg(test)]
mod plans;
pub mod relations;
pub mod sat_status;
mod view;
pub mod write;

use super::classes::{ListRow, Order};
use super::sql::{params, Param, Query};
use super::Conn;
use crate::cfdi::Item;
use crate::domain::payments::Entry;
use crate::domain::seal::SealFilter;
use crate::domain::search::Search;
use crate::domain::totals::Totals;
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Parsed decimal text, or None.
pub(super) fn dec(s: Option<String>) -> Option<Decimal> {
    s.and_then(|s| s.parse().ok())
}

/// Decimal text as an exact JSON number (serde_json keeps its digits as written).
fn money(s: Option<String>) -> Value {
    s.and_then(|s| serde_json::from_str::<Value>(&s).ok())
        .filter(Value::is_number)
        .unwrap_or(Value::Null)
}

/// Concepts per stored page, and the most an invoice object carries (its first page);
/// `GET /v1/invoices/{id}/items` pages through all of them.
pub const ITEMS_PAGE: usize = 1000;

/// `WHERE` for an entity's processed invoice by UUID (`?1` entity, `?2` UUID). The
/// `xml_processed = 1` stays outside the lookup by the unique key: written beside it,
/// it lets PostgreSQL pick a partial index on `entity_id` alone, which it did from
/// statistics of a smaller table (a new database's first months): every ingested
/// invoice then read all of its entity's rows (8 ms at 15,000).
pub const PROCESSED_BY_UUID: &str =
    "id = (SELECT id FROM invoices WHERE entity_id = ?1 AND uuid = ?2) AND xml_processed = 1";

/// Filters of `GET /v1/invoices`, already validated.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub entity_id: Option<String>,
    pub direction: Option<String>,
    pub invoice_type: Option<String>,
    pub status: Option<String>,
    /// `sat_status.state`.
    pub sat_state: Option<String>,
    /// The counterparty's 69-B situation, or `listed` for any.
    pub counterparty_69b: Option<String>,
    pub payment_method: Option<String>,
    pub issuer_tax_id: Option<String>,
    pub receiver_tax_id: Option<String>,
    pub uuid: Option<String>,
    /// Upper case; compared with the stored Moneda in upper case.
    pub currency: Option<String>,
    /// Inclusive lower bound, `YYYY-MM-DD`.
    pub issued_from: Option<String>,
    /// Exclusive upper bound: the day after the inclusive `issued_to`.
    pub issued_before: Option<String>,
    pub outstanding: Option<bool>,
    /// Whether a stored, active CFDI names the invoice with 04 (substitutes it).
    pub substituted: Option<bool>,
    /// Whether a stored, active credit note (type E, 01 or 03) names the invoice.
    pub credited: Option<bool>,
    /// Inclusive lower bound on `updated_at`, in the service's timestamp format.
    pub updated_since: Option<String>,
    /// `q`: a UUID, folio, series, RFC or part of a name.
    pub q: Option<Search>,
    /// `seal`: the seal's status (`domain::seal::SealFilter`).
    pub seal: Option<SealFilter>,
    /// Not a filter, but the list and the exports share it with the filters.
    pub order: Order,
}

/// Each optional filter: its value and its SQL condition, which its parameter ends.
fn conditions(f: &Filter) -> [(&Option<String>, &'static str); 13] {
    [
        (&f.entity_id, " AND entity_id = "),
        (&f.direction, " AND direction = "),
        (&f.invoice_type, " AND type = "),
        (&f.status, " AND status = "),
        (&f.sat_state, " AND sat_state = "),
        (&f.payment_method, " AND payment_method = "),
        (&f.issuer_tax_id, " AND upper(issuer_tax_id) = "),
        (&f.receiver_tax_id, " AND upper(receiver_tax_id) = "),
        (&f.uuid, " AND uuid = "),
        (&f.currency, " AND upper(currency) = "),
        (&f.issued_from, " AND issued_at >= "),
        (&f.issued_before, " AND issued_at < "),
        (&f.updated_since, " AND updated_at >= "),
    ]
}

/// The columns a search (`q`) looks in: the UUID, the RFCs and names of both parties,
/// the series and folio, and both written together (`A-123`, `A123`).
const SEARCHED: [&str; 8] = [
    "uuid",
    "issuer_tax_id",
    "receiver_tax_id",
    "issuer_name",
    "receiver_name",
    "folio",
    "coalesce(series, '') || '-' || coalesce(folio, '')",
    "coalesce(series, '') || coalesce(folio, '')",
];

/// `SELECT {columns} FROM invoices{join} WHERE` the organization's visible invoices
/// matching `f`: the statement the list, its totals and the exports share.
fn filtered<'a>(
    conn: &Conn,
    columns: &str,
    join: &str,
    org_id: &'a dyn Param,
    f: &'a Filter,
) -> Query<'a> {
    // A whole UUID is one or two rows: its index finds them, where the planner would
    // walk the list's order instead.
    let table = match &f.q {
        Some(Search::Uuid(_)) => "invoices INDEXED BY invoices_org_uuid",
        _ => "invoices",
    };
    let mut q = Query::new(format!(
        "SELECT {columns} FROM {table}{join} WHERE org_id = "
    ));
    q.bind(org_id);
    q.sql.push_str(" AND xml_processed = 1");
    for (value, clause) in conditions(f) {
        if let Some(value) = value {
            q.sql.push_str(clause);
            q.bind(value);
        }
    }
    if let Some(search) = &f.q {
        super::classes::search(conn, &mut q, search, &SEARCHED);
    }
    if let Some(seal) = f.seal {
        q.sql.push_str(super::classes::seal(seal));
    }
    if let Some(situation) = &f.counterparty_69b {
        q.sql.push_str(
            " AND EXISTS (SELECT 1 FROM efos_entries e
            WHERE e.rfc = upper(CASE WHEN direction = 'issued' THEN receiver_tax_id ELSE issuer_tax_id END)",
        );
        if situation != "listed" {
            q.sql.push_str(" AND e.situation = ");
            q.bind(situation);
        }
        q.sql.push(')');
    }
    match f.outstanding {
        Some(true) => q.sql.push_str(" AND outstanding = 1"),
        Some(false) => q.sql.push_str(" AND outstanding = 0"),
        None => {}
    }
    let named_by = |wanted: bool, condition: &str| {
        format!(
            " AND {}EXISTS (SELECT 1 FROM invoice_relations r JOIN invoices o ON o.id = r.invoice_id
              WHERE r.entity_id = invoices.entity_id AND r.related_uuid = invoices.uuid
              AND o.id <> invoices.id AND o.xml_processed = 1 AND o.status <> 'cancelled' AND {condition})",
            if wanted { "" } else { "NOT " }
        )
    };
    if let Some(wanted) = f.substituted {
        q.sql.push_str(&named_by(wanted, "r.relation_type = '04'"));
    }
    if let Some(wanted) = f.credited {
        q.sql.push_str(&named_by(
            wanted,
            "o.type = 'E' AND r.relation_type IN ('01', '03')",
        ));
    }
    q
}

/// The list's statement for `f`, with the keyset condition when a page follows the
/// cursor `after` (its `(timestamp, id)` key).
fn list_sql<'a>(
    conn: &Conn,
    org_id: &'a dyn Param,
    f: &'a Filter,
    after: Option<&'a (&'a str, &'a str)>,
    limit: &'a dyn Param,
) -> Query<'a> {
    let mut q = filtered(conn, view::COLUMNS, view::JOINS, org_id, f);
    let (after_clause, order_by) = f.order.sql();
    if let Some((at, id)) = after {
        q.after(after_clause, at, id);
    }
    q.sql.push_str(order_by);
    q.bind(limit);
    q
}

/// The amounts `totals` adds up, in `GET /v1/invoices/totals`' names.
pub const TOTALS: &[&str] = &[
    "subtotal",
    "discount",
    "taxes_transferred",
    "taxes_withheld",
    "total",
    "paid_amount",
    "due_amount",
];

/// How many invoices match `f`, and their amounts per currency, added up exactly in
/// Rust (the database would add the decimal text as binary floats).
pub fn totals(conn: &Conn, org_id: &str, f: &Filter) -> anyhow::Result<Totals> {
    let q = filtered(
        conn,
        "currency, subtotal, discount, taxes_transferred, taxes_withheld, total, paid_amount, due_amount",
        "",
        &org_id,
        f,
    );
    let mut totals = Totals::new(TOTALS);
    let mut amounts = Vec::with_capacity(TOTALS.len());
    conn.each(&q.sql, &q.params, |r| {
        amounts.clear();
        for i in 1..=TOTALS.len() {
            amounts.push(r.text(i)?.and_then(|t| t.parse().ok()));
        }
        totals.add(r.text(0)?, &amounts);
        Ok(())
    })?;
    Ok(totals)
}

/// The invoices matching `f` in `f.order`, after the `(timestamp, id)` key `after`.
pub fn list(
    conn: &Conn,
    org_id: &str,
    f: &Filter,
    after: Option<(&str, &str)>,
    limit: i64,
) -> anyhow::Result<Vec<ListRow>> {
    let q = list_sql(conn, &org_id, f, after.as_ref(), &limit);
    conn.all(&q.sql, &q.params, |r| {
        Ok(ListRow {
            view: view::render(r)?,
            id: r.get(0)?,
            issued_at: r
                .get::<Option<String>>(view::Col::IssuedAt.at())?
                .unwrap_or_default(),
            updated_at: r.get(view::Col::UpdatedAt.at())?,
        })
    })
}

/// An invoice as `GET /v1/invoices/{id}` shows it, as JSON text: the view with its first
/// page of concepts, for a complement its payments, and the first page of its relations
/// each way. The stored JSON texts are spliced into the view as they are, never parsed:
/// invoice events render one of these per invoice an extraction changes, and parsing was
/// most of that time.
pub fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
    let row = conn.opt(
        &full_select("id = ?1 AND org_id = ?2"),
        params![id, org_id],
        Full::read,
    )?;
    row.map(|row| row.render(conn)).transpose()
}

/// `get` each of the organization's invoices among `ids` that is visible, by id: one
/// statement for them all (an extraction's events render one per invoice it changed),
/// and one more per invoice with relations.
pub fn get_all(conn: &Conn, org_id: &str, ids: &[&str]) -> anyhow::Result<HashMap<String, String>> {
    let rows = conn.all(
        &full_select("org_id = ?1 AND id IN (SELECT value FROM json_each(?2))"),
        params![org_id, serde_json::to_string(ids)?],
        Full::read,
    )?;
    rows.into_iter()
        .map(|row| Ok((row.id.clone(), row.render(conn)?)))
        .collect()
}

/// The statement of `get` and `get_all`, on the visible invoices `condition` names.
fn full_select(condition: &str) -> String {
    format!(
        "SELECT {}, items_json, coalesce(items_count, 0), payments_json, {}, id FROM invoices{}
         WHERE {condition} AND xml_processed = 1",
        view::COLUMNS,
        relations::PRESENT,
        view::JOINS
    )
}

/// A row of `full_select`: the view rendered, and what the read adds to it.
struct Full {
    id: String,
    json: String,
    items: Option<String>,
    count: i64,
    payments: Option<String>,
    due: Option<String>,
    /// Whether it names documents, and whether some name it.
    present: (bool, bool),
}

impl Full {
    fn read(r: &crate::db::sql::Row) -> anyhow::Result<Full> {
        // What follows the view's columns, in the statement's order.
        let (items, count, payments, names, named, id) = (
            view::WIDTH,
            view::WIDTH + 1,
            view::WIDTH + 2,
            view::WIDTH + 3,
            view::WIDTH + 4,
            view::WIDTH + 5,
        );
        Ok(Full {
            id: r.get(id)?,
            json: view::render(r)?,
            items: r.get(items)?,
            count: r.get(count)?,
            payments: r.get(payments)?,
            due: r.get(view::Col::DueAmount.at())?,
            present: (r.get::<i64>(names)? != 0, r.get::<i64>(named)? != 0),
        })
    }

    /// The invoice object: the view with its concepts, payments, relations and credits.
    fn render(self, conn: &Conn) -> anyhow::Result<String> {
        let Full {
            id,
            mut json,
            items,
            count,
            payments,
            due,
            present,
        } = self;
        // The view is an object, so it ends with `}`: reopen it.
        anyhow::ensure!(json.ends_with('}'), "the invoice view is not a JSON object");
        json.pop();
        // `items_json` holds the first ITEMS_PAGE concepts (`first_items`).
        let truncated = count > ITEMS_PAGE as i64;
        json.push_str(&format!(
            r#","items":{},"items_truncated":{truncated}"#,
            items.as_deref().unwrap_or("[]")
        ));
        if let Some(payments) = payments {
            json.push_str(&format!(r#","payments":{payments}"#));
        }
        push_relations(conn, &id, present, &mut json)?;
        let (credited, left) = credited(conn, &id, due.as_deref(), present.1)?;
        let left = left.map_or("null".to_string(), |l| l.to_string());
        json.push_str(&format!(
            r#","credited_amount":{credited},"balance_after_credits":{left}"#
        ));
        json.push('}');
        Ok(json)
    }
}

/// What the credit notes of an invoice take off it, and what is left to pay
/// (`domain::relations::credited`); `named`: whether other documents name it (only
/// those can credit it).
fn credited(
    conn: &Conn,
    id: &str,
    due: Option<&str>,
    named: bool,
) -> anyhow::Result<(Decimal, Option<Decimal>)> {
    let credits = match named {
        true => relations::credits(conn, id)?,
        false => vec![],
    };
    let due = due.map(str::parse::<Decimal>).transpose()?;
    let credits = credits
        .iter()
        .map(|c| c.parse::<Decimal>())
        .collect::<Result<Vec<_>, _>>()?;
    Ok(crate::domain::relations::credited(due, &credits))
}

/// `credited_amount` and `balance_after_credits` (as the single read shows them) of
/// the organization's invoices among `ids`: a page of a list at a time, one statement
/// for the page and one more per invoice other documents name.
pub fn credits_of(
    conn: &Conn,
    org_id: &str,
    ids: &[&str],
) -> anyhow::Result<HashMap<String, (Decimal, Option<Decimal>)>> {
    let ids = serde_json::to_string(ids)?;
    let rows: Vec<(String, Option<String>, bool)> = conn.all(
        &format!(
            "SELECT id, due_amount, {} FROM invoices
             WHERE org_id = ?1 AND id IN (SELECT value FROM json_each(?2))",
            relations::PRESENT
        ),
        params![org_id, ids],
        |r| Ok((r.get(0)?, r.get(1)?, r.get::<i64>(3)? != 0)),
    )?;
    let mut out = HashMap::with_capacity(rows.len());
    for (id, due, named) in rows {
        let credited = credited(conn, &id, due.as_deref(), named)?;
        out.insert(id, credited);
    }
    Ok(out)
}

/// `relations` (the first `relations::EMBEDDED` entries each way), `relations_count` and
/// `relations_truncated`, for an invoice whose relations `present` says exist (names
/// documents, is named by some). A count is only read when its page is full.
fn push_relations(
    conn: &Conn,
    id: &str,
    present: (bool, bool),
    json: &mut String,
) -> anyhow::Result<()> {
    let page = relations::EMBEDDED;
    let relates_to = match present.0 {
        true => relations::relates_to(conn, id, -1, page)?,
        false => vec![],
    };
    let related_by = match present.1 {
        true => relations::related_by(conn, id, &Default::default(), page)?,
        false => vec![],
    };
    let full = |n: usize| n as i64 == page;
    let (mut relates_count, mut related_count) = (relates_to.len() as i64, related_by.len() as i64);
    if full(relates_to.len()) || full(related_by.len()) {
        (relates_count, related_count) = relations::counts(conn, id)?;
    }
    let list = |entries: Vec<String>| format!("[{}]", entries.join(","));
    let relates_to = list(relates_to.into_iter().map(|(_, e)| e).collect());
    let related_by = list(related_by.into_iter().map(|(_, e)| e).collect());
    let truncated = relates_count > page || related_count > page;
    json.push_str(&format!(
        r#","relations":{{"relates_to":{relates_to},"related_by":{related_by}}},"relations_count":{{"relates_to":{relates_count},"related_by":{related_count}}},"relations_truncated":{truncated}"#
    ));
    Ok(())
}

/// The concepts `invoices.items_json` holds: the first page.
pub fn first_items(items: &[Item]) -> &[Item] {
    &items[..items.len().min(ITEMS_PAGE)]
}

/// Writes an invoice's later pages of concepts (after [`first_items`]) to
/// `invoice_item_pages`, replacing what was there (nothing, for its `first` document).
pub fn store_item_pages(
    conn: &Conn,
    invoice_id: &str,
    items: &[Item],
    first: bool,
) -> anyhow::Result<()> {
    crate::db::rows::clear(conn, "invoice_item_pages", "invoice_id", invoice_id, first)?;
    for (page, chunk) in (1i64..).zip(items.chunks(ITEMS_PAGE).skip(1)) {
        conn.defer(
            "INSERT INTO invoice_item_pages (invoice_id, page, items_json) VALUES (?1, ?2, ?3)",
            params![invoice_id, page, serde_json::to_string(chunk)?],
        )?;
    }
    Ok(())
}

/// Up to `count` concepts of a visible invoice from position `start`, reading only
/// the stored pages they are on; None when the invoice is not visible.
pub fn items(
    conn: &Conn,
    org_id: &str,
    id: &str,
    start: usize,
    count: usize,
) -> anyhow::Result<Option<Vec<Value>>> {
    let first: Option<Option<String>> = conn.opt(
        "SELECT items_json FROM invoices WHERE id = ?1 AND org_id = ?2 AND xml_processed = 1",
        params![id, org_id],
        |r| r.get(0),
    )?;
    let Some(mut first) = first else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let (mut page, mut skip) = (start / ITEMS_PAGE, start % ITEMS_PAGE);
    while out.len() < count {
        let text = if page == 0 {
            first.take()
        } else {
            conn.opt(
                "SELECT items_json FROM invoice_item_pages WHERE invoice_id = ?1 AND page = ?2",
                params![id, page as i64],
                |r| r.get(0),
            )?
        };
        let Some(text) = text else { break };
        let items: Vec<Value> = serde_json::from_str(&text)?;
        out.extend(items.into_iter().skip(skip).take(count - out.len()));
        (page, skip) = (page + 1, 0);
    }
    Ok(Some(out))
}

/// A visible invoice of the organization: (uuid, entity_id).
pub fn visible(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<(String, String)>> {
    conn.opt(
        "SELECT uuid, entity_id FROM invoices WHERE id = ?1 AND org_id = ?2 AND xml_processed = 1",
        params![id, org_id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}

/// The JSON entry of `GET /v1/invoices/{id}/payments`.
pub fn payment_view(payment_invoice_id: &str, e: &Entry) -> Value {
    let num = |d: Option<Decimal>| d.map_or(Value::Null, |d| money(Some(d.to_string())));
    json!({
        "payment_invoice_id": payment_invoice_id,
        "payment_uuid": e.payment_uuid,
        "paid_at": e.paid_at,
        "installment": e.installment,
        "previous_balance": num(e.previous_balance),
        "amount_paid": num(e.amount()),
        "outstanding_balance": num(e.outstanding_balance),
        "currency": e.currency,
        "equivalence": num(e.equivalence),
        "cancelled": e.payment_cancelled,
    })
}

/// How many of an entity's invoices of one direction issued from `from` (inclusive) to
/// `before` are still metadata only: listed by the SAT, their XML not yet served (or not
/// readable).
pub fn awaiting_xml(
    conn: &Conn,
    entity_id: &str,
    direction: &str,
    from: &str,
    before: &str,
) -> anyhow::Result<i64> {
    conn.one(
        "SELECT count(*) FROM invoices WHERE entity_id = ?1 AND xml_processed = 0
         AND direction = ?2 AND issued_at >= ?3 AND issued_at < ?4",
        params![entity_id, direction, from, before],
        |r| r.get(0),
    )
}
