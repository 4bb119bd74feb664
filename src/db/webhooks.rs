//! SQL for `webhooks`. A webhook's token is its signing secret: it is stored sealed
//! with the data key and read back sealed (`Token`); the caller opens it
//! (`crypto::Cipher::open_token`) only to sign a delivery or to show it to its owner.

use super::sql::{params, Row};
use super::Conn;
use serde_json::{json, Value};

/// A webhook as stored, its token sealed.
#[derive(Debug, Clone)]
pub struct Webhook {
    pub id: String,
    pub org_id: String,
    pub url: String,
    pub token: Token,
    pub events: Vec<String>,
    pub created_at: String,
}

impl Webhook {
    /// The API's object, with the token opened.
    pub fn view(&self, token: &str) -> Value {
        json!({
            "id": self.id, "url": self.url, "token": token,
            "events": self.events, "created_at": self.created_at,
        })
    }
}

/// A token as stored: sealed with the data key, or (schema 1, until `serve` seals it
/// at start) plain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    Sealed(Vec<u8>),
    Plain(String),
}

/// What an event needs to know of a webhook: whether it wants the event.
#[derive(Debug, Clone)]
pub struct Subscriber {
    pub id: String,
    pub events: Vec<String>,
}

impl Subscriber {
    pub fn wants(&self, event: &str) -> bool {
        self.events.iter().any(|e| e == event)
    }
}

impl Token {
    /// From its two columns: `token_sealed`, or else the plain `token`.
    pub(super) fn from_columns(plain: String, sealed: Option<Vec<u8>>) -> Token {
        match sealed {
            Some(sealed) => Token::Sealed(sealed),
            None => Token::Plain(plain),
        }
    }
}

const COLUMNS: &str = "id, org_id, url, token, token_sealed, events, created_at";

fn from_row(r: &Row) -> anyhow::Result<Webhook> {
    let events: String = r.get(5)?;
    Ok(Webhook {
        id: r.get(0)?,
        org_id: r.get(1)?,
        url: r.get(2)?,
        token: Token::from_columns(r.get(3)?, r.get(4)?),
        events: serde_json::from_str(&events).unwrap_or_default(),
        created_at: r.get(6)?,
    })
}

/// Stores a webhook whose token the caller sealed.
pub fn insert(
    conn: &Conn,
    org_id: &str,
    url: &str,
    events: &[String],
    sealed_token: Vec<u8>,
) -> anyhow::Result<Webhook> {
    let hook = Webhook {
        id: uuid::Uuid::now_v7().to_string(),
        org_id: org_id.to_string(),
        url: url.to_string(),
        token: Token::Sealed(sealed_token),
        events: events.to_vec(),
        created_at: crate::time::now(),
    };
    let Token::Sealed(sealed) = &hook.token else {
        unreachable!("built sealed above")
    };
    conn.exec(
        "INSERT INTO webhooks (id, org_id, url, token, token_sealed, events, created_at)
         VALUES (?1, ?2, ?3, '', ?4, ?5, ?6)",
        params![
            hook.id,
            hook.org_id,
            hook.url,
            sealed,
            serde_json::to_string(&hook.events)?,
            hook.created_at
        ],
    )?;
    Ok(hook)
}

pub fn count_for_org(conn: &Conn, org_id: &str) -> anyhow::Result<usize> {
    Ok(conn.one(
        "SELECT COUNT(*) FROM webhooks WHERE org_id = ?1",
        params![org_id],
        |r| r.get::<i64>(0),
    )? as usize)
}

pub fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<Webhook>> {
    conn.opt(
        &format!("SELECT {COLUMNS} FROM webhooks WHERE id = ?1 AND org_id = ?2"),
        params![id, org_id],
        from_row,
    )
}

