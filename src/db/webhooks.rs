//! SQL for `webhooks`.

use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Value};

#[derive(Debug, Clone)]
pub struct Webhook {
    pub id: String,
    pub org_id: String,
    pub url: String,
    pub token: String,
    pub events: Vec<String>,
    pub created_at: String,
}

impl Webhook {
    pub fn view(&self) -> Value {
        json!({
            "id": self.id, "url": self.url, "token": self.token,
            "events": self.events, "created_at": self.created_at,
        })
    }

    pub fn wants(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == event)
    }
}

const COLUMNS: &str = "id, org_id, url, token, events, created_at";

fn from_row(r: &rusqlite::Row) -> rusqlite::Result<Webhook> {
    let events: String = r.get(4)?;
    Ok(Webhook {
        id: r.get(0)?,
        org_id: r.get(1)?,
        url: r.get(2)?,
        token: r.get(3)?,
        events: serde_json::from_str(&events).unwrap_or_default(),
        created_at: r.get(5)?,
    })
}

pub fn insert(
    conn: &Connection,
    org_id: &str,
    url: &str,
    events: &[String],
    token: &str,
) -> anyhow::Result<Webhook> {
    let hook = Webhook {
        id: uuid::Uuid::now_v7().to_string(),
        org_id: org_id.to_string(),
        url: url.to_string(),
        token: token.to_string(),
        events: events.to_vec(),
        created_at: crate::time::now(),
    };
    conn.execute(
        "INSERT INTO webhooks (id, org_id, url, token, events, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![hook.id, hook.org_id, hook.url, hook.token, serde_json::to_string(&hook.events)?, hook.created_at],
    )?;
    Ok(hook)
}

pub fn get(conn: &Connection, org_id: &str, id: &str) -> anyhow::Result<Option<Webhook>> {
    Ok(conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM webhooks WHERE id = ?1 AND org_id = ?2"
        ))?
        .query_row(params![id, org_id], from_row)
        .optional()?)
}

/// Newest first, keyset-paginated on id (UUIDv7 ids sort by creation).
pub fn list(
    conn: &Connection,
    org_id: &str,
    after: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<Webhook>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM webhooks WHERE org_id = ?1 AND (?2 IS NULL OR id < ?2)
         ORDER BY id DESC LIMIT ?3"
    ))?;
    let rows = stmt.query_map(params![org_id, after, limit], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn for_org(conn: &Connection, org_id: &str) -> anyhow::Result<Vec<Webhook>> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM webhooks WHERE org_id = ?1"))?;
    let rows = stmt.query_map([org_id], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Deletes the webhook, its deliveries (cascade) and their queued jobs.
pub fn delete(conn: &Connection, org_id: &str, id: &str) -> anyhow::Result<bool> {
    conn.execute(
        "DELETE FROM jobs WHERE kind = 'deliver_webhook' AND target_id IN
           (SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
            WHERE w.id = ?1 AND w.org_id = ?2)",
        params![id, org_id],
    )?;
    Ok(conn.execute(
        "DELETE FROM webhooks WHERE id = ?1 AND org_id = ?2",
        params![id, org_id],
    )? == 1)
}
