//! The schema is `schema.sql`, embedded. It is idempotent and applied at every open;
//! `PRAGMA user_version` records the version so later releases can step forward.

use rusqlite::{Connection, TransactionBehavior};

const SCHEMA: &str = include_str!("../../schema.sql");

/// The schema version this binary writes.
pub const VERSION: i64 = 2;

/// Forward migrations: `(version, sql)` run in order for databases older than `version`.
/// Version 1 is the base schema itself.
const STEPS: &[(i64, &str)] = &[(2, ITEM_PAGES)];

/// Version 2: an invoice's concepts in pages of 1,000 (`ITEMS_PAGE` in db/invoices.rs).
/// `invoices.items_json` keeps the first page (what the invoice object carries) and
/// `items_count` the total; later pages go to `invoice_item_pages`, so no read has to
/// load a 200,000-item document whole. Existing rows are split the same way.
const ITEM_PAGES: &str = "
ALTER TABLE invoices ADD COLUMN items_count INTEGER;
CREATE TABLE invoice_item_pages (
    invoice_id  TEXT NOT NULL REFERENCES invoices(id) ON DELETE CASCADE,
    page        INTEGER NOT NULL,   -- items [page * 1000, page * 1000 + 1000)
    items_json  TEXT NOT NULL,
    PRIMARY KEY (invoice_id, page)
) WITHOUT ROWID;
UPDATE invoices SET items_count = json_array_length(items_json) WHERE items_json IS NOT NULL;
INSERT INTO invoice_item_pages (invoice_id, page, items_json)
    SELECT i.id, j.key / 1000, json_group_array(json(j.value) ORDER BY j.key)
    FROM invoices i, json_each(i.items_json) j
    WHERE i.items_count > 1000 AND j.key >= 1000
    GROUP BY i.id, j.key / 1000;
UPDATE invoices SET items_json =
    (SELECT json_group_array(json(j.value) ORDER BY j.key) FROM json_each(invoices.items_json) j
     WHERE j.key < 1000)
    WHERE items_count > 1000;
";

pub fn apply(conn: &mut Connection) -> anyhow::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > VERSION {
        anyhow::bail!(
            "the database has schema version {current}, newer than this binary ({VERSION}); upgrade cfdi-extract"
        );
    }
    tx.execute_batch(SCHEMA)?;
    for (version, sql) in STEPS {
        if current < *version {
            tx.execute_batch(sql)?;
        }
    }
    if current != VERSION {
        tx.pragma_update(None, "user_version", VERSION)?;
    }
    tx.commit()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_applies_twice_and_records_its_version() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        apply(&mut conn).expect("first");
        apply(&mut conn).expect("second");
        let v: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .expect("version");
        assert_eq!(v, VERSION);
    }

    #[test]
    fn version_2_splits_stored_items_into_pages_keeping_numbers_as_written() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        conn.execute_batch(SCHEMA).expect("version 1");
        conn.pragma_update(None, "user_version", 1).expect("set");
        let items: Vec<String> = (0..2_500)
            .map(|i| format!(r#"{{"n":{i},"amount":1.50}}"#))
            .collect();
        conn.execute_batch(&format!(
            "INSERT INTO orgs VALUES ('o', 'O', 'now');
             INSERT INTO entities VALUES ('e', 'o', 'AAA010101AAA', 'E', x'00', 'valid', 'now', 'now');
             INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed, items_json, created_at, updated_at)
             VALUES ('big', 'o', 'e', 'U1', 'issued', 1, '[{}]', 'now', 'now'),
                    ('small', 'o', 'e', 'U2', 'issued', 1, '[{{\"amount\":2.0}}]', 'now', 'now');",
            items.join(",")
        ))
        .expect("seed");
        apply(&mut conn).expect("migrate");
        let row = |sql: &str| -> (i64, String) {
            conn.query_row(sql, [], |r| Ok((r.get(0)?, r.get(1)?)))
                .expect(sql)
        };
        let (count, first) = row("SELECT items_count, items_json FROM invoices WHERE id = 'big'");
        assert_eq!(count, 2_500);
        assert_eq!(first, format!("[{}]", items[..1000].join(",")));
        let (pages, last) = row(
            "SELECT COUNT(*), max(items_json) FILTER (WHERE page = 2) FROM invoice_item_pages WHERE invoice_id = 'big'",
        );
        assert_eq!(pages, 2);
        assert_eq!(last, format!("[{}]", items[2000..].join(",")));
        let (count, small) = row("SELECT items_count, items_json FROM invoices WHERE id = 'small'");
        assert_eq!((count, small.as_str()), (1, r#"[{"amount":2.0}]"#));
    }

    #[test]
    fn a_newer_database_is_refused() {
        let mut conn = Connection::open_in_memory().expect("memory db");
        conn.pragma_update(None, "user_version", VERSION + 1)
            .expect("set");
        assert!(apply(&mut conn).is_err());
    }
}
