//! Issuers' certificates, stored once. Every CFDI carries its issuer's certificate (the
//! `Certificado` attribute, ~1.6 KB of base64 that does not compress) and all of an
//! issuer's invoices carry the same one, so it was the largest part of a compressed
//! XML. `split` takes the value out of the XML before it is compressed and `join` puts
//! it back when it is read, byte for byte; the value lives in `certificates`, keyed by
//! its SHA-256.

use crate::db::sql::params;
use crate::db::Conn;
use anyhow::Context;
use sha2::{Digest, Sha256};

/// What follows the attribute name's first letter (`C` in 3.3 and 4.0, `c` in 3.2).
const NAME_TAIL: &[u8] = b"ertificado=\"";

/// Shorter values stay in their document: a real certificate is over 1 KB, and a short
/// value is not worth a row of its own.
const MIN_LEN: usize = 256;

/// A certificate taken out of a document, to store once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Certificate {
    sha256: [u8; 32],
    content: Vec<u8>,
}

impl Certificate {
    /// What a transaction remembers its row's id by (`Conn::remember`).
    pub fn key(&self) -> String {
        let hex: String = self.sha256.iter().map(|b| format!("{b:02x}")).collect();
        format!("certificate:{hex}")
    }

    pub fn content(&self) -> &[u8] {
        &self.content
    }

    fn new(content: &[u8]) -> Certificate {
        Certificate {
            sha256: Sha256::digest(content).into(),
            content: content.to_vec(),
        }
    }
}

/// Where the value of the document's first certificate attribute starts: just past
/// `Certificado="` (or `certificado="`) preceded by whitespace, so that
/// `NoCertificado="` never matches.
fn value_start(xml: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(found) = xml[from..]
        .windows(NAME_TAIL.len())
        .position(|w| w == NAME_TAIL)
    {
        let at = from + found;
        if at >= 2 && matches!(xml[at - 1], b'C' | b'c') && xml[at - 2].is_ascii_whitespace() {
            return Some(at + NAME_TAIL.len());
        }
        from = at + 1;
    }
    None
}

/// The document without its first certificate attribute's value (the attribute stays,
/// empty), and that value; `None` when it has none worth storing apart.
///
/// Reversible: the bytes before the value are unchanged, so the first attribute `join`
/// finds is the one emptied here.
pub fn split(xml: &[u8]) -> Option<(Vec<u8>, Certificate)> {
    let start = value_start(xml)?;
    let len = xml[start..].iter().position(|&b| b == b'"')?;
    if len < MIN_LEN {
        return None;
    }
    let mut rest = Vec::with_capacity(xml.len() - len);
    rest.extend_from_slice(&xml[..start]);
    rest.extend_from_slice(&xml[start + len..]);
    Some((rest, Certificate::new(&xml[start..start + len])))
}

/// The document `split` made `rest` from, with `certificate` back in place.
pub fn join(rest: &[u8], certificate: &[u8]) -> anyhow::Result<Vec<u8>> {
    let start = value_start(rest)
        .filter(|&s| rest.get(s) == Some(&b'"'))
        .context("a stored document has no empty certificate attribute to restore")?;
    let mut xml = Vec::with_capacity(rest.len() + certificate.len());
    xml.extend_from_slice(&rest[..start]);
    xml.extend_from_slice(certificate);
    xml.extend_from_slice(&rest[start..]);
    Ok(xml)
}

