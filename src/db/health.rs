//! Whether the database answers (`GET /up`).

use rusqlite::{Connection, OptionalExtension};

/// Ok when a query over the schema runs, whether or not any organization exists yet.
pub fn answers(conn: &Connection) -> anyhow::Result<()> {
    conn.query_row("SELECT 1 FROM orgs LIMIT 1", [], |_| Ok(()))
        .optional()?;
    Ok(())
}
