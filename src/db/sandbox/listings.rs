//! `listings`: which extraction first listed a sandbox invoice (withheld XML and
//! late cancellations depend on it). Shared by the CIEC sandbox and its web-service
//! simulation, so both channels agree on what a run sees.

use crate::db::sql::params;
use crate::db::Conn;
use std::collections::HashMap;

/// Records `extraction_id` as the first to list each of `uuids` unless another run was
/// first; returns, per uuid, whether `extraction_id` is the one that listed it first.
pub fn record<'a>(
    tx: &Conn,
    entity_id: &str,
    direction: &str,
    extraction_id: &str,
    uuids: impl IntoIterator<Item = &'a str>,
) -> anyhow::Result<HashMap<String, bool>> {
    let mut out = HashMap::new();
    for uuid in uuids {
        tx.exec(
            "INSERT OR IGNORE INTO listings (entity_id, direction, uuid, first_extraction_id)
             VALUES (?1, ?2, ?3, ?4)",
            params![entity_id, direction, uuid, extraction_id],
        )?;
        let by: String = tx.one(
            "SELECT first_extraction_id FROM listings
             WHERE entity_id = ?1 AND direction = ?2 AND uuid = ?3",
            params![entity_id, direction, uuid],
            |r| r.get(0),
        )?;
        out.insert(uuid.to_string(), by == extraction_id);
    }
    Ok(out)
}
