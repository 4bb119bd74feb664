//! SQL for `orgs`.

use super::sql::{params, Row};
use super::Conn;

#[derive(Debug, Clone)]
pub struct Org {
    pub id: String,
    pub name: String,
    pub created_at: String,
}

pub fn insert(conn: &Conn, name: &str) -> anyhow::Result<Org> {
    let org = Org {
        id: uuid::Uuid::now_v7().to_string(),
        name: name.to_string(),
        created_at: crate::time::now(),
    };
    conn.exec(
        "INSERT INTO orgs (id, name, created_at) VALUES (?1, ?2, ?3)",
        params![org.id, org.name, org.created_at],
    )?;
    Ok(org)
}

pub fn list(conn: &Conn) -> anyhow::Result<Vec<Org>> {
    conn.all(
        "SELECT id, name, created_at FROM orgs ORDER BY created_at, id",
        params![],
        from_row,
    )
}

/// Finds an organization by id, or else by exact name (names need not be unique:
/// an ambiguous name is an error that asks for the id).
pub fn find(conn: &Conn, id_or_name: &str) -> anyhow::Result<Option<Org>> {
    let by_id = conn.opt(
        "SELECT id, name, created_at FROM orgs WHERE id = ?1",
        params![id_or_name],
        from_row,
    )?;
    if by_id.is_some() {
        return Ok(by_id);
    }
    let mut found = conn.all(
        "SELECT id, name, created_at FROM orgs WHERE name = ?1",
        params![id_or_name],
        from_row,
    )?;
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        n => anyhow::bail!("{n} organizations are named {id_or_name:?}; use the id"),
    }
}

fn from_row(r: &Row) -> anyhow::Result<Org> {
    Ok(Org {
        id: r.get(0)?,
        name: r.get(1)?,
        created_at: r.get(2)?,
    })
}
