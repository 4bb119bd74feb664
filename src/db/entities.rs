//! SQL for `entities`. Every query is scoped by `org_id` except the worker's own loads.

use super::efirmas::{self, EfirmaSummary};
use super::list_69b;
use super::sql::{params, Row};
use super::Conn;
use crate::domain::entity::CredentialStatus;
use crate::domain::list_69b::Listed;
use serde_json::{json, Value};

#[derive(Debug, Clone)]
pub struct Entity {
    pub id: String,
    pub org_id: String,
    pub tax_id: String,
    pub name: String,
    pub ciec_ciphertext: Vec<u8>,
    pub credential_status: CredentialStatus,
    /// The e.firma's summary, when the entity has one.
    pub efirma: Option<EfirmaSummary>,
    /// Its own entry on the 69-B list loaded last, when it is listed.
    pub list_69b: Option<Listed>,
    pub created_at: String,
    pub updated_at: String,
}

impl Entity {
    /// The public view: never the password, sealed or not. `efirma` is there only when
    /// the entity has one, so entities without keep the contract's exact shape.
    pub fn view(&self) -> Value {
        let mut view = json!({
            "id": self.id, "tax_id": self.tax_id, "name": self.name,
            "credential_status": self.credential_status.as_str(),
            "created_at": self.created_at, "updated_at": self.updated_at,
        });
        if let Some(efirma) = &self.efirma {
            view["efirma"] = efirma.view();
        }
        if let Some(listed) = &self.list_69b {
            view["list_69b"] = listed.view();
        }
        view
    }

    /// The `entity` object embedded in extraction events.
    pub fn summary(&self) -> Value {
        json!({ "id": self.id, "tax_id": self.tax_id, "name": self.name })
    }
}

const COLUMNS: &str =
    "id, org_id, tax_id, name, ciec_ciphertext, credential_status, created_at, updated_at";

/// `SELECT ... FROM` an entity with its e.firma summary and its own 69-B entry; callers
/// add the `WHERE`.
fn select() -> String {
    let own = COLUMNS
        .split(", ")
        .map(|c| format!("e.{c}"))
        .collect::<Vec<_>>()
        .join(", ");
    format!(
        "SELECT {own}, {}, {} FROM entities e LEFT JOIN efirmas f ON f.entity_id = e.id
         LEFT JOIN efos_entries l ON l.rfc = upper(e.tax_id)",
        efirmas::SUMMARY_COLUMNS,
        list_69b::LISTED_COLUMNS,
    )
}

fn from_row(r: &Row) -> anyhow::Result<Entity> {
    let status: String = r.get(5)?;
    Ok(Entity {
        id: r.get(0)?,
        org_id: r.get(1)?,
        tax_id: r.get(2)?,
        name: r.get(3)?,
        ciec_ciphertext: r.get(4)?,
        credential_status: CredentialStatus::parse(&status).unwrap_or(CredentialStatus::Pending),
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        efirma: efirmas::summary_from_row(r, 8)?,
        list_69b: list_69b::listed(r, 15)?,
    })
}

pub fn insert(
    conn: &Conn,
    org_id: &str,
    tax_id: &str,
    name: &str,
    ciphertext: &[u8],
) -> anyhow::Result<Entity> {
    let now = crate::time::now();
    let e = Entity {
        id: uuid::Uuid::now_v7().to_string(),
        org_id: org_id.to_string(),
        tax_id: tax_id.to_string(),
        name: name.to_string(),
        ciec_ciphertext: ciphertext.to_vec(),
        credential_status: CredentialStatus::Pending,
        efirma: None,
        list_69b: None,
        created_at: now.clone(),
        updated_at: now,
    };
    conn.exec(
        &format!("INSERT INTO entities ({COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"),
        params![
            e.id,
            e.org_id,
            e.tax_id,
            e.name,
            e.ciec_ciphertext,
            e.credential_status.as_str(),
            e.created_at,
            e.updated_at
        ],
    )?;
    // Read back: its own 69-B entry comes from the list.
    get(conn, org_id, &e.id)?.ok_or_else(|| anyhow::anyhow!("the entity just inserted is gone"))
}

pub fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<Entity>> {
    conn.opt(
        &format!("{} WHERE e.id = ?1 AND e.org_id = ?2", select()),
        params![id, org_id],
        from_row,
    )
}

/// For workers, which act on an id they queued themselves.
pub fn get_any(conn: &Conn, id: &str) -> anyhow::Result<Option<Entity>> {
    conn.opt(
        &format!("{} WHERE e.id = ?1", select()),
        params![id],
        from_row,
    )
}

/// One stored sealed CIEC, if any entity exists: proof of which key the database uses.
pub fn any_ciphertext(conn: &Conn) -> anyhow::Result<Option<Vec<u8>>> {
    conn.opt(
        "SELECT ciec_ciphertext FROM entities LIMIT 1",
        params![],
        |r| r.get(0),
    )
}

pub fn list(
    conn: &Conn,
    org_id: &str,
    after: Option<&str>,
    limit: i64,
) -> anyhow::Result<Vec<Entity>> {
    conn.all(
        &format!(
            "{} WHERE e.org_id = ?1 AND (?2 IS NULL OR e.id < ?2) ORDER BY e.id DESC LIMIT ?3",
            select()
        ),
        params![org_id, after, limit],
        from_row,
    )
}

pub fn update(conn: &Conn, e: &Entity) -> anyhow::Result<()> {
    conn.exec(
        "UPDATE entities SET name = ?2, ciec_ciphertext = ?3, credential_status = ?4, updated_at = ?5 WHERE id = ?1",
        params![e.id, e.name, e.ciec_ciphertext, e.credential_status.as_str(), e.updated_at],
    )?;
    Ok(())
}

/// Deletes the entity; its extractions, invoices, documents and payment entries go with
/// it (foreign keys cascade), and so do its queued jobs. Ownership is established
/// first: nothing of another organization's is touched when the id is not ours.
pub fn delete(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<bool> {
    if get(conn, org_id, id)?.is_none() {
        return Ok(false);
    }
    conn.exec(
        "DELETE FROM jobs WHERE status = 'queued' AND (target_id = ?1 OR target_id IN
           (SELECT id FROM extractions WHERE entity_id = ?1))",
        params![id],
    )?;
    Ok(conn.exec(
        "DELETE FROM entities WHERE id = ?1 AND org_id = ?2",
        params![id, org_id],
    )? == 1)
}
