//! The SAT's list of taxpayers presumed to invoice simulated operations (Article 69-B
//! of the CFF, "EFOS"): reading the published CSV (`csv`), loading it as a version
//! (`load`, from a file or the configured address). Expenses backed by invoices of a
//! `definitive` issuer are not deductible, so every invoice's counterparty is screened
//! against the list loaded last (`db::list_69b`).

pub mod csv;
pub mod refresh;

use sha2::{Digest, Sha256};

use crate::db::{self, Db};

/// The SAT's copy of the full list (python-satcfdi reads it from here); a setting, as
/// the SAT has moved it before.
pub const SAT_LIST_URL: &str =
    "http://omawww.sat.gob.mx/cifras_sat/Documents/Listado_Completo_69-B.csv";

/// The most a list may weigh (the full list is a few MB).
pub const MAX_LIST_BYTES: u64 = 64 * 1024 * 1024;

/// What a load did.
#[derive(Debug)]
pub enum Loaded {
    /// A new version, the taxpayers whose situation it changed, and how many
    /// `counterparty.69b_changed` events that made.
    New(db::list_69b::Version, Vec<db::list_69b::Changed>, usize),
    /// The same file as the current version: nothing changed.
    Unchanged(db::list_69b::Version),
}

/// Parses `bytes` (refused whole on any broken line, the current list kept) and makes
/// it the current version, with its events in the same transaction.
pub fn load(db: &Db, bytes: &[u8], source: &str) -> anyhow::Result<Loaded> {
    let list = csv::parse(bytes)?;
    let sha = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<String>();
    let now = crate::time::now();
    db.tx(
        |tx| match db::list_69b::load(tx, &list, source, &sha, &now)? {
            Some((version, changed)) => {
                let events = crate::events::list_69b::changed(tx, &version, &changed)?;
                Ok(Loaded::New(version, changed, events))
            }
            None => Ok(Loaded::Unchanged(
                db::list_69b::current(tx)?.ok_or_else(|| anyhow::anyhow!("no current list"))?,
            )),
        },
    )
}
