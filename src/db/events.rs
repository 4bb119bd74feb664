//! SQL for `events`: the outbox's rows, the events feed, and their retention.

use crate::domain::event::FeedFilter;
use rusqlite::{params, Connection, OptionalExtension, ToSql};

pub struct NewEvent<'a> {
    pub id: &'a str,
    pub org_id: &'a str,
    pub event: &'a str,
    pub source: &'a str,
    pub payload: &'a str,
    pub created_at: &'a str,
}

pub fn insert(conn: &Connection, e: &NewEvent) -> anyhow::Result<()> {
    conn.prepare_cached(
        "INSERT INTO events (id, org_id, event, source, payload, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![e.id, e.org_id, e.event, e.source, e.payload, e.created_at])?;
    Ok(())
}

/// One event of the feed: its id (the sort key) and its payload, as delivered.
pub struct FeedRow {
    pub id: String,
    pub payload: String,
}

/// A page of the organization's events after the cursor's id, in `filter`'s order.
/// Each resource or type asked for is read through its own index (one query each,
/// `limit` rows at most) and the results merged, so no filter sorts or scans more
/// than a page per value.
pub fn feed(
    conn: &Connection,
    org_id: &str,
    filter: &FeedFilter,
    after: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<FeedRow>> {
    let kinds: Vec<&str> = filter.kinds.iter().map(|k| k.name()).collect();
    let kinds_json = (!kinds.is_empty()).then(|| serde_json::json!(kinds).to_string());
    let (column, values): (&str, Vec<&str>) = if !filter.sources.is_empty() {
        (
            "source",
            filter.sources.iter().map(String::as_str).collect(),
        )
    } else if !kinds.is_empty() {
        ("event", kinds.clone())
    } else {
        ("", vec![""])
    };
    let (cmp, order) = if filter.oldest_first {
        (">", "ASC")
    } else {
        ("<", "DESC")
    };
    let mut sql = String::from("SELECT id, payload FROM events WHERE org_id = :org");
    if !column.is_empty() {
        sql.push_str(&format!(" AND {column} = :value"));
    }
    if column == "source" && kinds_json.is_some() {
        // One resource has few events: its type filter is a plain row filter.
        sql.push_str(" AND event IN (SELECT value FROM json_each(:kinds))");
    }
    if after.is_some() {
        sql.push_str(&format!(" AND id {cmp} :after"));
    }
    sql.push_str(&format!(" ORDER BY id {order} LIMIT :limit"));
    let mut stmt = conn.prepare_cached(&sql)?;
    let mut rows: Vec<FeedRow> = vec![];
    for value in values {
        let mut args: Vec<(&str, &dyn ToSql)> = vec![(":org", &org_id), (":limit", &limit)];
        if !column.is_empty() {
            args.push((":value", &value));
        }
        if column == "source" {
            if let Some(k) = &kinds_json {
                args.push((":kinds", k));
            }
        }
        if let Some(a) = &after {
            args.push((":after", a));
        }
        let found = stmt.query_map(args.as_slice(), |r| {
            Ok(FeedRow {
                id: r.get(0)?,
                payload: r.get(1)?,
            })
        })?;
        for row in found {
            rows.push(row?);
        }
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    if !filter.oldest_first {
        rows.reverse();
    }
    rows.truncate(usize::try_from(limit).unwrap_or(0));
    Ok(rows)
}

/// One event of the organization, as delivered.
pub fn get(conn: &Connection, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
    Ok(conn
        .prepare_cached("SELECT payload FROM events WHERE id = ?1 AND org_id = ?2")?
        .query_row(params![id, org_id], |r| r.get(0))
        .optional()?)
}

/// Deletes up to `batch` events created before `cutoff` none of whose deliveries is
/// still pending (their finished deliveries and attempts go with them, by cascade).
/// Returns how many were deleted.
pub fn purge_before(conn: &Connection, cutoff: &str, batch: i64) -> anyhow::Result<usize> {
    Ok(conn
        .prepare_cached(
            "DELETE FROM events WHERE id IN (
                SELECT e.id FROM events e WHERE e.created_at < ?1
                AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
                LIMIT ?2)",
        )?
        .execute(params![cutoff, batch])?)
}
