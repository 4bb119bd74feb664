//! SQL for every value sealed with the data key, across tables, for `cfdi-extract
//! check`. A database from an older schema may lack some columns (the next start adds
//! them), so each source is read only when its column exists.

use super::sql::params;
use super::Conn;

/// (table, sealed column, key column) of every sealed value.
const SOURCES: &[(&str, &str, &str)] = &[
    ("entities", "ciec_ciphertext", "id"),
    ("webhooks", "token_sealed", "id"),
    ("efirmas", "key_ciphertext", "entity_id"),
    ("efirmas", "password_ciphertext", "entity_id"),
];

/// One sealed value: what it is (`entities.ciec_ciphertext of <id>`) and its bytes.
pub struct Sealed {
    pub what: String,
    pub bytes: Vec<u8>,
}

/// Every sealed value in the database.
pub fn all(conn: &Conn) -> anyhow::Result<Vec<Sealed>> {
    let mut out = Vec::new();
    for (table, column, key) in SOURCES {
        if !has_column(conn, table, column)? {
            continue;
        }
        // Names come from SOURCES above, never from input.
        let sql = format!("SELECT {key}, {column} FROM {table} WHERE {column} IS NOT NULL");
        conn.each(&sql, params![], |r| {
            out.push(Sealed {
                what: format!("{table}.{column} of {}", r.get::<String>(0)?),
                bytes: r.get(1)?,
            });
            Ok(())
        })?;
    }
    Ok(out)
}

fn has_column(conn: &Conn, table: &str, column: &str) -> anyhow::Result<bool> {
    conn.one(
        conn.pick(
            "SELECT EXISTS (SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2)",
            "SELECT EXISTS (SELECT 1 FROM information_schema.columns
                             WHERE table_schema = current_schema()
                               AND table_name = ?1 AND column_name = ?2)",
        ),
        params![table, column],
        |r| r.get(0),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Memory;
    use ref_cast::RefCast;

    #[test]
    fn lists_each_sealed_column_and_skips_missing_ones() {
        let conn = Memory::new();
        conn.batch(
            "INSERT INTO orgs VALUES ('o', 'O', 't');
             INSERT INTO entities VALUES ('e', 'o', 'AAA010101AAA', 'E', x'01', 'valid', 't', 't');
             INSERT INTO webhooks (id, org_id, url, token, token_sealed, events, created_at)
                 VALUES ('w', 'o', 'https://a.mx', '', x'02', '[]', 't'),
                        ('plain', 'o', 'https://a.mx', '', NULL, '[]', 't');",
        )
        .expect("seed");
        let found: Vec<(String, Vec<u8>)> = all(&conn)
            .expect("all")
            .into_iter()
            .map(|s| (s.what, s.bytes))
            .collect();
        assert_eq!(
            found,
            [
                ("entities.ciec_ciphertext of e".to_string(), vec![1]),
                ("webhooks.token_sealed of w".to_string(), vec![2]),
            ]
        );
        // A database of an older schema: no migrations, so not `Memory`.
        let old = rusqlite::Connection::open_in_memory().expect("db");
        let old = Conn::ref_cast(&old);
        old.batch("CREATE TABLE entities (id TEXT, ciec_ciphertext BLOB)")
            .expect("old");
        assert!(all(old).expect("old schema").is_empty());
    }
}
