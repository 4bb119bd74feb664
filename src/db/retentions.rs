//! SQL for `retentions`, the CFDI de Retenciones' class (`Stored` for `RetentionClass`:
//! its files in `retention_documents`, its change marks in `retention_changes`). The
//! API's view of a retention is rendered by the database as JSON text, splicing the
//! stored JSON parts as they are, like the invoice view.

use super::classes::{Files, ListRow, Order, Stored, Tracked};
use super::sql::{params, Param, Query};
use super::Conn;
use crate::domain::class::{DocumentClass, RetentionClass};
use crate::domain::event::Kind;
use crate::domain::extraction::Direction;
use crate::domain::seal::SealFilter;
use crate::domain::search::Search;
use crate::domain::totals::Totals;
use crate::retention::Retention;

/// Who a row belongs to (the ingestion path's owner).
pub use crate::db::invoices::write::Owner;

/// The retention view: columns and stored JSON parts (`json()` keeps their numbers'
/// digits as written, so amounts stay exact JSON numbers).
const VIEW_JSON: &str = concat!(
    "json_object(
    'id', id, 'entity_id', entity_id, 'uuid', uuid, 'direction', direction, 'version', version,
    'internal_folio', internal_folio, 'issued_at', issued_at, 'certified_at', certified_at,
    'retention_key', retention_key, 'retention_description', retention_description,
    'place_of_issue', place_of_issue,
    'issuer', json(issuer_json), 'receiver', json(receiver_json),
    'period', CASE WHEN period_year IS NULL THEN NULL ELSE json_object('year', period_year,
        'start_month', period_start_month, 'end_month', period_end_month) END,
    'totals', json(totals_json), 'withheld_taxes', json(withheld_json),
    'complements', json(complements_json), 'related', json(related_json),
    'status', status, 'cancelled_at', cancelled_at, 'has_pdf', json(CASE WHEN has_pdf <> 0 THEN 'true' ELSE 'false' END),
    'seal', json(",
    crate::db::classes::seal_object!(),
    "),
    'created_at', created_at, 'updated_at', updated_at)"
);

/// Filters of `GET /v1/retentions`, already validated.
#[derive(Debug, Default, Clone)]
pub struct Filter {
    pub entity_id: Option<String>,
    pub direction: Option<String>,
    /// The retention key (CveRetenc) as written.
    pub retention_key: Option<String>,
    /// Upper case: the issuer's RFC for a received retention, the receiver's for an issued one.
    pub counterpart_tax_id: Option<String>,
    pub status: Option<String>,
    /// `YYYY-MM`: retentions whose period ends in or after this month.
    pub period_from: Option<String>,
    /// `YYYY-MM`: retentions whose period starts in or before this month.
    pub period_to: Option<String>,
    /// Inclusive lower bound on `updated_at`, in the service's timestamp format.
    pub updated_since: Option<String>,
    /// `q`: a UUID, internal folio, RFC or part of a name.
    pub q: Option<Search>,
    /// `seal`: the seal's status (`domain::seal::SealFilter`).
    pub seal: Option<SealFilter>,
    /// Not a filter, but the list and the exports share it with the filters.
    pub order: Order,
}

/// The period's first month as `YYYY-MM`, to compare with a bound.
fn period_start(conn: &Conn) -> &'static str {
    conn.pick(
        "printf('%04d-%02d', period_year, period_start_month)",
        "lpad(period_year::text, 4, '0') || '-' || lpad(period_start_month::text, 2, '0')",
    )
}

/// The period's last month as `YYYY-MM`.
pub(super) fn period_end(conn: &Conn) -> &'static str {
    conn.pick(
        "printf('%04d-%02d', period_year, period_end_month)",
        "lpad(period_year::text, 4, '0') || '-' || lpad(period_end_month::text, 2, '0')",
    )
}

/// Each filter's value and its clause, which ends where its parameter goes.
fn conditions<'f>(conn: &Conn, f: &'f Filter) -> Vec<(&'f Option<String>, String)> {
    vec![
        (&f.entity_id, " AND entity_id = ".into()),
        (&f.direction, " AND direction = ".into()),
        (&f.retention_key, " AND retention_key = ".into()),
        (
            &f.counterpart_tax_id,
            " AND upper(counterpart_tax_id) = ".into(),
        ),
        (&f.status, " AND status = ".into()),
        (
            &f.period_from,
            format!(" AND period_year IS NOT NULL AND {} >= ", period_end(conn)),
        ),
        (
            &f.period_to,
            format!(
                " AND period_year IS NOT NULL AND {} <= ",
                period_start(conn)
            ),
        ),
        (&f.updated_since, " AND updated_at >= ".into()),
    ]
}

