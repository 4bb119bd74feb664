//! A taxpayer's suppliers' DIOT settings (`domain::supplier`), one row per entity and
//! supplier RFC, the settings as the JSON object a PUT wrote. A supplier without a row
//! takes the documented defaults.

use super::sql::{params, Row};
use super::Conn;
use crate::domain::supplier::Supplier;

super::sql::columns! {
    /// What a supplier's row is read as.
    TaxId = "tax_id",
    Settings = "settings",
    CreatedAt = "created_at",
    UpdatedAt = "updated_at",
}

fn from_row(r: &Row) -> anyhow::Result<Supplier> {
    let tax_id: String = r.get(Col::TaxId.at())?;
    let settings: String = r.get(Col::Settings.at())?;
    Supplier::from_stored(
        &tax_id,
        &settings,
        r.get(Col::CreatedAt.at())?,
        r.get(Col::UpdatedAt.at())?,
    )
}

/// Saves `s` (created, or replacing what was saved, keeping its creation time) at `now`.
pub fn put(
    conn: &Conn,
    org_id: &str,
    entity_id: &str,
    s: &Supplier,
    now: &str,
) -> anyhow::Result<Supplier> {
    conn.exec(
        "INSERT INTO suppliers (org_id, entity_id, tax_id, settings, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)
         ON CONFLICT (entity_id, tax_id) DO UPDATE SET settings = excluded.settings,
             updated_at = excluded.updated_at",
        params![org_id, entity_id, s.tax_id, s.settings().to_string(), now],
    )?;
    get(conn, org_id, entity_id, &s.tax_id)?
        .ok_or_else(|| anyhow::anyhow!("supplier {} not saved", s.tax_id))
}

pub fn get(
    conn: &Conn,
    org_id: &str,
    entity_id: &str,
    tax_id: &str,
) -> anyhow::Result<Option<Supplier>> {
    conn.opt(
        &format!(
            "SELECT {COLUMNS} FROM suppliers WHERE entity_id = ?1 AND tax_id = ?2 AND org_id = ?3"
        ),
        params![entity_id, tax_id, org_id],
        from_row,
    )
}

/// The entity's suppliers with settings, by RFC, after `after`, at most `limit`.
pub fn list(
    conn: &Conn,
    org_id: &str,
    entity_id: &str,
    after: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<Supplier>> {
    conn.all(
        &format!(
            "SELECT {COLUMNS} FROM suppliers WHERE entity_id = ?1 AND org_id = ?2
               AND (?3 IS NULL OR tax_id > ?3) ORDER BY tax_id LIMIT ?4"
        ),
        params![entity_id, org_id, after, limit],
        from_row,
    )
}

/// Every supplier with settings of the entity (what a month's DIOT reads: a taxpayer
/// has hundreds of suppliers at most, not millions).
pub fn of_entity(conn: &Conn, org_id: &str, entity_id: &str) -> anyhow::Result<Vec<Supplier>> {
    conn.all(
        &format!(
            "SELECT {COLUMNS} FROM suppliers WHERE entity_id = ?1 AND org_id = ?2 ORDER BY tax_id"
        ),
        params![entity_id, org_id],
        from_row,
    )
}

pub fn delete(conn: &Conn, org_id: &str, entity_id: &str, tax_id: &str) -> anyhow::Result<bool> {
    Ok(conn.exec(
        "DELETE FROM suppliers WHERE entity_id = ?1 AND tax_id = ?2 AND org_id = ?3",
        params![entity_id, tax_id, org_id],
    )? == 1)
}
