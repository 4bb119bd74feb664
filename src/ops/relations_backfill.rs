//! The relations (CfdiRelacionados) of invoices stored before the service kept them:
//! read again from each stored XML, a batch at a time on a thread of its own, once per
//! database (`settings` keeps how far it got, so a restart resumes and a restored older
//! backup is done again). Invoices stored since are written with their relations.

use std::time::Duration;

use crate::cfdi::Cfdi;
use crate::db::{self, invoices::relations, Db};
use crate::periodic::Periodic;

/// How far the backfill got: the last invoice id done, or `DONE`.
const SETTING: &str = "invoice_relations_backfill";
const DONE: &str = "done";
const BATCH: i64 = 200;
/// Once done, the thread only looks again this rarely (and does nothing).
const IDLE: Duration = Duration::from_secs(24 * 3600);

pub fn start(db: Db) -> anyhow::Result<Periodic> {
    Periodic::spawn("relations-backfill", Duration::ZERO, move || {
        match batch(&db) {
            Ok(true) => Duration::ZERO,
            Ok(false) => IDLE,
            Err(e) => {
                log::error!("invoice relations backfill: {e:#}");
                Duration::from_secs(60)
            }
        }
    })
}

/// One batch; false when there is nothing left.
fn batch(db: &Db) -> anyhow::Result<bool> {
    let conn = db.conn()?;
    let after = db::settings::get(&conn, SETTING)?.unwrap_or_default();
    if after == DONE {
        return Ok(false);
    }
    let invoices = relations::processed_after(&conn, &after, BATCH)?;
    let Some((last, _)) = invoices.last().cloned() else {
        db.tx(|tx| db::settings::set(tx, SETTING, DONE))?;
        log::info!("invoice relations backfill: done");
        return Ok(false);
    };
    let mut parsed = Vec::with_capacity(invoices.len());
    for (id, entity_id) in invoices {
        let Some(xml) = db::documents::get(&conn, &id, "xml")? else {
            continue;
        };
        match Cfdi::parse(&xml) {
            Ok(cfdi) => parsed.push((id, entity_id, cfdi.issued_at, cfdi.related)),
            Err(e) => log::warn!("invoice relations backfill: invoice {id}: {e}"),
        }
    }
    drop(conn);
    db.tx(|tx| {
        for (id, entity_id, issued_at, related) in &parsed {
            relations::store(tx, id, entity_id, issued_at, related, false)?;
        }
        db::settings::set(tx, SETTING, &last)
    })?;
    Ok(true)
}
