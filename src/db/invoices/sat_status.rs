//! SQL for an invoice's SAT status (`sat_*` columns) and the status checker's queue:
//! the next check of each invoice is a time on its row (`sat_check_at`), so the queue
//! is durable with no job rows (a year of invoices to follow would otherwise be a job
//! each), and a check cut short by a stop is simply due again.

use crate::db::sql::{params, Row};
use crate::db::{Conn, Tx, Work};

/// An invoice whose check is due, with what the policy needs.
#[derive(Debug, Clone)]
pub struct Due {
    pub id: String,
    pub org_id: String,
    pub entity_id: String,
    pub uuid: String,
    pub issued_at: Option<String>,
    pub certified_at: Option<String>,
    pub outstanding: bool,
    pub status: String,
    pub sat_state: Option<String>,
    pub not_found_since: Option<String>,
}

/// What `Due` reads, in its order.
const DUE_COLUMNS: &str = "id, org_id, entity_id, uuid, issued_at, certified_at,
    CASE WHEN outstanding <> 0 AND payment_method = 'PPD' THEN 1 ELSE 0 END,
    status, sat_state, sat_not_found_since";

/// An invoice a running extraction has changed waits for the run's end: its
/// `invoice.created` is sent then, and no status event may come before it.
const NOT_IN_A_RUN: &str =
    "NOT EXISTS (SELECT 1 FROM invoice_changes c WHERE c.invoice_id = invoices.id)";

fn due(r: &Row) -> anyhow::Result<Due> {
    Ok(Due {
        id: r.get(0)?,
        org_id: r.get(1)?,
        entity_id: r.get(2)?,
        uuid: r.get(3)?,
        issued_at: r.get(4)?,
        certified_at: r.get(5)?,
        outstanding: r.get::<Option<bool>>(6)?.unwrap_or(false),
        status: r.get(7)?,
        sat_state: r.get(8)?,
        not_found_since: r.get(9)?,
    })
}

/// The next due check: one asked for on demand first, then the earliest planned.
/// Checks on demand take turns between organizations: the next one is the oldest of
/// the first organization after `after` (by id) that has one, wrapping round, so one
/// organization asking for thousands holds another's behind one of its own, not all.
pub fn next_due(conn: &Conn, now: &str, after: Option<&str>) -> anyhow::Result<Option<Due>> {
    let on_demand = |after: &str| {
        conn.opt(
            &format!(
                "SELECT {DUE_COLUMNS} FROM invoices INDEXED BY invoices_sat_on_demand
                 WHERE sat_check_urgent = 1 AND org_id > ?1 AND {NOT_IN_A_RUN}
                 ORDER BY org_id, sat_check_at LIMIT 1"
            ),
            params![after],
            due,
        )
    };
    if let Some(next) = after.map(on_demand).transpose()?.flatten() {
        return Ok(Some(next));
    }
    if let Some(next) = on_demand("")? {
        return Ok(Some(next));
    }
    conn.opt(
        &format!(
            "SELECT {DUE_COLUMNS} FROM invoices INDEXED BY invoices_sat_check
             WHERE sat_check_at IS NOT NULL AND sat_check_at <= ?1 AND {NOT_IN_A_RUN}
             ORDER BY sat_check_urgent DESC, sat_check_at LIMIT 1"
        ),
        params![now],
        due,
    )
}

/// When the next planned check is due (to sleep until then).
pub fn next_due_at(conn: &Conn) -> anyhow::Result<Option<String>> {
    conn.opt(
        "SELECT CASE WHEN sat_check_urgent = 1 THEN '0000' ELSE sat_check_at END
             FROM invoices INDEXED BY invoices_sat_check
             WHERE sat_check_at IS NOT NULL
             ORDER BY sat_check_urgent DESC, sat_check_at LIMIT 1",
        params![],
        |r| r.get(0),
    )
}

/// Asks for a check of a visible invoice of `org_id` ahead of the planned ones; false
/// when there is no such invoice. Wakes the checker once `tx` commits.
pub fn request(tx: &Tx, org_id: &str, id: &str, now: &str) -> anyhow::Result<bool> {
    let changed = tx.exec(
        "UPDATE invoices SET sat_check_urgent = 1, sat_check_at = CASE WHEN sat_check_at <= ?3 THEN sat_check_at ELSE ?3 END
         WHERE id = ?1 AND org_id = ?2 AND xml_processed = 1",
        params![id, org_id, now],
    )?;
    if changed > 0 {
        tx.queued_work(Work::StatusChecks);
    }
    Ok(changed > 0)
}

