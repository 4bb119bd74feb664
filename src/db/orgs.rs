//! SQL for `orgs`.

use rusqlite::{params, Connection, OptionalExtension};

#[derive(Debug, Clone)]
pub struct Org {
    pub id: String,
    pub name: String,
    pub created_at: String,
}

pub fn insert(conn: &Connection, name: &str) -> anyhow::Result<Org> {
    let org = Org {
        id: uuid::Uuid::now_v7().to_string(),
        name: name.to_string(),
        created_at: crate::time::now(),
    };
    conn.execute(
        "INSERT INTO orgs (id, name, created_at) VALUES (?1, ?2, ?3)",
        params![org.id, org.name, org.created_at],
    )?;
    Ok(org)
}

pub fn list(conn: &Connection) -> anyhow::Result<Vec<Org>> {
    let mut stmt = conn.prepare("SELECT id, name, created_at FROM orgs ORDER BY created_at, id")?;
    let rows = stmt.query_map([], from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Finds an organization by id, or else by exact name (names need not be unique:
/// an ambiguous name is an error that asks for the id).
pub fn find(conn: &Connection, id_or_name: &str) -> anyhow::Result<Option<Org>> {
    let by_id = conn
        .query_row(
            "SELECT id, name, created_at FROM orgs WHERE id = ?1",
            [id_or_name],
            from_row,
        )
        .optional()?;
    if by_id.is_some() {
        return Ok(by_id);
    }
    let mut stmt = conn.prepare("SELECT id, name, created_at FROM orgs WHERE name = ?1")?;
    let mut found: Vec<Org> = stmt
        .query_map([id_or_name], from_row)?
        .collect::<Result<_, _>>()?;
    match found.len() {
        0 => Ok(None),
        1 => Ok(found.pop()),
        n => anyhow::bail!("{n} organizations are named {id_or_name:?}; use the id"),
    }
}

fn from_row(r: &rusqlite::Row) -> rusqlite::Result<Org> {
    Ok(Org {
        id: r.get(0)?,
        name: r.get(1)?,
        created_at: r.get(2)?,
    })
}