/// Whether the organization has this webhook (no token opened).
pub fn exists(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<bool> {
    conn.one(
        "SELECT EXISTS (SELECT 1 FROM webhooks WHERE id = ?1 AND org_id = ?2)",
        params![id, org_id],
        |r| r.get(0),
    )
}

/// Newest first, keyset-paginated on id (UUIDv7 ids sort by creation).
pub fn list(
    conn: &Conn,
    org_id: &str,
    after: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<Webhook>> {
    conn.all(
        &format!(
            "SELECT {COLUMNS} FROM webhooks WHERE org_id = ?1 AND (?2 IS NULL OR id < ?2)
         ORDER BY id DESC LIMIT ?3"
        ),
        params![org_id, after, limit],
        from_row,
    )
}

pub fn for_org(conn: &Conn, org_id: &str) -> anyhow::Result<Vec<Subscriber>> {
    conn.all(
        "SELECT id, events FROM webhooks WHERE org_id = ?1",
        params![org_id],
        |r| {
            Ok(Subscriber {
                id: r.get(0)?,
                events: serde_json::from_str(&r.get::<String>(1)?).unwrap_or_default(),
            })
        },
    )
}

/// Seals the tokens schema 1 stored in plain text with `seal`; returns how many. The
/// old bytes are overwritten (`secure_delete`), not left in free pages.
pub fn seal_plain_tokens(
    conn: &Conn,
    seal: impl Fn(&str) -> anyhow::Result<Vec<u8>>,
) -> anyhow::Result<usize> {
    let plain: Vec<(String, String)> = conn.all(
        "SELECT id, token FROM webhooks WHERE token_sealed IS NULL",
        params![],
        |r| Ok((r.get(0)?, r.get(1)?)),
    )?;
    if plain.is_empty() {
        return Ok(0);
    }
    // SQLite overwrites the freed bytes; PostgreSQL has no such setting (its old row
    // versions go at the next vacuum).
    let sqlite = conn.engine() == crate::db::Engine::Sqlite;
    if sqlite {
        conn.batch("PRAGMA secure_delete = 1")?;
    }
    for (id, token) in &plain {
        conn.exec(
            "UPDATE webhooks SET token = '', token_sealed = ?2 WHERE id = ?1",
            params![id, seal(token)?],
        )?;
    }
    if sqlite {
        conn.batch("PRAGMA secure_delete = 0")?;
    }
    Ok(plain.len())
}

/// Deletes the webhook, its deliveries (cascade) and their queued jobs.
pub fn delete(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<bool> {
    conn.exec(
        "DELETE FROM jobs WHERE kind = 'deliver_webhook' AND target_id IN
           (SELECT d.id FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
            WHERE w.id = ?1 AND w.org_id = ?2)",
        params![id, org_id],
    )?;
    Ok(conn.exec(
        "DELETE FROM webhooks WHERE id = ?1 AND org_id = ?2",
        params![id, org_id],
    )? == 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crypto::Cipher;
    use crate::db::Memory;

    fn db() -> Memory {
        let conn = Memory::new();
        conn.exec(
            "INSERT INTO orgs (id, name, created_at) VALUES ('o1', 'Org', 't')",
            params![],
        )
        .expect("org");
        conn
    }

    #[test]
    fn tokens_are_stored_sealed_and_read_back_open() {
        let (conn, cipher) = (db(), Cipher::from_key(&[3u8; 32]));
        let sealed = cipher.seal("whsec_abc").expect("seal");
        let hook = insert(&conn, "o1", "https://a.mx/", &[], sealed).expect("insert");
        let (plain, sealed): (String, Vec<u8>) = conn
            .one("SELECT token, token_sealed FROM webhooks", params![], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .expect("row");
        assert_eq!(plain, "");
        assert!(!sealed.windows(9).any(|w| w == b"whsec_abc"));
        let read = get(&conn, "o1", &hook.id).expect("get").expect("found");
        assert_eq!(cipher.open_token(&read.token).expect("open"), "whsec_abc");
        assert!(Cipher::from_key(&[4u8; 32])
            .open_token(&read.token)
            .is_err());
    }

    #[test]
    fn plain_tokens_from_schema_1_are_sealed_in_place() {
        let (conn, cipher) = (db(), Cipher::from_key(&[3u8; 32]));
        conn.exec(
            "INSERT INTO webhooks (id, org_id, url, token, events, created_at)
             VALUES ('w1', 'o1', 'https://a.mx/', 'whsec_old', '[]', 't')",
            params![],
        )
        .expect("legacy row");
        let listed = list(&conn, "o1", None, 10).expect("list");
        assert_eq!(
            cipher.open_token(&listed[0].token).expect("open"),
            "whsec_old"
        );
        let seal = |t: &str| cipher.seal(t);
        assert_eq!(seal_plain_tokens(&conn, seal).expect("seal"), 1);
        assert_eq!(seal_plain_tokens(&conn, seal).expect("again"), 0);
        let plain: String = conn
            .one("SELECT token FROM webhooks", params![], |r| r.get(0))
            .expect("row");
        assert_eq!(plain, "");
        let read = get(&conn, "o1", "w1").expect("get").expect("found");
        assert_eq!(cipher.open_token(&read.token).expect("open"), "whsec_old");
    }
}
