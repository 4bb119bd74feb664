//! SQL for `users`. Emails are stored lower-cased and compared that way.

use rusqlite::{params, Connection, OptionalExtension};

#[derive(Debug, Clone)]
pub struct User {
    pub id: String,
    pub org_id: String,
    pub email: String,
    pub password_hash: String,
    pub created_at: String,
}

pub fn normalize_email(email: &str) -> String {
    email.trim().to_lowercase()
}

pub fn insert(
    conn: &Connection,
    org_id: &str,
    email: &str,
    password_hash: &str,
) -> anyhow::Result<User> {
    let now = crate::time::now();
    let user = User {
        id: uuid::Uuid::now_v7().to_string(),
        org_id: org_id.to_string(),
        email: normalize_email(email),
        password_hash: password_hash.to_string(),
        created_at: now.clone(),
    };
    conn.execute(
        "INSERT INTO users (id, org_id, email, password_hash, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        params![user.id, user.org_id, user.email, user.password_hash, now],
    )?;
    Ok(user)
}

pub fn find_by_email(conn: &Connection, email: &str) -> anyhow::Result<Option<User>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, org_id, email, password_hash, created_at FROM users WHERE email = ?1",
        )?
        .query_row([normalize_email(email)], from_row)
        .optional()?)
}

pub fn list(conn: &Connection, org_id: Option<&str>) -> anyhow::Result<Vec<User>> {
    let mut stmt = conn.prepare(
        "SELECT id, org_id, email, password_hash, created_at FROM users
         WHERE ?1 IS NULL OR org_id = ?1 ORDER BY email",
    )?;
    let rows = stmt.query_map([org_id], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

pub fn count(conn: &Connection) -> anyhow::Result<i64> {
    Ok(conn.query_row("SELECT COUNT(*) FROM users", [], |r| r.get(0))?)
}

/// Returns false when no user has that email.
pub fn set_password(conn: &Connection, email: &str, password_hash: &str) -> anyhow::Result<bool> {
    let n = conn.execute(
        "UPDATE users SET password_hash = ?2, updated_at = ?3 WHERE email = ?1",
        params![normalize_email(email), password_hash, crate::time::now()],
    )?;
    Ok(n == 1)
}

fn from_row(r: &rusqlite::Row) -> rusqlite::Result<User> {
    Ok(User {
        id: r.get(0)?,
        org_id: r.get(1)?,
        email: r.get(2)?,
        password_hash: r.get(3)?,
        created_at: r.get(4)?,
    })
}
