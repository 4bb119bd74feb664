//! SQL for `documents`: each invoice's original XML and PDF, byte for byte.

use rusqlite::{params, Connection, OptionalExtension};

/// Stores (or replaces) an invoice's `xml` or `pdf`.
pub fn put(conn: &Connection, invoice_id: &str, kind: &str, content: &[u8]) -> anyhow::Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO documents (invoice_id, kind, content) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![invoice_id, kind, content])?;
    Ok(())
}

/// An invoice's stored `xml` or `pdf`.
pub fn get(conn: &Connection, invoice_id: &str, kind: &str) -> anyhow::Result<Option<Vec<u8>>> {
    Ok(conn
        .prepare_cached("SELECT content FROM documents WHERE invoice_id = ?1 AND kind = ?2")?
        .query_row(params![invoice_id, kind], |r| r.get(0))
        .optional()?)
}
