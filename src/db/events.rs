//! SQL for `events`: the outbox's rows, the events feed, and their retention.
//!
//! A payload is stored compressed with the events dictionary (`db::codec`, a zstd frame
//! in a BLOB) when that is smaller, else as its JSON text: SQLite's type of the value
//! says which, so rows written before compression read unchanged. Every read goes
//! through `payload_from`.

use super::codec::{self, Codec};
use super::sql::{params, Param, Query, Row, Stored};
use super::Conn;
use crate::domain::event::FeedFilter;

/// An event to store: its id, name, source, payload (JSON text) and time.
pub struct NewEvent {
    pub id: String,
    pub event: &'static str,
    pub source: String,
    pub payload: String,
    pub created_at: String,
}

/// Stores an organization's `events`, many rows to a statement, each payload
/// compressed when that is smaller.
pub fn insert_all(conn: &Conn, org_id: &str, events: &[NewEvent]) -> anyhow::Result<()> {
    let rows: Vec<(&NewEvent, codec::Encoded)> = events
        .iter()
        .map(|e| (e, codec::encode_event(e.payload.as_bytes())))
        .collect();
    super::rows::insert(
        conn,
        "events (org_id, id, event, source, payload, created_at)",
        &[&org_id],
        &rows,
        |(e, encoded)| {
            let payload: &dyn Param = match encoded.codec {
                Codec::Identity => &e.payload,
                _ => &encoded.bytes,
            };
            vec![&e.id, &e.event, &e.source, payload, &e.created_at]
        },
    )
}

/// A stored payload's JSON text, from the `payload` column of a row. `Row` does not
/// say a column's type: a BLOB reads as bytes (the compressed frame), anything else is
/// read as text, as before.
pub fn payload_from(row: &Row, index: usize) -> anyhow::Result<String> {
    match row.stored(index)? {
        Stored::Bytes(zstd) => codec::decode(Codec::ZstdEvents1, zstd.to_vec())
            .and_then(|json| Ok(String::from_utf8(json)?)),
        Stored::Text(json) => Ok(json.to_string()),
        Stored::Null => anyhow::bail!("the event has no payload"),
    }
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
    conn: &Conn,
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
    let kinds_param = if column == "source" {
        kinds_json.as_ref()
    } else {
        None
    };
    let mut rows: Vec<FeedRow> = vec![];
    for value in values {
        // The same text for every value, so the statement is cached once.
        let mut q = Query::new("SELECT id, payload FROM events WHERE org_id = ");
        q.bind(&org_id);
        if !column.is_empty() {
            q.sql.push_str(&format!(" AND {column} = "));
            q.bind(&value);
        }
        if let Some(kinds) = &kinds_param {
            // One resource has few events: its type filter is a plain row filter.
            q.sql
                .push_str(" AND event IN (SELECT value FROM json_each(");
            q.bind(kinds);
            q.sql.push_str("))");
        }
        if let Some(after) = &after {
            q.sql.push_str(&format!(" AND id {cmp} "));
            q.bind(after);
        }
        q.sql.push_str(&format!(" ORDER BY id {order} LIMIT "));
        q.bind(&limit);
        conn.each(&q.sql, &q.params, |r| {
            rows.push(FeedRow {
                id: r.get(0)?,
                payload: payload_from(r, 1)?,
            });
            Ok(())
        })?;
    }
    rows.sort_by(|a, b| a.id.cmp(&b.id));
    if !filter.oldest_first {
        rows.reverse();
    }
    rows.truncate(usize::try_from(limit).unwrap_or(0));
    Ok(rows)
}

/// One event of the organization, as delivered.
pub fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
    conn.opt(
        "SELECT payload FROM events WHERE id = ?1 AND org_id = ?2",
        params![id, org_id],
        |r| payload_from(r, 0),
    )
}

/// Deletes up to `batch` events created before `cutoff` none of whose deliveries is
/// still pending (their finished deliveries and attempts go with them, by cascade).
/// Returns how many were deleted.
pub fn purge_before(conn: &Conn, cutoff: &str, batch: i64) -> anyhow::Result<usize> {
    conn.exec(
        "DELETE FROM events WHERE id IN (
                SELECT e.id FROM events e WHERE e.created_at < ?1
                AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.event_id = e.id AND d.status = 'pending')
                LIMIT ?2)",
        params![cutoff, batch],
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Memory;

    fn db() -> Memory {
        let conn = Memory::new();
        conn.exec("INSERT INTO orgs VALUES ('o', 'Org', 't')", params![])
            .expect("org");
        conn
    }

    fn event(id: &str, payload: &str) -> NewEvent {
        NewEvent {
            id: id.into(),
            event: "invoice.created",
            source: "invoices/x".into(),
            payload: payload.into(),
            created_at: "t".into(),
        }
    }

    #[test]
    fn payloads_are_stored_compressed_and_read_back_as_they_were() {
        let conn = db();
        let object = r#"{"id":"x","uuid":"U","total":"116.00","issuer":{"tax_id":"AAA010101AAA"}}"#;
        let payload = format!(
            r#"{{"id":"e1","event":"invoice.created","object":{object},"n":"{}"}}"#,
            "ñ".repeat(200)
        );
        insert_all(&conn, "o", &[event("e1", &payload)]).expect("insert");
        let (kind, stored): (String, i64) = conn
            .one(
                "SELECT typeof(payload), length(payload) FROM events",
                params![],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .expect("row");
        assert_eq!(kind, "blob");
        assert!(
            stored < payload.len() as i64 / 2,
            "{stored} of {}",
            payload.len()
        );
        assert_eq!(get(&conn, "o", "e1").expect("get"), Some(payload.clone()));
        let page = feed(&conn, "o", &FeedFilter::default(), None, 10).expect("feed");
        assert_eq!(page[0].payload, payload);
        // Another organization's event is not found.
        assert_eq!(get(&conn, "other", "e1").expect("get"), None);
    }

    #[test]
    fn plain_text_payloads_of_older_rows_and_tiny_ones_read_unchanged() {
        let conn = db();
        conn.exec(
            "INSERT INTO events VALUES ('old', 'o', 'entity.created', 'entities/x', '{\"id\":\"old\"}', 't')",
            params![],
        )
        .expect("old row");
        insert_all(&conn, "o", &[event("tiny", "{}")]).expect("insert");
        assert_eq!(
            get(&conn, "o", "old").expect("get").as_deref(),
            Some("{\"id\":\"old\"}")
        );
        assert_eq!(get(&conn, "o", "tiny").expect("get").as_deref(), Some("{}"));
    }

    #[test]
    fn a_damaged_payload_is_an_error_not_a_panic() {
        let conn = db();
        conn.exec(
            "INSERT INTO events VALUES ('bad', 'o', 'entity.created', 'entities/x', x'28B52FFD0058', 't')",
            params![],
        )
        .expect("damaged row");
        assert!(get(&conn, "o", "bad").is_err());
    }
}
