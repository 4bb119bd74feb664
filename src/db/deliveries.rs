//! SQL for `deliveries` (one per event and webhook) and their attempt log.

use super::sql::{params, Row};
use super::Conn;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
pub struct Delivery {
    pub id: String,
    pub webhook_id: String,
    pub event_id: String,
    pub event: String,
    pub status: String,
    pub attempts: u32,
    pub response_status: Option<u16>,
    pub last_error: Option<String>,
    pub last_attempt_at: Option<String>,
    pub next_attempt_at: Option<String>,
    pub created_at: String,
}

impl Delivery {
    pub fn view(&self) -> Value {
        json!({
            "id": self.id, "event_id": self.event_id, "event": self.event,
            "status": self.status, "attempts": self.attempts,
            "response_status": self.response_status, "last_error": self.last_error,
            "last_attempt_at": self.last_attempt_at, "next_attempt_at": self.next_attempt_at,
            "created_at": self.created_at,
        })
    }
}

const COLUMNS: &str = "d.id, d.webhook_id, d.event_id, e.event, d.status, d.attempts,
    d.response_status, d.last_error, d.last_attempt_at, d.next_attempt_at, d.created_at";

fn from_row(r: &Row) -> anyhow::Result<Delivery> {
    Ok(Delivery {
        id: r.get(0)?,
        webhook_id: r.get(1)?,
        event_id: r.get(2)?,
        event: r.get(3)?,
        status: r.get(4)?,
        attempts: u32::try_from(r.get::<i64>(5)?)?,
        response_status: r.get::<Option<i64>>(6)?.map(u16::try_from).transpose()?,
        last_error: r.get(7)?,
        last_attempt_at: r.get(8)?,
        next_attempt_at: r.get(9)?,
        created_at: r.get(10)?,
    })
}

/// A delivery to queue: its id, webhook, event and the serial key its job keeps the
/// webhook's events of one resource in order with.
pub struct NewDelivery<'a> {
    pub id: String,
    pub webhook_id: &'a str,
    pub event_id: &'a str,
    pub serial: String,
}

impl<'a> NewDelivery<'a> {
    pub fn new(webhook_id: &'a str, event_id: &'a str, serial: String) -> NewDelivery<'a> {
        NewDelivery {
            id: uuid::Uuid::now_v7().to_string(),
            webhook_id,
            event_id,
            serial,
        }
    }
}

/// Stores `deliveries`, pending and first due at `next_attempt_at`, many rows to a
/// statement.
pub fn insert_all(
    conn: &Conn,
    deliveries: &[NewDelivery],
    next_attempt_at: &str,
) -> anyhow::Result<()> {
    let now = crate::time::now();
    super::rows::insert(
        conn,
        "deliveries (status, next_attempt_at, created_at, id, webhook_id, event_id)",
        &[&"pending", &next_attempt_at, &now],
        deliveries,
        |d| vec![&d.id, &d.webhook_id, &d.event_id],
    )
}

pub fn list(
    conn: &Conn,
    webhook_id: &str,
    after: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<Delivery>> {
    conn.all(
        &format!(
            "SELECT {COLUMNS} FROM deliveries d JOIN events e ON e.id = d.event_id
         WHERE d.webhook_id = ?1 AND (?2 IS NULL OR d.id < ?2) ORDER BY d.id DESC LIMIT ?3"
        ),
        params![webhook_id, after, limit],
        from_row,
    )
}

/// What a delivery attempt needs: the webhook's url and token and the event's body.
pub struct Outgoing {
    pub delivery: Delivery,
    pub url: String,
    /// Sealed: the sender opens it.
    pub token: super::webhooks::Token,
    pub payload: String,
}

/// The delivery with its webhook's url and token, to sign and send it.
pub fn outgoing(conn: &Conn, id: &str) -> anyhow::Result<Option<Outgoing>> {
    let row = conn.opt(
        &format!(
            "SELECT {COLUMNS}, w.url, w.token, w.token_sealed, e.payload
             FROM deliveries d JOIN events e ON e.id = d.event_id JOIN webhooks w ON w.id = d.webhook_id
             WHERE d.id = ?1"
        ),
        params![id],
        |r| {
            Ok((
                from_row(r)?,
                r.get::<String>(11)?,
                r.get::<String>(12)?,
                r.get::<Option<Vec<u8>>>(13)?,
                super::events::payload_from(r, 14)?,
            ))
        },
    )?;
    let Some((delivery, url, plain, sealed, payload)) = row else {
        return Ok(None);
    };
    Ok(Some(Outgoing {
        delivery,
        url,
        token: super::webhooks::Token::from_columns(plain, sealed),
        payload,
    }))
}

/// The result of one attempt.
pub struct Attempt<'a> {
    pub number: u32,
    pub response_status: u16,
    pub error: Option<&'a str>,
    pub duration_ms: u64,
    /// None when the delivery is over (succeeded or out of attempts).
    pub next_attempt_at: Option<&'a str>,
    pub status: &'a str,
}

pub fn record_attempt(conn: &Conn, id: &str, a: &Attempt) -> anyhow::Result<()> {
    let now = crate::time::now();
    let (number, response_status) = (i64::from(a.number), i64::from(a.response_status));
    conn.defer(
        "INSERT INTO delivery_attempts (delivery_id, attempt, response_status, error, duration_ms, attempted_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (delivery_id, attempt) DO UPDATE SET response_status = excluded.response_status,
            error = excluded.error, duration_ms = excluded.duration_ms, attempted_at = excluded.attempted_at",
        params![id, number, response_status, a.error, a.duration_ms as i64, now],
    )?;
    conn.defer(
        "UPDATE deliveries SET status = ?2, attempts = ?3, response_status = ?4, last_error = ?5,
                last_attempt_at = ?6, next_attempt_at = ?7
         WHERE id = ?1",
        params![
            id,
            a.status,
            number,
            (response_status != 0).then_some(response_status),
            a.error,
            now,
            a.next_attempt_at
        ],
    )?;
    Ok(())
}