/// An answer, as stored.
#[derive(Debug, Clone)]
pub struct Record<'a> {
    pub state: &'a str,
    pub cancellable: Option<&'a str>,
    pub cancellation_status: Option<&'a str>,
    pub efos: &'a str,
    pub not_found_since: Option<String>,
    pub next_check: Option<String>,
}

/// Stores an answer and the next check. `updated_at` moves only when what the answer
/// says changed (not for a check that confirms it), so `updated_since` reports changes.
pub fn record(conn: &Conn, id: &str, r: &Record<'_>, now: &str) -> anyhow::Result<()> {
    conn.exec(
        "UPDATE invoices SET
            updated_at = CASE WHEN sat_state IS NOT DISTINCT FROM ?2
                    AND sat_cancellable IS NOT DISTINCT FROM ?3
                    AND sat_cancellation_status IS NOT DISTINCT FROM ?4
                    AND sat_efos IS NOT DISTINCT FROM ?5
                THEN updated_at ELSE ?6 END,
            sat_state = ?2, sat_cancellable = ?3,
            sat_cancellation_status = ?4, sat_efos = ?5, sat_checked_at = ?6,
            sat_not_found_since = ?7, sat_check_at = ?8, sat_check_urgent = 0
         WHERE id = ?1",
        params![
            id,
            r.state,
            r.cancellable,
            r.cancellation_status,
            r.efos,
            now,
            r.not_found_since,
            r.next_check
        ],
    )?;
    Ok(())
}

/// A check that could not be made (no printed expression: an XML that no longer
/// parses): no more planned checks.
pub fn give_up(conn: &Conn, id: &str) -> anyhow::Result<()> {
    conn.exec(
        "UPDATE invoices SET sat_check_at = NULL, sat_check_urgent = 0 WHERE id = ?1",
        params![id],
    )?;
    Ok(())
}

/// Checks due now (urgent included): the checker's backlog, for metrics and tests.
pub fn due_count(conn: &Conn, now: &str) -> anyhow::Result<i64> {
    conn.one(
        "SELECT count(*) FROM invoices INDEXED BY invoices_sat_check
         WHERE sat_check_at IS NOT NULL AND (sat_check_urgent = 1 OR sat_check_at <= ?1)",
        params![now],
        |r| r.get(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{testing, Memory};

    const NOW: &str = "2026-05-03T12:00:00.000000Z";

    fn invoice(conn: &Conn, id: &str, org: &str, check_at: &str, urgent: bool) {
        conn.exec(
            "INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed,
                created_at, updated_at, sat_check_at, sat_check_urgent)
             VALUES (?1, ?2, ?3, ?1, 'issued', 1, ?4, ?4, ?4, ?5)",
            params![id, org, format!("{org}-entity"), check_at, urgent],
        )
        .expect("invoice");
    }

    /// The order the checker takes the due checks in, answering each.
    fn order(conn: &Conn) -> Vec<String> {
        let (mut taken, mut last) = (vec![], None::<String>);
        while let Some(due) = next_due(conn, NOW, last.as_deref()).expect("next") {
            let answer = Record {
                state: "active",
                cancellable: None,
                cancellation_status: None,
                efos: "unknown",
                not_found_since: None,
                next_check: None,
            };
            record(conn, &due.id, &answer, NOW).expect("record");
            taken.push(due.id);
            last = Some(due.org_id);
        }
        taken
    }

    #[test]
    fn checks_on_demand_take_turns_between_organizations_before_the_planned_ones() {
        let conn = Memory::new();
        for org in ["a", "b", "c"] {
            testing::org_with_entity(&conn, org, &format!("{org}-entity"));
        }
        // A planned check due before anything asked for on demand.
        invoice(
            &conn,
            "b-planned",
            "b",
            "2026-05-01T00:00:00.000000Z",
            false,
        );
        for i in 1..=4 {
            invoice(
                &conn,
                &format!("a{i}"),
                "a",
                &format!("2026-05-03T10:00:0{i}Z"),
                true,
            );
        }
        invoice(&conn, "b1", "b", "2026-05-03T11:00:00Z", true);
        invoice(&conn, "c1", "c", "2026-05-03T11:00:01Z", true);
        // Planned later than now: not due.
        invoice(&conn, "c-later", "c", "2026-06-01T00:00:00.000000Z", false);
        assert_eq!(
            order(&conn),
            ["a1", "b1", "c1", "a2", "a3", "a4", "b-planned"],
            "each organization's oldest in turn, then the planned ones by time"
        );
    }
}
