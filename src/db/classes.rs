//! What every document class shares in storage, written once: a list page's row and
//! its keyset order, the table of its files, the marks its batch events are made from
//! (`changes`), and the interface a class's own module implements (`Stored`). A class
//! plugs in with its table module (`invoices/`, `retentions.rs`) implementing `Stored`
//! for its marker type (`domain::class`).

use super::sql::Query;
use super::Conn;
use crate::domain::class::DocumentClass;
use crate::domain::event::Kind;
use crate::domain::seal::SealFilter;
use crate::domain::search::Search;
use crate::domain::totals::Totals;

/// One document of a list page: its sort keys and its view as JSON text.
pub struct ListRow {
    pub id: String,
    pub issued_at: String,
    pub updated_at: String,
    pub view: String,
}

impl ListRow {
    /// The timestamp half of the row's keyset key under `order` (the other half is `id`).
    pub fn sort_at(&self, order: Order) -> &str {
        match order {
            Order::IssuedDesc => &self.issued_at,
            Order::UpdatedAsc => &self.updated_at,
        }
    }
}

/// How a list is ordered; both are keyset-paginated on (timestamp, id).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// Newest `issued_at` first (the default).
    #[default]
    IssuedDesc,
    /// Oldest `updated_at` first: a change that lands while a client pages moves the
    /// document after the client's cursor, so a sync never misses it.
    UpdatedAsc,
}

impl Order {
    /// The keyset condition after the cursor (before its two parameters) and the
    /// ORDER BY (before its LIMIT's parameter), which each class's indexes serve.
    pub fn sql(self) -> (&'static str, &'static str) {
        match self {
            Order::IssuedDesc => (
                " AND (issued_at, id) < ",
                " ORDER BY issued_at DESC, id DESC LIMIT ",
            ),
            Order::UpdatedAsc => (
                " AND (updated_at, id) > ",
                " ORDER BY updated_at, id LIMIT ",
            ),
        }
    }
}

/// A search's condition on `columns`: a whole UUID by its index, anything else as text
/// any of them contains, ignoring case (SQLite's `LIKE` folds ASCII letters;
/// PostgreSQL's `ILIKE` all of them).
pub fn search<'a>(conn: &Conn, q: &mut Query<'a>, search: &'a Search, columns: &[&str]) {
    match search {
        Search::Uuid(uuid) => {
            // A retention keeps its UUID as its XML writes it: either case.
            let p = q.placeholder(uuid);
            q.sql.push_str(&format!(" AND uuid IN ({p}, lower({p}))"));
        }
        Search::Contains(pattern) => {
            let like = conn.pick("LIKE", "ILIKE");
            let p = q.placeholder(pattern);
            let any: Vec<String> = columns
                .iter()
                .map(|c| format!("{c} {like} {p} ESCAPE '\\'"))
                .collect();
            q.sql.push_str(&format!(" AND ({})", any.join(" OR ")));
        }
    }
}

/// The stored `seal` object (`db::seals`) of the row a statement reads (its
/// `seal_key`), as text; a macro so that statements written as literals can splice it.
macro_rules! seal_object {
    () => {
        "(SELECT so.object FROM seal_objects so WHERE so.key = seal_key)"
    };
}
pub(crate) use seal_object;

/// The lists' `seal` filter as a condition over a class's table (`db::seals`' columns).
pub fn seal(filter: SealFilter) -> &'static str {
    match filter {
        SealFilter::Valid => " AND seal_status = 'valid'",
        SealFilter::Invalid => " AND seal_status = 'invalid'",
        SealFilter::Unverified => " AND (seal_status = 'unverified' OR seal_status IS NULL)",
    }
}

/// Where a class's files (its XML, a PDF) are kept: a table of the shape of
/// `documents`, with the same codecs and certificates (`db::documents`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Files {
    pub table: &'static str,
    /// The column naming the document a file belongs to.
    pub key: &'static str,
    /// How errors name a document: "invoice i1's xml".
    pub name: &'static str,
}

/// A class's change marks (`changes`): the table, its key column, the class's own
/// table, and the snapshot its `.updated` event compares (JSON text; NULL while the
/// document is not visible, which counts as not existing).
#[derive(Debug, Clone, Copy)]
pub struct Tracked {
    pub table: &'static str,
    pub key: &'static str,
    pub source: &'static str,
    pub snapshot: &'static str,
}

/// A document class as stored: what its own module provides to the shared list, read,
/// files, change marks and events.
pub trait Stored: Send + Sync + 'static {
    const CLASS: DocumentClass;
    /// Its list's validated filters (with the order, which the list and the exports
    /// share with the filters).
    type Filter: Send + Sync + 'static;
    const FILES: Files;
    const TRACKED: Tracked;
    /// Its events: made by a batch, changed by a batch.
    const CREATED: Kind;
    const UPDATED: Kind;
    /// Snapshot fields that are amounts (decimal text): compared as numbers, reported
    /// as exact JSON numbers.
    const AMOUNTS: &'static [&'static str] = &[];
    /// The condition (`AND ...`, or nothing) of a row stored with its XML: what has a
    /// seal to verify (`db::seals`).
    const WITH_XML: &'static str = "";

    fn order(filter: &Self::Filter) -> Order;
    /// The documents of the organization matching `filter` in its order, after the
    /// `(timestamp, id)` key `after`.
    fn list(
        conn: &Conn,
        org_id: &str,
        filter: &Self::Filter,
        after: Option<(&str, &str)>,
        limit: i64,
    ) -> anyhow::Result<Vec<ListRow>>;
    /// A document of the organization as its read shows it (JSON text); None when it
    /// is not there, or not visible.
    fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>>;
    /// `get` each of `ids` that is there and visible, by id (a batch's events): a
    /// class whose read is costly reads them together.
    fn get_all(
        conn: &Conn,
        org_id: &str,
        ids: &[&str],
    ) -> anyhow::Result<std::collections::HashMap<String, String>> {
        let mut found = std::collections::HashMap::new();
        for id in ids {
            if let Some(object) = Self::get(conn, org_id, id)? {
                found.insert(id.to_string(), object);
            }
        }
        Ok(found)
    }
    /// The stamp UUID of a visible document of the organization.
    fn uuid(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>>;
    /// How many documents of the organization match `filter` and what their amounts
    /// add up to per currency (`GET /v1/<class>/totals`).
    fn totals(conn: &Conn, org_id: &str, filter: &Self::Filter) -> anyhow::Result<Totals>;
}
