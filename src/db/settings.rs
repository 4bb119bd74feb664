//! SQL for `settings`: service-wide named values.

use rusqlite::{params, Connection, OptionalExtension};

pub fn get(conn: &Connection, name: &str) -> anyhow::Result<Option<String>> {
    Ok(conn
        .query_row("SELECT value FROM settings WHERE name = ?1", [name], |r| {
            r.get(0)
        })
        .optional()?)
}

pub fn set(conn: &Connection, name: &str, value: &str) -> anyhow::Result<()> {
    conn.execute(
        "INSERT INTO settings (name, value) VALUES (?1, ?2)
         ON CONFLICT (name) DO UPDATE SET value = excluded.value",
        params![name, value],
    )?;
    Ok(())
}
