//! The SAT's stamping certificates by number (`sat_certificates`): what verifies a
//! stamp's `SelloSAT` offline. Filled once per certificate, from the SAT's repository
//! or from files (`sat::certificates`); never changed after.

use super::sql::params;
use super::Conn;

/// Where a stored certificate came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    Repository,
    File,
}

impl Source {
    fn as_str(self) -> &'static str {
        match self {
            Source::Repository => "repository",
            Source::File => "file",
        }
    }
}

/// The DER of the certificate numbered `number`, if stored.
pub fn get(conn: &Conn, number: &str) -> anyhow::Result<Option<Vec<u8>>> {
    conn.opt(
        "SELECT der FROM sat_certificates WHERE number = ?1",
        params![number],
        |r| r.get(0),
    )
}

/// Stores a certificate; one already stored under the number stays. Whether it was new.
pub fn put(
    conn: &Conn,
    number: &str,
    der: &[u8],
    source: Source,
    now: &str,
) -> anyhow::Result<bool> {
    let added = conn.exec(
        "INSERT INTO sat_certificates (number, der, source, stored_at) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (number) DO NOTHING",
        params![number, der, source.as_str(), now],
    )?;
    Ok(added > 0)
}

/// How many are stored.
pub fn count(conn: &Conn) -> anyhow::Result<i64> {
    conn.one("SELECT count(*) FROM sat_certificates", params![], |r| {
        r.get(0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Memory;

    #[test]
    fn a_certificate_is_stored_once_and_read_back() {
        let db = Memory::new();
        let put = |der: &[u8]| {
            db.tx(|tx| {
                put(
                    tx,
                    "00001000000000000099",
                    der,
                    Source::File,
                    "2026-01-01T00:00:00Z",
                )
            })
            .expect("put")
        };
        assert!(put(b"first"));
        assert!(!put(b"second"));
        let got = db.tx(|tx| get(tx, "00001000000000000099")).expect("get");
        assert_eq!(got.as_deref(), Some(&b"first"[..]));
        assert_eq!(
            db.tx(|tx| get(tx, "00001000000000000000")).expect("get"),
            None
        );
        assert_eq!(db.tx(|tx| count(tx)).expect("count"), 1);
    }
}