/// The columns a search (`q`) looks in: the UUID, the internal folio, and the RFCs and
/// names of both parties (the names inside their JSON: a foreign receiver's too).
fn searched(conn: &Conn) -> [&'static str; 6] {
    [
        "uuid",
        "internal_folio",
        "issuer_tax_id",
        "receiver_tax_id",
        conn.pick(
            "json_extract(issuer_json, '$.name')",
            "(issuer_json::json ->> 'name')",
        ),
        conn.pick(
            "coalesce(json_extract(receiver_json, '$.national.name'), json_extract(receiver_json, '$.foreign.name'))",
            "coalesce(receiver_json::json #>> '{national,name}', receiver_json::json #>> '{foreign,name}')",
        ),
    ]
}

/// `SELECT {columns} FROM retentions WHERE` the organization's retentions matching
/// `f`: the statement the list and its totals share.
fn filtered<'a>(
    conn: &Conn,
    columns: &str,
    org_id: &'a dyn Param,
    f: &'a Filter,
    conditions: &'a [(&'a Option<String>, String)],
) -> Query<'a> {
    let table = match &f.q {
        Some(Search::Uuid(_)) => "retentions INDEXED BY retentions_org_uuid",
        _ => "retentions",
    };
    let mut q = Query::new(format!("SELECT {columns} FROM {table} WHERE org_id = "));
    q.bind(org_id);
    for (value, clause) in conditions {
        if let Some(v) = value.as_ref() {
            q.sql.push_str(clause);
            q.bind(v);
        }
    }
    if let Some(search) = &f.q {
        super::classes::search(conn, &mut q, search, &searched(conn));
    }
    if let Some(seal) = f.seal {
        q.sql.push_str(super::classes::seal(seal));
    }
    q
}

/// The retentions matching `f` in `f.order`, after the `(timestamp, id)` key `after`.
fn list(
    conn: &Conn,
    org_id: &str,
    f: &Filter,
    after: Option<(&str, &str)>,
    limit: i64,
) -> anyhow::Result<Vec<ListRow>> {
    let conditions = conditions(conn, f);
    let columns = format!("id, issued_at, updated_at, {VIEW_JSON}");
    let mut q = filtered(conn, &columns, &org_id, f, &conditions);
    let (after_clause, order_by) = f.order.sql();
    if let Some((at, id)) = &after {
        q.after(after_clause, at, id);
    }
    q.sql.push_str(order_by);
    q.bind(&limit);
    conn.all(&q.sql, &q.params, |r| {
        Ok(ListRow {
            id: r.get(0)?,
            issued_at: r.get(1)?,
            updated_at: r.get(2)?,
            view: r.get(3)?,
        })
    })
}

/// The amounts `totals` adds up, in `GET /v1/retentions/totals`' names (a retention's
/// `totals`, in pesos: the CFDI de Retenciones has no currency).
pub const TOTALS: &[&str] = &["operation", "taxed", "exempt", "withheld"];

/// How many retentions match `f`, and their totals added up exactly, as pesos.
fn totals(conn: &Conn, org_id: &str, f: &Filter) -> anyhow::Result<Totals> {
    let conditions = conditions(conn, f);
    let q = filtered(conn, "totals_json", &org_id, f, &conditions);
    let mut totals = Totals::new(TOTALS);
    let mut amounts = Vec::with_capacity(TOTALS.len());
    conn.each(&q.sql, &q.params, |r| {
        let stored: serde_json::Value = serde_json::from_str(r.text(0)?.unwrap_or("{}"))?;
        amounts.clear();
        for name in TOTALS {
            let amount = stored[*name]
                .as_number()
                .and_then(|n| n.to_string().parse().ok());
            amounts.push(amount);
        }
        totals.add(Some("MXN"), &amounts);
        Ok(())
    })?;
    Ok(totals)
}

/// A retention of the organization as `GET /v1/retentions/{id}` shows it (JSON text).
fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
    conn.opt(
        &format!("SELECT {VIEW_JSON} FROM retentions WHERE id = ?1 AND org_id = ?2"),
        params![id, org_id],
        |r| r.get(0),
    )
}

/// The fiscal UUID of a retention of the organization.
fn uuid(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
    conn.opt(
        "SELECT uuid FROM retentions WHERE id = ?1 AND org_id = ?2",
        params![id, org_id],
        |r| r.get(0),
    )
}

