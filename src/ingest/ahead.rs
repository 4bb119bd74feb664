//! What a batch of documents finds stored, read ahead: one statement per kind (the
//! invoices, the retentions and the payment entries under the batch's UUIDs) instead
//! of three per document. On PostgreSQL each read is a round trip that also waits for
//! the writes pipelined before it (`db::postgres::connection`): these reads were most
//! of a stored batch's round trips.

use crate::db::{self, invoices::write, invoices::write::Known, Conn};
use crate::domain::payments::Entry;
use std::collections::{HashMap, HashSet};

/// A batch's reads, made ahead (`read`), or none (`none`: each is made when asked). A
/// UUID the batch wrote since (a document stored under it, payment entries naming it:
/// `touch`) is read again when asked, so a batch naming a UUID twice, or holding an
/// invoice and the complement that pays it, sees its own writes.
#[derive(Debug, Default)]
pub struct Ahead {
    /// The UUIDs read ahead and not written since.
    read: HashSet<String>,
    invoices: HashMap<String, Known>,
    retentions: HashSet<String>,
    payments: HashMap<String, Vec<(String, Entry)>>,
    /// The `seal` objects the batch kept (`db::seals::keep`), by key.
    seals: HashSet<String>,
}

impl Ahead {
    pub fn none() -> Ahead {
        Ahead::default()
    }

    /// What the entity holds under `uuids` (as the documents write them).
    pub fn read(
        conn: &Conn,
        entity_id: &str,
        uuids: impl IntoIterator<Item = String>,
    ) -> anyhow::Result<Ahead> {
        let read: HashSet<String> = uuids.into_iter().collect();
        if read.is_empty() {
            return Ok(Ahead::none());
        }
        let list: Vec<String> = read.iter().cloned().collect();
        Ok(Ahead {
            invoices: write::known_all(conn, entity_id, &list)?,
            retentions: db::retentions::held_of(conn, entity_id, &list)?,
            payments: db::payment_entries::payments_of_all(conn, entity_id, &list)?,
            read,
            seals: HashSet::new(),
        })
    }

    /// The batch wrote something under `uuid`: what was read ahead of it is stale.
    pub fn touch(&mut self, uuid: &str) {
        self.read.remove(uuid);
    }

    /// Whether the batch has yet to keep the `seal` object `key` (it shares one
    /// transaction): the documents of one certificate mostly share one.
    pub fn first_seal(&mut self, key: &str) -> bool {
        self.seals.insert(key.to_string())
    }

    /// The entity's invoice row under `uuid` (a listing's entry or a document).
    pub fn invoice(
        &self,
        conn: &Conn,
        entity_id: &str,
        uuid: &str,
    ) -> anyhow::Result<Option<Known>> {
        if self.read.contains(uuid) {
            return Ok(self.invoices.get(uuid).cloned());
        }
        write::known(conn, entity_id, uuid)
    }

    /// Whether the entity holds a retention under `uuid`.
    pub fn holds_retention(
        &self,
        conn: &Conn,
        entity_id: &str,
        uuid: &str,
    ) -> anyhow::Result<bool> {
        if self.read.contains(uuid) {
            return Ok(self.retentions.contains(uuid));
        }
        Ok(db::retentions::find(conn, entity_id, uuid)?.is_some())
    }

    /// The stored payment entries naming `uuid` (`db::payment_entries::payments_of`).
    pub fn payments_of(
        &self,
        conn: &Conn,
        entity_id: &str,
        uuid: &str,
    ) -> anyhow::Result<Vec<(String, Entry)>> {
        if self.read.contains(uuid) {
            return Ok(self.payments.get(uuid).cloned().unwrap_or_default());
        }
        db::payment_entries::payments_of(conn, entity_id, uuid)
    }
}
