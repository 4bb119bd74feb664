//! Each document's seal verification, in its class's own table (`seal_status`,
//! `seal_key`, `seal_awaits`; versions 26 and 27): written by the ingest with the
//! document, and by the seal verifier (`ops::seals`) for what was stored before it and
//! for the documents whose stamp waited for a SAT certificate. `seal_status` NULL: not
//! verified yet. The `seal` object itself is kept once in `seal_objects` under its
//! digest (`key`): the documents of one certificate mostly share one answer, 632 bytes
//! a document otherwise (version 27).

use super::classes::Stored;
use super::sql::params;
use super::Conn;
use crate::seal::{Seal, Verified};

/// Why a document has no answer of its own: its root is no version the SAT publishes a
/// cadena original stylesheet for.
const NOT_SEALED: &str = "the document is no CFDI nor CFDI de Retenciones the SAT seals";

/// A verification's answer as it is stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub status: String,
    /// `object`'s key in `seal_objects` (`db::content_key`).
    pub key: String,
    /// The `seal` object, compact JSON.
    pub object: String,
    /// The SAT certificate its stamp waits for.
    pub awaits: Option<String>,
}

impl Answer {
    pub fn of(verified: Option<&Verified>) -> anyhow::Result<Answer> {
        let (seal, awaits) = match verified {
            Some(v) => (v.seal.clone(), v.awaits.clone()),
            None => (Seal::unreadable(NOT_SEALED), None),
        };
        let status = serde_json::to_value(seal.status)?
            .as_str()
            .unwrap_or("unverified")
            .to_string();
        let object = serde_json::to_string(&seal)?;
        Ok(Answer {
            status,
            key: super::content_key::of(&object),
            object,
            awaits,
        })
    }
}

/// Keeps `answer`'s object in `seal_objects` unless it is there (deferred: PostgreSQL
/// sends it with the transaction's next statement). Rows are never deleted: a key
/// names one content forever, so a document's row can refer to it before or after.
pub fn keep(conn: &Conn, answer: &Answer) -> anyhow::Result<()> {
    conn.defer(
        "INSERT INTO seal_objects (key, object) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING",
        params![answer.key, answer.object],
    )
}

/// Stores the answer the ingest found for document `id` (it is being written in this
/// transaction, marked for its batch's events). An invoice's is written with its row
/// instead (`invoices::write::upsert_processed`).
pub fn put<C: Stored>(conn: &Conn, id: &str, verified: Option<&Verified>) -> anyhow::Result<()> {
    let a = Answer::of(verified)?;
    keep(conn, &a)?;
    // Deferred (PostgreSQL sends it with the transaction's next statement), and only
    // when the answer changed: a document stored again keeps its row version.
    conn.defer(
        &format!(
            "UPDATE {} SET seal_status = ?1, seal_key = ?2, seal_awaits = ?3
              WHERE id = ?4 AND (seal_status IS DISTINCT FROM ?1 OR seal_key IS DISTINCT FROM ?2
                OR seal_awaits IS DISTINCT FROM ?3)",
            C::TRACKED.source
        ),
        params![a.status, a.key, a.awaits, id],
    )?;
    Ok(())
}

/// Up to `limit` documents stored with their XML but never verified (stored before
/// version 26), by id.
pub fn unverified<C: Stored>(conn: &Conn, limit: i64) -> anyhow::Result<Vec<String>> {
    conn.all(
        &format!(
            "SELECT id FROM {} WHERE seal_status IS NULL{} ORDER BY id LIMIT ?1",
            C::TRACKED.source,
            C::WITH_XML
        ),
        params![limit],
        |r| r.get(0),
    )
}