/// The row id of `certificate`, stored by the first document that carries it.
pub fn store(conn: &Conn, certificate: &Certificate) -> anyhow::Result<i64> {
    let sha256: &[u8] = &certificate.sha256;
    let known: Option<i64> = conn.opt(
        "SELECT id FROM certificates WHERE sha256 = ?1",
        params![sha256],
        |r| r.get(0),
    )?;
    if let Some(id) = known {
        return Ok(id);
    }
    // Another transaction (any organization's) may be storing the same certificate:
    // its row wins, and is read once it commits.
    let inserted = conn.opt(
        "INSERT INTO certificates (sha256, content) VALUES (?1, ?2)
         ON CONFLICT (sha256) DO NOTHING RETURNING id",
        params![sha256, certificate.content],
        |r| r.get(0),
    )?;
    match inserted {
        Some(id) => Ok(id),
        None => conn.one(
            "SELECT id FROM certificates WHERE sha256 = ?1",
            params![sha256],
            |r| r.get(0),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cert(fill: u8) -> Vec<u8> {
        vec![fill; 1600]
    }

    fn xml(certificate: &[u8]) -> Vec<u8> {
        [
            &b"<cfdi:Comprobante NoCertificado=\"00001000000504465028\"\n  Certificado=\""[..],
            certificate,
            b"\" Total=\"1.00\"><tfd:TimbreFiscalDigital NoCertificadoSAT=\"1\"/></cfdi:Comprobante>",
        ]
        .concat()
    }

    #[test]
    fn the_certificate_comes_out_and_goes_back_byte_for_byte() {
        let raw = xml(&cert(b'M'));
        let (rest, certificate) = split(&raw).expect("split");
        assert_eq!(certificate.content, cert(b'M'));
        assert_eq!(rest, xml(b""));
        assert_eq!(join(&rest, &certificate.content).expect("join"), raw);
    }

    #[test]
    fn no_certificado_and_short_or_unquoted_values_stay_in_the_document() {
        // Only `NoCertificado` (no whitespace before the C), a short value, an
        // attribute in single quotes, no closing quote.
        let long = String::from_utf8(cert(b'A')).expect("ascii");
        for doc in [
            format!("<a NoCertificado=\"{long}\"/>"),
            "<a Certificado=\"MIIB\"/>".to_string(),
            format!("<a Certificado='{long}'/>"),
            format!("<a Certificado=\"{long}"),
        ] {
            assert_eq!(split(doc.as_bytes()), None, "{doc}");
        }
    }

    #[test]
    fn only_the_first_certificate_attribute_is_taken_and_3_2_spelling_counts() {
        let first = String::from_utf8(cert(b'A')).expect("ascii");
        let second = String::from_utf8(cert(b'B')).expect("ascii");
        let raw = format!("<a\tcertificado=\"{first}\"><b Certificado=\"{second}\"/></a>");
        let (rest, certificate) = split(raw.as_bytes()).expect("split");
        assert_eq!(certificate.content, cert(b'A'));
        let tail = format!("{second}\"/></a>");
        assert!(rest.ends_with(tail.as_bytes()));
        assert_eq!(
            join(&rest, &certificate.content).expect("join"),
            raw.as_bytes()
        );
    }

    #[test]
    fn a_document_emptied_earlier_is_restored_at_its_first_empty_attribute() {
        // A document that already had an empty attribute is never split (too short), so
        // the only empty attribute `join` meets first is the one `split` emptied.
        let raw = format!(
            "<a Certificado=\"\"><b Certificado=\"{}\"/></a>",
            String::from_utf8(cert(b'C')).expect("ascii")
        );
        assert_eq!(split(raw.as_bytes()), None);
        assert!(join(b"<a NoCertificado=\"\"/>", b"x").is_err());
        assert!(join(b"<a Certificado=\"x\"/>", b"x").is_err());
    }

    #[test]
    fn every_shared_sample_splits_and_joins_back_to_itself() {
        let mut split_count = 0;
        for (name, raw) in crate::samples::xml_files("cfdi-samples") {
            if let Some((rest, certificate)) = split(&raw) {
                split_count += 1;
                assert_eq!(rest.len(), raw.len() - certificate.content.len());
                assert_eq!(
                    join(&rest, &certificate.content).expect("join"),
                    raw,
                    "{name}"
                );
            }
        }
        assert!(split_count >= 20, "{split_count} samples had a certificate");
    }

    #[test]
    fn a_certificate_is_stored_once_and_found_by_its_hash() {
        let conn = crate::db::Memory::new();
        let a = Certificate::new(&cert(b'A'));
        let b = Certificate::new(&cert(b'B'));
        let first = store(&conn, &a).expect("store");
        assert_eq!(store(&conn, &a).expect("again"), first);
        assert_ne!(store(&conn, &b).expect("other"), first);
        let rows: i64 = conn
            .one("SELECT count(*) FROM certificates", params![], |r| r.get(0))
            .expect("count");
        assert_eq!(rows, 2);
    }
}
