//! Whether the database answers (`GET /up`).

use super::sql::params;
use super::Conn;

/// Ok when a query over the schema runs, whether or not any organization exists yet.
pub fn answers(conn: &Conn) -> anyhow::Result<()> {
    conn.opt("SELECT 1 FROM orgs LIMIT 1", params![], |_| Ok(()))?;
    Ok(())
}
