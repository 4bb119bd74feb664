//! What unit tests outside `db` need of the tables beyond the application's own
//! statements: fixtures that set rows up and probes that look at them, so the SQL stays
//! here.

use super::sql::{params, Column};
use super::Conn;

/// An organization `org` and one entity `entity` of it (RFC AAA010101AAA, CIEC valid).
pub fn org_with_entity(conn: &Conn, org: &str, entity: &str) {
    conn.batch(&format!(
        "INSERT INTO orgs VALUES ('{org}', 'Org', 'now');
         INSERT INTO entities VALUES ('{entity}', '{org}', 'AAA010101AAA', 'E', x'00', 'valid', 'now', 'now');"
    ))
    .expect("seed");
}

/// `column` of the invoice with this UUID (which must exist).
pub fn invoice_column<T: Column>(conn: &Conn, uuid: &str, column: &str) -> T {
    conn.one(
        &format!("SELECT {column} FROM invoices WHERE uuid = ?1"),
        params![uuid],
        |r| r.get(0),
    )
    .expect("row")
}

/// `column` of the invoice with this id (which must exist).
pub fn invoice_column_by_id<T: Column>(conn: &Conn, id: &str, column: &str) -> T {
    conn.one(
        &format!("SELECT {column} FROM invoices WHERE id = ?1"),
        params![id],
        |r| r.get(0),
    )
    .expect("row")
}

/// How many rows `table` has.
pub fn count(conn: &Conn, table: &str) -> i64 {
    conn.one(&format!("SELECT COUNT(*) FROM {table}"), params![], |r| {
        r.get(0)
    })
    .expect("count")
}

/// `column` of every row of `table`, in order.
pub fn column(conn: &Conn, table: &str, column: &str) -> Vec<String> {
    conn.all(
        &format!("SELECT {column} FROM {table} ORDER BY 1"),
        params![],
        |r| r.get(0),
    )
    .expect("rows")
}

/// The payloads of the events after the first `skip`, oldest first.
pub fn event_payloads(conn: &Conn, skip: i64) -> Vec<String> {
    conn.all(
        "SELECT payload FROM events ORDER BY id LIMIT 9223372036854775807 OFFSET ?1",
        params![skip],
        |r| super::events::payload_from(r, 0),
    )
    .expect("rows")
}

/// Every job as (target, status, attempts), oldest first.
pub fn jobs(conn: &Conn) -> Vec<(String, String, i64)> {
    conn.all(
        "SELECT target_id, status, attempts FROM jobs ORDER BY id",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .expect("rows")
}

pub fn set_credential_status(conn: &Conn, entity_id: &str, status: &str) {
    conn.exec(
        "UPDATE entities SET credential_status = ?2 WHERE id = ?1",
        params![entity_id, status],
    )
    .expect("credential");
}

/// Every extraction `finished`.
pub fn finish_extractions(conn: &Conn) {
    conn.exec("UPDATE extractions SET status = 'finished'", params![])
        .expect("finish");
}

pub fn set_delivery_status(conn: &Conn, id: &str, status: &str) {
    conn.exec(
        "UPDATE deliveries SET status = ?2 WHERE id = ?1",
        params![id, status],
    )
    .expect("delivery status");
}

/// Organization `o` with webhook `w`, three `entity.update` events (`old-done` and
/// `old-pending` from 2026-01-01, `recent` from 2026-01-30) and their deliveries: `d1`
/// succeeded (with one attempt) for `old-done`; `d2` pending and `d3` failed for
/// `old-pending`.
pub fn events_to_purge(conn: &Conn) {
    conn.batch(
        "INSERT INTO orgs VALUES ('o', 'O', 't');
         INSERT INTO webhooks (id, org_id, url, token, events, created_at)
             VALUES ('w', 'o', 'https://a.mx', '', '[]', 't');
         INSERT INTO events VALUES
             ('old-done', 'o', 'entity.update', 's', '{}', '2026-01-01T00:00:00.000000Z'),
             ('old-pending', 'o', 'entity.update', 's', '{}', '2026-01-01T00:00:00.000000Z'),
             ('recent', 'o', 'entity.update', 's', '{}', '2026-01-30T00:00:00.000000Z');
         INSERT INTO deliveries (id, webhook_id, event_id, status, created_at) VALUES
             ('d1', 'w', 'old-done', 'succeeded', 't'),
             ('d2', 'w', 'old-pending', 'pending', 't'),
             ('d3', 'w', 'old-pending', 'failed', 't');
         INSERT INTO delivery_attempts VALUES ('d1', 1, 200, NULL, 5, 't');",
    )
    .expect("seed");
}
