//! The SAT's list of taxpayers presumed to invoice simulated operations (Article 69-B
//! of the CFF, "EFOS"): reading the published CSV (`csv`), loading it as a version
//! (`load`, from a file or the configured address, `spool`ed to disk first). Expenses
//! backed by invoices of a `definitive` issuer are not deductible, so every invoice's
//! counterparty is screened against the list loaded last (`db::list_69b`).

pub mod csv;
pub mod refresh;
pub mod spool;

use crate::db::{self, Db};
use crate::periodic::Stopping;

use spool::Spooled;

/// The SAT's copy of the full list (python-satcfdi reads it from here); a setting, as
/// the SAT has moved it before.
pub const SAT_LIST_URL: &str =
    "http://omawww.sat.gob.mx/cifras_sat/Documents/Listado_Completo_69-B.csv";

/// The most a list may weigh (the full list is a few MB).
pub const MAX_LIST_BYTES: u64 = 64 * 1024 * 1024;

/// How many rows a load reads between two looks at whether the server is stopping.
const STOP_EVERY: u64 = 1024;

/// What a load did.
#[derive(Debug)]
pub enum Loaded {
    /// A new version, how many taxpayers' situation it changed, and how many
    /// `counterparty.69b_changed` events that made.
    New(db::list_69b::Version, u64, usize),
    /// The same file as the current version: nothing changed.
    Unchanged(db::list_69b::Version),
}

/// A load given up because the server is stopping: nothing changed.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the load was abandoned: the server is stopping")]
pub struct Abandoned;

/// Makes a spooled list the current version, with its events, in one transaction: its
/// rows go to the database as they are read, and any broken line (or a stop) rolls the
/// whole load back, the current list kept.
pub fn load(db: &Db, list: Spooled, source: &str, stopping: &Stopping) -> anyhow::Result<Loaded> {
    let now = crate::time::now();
    db.tx(|tx| {
        // One load at a time, across instances.
        tx.lock(db::Lock::List69b)?;
        if let Some(same) = db::list_69b::current(tx)?.filter(|v| v.sha256 == list.sha256) {
            return Ok(Loaded::Unchanged(same));
        }
        let mut rows = 0u64;
        let text = csv::Decoded::new(&list.file, list.utf8);
        let updated_to = csv::read(text, |entry| {
            rows += 1;
            if rows % STOP_EVERY == 0 && stopping.is_set() {
                return Err(Abandoned.into());
            }
            db::list_69b::stage(tx, &entry)
        })?;
        let (version, changed) = db::list_69b::replace(tx, updated_to, source, &list.sha256, &now)?;
        let events = crate::events::list_69b::changed(tx, &version)?;
        db::list_69b::forget_changes(tx)?;
        Ok(Loaded::New(version, changed, events))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        let path = format!(
            "{}/tests/fixtures/sat-status-fixtures/69b-listado-completo-sample.satcfdi.csv",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    /// The header of the sample, then `rows` taxpayers of our own.
    fn long(rows: usize, last: &str) -> Vec<u8> {
        let text = String::from_utf8_lossy(&sample()).into_owned();
        let header: Vec<&str> = text.lines().take(3).collect();
        let mut list = header.join("\n") + "\n";
        for i in 0..rows {
            list.push_str(&format!(
                "{i},AAA{i:06}HH1,E{i},Presunto{}\n",
                ",".repeat(16)
            ));
        }
        list.push_str(last);
        list.into_bytes()
    }

    fn load_bytes(db: &Db, bytes: &[u8], stopping: &Stopping) -> anyhow::Result<Loaded> {
        let list = spool::spool(bytes, MAX_LIST_BYTES)?;
        load(db, list, "test", stopping)
    }

    fn entries(db: &Db) -> i64 {
        let conn = db.conn().expect("conn");
        crate::db::testing::count(&conn, "efos_entries")
    }

    #[test]
    fn a_broken_or_stopped_load_leaves_the_current_list_whole() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Db::open(dir.path(), 2).expect("db");
        let going = Stopping::default();
        match load_bytes(&db, &sample(), &going).expect("loads") {
            Loaded::New(v, changed, 0) => assert_eq!((v.id, v.entries, changed), (1, 3, 3)),
            other => panic!("{other:?}"),
        }
        // Broken on its last line, after thousands of rows went to the database.
        let broken = long(5000, "5001,NOT AN RFC,X,Presunto,,,,,,,,,,,,,,,,\n");
        let err = load_bytes(&db, &broken, &going).expect_err("refused");
        assert!(format!("{err:#}").contains("line 5004"), "{err:#}");
        // A stop gives the load up, whatever it had read.
        let stopped = Stopping::default();
        stopped.set();
        let err = load_bytes(&db, &long(5000, ""), &stopped).expect_err("abandoned");
        assert!(err.downcast_ref::<Abandoned>().is_some(), "{err:#}");
        let conn = db.conn().expect("conn");
        let current = crate::db::list_69b::current(&conn).expect("current");
        assert_eq!(current.map(|v| (v.id, v.entries)), Some((1, 3)));
        assert_eq!(entries(&db), 3, "the first list, whole");
        for table in ["efos_staging", "efos_changes"] {
            assert_eq!(crate::db::testing::count(&conn, table), 0, "{table}");
        }
        // The same file again: nothing new.
        assert!(matches!(
            load_bytes(&db, &sample(), &going),
            Ok(Loaded::Unchanged(v)) if v.id == 1
        ));
    }
}