impl Stored for RetentionClass {
    const CLASS: DocumentClass = DocumentClass::Retentions;
    type Filter = Filter;
    const FILES: Files = Files {
        table: "retention_documents",
        key: "retention_id",
        name: "retention",
    };
    const TRACKED: Tracked = Tracked {
        table: "retention_changes",
        key: "retention_id",
        source: "retentions",
        snapshot: concat!(
            "json_object('status', status, 'cancelled_at', cancelled_at,
            'has_pdf', json(CASE WHEN has_pdf <> 0 THEN 'true' ELSE 'false' END),
            'seal', json(",
            crate::db::classes::seal_object!(),
            "))"
        ),
    };
    const CREATED: Kind = Kind::RetentionCreated;
    const UPDATED: Kind = Kind::RetentionUpdated;

    fn order(f: &Filter) -> Order {
        f.order
    }

    fn list(
        conn: &Conn,
        org_id: &str,
        f: &Filter,
        after: Option<(&str, &str)>,
        limit: i64,
    ) -> anyhow::Result<Vec<ListRow>> {
        list(conn, org_id, f, after, limit)
    }

    fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
        get(conn, org_id, id)
    }

    fn uuid(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
        uuid(conn, org_id, id)
    }

    fn totals(conn: &Conn, org_id: &str, f: &Filter) -> anyhow::Result<Totals> {
        totals(conn, org_id, f)
    }
}

/// The id of an entity's retention with this UUID.
pub fn find(conn: &Conn, entity_id: &str, uuid: &str) -> anyhow::Result<Option<String>> {
    conn.opt(
        "SELECT id FROM retentions WHERE entity_id = ?1 AND uuid = ?2",
        params![entity_id, uuid],
        |r| r.get(0),
    )
}

/// Which of `uuids` the entity holds a retention under (exactly as written): one read
/// for a batch of documents (`ingest::Ahead`).
pub fn held_of(
    conn: &Conn,
    entity_id: &str,
    uuids: &[String],
) -> anyhow::Result<std::collections::HashSet<String>> {
    let sql = conn.pick(
        "SELECT uuid FROM retentions WHERE entity_id = ?1 AND uuid IN (SELECT value FROM json_each(?2))",
        "SELECT r.uuid FROM json_each(?2) u CROSS JOIN LATERAL (
              SELECT uuid FROM retentions WHERE entity_id = ?1 AND uuid = u.value LIMIT 1) r",
    );
    let held = conn.all(
        sql,
        params![entity_id, serde_json::to_string(uuids)?],
        |r| r.get(0),
    )?;
    Ok(held.into_iter().collect())
}

/// The id of an entity's retention whose UUID is `uuid` in upper or lower case (a
/// listing writes it upper-case, the stored one is as its XML writes it).
pub fn find_listed(conn: &Conn, entity_id: &str, uuid: &str) -> anyhow::Result<Option<String>> {
    let upper = uuid.trim().to_ascii_uppercase();
    conn.opt(
        "SELECT id FROM retentions WHERE entity_id = ?1 AND uuid IN (?2, lower(?2)) LIMIT 1",
        params![entity_id, upper],
        |r| r.get(0),
    )
}

/// What a write did to a row a client sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    Created,
    /// Something the view shows changed (status, a new PDF).
    Updated,
    /// The same document again: `updated_at` kept, so `updated_since` reports nothing.
    Unchanged,
}