/// The first answer of a document stored before verification began; none when
/// another writer (the ingest storing it again) answered first. No event: the document
/// had no answer to change. Whether it was stored.
pub fn first<C: Stored>(conn: &Conn, id: &str, verified: &Verified) -> anyhow::Result<bool> {
    let a = Answer::of(Some(verified))?;
    keep(conn, &a)?;
    let changed = conn.exec(
        &format!(
            "UPDATE {} SET seal_status = ?1, seal_key = ?2, seal_awaits = ?3
             WHERE id = ?4 AND seal_status IS NULL",
            C::TRACKED.source
        ),
        params![a.status, a.key, a.awaits, id],
    )?;
    Ok(changed > 0)
}

/// The SAT certificates documents' stamps wait for (up to `limit` numbers).
pub fn awaited<C: Stored>(conn: &Conn, limit: i64) -> anyhow::Result<Vec<String>> {
    conn.all(
        &format!(
            "SELECT DISTINCT seal_awaits FROM {} WHERE seal_awaits IS NOT NULL LIMIT ?1",
            C::TRACKED.source
        ),
        params![limit],
        |r| r.get(0),
    )
}

/// Up to `limit` documents whose stamp waits for the SAT certificate `number`.
pub fn awaiting<C: Stored>(conn: &Conn, number: &str, limit: i64) -> anyhow::Result<Vec<String>> {
    conn.all(
        &format!(
            "SELECT id FROM {} WHERE seal_awaits = ?1 ORDER BY id LIMIT ?2",
            C::TRACKED.source
        ),
        params![number, limit],
        |r| r.get(0),
    )
}

/// A document's answer found again once the certificate `number` its stamp waited for
/// arrived: stored, with a new `updated_at`, unless the document no longer waits for it
/// (stored again meanwhile). The caller marks it for its batch's events first. Whether
/// it was stored.
pub fn again<C: Stored>(
    conn: &Conn,
    id: &str,
    number: &str,
    verified: &Verified,
    now: &str,
) -> anyhow::Result<bool> {
    let a = Answer::of(Some(verified))?;
    keep(conn, &a)?;
    let changed = conn.exec(
        &format!(
            "UPDATE {} SET seal_status = ?1, seal_key = ?2, seal_awaits = ?3, updated_at = ?4
             WHERE id = ?5 AND seal_awaits = ?6",
            C::TRACKED.source
        ),
        params![a.status, a.key, a.awaits, now, id, number],
    )?;
    Ok(changed > 0)
}

/// A document of a period whose seal is invalid (`seal=invalid`), for the summary's
/// warning.
pub struct Invalid {
    pub class: &'static str,
    pub id: String,
    pub uuid: String,
    pub issued_at: Option<String>,
    pub issuer_tax_id: Option<String>,
    pub receiver_tax_id: Option<String>,
    /// The stored `seal` object (JSON text).
    pub seal_json: String,
}

/// The invoices and retentions of `p` (its entity, direction and dates, as the summary
/// reads them) whose seal is invalid, oldest first, invoices then retentions.
pub fn invalid_in_period(conn: &Conn, p: &super::summary::Period) -> anyhow::Result<Vec<Invalid>> {
    let mut found = Vec::new();
    for (class, table, visible) in [
        ("invoice", "invoices", " AND xml_processed = 1"),
        ("retention", "retentions", ""),
    ] {
        conn.each(
            &format!(
                "SELECT id, uuid, issued_at, issuer_tax_id, receiver_tax_id, {} FROM {table}
                 WHERE entity_id = ?1 AND org_id = ?2 AND direction = ?3{visible}
                   AND issued_at >= ?4 AND issued_at < ?5 AND seal_status = 'invalid'
                 ORDER BY issued_at, id",
                super::classes::seal_object!()
            ),
            params![p.entity_id, p.org_id, p.direction, p.from, p.before],
            |r| {
                found.push(Invalid {
                    class,
                    id: r.get(0)?,
                    uuid: r.get(1)?,
                    issued_at: r.get(2)?,
                    issuer_tax_id: r.get(3)?,
                    receiver_tax_id: r.get(4)?,
                    seal_json: r.get::<Option<String>>(5)?.unwrap_or_default(),
                });
                Ok(())
            },
        )?;
    }
    Ok(found)
}
