//! SQL for `documents`: each invoice's original XML and PDF, stored compressed
//! (`codec`) and returned byte for byte. Every read of a document goes through `get`.

pub mod codec;

use codec::{Codec, Encoded};
use rusqlite::{params, Connection, OptionalExtension};

/// Stores (or replaces) an invoice's `xml` or `pdf`, encoded beforehand (`codec::encode`,
/// outside the write transaction: compressing is CPU the writer lock need not wait on).
pub fn put(conn: &Connection, invoice_id: &str, kind: &str, doc: &Encoded) -> anyhow::Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO documents (invoice_id, kind, codec, content) VALUES (?1, ?2, ?3, ?4)",
    )?
    .execute(params![invoice_id, kind, doc.codec.name(), doc.bytes])?;
    Ok(())
}

/// An invoice's stored `xml` or `pdf`, as it was received.
pub fn get(conn: &Connection, invoice_id: &str, kind: &str) -> anyhow::Result<Option<Vec<u8>>> {
    let stored: Option<(String, Vec<u8>)> = conn
        .prepare_cached("SELECT codec, content FROM documents WHERE invoice_id = ?1 AND kind = ?2")?
        .query_row(params![invoice_id, kind], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    let Some((codec, content)) = stored else {
        return Ok(None);
    };
    let raw = Codec::from_name(&codec)
        .and_then(|codec| codec::decode(codec, content))
        .map_err(|e| e.context(format!("invoice {invoice_id}'s {kind}")))?;
    Ok(Some(raw))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().expect("memory db");
        crate::db::migrate::apply(&mut conn).expect("schema");
        // Documents without their invoices: only this table is under test.
        conn.pragma_update(None, "foreign_keys", false)
            .expect("pragma");
        conn
    }

    #[test]
    fn documents_come_back_as_they_were_put_whatever_their_codec() {
        let conn = db();
        let xml = b"<cfdi:Comprobante Total=\"1.00\"/>".repeat(50);
        let encoded = codec::encode_xml(&xml);
        assert_eq!(encoded.codec, Codec::ZstdCfdi1);
        put(&conn, "i1", "xml", &encoded).expect("put");
        let plain = codec::encode(&xml);
        assert_eq!(plain.codec, Codec::Zstd);
        put(&conn, "i3", "xml", &plain).expect("put");
        assert_eq!(get(&conn, "i3", "xml").expect("get").as_ref(), Some(&xml));
        let tiny = codec::encode(b"%PDF");
        assert_eq!(tiny.codec, Codec::Identity);
        put(&conn, "i1", "pdf", &tiny).expect("put");
        assert_eq!(get(&conn, "i1", "xml").expect("get"), Some(xml));
        assert_eq!(
            get(&conn, "i1", "pdf").expect("get"),
            Some(b"%PDF".to_vec())
        );
        assert_eq!(get(&conn, "i2", "xml").expect("get"), None);
    }

    #[test]
    fn a_row_written_before_codecs_reads_as_identity() {
        let conn = db();
        conn.execute(
            "INSERT INTO documents (invoice_id, kind, content) VALUES ('i1', 'xml', x'3C613E')",
            [],
        )
        .expect("old row");
        assert_eq!(get(&conn, "i1", "xml").expect("get"), Some(b"<a>".to_vec()));
    }

    #[test]
    fn damaged_rows_and_unknown_codecs_are_errors_naming_the_invoice() {
        let conn = db();
        conn.execute_batch(
            "INSERT INTO documents (invoice_id, kind, codec, content) VALUES
                 ('bad', 'xml', 'zstd', x'28B52FFD00'),
                 ('new', 'xml', 'zstd-dict9', x'00');",
        )
        .expect("rows");
        for id in ["bad", "new"] {
            let err = get(&conn, id, "xml").expect_err("refused");
            assert!(
                format!("{err:#}").contains(&format!("invoice {id}'s xml")),
                "{err:#}"
            );
        }
    }
}