/// Inserts or refreshes a retention's row from its parsed document. Storing the same
/// document again keeps `updated_at` unless the status or the PDF changed (SET
/// expressions read the row as it was before the update).
#[allow(clippy::too_many_arguments)]
pub fn upsert(
    tx: &Conn,
    owner: Owner,
    direction: Direction,
    id: &str,
    uuid: &str,
    r: &Retention,
    status: &str,
    cancelled_at: Option<&str>,
    has_pdf: bool,
) -> anyhow::Result<Written> {
    let before: Option<String> = tx.opt(
        "SELECT updated_at FROM retentions WHERE id = ?1",
        params![id],
        |row| row.get(0),
    )?;
    let now = crate::time::now();
    let receiver_tax_id = r.receiver.as_ref().and_then(|x| x.tax_id());
    let counterpart = match direction {
        Direction::Issued => receiver_tax_id,
        Direction::Received => Some(r.issuer.tax_id.as_str()),
    };
    let text = |d: Option<rust_decimal::Decimal>| d.map(|d| d.to_string());
    tx.defer(
        "INSERT INTO retentions (id, org_id, entity_id, uuid, direction, version, internal_folio,
            issued_at, certified_at, retention_key, retention_description, issuer_tax_id,
            receiver_tax_id, counterpart_tax_id, period_year, period_start_month, period_end_month,
            total_operation, total_withheld, issuer_json, receiver_json, totals_json, withheld_json,
            complements_json, related_json, place_of_issue, status, cancelled_at, has_pdf,
            created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7,
            ?8, ?9, ?10, ?11, ?12,
            ?13, ?14, ?15, ?16, ?17,
            ?18, ?19, ?20, ?21, ?22, ?23,
            ?24, ?25, ?26, ?27, ?28, ?29,
            ?30, ?30)
         ON CONFLICT (entity_id, uuid) DO UPDATE SET
            direction = excluded.direction, version = excluded.version,
            internal_folio = excluded.internal_folio, issued_at = excluded.issued_at,
            certified_at = excluded.certified_at, retention_key = excluded.retention_key,
            retention_description = excluded.retention_description,
            issuer_tax_id = excluded.issuer_tax_id, receiver_tax_id = excluded.receiver_tax_id,
            counterpart_tax_id = excluded.counterpart_tax_id, period_year = excluded.period_year,
            period_start_month = excluded.period_start_month,
            period_end_month = excluded.period_end_month,
            total_operation = excluded.total_operation, total_withheld = excluded.total_withheld,
            issuer_json = excluded.issuer_json, receiver_json = excluded.receiver_json,
            totals_json = excluded.totals_json, withheld_json = excluded.withheld_json,
            complements_json = excluded.complements_json, related_json = excluded.related_json,
            place_of_issue = excluded.place_of_issue, status = excluded.status,
            cancelled_at = excluded.cancelled_at,
            has_pdf = CASE WHEN excluded.has_pdf <> 0 OR retentions.has_pdf <> 0 THEN 1 ELSE 0 END,
            updated_at = CASE WHEN retentions.status IS NOT DISTINCT FROM excluded.status
                    AND retentions.cancelled_at IS NOT DISTINCT FROM excluded.cancelled_at
                    AND (retentions.has_pdf <> 0 OR excluded.has_pdf = 0)
                    AND retentions.direction IS NOT DISTINCT FROM excluded.direction
                THEN retentions.updated_at ELSE excluded.updated_at END",
        params![
            id,
            owner.org_id,
            owner.entity_id,
            uuid,
            direction.as_str(),
            r.version.as_str(),
            r.internal_folio,
            r.issued_at,
            r.stamp.as_ref().and_then(|s| s.certified_at.clone()),
            r.key,
            r.key_description,
            r.issuer.tax_id,
            receiver_tax_id,
            counterpart,
            r.period.map(|p| i64::from(p.year)),
            r.period.map(|p| i64::from(p.start_month)),
            r.period.map(|p| i64::from(p.end_month)),
            r.totals.operation.to_string(),
            text(r.totals.withheld),
            serde_json::to_string(&r.issuer)?,
            serde_json::to_string(&r.receiver)?,
            serde_json::to_string(&r.totals)?,
            serde_json::to_string(&r.withheld_taxes)?,
            serde_json::to_string(&r.complements)?,
            serde_json::to_string(&r.related)?,
            r.place_of_issue,
            status,
            cancelled_at,
            has_pdf,
            now,
        ],
    )?;
    let after: String = tx.one(
        "SELECT updated_at FROM retentions WHERE id = ?1",
        params![id],
        |row| row.get(0),
    )?;
    Ok(match before {
        None => Written::Created,
        Some(before) if before == after => Written::Unchanged,
        Some(_) => Written::Updated,
    })
}

/// Sets a stored retention's status (a listing saw it cancelled); true when it changed.
pub fn set_status(
    conn: &Conn,
    id: &str,
    status: &str,
    cancelled_at: Option<&str>,
) -> anyhow::Result<bool> {
    let changed = conn.exec(
        "UPDATE retentions SET status = ?2, cancelled_at = ?3, updated_at = ?4
         WHERE id = ?1 AND (status IS DISTINCT FROM ?2 OR cancelled_at IS DISTINCT FROM ?3)",
        params![id, status, cancelled_at, crate::time::now()],
    )?;
    Ok(changed > 0)
}

/// A stored retention's status and cancellation time; `active` when there is no row.
pub fn status(conn: &Conn, id: &str) -> anyhow::Result<(String, Option<String>)> {
    let row: Option<(String, Option<String>)> = conn.opt(
        "SELECT status, cancelled_at FROM retentions WHERE id = ?1",
        params![id],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    Ok(row.unwrap_or_else(|| ("active".into(), None)))
}

/// Records what a listing of the SAT says of an entity's retention (`retention_listings`).
pub fn record_listing(
    conn: &Conn,
    entity_id: &str,
    uuid: &str,
    status: &str,
    cancelled_at: Option<&str>,
) -> anyhow::Result<()> {
    conn.defer(
        "INSERT INTO retention_listings (entity_id, uuid, status, cancelled_at)
         VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (entity_id, uuid) DO UPDATE SET
            status = excluded.status, cancelled_at = excluded.cancelled_at",
        params![entity_id, uuid, status, cancelled_at],
    )?;
    Ok(())
}

/// The status and cancellation time the last listing gave an entity's retention.
pub fn listed_status(
    conn: &Conn,
    entity_id: &str,
    uuid: &str,
) -> anyhow::Result<Option<(String, Option<String>)>> {
    conn.opt(
        "SELECT status, cancelled_at FROM retention_listings WHERE entity_id = ?1 AND uuid = ?2",
        params![entity_id, uuid],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )
}
