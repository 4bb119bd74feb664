//! SQL for `documents` and `retention_documents`: each invoice's (each retention's)
//! original XML and PDF, stored compressed (`db::codec`) with the issuer's certificate
//! kept apart (`certificate`), and returned byte for byte. Every read of a document goes
//! through `get_of`. The two document classes keep their files in two tables of the
//! same shape, each referencing its own rows (so deleting one cascades to its files),
//! and share the certificates and the codecs.

pub mod certificate;

use super::classes::{Files, Stored};
use super::codec::{self, Codec, Encoded};
use super::sql::params;
use super::Conn;
use crate::domain::class::InvoiceClass;
use anyhow::Context;
use certificate::Certificate;

/// A document as it will be stored: compressed, its certificate (if any) taken out.
/// Made by `xml` or `pdf` outside the write transaction: compressing is CPU the writer
/// lock need not wait on.
#[derive(Debug)]
pub struct ToStore {
    content: Encoded,
    certificate: Option<Certificate>,
}

impl ToStore {
    /// The bytes of its own row (`bench/codec.rs` adds each distinct certificate once).
    pub fn content(&self) -> &Encoded {
        &self.content
    }

    /// The certificate kept apart from it, if any.
    pub fn certificate(&self) -> Option<&[u8]> {
        self.certificate.as_ref().map(Certificate::content)
    }
}

/// A CFDI's XML, ready to store: without its certificate, compressed with the CFDI
/// dictionary.
pub fn xml(raw: &[u8]) -> ToStore {
    match certificate::split(raw) {
        Some((rest, certificate)) => ToStore {
            content: codec::encode_xml(&rest),
            certificate: Some(certificate),
        },
        None => ToStore {
            content: codec::encode_xml(raw),
            certificate: None,
        },
    }
}

/// A PDF, ready to store: compressed with its invoice's `xml` as the dictionary (a
/// printed CFDI repeats the XML's seals, UUID, names and amounts), or as it is when it
/// does not shrink (the SAT's PDFs are usually compressed already).
pub fn pdf(raw: &[u8], xml: &[u8]) -> ToStore {
    ToStore {
        content: codec::encode_with(raw, xml),
        certificate: None,
    }
}

/// Stores (or replaces) an invoice's XML and, when it came with one, its PDF. A PDF
/// stored before and compressed against a different XML is compressed again against
/// the new one, so it stays readable.
pub fn put_invoice(
    conn: &Conn,
    invoice_id: &str,
    xml: &ToStore,
    pdf: Option<&ToStore>,
) -> anyhow::Result<()> {
    put_files(conn, InvoiceClass::FILES, invoice_id, xml, pdf)
}

/// `put_invoice` for an invoice that has no files yet (new, or metadata only until
/// now): nothing stored to reconcile with, so no read first.
pub fn put_first_invoice(
    conn: &Conn,
    invoice_id: &str,
    xml: &ToStore,
    pdf: Option<&ToStore>,
) -> anyhow::Result<()> {
    put(conn, InvoiceClass::FILES, invoice_id, "xml", xml)?;
    if let Some(pdf) = pdf {
        put(conn, InvoiceClass::FILES, invoice_id, "pdf", pdf)?;
    }
    Ok(())
}

/// `put_invoice` for a document of either class.
pub fn put_files(
    conn: &Conn,
    files: Files,
    id: &str,
    xml: &ToStore,
    pdf: Option<&ToStore>,
) -> anyhow::Result<()> {
    let stale_pdf = match pdf {
        Some(_) => None,
        None => pdf_bound_to_another_xml(conn, files, id, xml)?,
    };
    put(conn, files, id, "xml", xml)?;
    if let Some(pdf) = pdf {
        put(conn, files, id, "pdf", pdf)?;
    }
    if let Some(raw) = stale_pdf {
        let new_xml = get_of(conn, files, id, "xml")?.context("the XML just stored")?;
        put(conn, files, id, "pdf", &self::pdf(&raw, &new_xml))?;
    }
    Ok(())
}

/// The stored PDF, when it was compressed against the stored XML and `xml` replaces
/// that XML with other bytes.
fn pdf_bound_to_another_xml(
    conn: &Conn,
    files: Files,
    id: &str,
    xml: &ToStore,
) -> anyhow::Result<Option<Vec<u8>>> {
    let (table, key) = (files.table, files.key);
    let bound: bool = conn.one(
        &format!(
            "SELECT EXISTS (SELECT 1 FROM {table}
               WHERE {key} = ?1 AND kind = 'pdf' AND codec = 'zstd-xml')"
        ),
        params![id],
        |r| r.get(0),
    )?;
    if !bound || holds_xml_of(conn, files, id, xml)? {
        return Ok(None);
    }
    get_of(conn, files, id, "pdf")
}

