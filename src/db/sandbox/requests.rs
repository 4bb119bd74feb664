//! `requests`: the requests made to the sandbox's simulation of the SAT's
//! bulk-download web service (`sandbox::efirma`), kept so a request id asked again after
//! a restart answers as before.

use crate::db::sql::{params, Row};
use crate::db::Conn;

/// One request, with the query's parameters as the sandbox stores them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub id: String,
    /// The e.firma's RFC that made it; only that RFC can verify or download it.
    pub rfc: String,
    pub entity_id: String,
    pub extraction_id: String,
    /// `issued` / `received`.
    pub direction: String,
    /// `CFDI` / `Metadata`.
    pub request_type: String,
    /// Local time, `YYYY-MM-DDTHH:MM:SS`.
    pub window_start: String,
    pub window_end: String,
    /// `Todos` / `Vigente` / `Cancelado`.
    pub status_filter: String,
    pub counterpart: Option<String>,
    pub document_type: Option<String>,
    pub complement: Option<String>,
    pub on_behalf_of: Option<String>,
    /// `ready`, `rejected`, `expired` or `over_maximum`.
    pub outcome: String,
    /// What the request delivers once finished (for `over_maximum`: more than allowed).
    pub documents: i64,
    pub verifications: i64,
    pub created_at: String,
}

const COLUMNS: &str = "id, rfc, entity_id, extraction_id, direction, request_type, window_start, \
    window_end, status_filter, counterpart, document_type, complement, on_behalf_of, outcome, \
    documents, verifications, created_at";

fn from_row(r: &Row) -> anyhow::Result<Request> {
    Ok(Request {
        id: r.get(0)?,
        rfc: r.get(1)?,
        entity_id: r.get(2)?,
        extraction_id: r.get(3)?,
        direction: r.get(4)?,
        request_type: r.get(5)?,
        window_start: r.get(6)?,
        window_end: r.get(7)?,
        status_filter: r.get(8)?,
        counterpart: r.get(9)?,
        document_type: r.get(10)?,
        complement: r.get(11)?,
        on_behalf_of: r.get(12)?,
        outcome: r.get(13)?,
        documents: r.get(14)?,
        verifications: r.get(15)?,
        created_at: r.get(16)?,
    })
}

pub fn insert(tx: &Conn, r: &Request) -> anyhow::Result<()> {
    tx.exec(
        &format!(
            "INSERT INTO requests ({COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)"
        ),
        params![
            r.id,
            r.rfc,
            r.entity_id,
            r.extraction_id,
            r.direction,
            r.request_type,
            r.window_start,
            r.window_end,
            r.status_filter,
            r.counterpart,
            r.document_type,
            r.complement,
            r.on_behalf_of,
            r.outcome,
            r.documents,
            r.verifications,
            r.created_at
        ],
    )?;
    Ok(())
}

/// Whether `rfc` already made a request of this type for this direction and window.
pub fn exists_for_window(
    conn: &Conn,
    rfc: &str,
    direction: &str,
    request_type: &str,
    window_start: &str,
    window_end: &str,
) -> anyhow::Result<bool> {
    conn.one(
        "SELECT EXISTS (SELECT 1 FROM requests
         WHERE rfc = ?1 AND direction = ?2 AND request_type = ?3
           AND window_start = ?4 AND window_end = ?5)",
        params![rfc, direction, request_type, window_start, window_end],
        |r| r.get(0),
    )
}

/// `rfc`'s request `id`, if it has one by that id.
pub fn get(conn: &Conn, rfc: &str, id: &str) -> anyhow::Result<Option<Request>> {
    conn.opt(
        &format!("SELECT {COLUMNS} FROM requests WHERE id = ?1 AND rfc = ?2"),
        params![id, rfc],
        from_row,
    )
}

/// Counts one more verification of `rfc`'s request `id` and returns it as it is now.
pub fn verify(tx: &Conn, rfc: &str, id: &str) -> anyhow::Result<Option<Request>> {
    tx.exec(
        "UPDATE requests SET verifications = verifications + 1
         WHERE id = ?1 AND rfc = ?2",
        params![id, rfc],
    )?;
    get(tx, rfc, id)
}
