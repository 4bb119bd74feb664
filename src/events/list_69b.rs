//! `counterparty.69b_changed`: a load of the 69-B list (by hand or on the refresh
//! schedule) changed the situation of a taxpayer some entity has invoices with. One
//! event per entity and taxpayer, written in the load's own transaction, so the new
//! list and its events commit together (`/docs/list-69b#events`).

use std::collections::BTreeMap;

use super::emit;
use crate::db::{self, list_69b::Exposed, list_69b::Version, Tx};
use crate::domain::event::Kind;
use crate::domain::list_69b::Tally;
use serde_json::{json, Value};

/// Emits the events of the load under way, which made `version` (its changes are in
/// `db::list_69b::replace`'s table); returns how many. Its memory is the tallies of the
/// entities exposed, however many taxpayers the load changed.
pub fn changed(tx: &Tx, version: &Version) -> anyhow::Result<usize> {
    let mut tallies: BTreeMap<Exposed, Tally> = BTreeMap::new();
    db::list_69b::each_invoice_changed(tx, |exposed, invoice| {
        tallies.entry(exposed).or_default().add(invoice)
    })?;
    let list = json!({
        "version": version.id, "updated_to": version.updated_to, "loaded_at": version.loaded_at,
    });
    let mut emitted = 0;
    for (exposed, tally) in &tallies {
        let (Some(change), Some(entity)) = (
            db::list_69b::change(tx, &exposed.rfc)?,
            db::entities::get(tx, &exposed.org_id, &exposed.entity_id)?,
        ) else {
            continue;
        };
        let mut object = json!({
            "entity": entity.summary(),
            "tax_id": change.rfc,
            "name": change.name,
            "previous_situation": change.from.map(|s| s.as_str()),
            "situation": change.to.map(|s| s.as_str()),
            "entry": db::list_69b::entry(tx, &change.rfc)?.map(|l| l.view()),
            "list": list,
        });
        tally.write_into(&mut object);
        emit(
            tx,
            &exposed.org_id,
            Kind::Counterparty69bChanged,
            &exposed.entity_id,
            &serde_json::value::to_raw_value::<Value>(&object)?,
            None,
        )?;
        emitted += 1;
    }
    Ok(emitted)
}