/// Whether the invoice's stored XML is `xml`, byte for byte, without decoding it:
/// compression is deterministic, so the same content and certificate are the same XML.
/// (`false` can still be the same bytes stored by another codec; callers that care
/// decode.)
pub fn holds_xml(conn: &Conn, invoice_id: &str, xml: &ToStore) -> anyhow::Result<bool> {
    holds_xml_of(conn, InvoiceClass::FILES, invoice_id, xml)
}

/// `holds_xml` for a document of either class.
pub fn holds_xml_of(conn: &Conn, files: Files, id: &str, xml: &ToStore) -> anyhow::Result<bool> {
    type Stored = (String, Vec<u8>, Option<Vec<u8>>);
    let (table, key) = (files.table, files.key);
    let stored: Option<Stored> = conn.opt(
        &format!(
            "SELECT x.codec, x.content, c.content FROM {table} x
             LEFT JOIN certificates c ON c.id = x.certificate_id
             WHERE x.{key} = ?1 AND x.kind = 'xml'"
        ),
        params![id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    Ok(matches!(stored, Some((codec, content, certificate))
        if codec == xml.content.codec.name()
            && content == xml.content.bytes
            && certificate.as_deref() == xml.certificate()))
}

/// Stores (or replaces) one document.
fn put(conn: &Conn, files: Files, id: &str, kind: &str, doc: &ToStore) -> anyhow::Result<()> {
    let certificate_id = match &doc.certificate {
        // An issuer's documents come together: its certificate is looked up once.
        Some(c) => Some(conn.remember(&c.key(), || certificate::store(conn, c))?),
        None => None,
    };
    let (table, key) = (files.table, files.key);
    conn.defer(
        &format!(
            "INSERT INTO {table} ({key}, kind, codec, content, certificate_id)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT ({key}, kind) DO UPDATE SET codec = excluded.codec,
                content = excluded.content, certificate_id = excluded.certificate_id"
        ),
        params![
            id,
            kind,
            doc.content.codec.name(),
            doc.content.bytes,
            certificate_id
        ],
    )?;
    Ok(())
}

/// An invoice's stored `xml` or `pdf`, as it was received.
pub fn get(conn: &Conn, invoice_id: &str, kind: &str) -> anyhow::Result<Option<Vec<u8>>> {
    get_of(conn, InvoiceClass::FILES, invoice_id, kind)
}

/// A document's stored `xml` or `pdf`, as it was received, for either class.
pub fn get_of(conn: &Conn, files: Files, id: &str, kind: &str) -> anyhow::Result<Option<Vec<u8>>> {
    type Row = (String, Vec<u8>, Option<i64>, Option<Vec<u8>>);
    let (table, key) = (files.table, files.key);
    let stored: Option<Row> = conn.opt(
        &format!(
            "SELECT d.codec, d.content, d.certificate_id, c.content
             FROM {table} d LEFT JOIN certificates c ON c.id = d.certificate_id
             WHERE d.{key} = ?1 AND d.kind = ?2"
        ),
        params![id, kind],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
    )?;
    let Some((codec, content, certificate_id, certificate)) = stored else {
        return Ok(None);
    };
    let raw = Codec::from_name(&codec)
        .and_then(|codec| match codec {
            Codec::ZstdXml => {
                let xml = get_of(conn, files, id, "xml")?.context("its XML is missing")?;
                codec::decode_with(content, &xml)
            }
            _ => codec::decode(codec, content),
        })
        .and_then(|rest| match (certificate_id, certificate) {
            (None, _) => Ok(rest),
            (Some(_), Some(c)) => certificate::join(&rest, &c),
            (Some(id), None) => anyhow::bail!("its certificate {id} is missing"),
        })
        .map_err(|e| e.context(format!("{} {id}'s {kind}", files.name)))?;
    Ok(Some(raw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Memory;

    fn db() -> Memory {
        let conn = Memory::new();
        // Documents without their invoices: only this table is under test.
        conn.batch("PRAGMA foreign_keys = OFF").expect("pragma");
        conn
    }

    #[test]
    fn documents_come_back_as_they_were_put_whatever_their_codec() {
        let conn = db();
        let raw = b"<cfdi:Comprobante Total=\"1.00\"/>".repeat(50);
        let encoded = xml(&raw);
        assert_eq!(encoded.content.codec, Codec::ZstdCfdi1);
        let printed = [&b"%PDF-1.4 BT (Total 1.00) Tj ET"[..], &raw].concat();
        let with_xml = pdf(&printed, &raw);
        assert_eq!(with_xml.content.codec, Codec::ZstdXml);
        assert!(
            with_xml.content.bytes.len() < 60,
            "{}",
            with_xml.content.bytes.len()
        );
        put_invoice(&conn, "i1", &encoded, Some(&with_xml)).expect("put");
        let tiny = pdf(b"%PDF", &raw);
        assert_eq!(tiny.content.codec, Codec::Identity);
        put_invoice(&conn, "i2", &encoded, Some(&tiny)).expect("put");
        assert_eq!(get(&conn, "i1", "xml").expect("get"), Some(raw.clone()));
        assert_eq!(get(&conn, "i1", "pdf").expect("get"), Some(printed));
        assert_eq!(
            get(&conn, "i2", "pdf").expect("get"),
            Some(b"%PDF".to_vec())
        );
        assert_eq!(get(&conn, "i3", "xml").expect("get"), None);
        // A PDF whose XML is gone cannot be read: an error, not other bytes.
        conn.exec(
            "DELETE FROM documents WHERE invoice_id = 'i1' AND kind = 'xml'",
            params![],
        )
        .expect("lose the xml");
        let err = get(&conn, "i1", "pdf").expect_err("refused");
        assert!(format!("{err:#}").contains("invoice i1's pdf"), "{err:#}");
    }

    #[test]
    fn a_pdf_stays_readable_when_its_xml_is_replaced_without_it() {
        let conn = db();
        let first = b"<cfdi:Comprobante Total=\"1.00\" Sello=\"AAAA\"/>".repeat(20);
        let printed = [&b"%PDF-1.4 "[..], &first].concat();
        put_invoice(&conn, "i", &xml(&first), Some(&pdf(&printed, &first))).expect("put");
        let pdf_bytes = || -> Vec<u8> {
            conn.one(
                "SELECT content FROM documents WHERE invoice_id = 'i' AND kind = 'pdf'",
                params![],
                |r| r.get(0),
            )
            .expect("pdf row")
        };
        let before = pdf_bytes();
        // The same XML again leaves the PDF's row alone.
        put_invoice(&conn, "i", &xml(&first), None).expect("same xml");
        assert_eq!(pdf_bytes(), before);
        // Other bytes (the same invoice written out again, say) re-encode it.
        let second = [&first[..], b"\n"].concat();
        put_invoice(&conn, "i", &xml(&second), None).expect("new xml");
        assert_ne!(pdf_bytes(), before);
        assert_eq!(get(&conn, "i", "xml").expect("get"), Some(second));
        assert_eq!(get(&conn, "i", "pdf").expect("get"), Some(printed));

        // The same bytes around another certificate are another XML too.
        let signed = |c: &str| format!("<a Certificado=\"{}\"/>", c.repeat(400)).into_bytes();
        let printed = [&b"%PDF-1.4 "[..], &signed("MIIA")].concat();
        put_invoice(
            &conn,
            "j",
            &xml(&signed("MIIA")),
            Some(&pdf(&printed, &signed("MIIA"))),
        )
        .expect("put");
        put_invoice(&conn, "j", &xml(&signed("MIIB")), None).expect("other certificate");
        assert_eq!(get(&conn, "j", "pdf").expect("get"), Some(printed));
    }

    #[test]
    fn issuers_certificates_are_stored_once_and_put_back_on_read() {
        let conn = db();
        let cfdi = |issuer: &str, total: u32| {
            let certificate = issuer.repeat(1600 / issuer.len());
            format!("<cfdi:Comprobante NoCertificado=\"1\" Certificado=\"{certificate}\" Total=\"{total}\"/>")
                .into_bytes()
        };
        let docs = [cfdi("MIIA", 1), cfdi("MIIA", 2), cfdi("MIIB", 3)];
        for (i, raw) in docs.iter().enumerate() {
            put_invoice(&conn, &format!("i{i}"), &xml(raw), None).expect("put");
        }
        let certificates: i64 = conn
            .one("SELECT count(*) FROM certificates", params![], |r| r.get(0))
            .expect("count");
        assert_eq!(certificates, 2);
        for (i, raw) in docs.iter().enumerate() {
            assert_eq!(
                get(&conn, &format!("i{i}"), "xml").expect("get").as_ref(),
                Some(raw)
            );
        }
        conn.exec(
            "DELETE FROM certificates WHERE content LIKE 'MIIB%'",
            params![],
        )
        .expect("lose one");
        let err = get(&conn, "i2", "xml").expect_err("refused");
        assert!(format!("{err:#}").contains("invoice i2's xml"), "{err:#}");
    }

    #[test]
    fn a_row_written_before_codecs_reads_as_identity() {
        let conn = db();
        conn.exec(
            "INSERT INTO documents (invoice_id, kind, content) VALUES ('i1', 'xml', x'3C613E')",
            params![],
        )
        .expect("old row");
        assert_eq!(get(&conn, "i1", "xml").expect("get"), Some(b"<a>".to_vec()));
    }

    #[test]
    fn damaged_rows_and_unknown_codecs_are_errors_naming_the_invoice() {
        let conn = db();
        conn.batch(
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
