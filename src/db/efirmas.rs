//! SQL for `efirmas`: at most one e.firma per entity. Reads go through the entity
//! (`db::entities` joins the summary), so every query here is reached only after the
//! entity's organization was checked.

use super::sql::Row;
use crate::domain::efirma::EfirmaCertificate;
use crate::domain::efirma::EfirmaStatus;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::{json, Value};

/// What the API shows of an e.firma: the certificate's facts and the checked status.
#[derive(Debug, Clone, PartialEq)]
pub struct EfirmaSummary {
    pub certificate: EfirmaCertificate,
    pub status: EfirmaStatus,
}

impl EfirmaSummary {
    /// `status` reads `expired` once `valid_to` has passed, whatever the last check said.
    pub fn view(&self) -> Value {
        let mut view = serde_json::to_value(&self.certificate).unwrap_or_else(|_| json!({}));
        view["status"] = json!(self.current_status().as_str());
        view
    }

    /// The recorded status, or `Expired` once `valid_to` has passed.
    pub fn current_status(&self) -> EfirmaStatus {
        let expired =
            crate::time::parse(&self.certificate.valid_to).is_none_or(|to| chrono::Utc::now() > to);
        if expired {
            EfirmaStatus::Expired
        } else {
            self.status
        }
    }

    /// Usable for an extraction: checked by the service and in force.
    pub fn usable(&self) -> bool {
        self.current_status() == EfirmaStatus::Valid
    }
}

/// The columns `db::entities` selects (after its own) to embed the summary.
pub const SUMMARY_COLUMNS: &str = "f.serial_number, f.rfc, f.holder_name, f.issuer,
    f.valid_from, f.valid_to, f.status";

/// Reads the summary from `SUMMARY_COLUMNS` starting at column `at` (a LEFT JOIN: all
/// NULL when the entity has none).
pub fn summary_from_row(r: &Row, at: usize) -> anyhow::Result<Option<EfirmaSummary>> {
    let Some(serial_number) = r.get::<Option<String>>(at)? else {
        return Ok(None);
    };
    let status: String = r.get(at + 6)?;
    Ok(Some(EfirmaSummary {
        certificate: EfirmaCertificate {
            serial_number,
            rfc: r.get(at + 1)?,
            holder_name: r.get(at + 2)?,
            issuer: r.get(at + 3)?,
            valid_from: r.get(at + 4)?,
            valid_to: r.get(at + 5)?,
        },
        status: EfirmaStatus::parse(&status).unwrap_or(EfirmaStatus::Pending),
    }))
}

/// The stored files, still sealed.
#[derive(Clone)]
pub struct SealedEfirma {
    pub certificate: Vec<u8>,
    pub key_ciphertext: Vec<u8>,
    pub password_ciphertext: Vec<u8>,
}

impl std::fmt::Debug for SealedEfirma {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealedEfirma(<redacted>)")
    }
}

/// Stores (or replaces) the entity's e.firma as `pending`.
pub fn upsert(
    conn: &Connection,
    entity_id: &str,
    sealed: &SealedEfirma,
    certificate: &EfirmaCertificate,
) -> anyhow::Result<()> {
    let now = crate::time::now();
    conn.execute(
        "INSERT INTO efirmas (entity_id, certificate, key_ciphertext, password_ciphertext,
            serial_number, rfc, holder_name, issuer, valid_from, valid_to, status, created_at, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 'pending', ?11, ?11)
         ON CONFLICT (entity_id) DO UPDATE SET certificate = excluded.certificate,
            key_ciphertext = excluded.key_ciphertext, password_ciphertext = excluded.password_ciphertext,
            serial_number = excluded.serial_number, rfc = excluded.rfc,
            holder_name = excluded.holder_name, issuer = excluded.issuer,
            valid_from = excluded.valid_from, valid_to = excluded.valid_to,
            status = 'pending', updated_at = excluded.updated_at",
        params![
            entity_id,
            sealed.certificate,
            sealed.key_ciphertext,
            sealed.password_ciphertext,
            certificate.serial_number,
            certificate.rfc,
            certificate.holder_name,
            certificate.issuer,
            certificate.valid_from,
            certificate.valid_to,
            now
        ],
    )?;
    Ok(())
}

/// The sealed files of an entity's e.firma (for workers, which act on ids they queued).
pub fn sealed(conn: &Connection, entity_id: &str) -> anyhow::Result<Option<SealedEfirma>> {
    Ok(conn
        .query_row(
            "SELECT certificate, key_ciphertext, password_ciphertext FROM efirmas WHERE entity_id = ?1",
            [entity_id],
            |r| {
                Ok(SealedEfirma {
                    certificate: r.get(0)?,
                    key_ciphertext: r.get(1)?,
                    password_ciphertext: r.get(2)?,
                })
            },
        )
        .optional()?)
}

/// Records the background check's verdict, unless the files changed meanwhile (then the
/// check queued by that change decides). True when it changed the status.
pub fn set_status(
    conn: &Connection,
    entity_id: &str,
    checked: &SealedEfirma,
    status: EfirmaStatus,
) -> anyhow::Result<bool> {
    Ok(conn.execute(
        "UPDATE efirmas SET status = ?3, updated_at = ?4
         WHERE entity_id = ?1 AND key_ciphertext = ?2 AND status <> ?3",
        params![
            entity_id,
            checked.key_ciphertext,
            status.as_str(),
            crate::time::now()
        ],
    )? == 1)
}

pub fn delete(conn: &Connection, entity_id: &str) -> anyhow::Result<bool> {
    Ok(conn.execute("DELETE FROM efirmas WHERE entity_id = ?1", [entity_id])? == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(valid_to: &str, status: EfirmaStatus) -> EfirmaSummary {
        EfirmaSummary {
            certificate: EfirmaCertificate {
                serial_number: "30001000000500003415".into(),
                rfc: "EKU9003173C9".into(),
                holder_name: "H".into(),
                issuer: "I".into(),
                valid_from: "2020-01-01T00:00:00.000000Z".into(),
                valid_to: valid_to.into(),
            },
            status,
        }
    }

    #[test]
    fn a_lapsed_certificate_reads_expired_whatever_was_checked() {
        let lapsed = summary("2021-01-01T00:00:00.000000Z", EfirmaStatus::Valid);
        assert_eq!(lapsed.current_status(), EfirmaStatus::Expired);
        assert!(!lapsed.usable());
        assert_eq!(lapsed.view()["status"], "expired");
        let in_force = summary("2100-01-01T00:00:00.000000Z", EfirmaStatus::Valid);
        assert!(in_force.usable());
        assert_eq!(in_force.view()["serial_number"], "30001000000500003415");
        assert!(!summary("2100-01-01T00:00:00.000000Z", EfirmaStatus::Pending).usable());
    }
}
