//! SQL for `settings`: service-wide named values.

use super::sql::params;
use super::Conn;

pub fn get(conn: &Conn, name: &str) -> anyhow::Result<Option<String>> {
    conn.opt(
        "SELECT value FROM settings WHERE name = ?1",
        params![name],
        |r| r.get(0),
    )
}

pub fn set(conn: &Conn, name: &str, value: &str) -> anyhow::Result<()> {
    conn.exec(
        "INSERT INTO settings (name, value) VALUES (?1, ?2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        params![name, value],
    )?;
    Ok(())
}
