//! SQL for `users`. Emails are stored lower-cased and compared that way.

use super::sql::{params, Row};
use super::Conn;

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

pub fn insert(conn: &Conn, org_id: &str, email: &str, password_hash: &str) -> anyhow::Result<User> {
    let now = crate::time::now();
    let user = User {
        id: uuid::Uuid::now_v7().to_string(),
        org_id: org_id.to_string(),
        email: normalize_email(email),
        password_hash: password_hash.to_string(),
        created_at: now.clone(),
    };
    conn.exec(
        "INSERT INTO users (id, org_id, email, password_hash, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
        params![user.id, user.org_id, user.email, user.password_hash, now],
    )?;
    Ok(user)
}

pub fn find_by_email(conn: &Conn, email: &str) -> anyhow::Result<Option<User>> {
    conn.opt(
        "SELECT id, org_id, email, password_hash, created_at FROM users WHERE email = ?1",
        params![normalize_email(email)],
        from_row,
    )
}

pub fn list(conn: &Conn, org_id: Option<&str>) -> anyhow::Result<Vec<User>> {
    conn.all(
        "SELECT id, org_id, email, password_hash, created_at FROM users
         WHERE ?1 IS NULL OR org_id = ?1 ORDER BY email",
        params![org_id],
        from_row,
    )
}

pub fn count(conn: &Conn) -> anyhow::Result<i64> {
    conn.one("SELECT COUNT(*) FROM users", params![], |r| r.get(0))
}

/// Returns false when no user has that email. Moves the users' stamp with it.
pub fn set_password(conn: &Conn, email: &str, password_hash: &str) -> anyhow::Result<bool> {
    let n = conn.exec(
        "UPDATE users SET password_hash = ?2, updated_at = ?3 WHERE email = ?1",
        params![normalize_email(email), password_hash, crate::time::now()],
    )?;
    if n == 1 {
        super::settings::set(conn, STAMP, &uuid::Uuid::now_v7().to_string())?;
    }
    Ok(n == 1)
}

/// The setting that moves with every change to a user's credentials: instances sharing
/// a PostgreSQL database compare it on each request to retire their cached logins (one
/// SQLite server watches the data directory's `users.stamp`, with no database read).
const STAMP: &str = "users_stamp";

/// The users' stamp now (`None` until a password was first changed).
pub fn stamp(conn: &Conn) -> anyhow::Result<Option<String>> {
    super::settings::get(conn, STAMP)
}

fn from_row(r: &Row) -> anyhow::Result<User> {
    Ok(User {
        id: r.get(0)?,
        org_id: r.get(1)?,
        email: r.get(2)?,
        password_hash: r.get(3)?,
        created_at: r.get(4)?,
    })
}
