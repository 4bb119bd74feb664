//! Storage: the only place that knows the database engines. The table modules here hold
//! the SQL (through `sql`) and speak in the domain's types; `store` is the pool and its
//! transactions whichever engine holds the data; each engine's machinery is its own
//! directory: `sqlite/` (the default: writer turn, checkpoints, migrations, file
//! copies) and `postgres/` (`--database-url`: advisory locks, migrations, statistics);
//! `store::Upkeep` runs either engine's thread. The rest of the
//! crate passes `Conn` / `Tx` along and never names the driver. Sealed values come
//! back as bytes: the caller opens them (`crypto`).

pub mod changes;
pub mod classes;
pub mod codec;
mod content_key;
pub mod deliveries;
pub mod documents;
pub mod efirmas;
pub mod entities;
pub mod events;
pub mod extractions;
pub mod health;
pub mod idempotency;
pub mod invoices;
pub mod list_69b;

pub mod jobs;
pub mod lease;
pub mod login_failures;
pub mod orgs;
pub mod payment_entries;
mod postgres;
pub mod retentions;
mod rows;
pub mod sandbox;
pub mod sat_certificates;
pub mod sat_requests;
pub mod schedules;
pub mod sealed;
pub mod seals;
pub mod settings;
pub mod sql;
mod sqlite;
mod statements;
pub mod stats;
mod store;
pub mod summary;
pub mod suppliers;
#[cfg(test)]
pub mod testing;
pub mod users;
mod waker;
pub mod webhooks;

pub use postgres::Single as PostgresConnection;
pub use sql::{Conn, Engine};
pub use sqlite::files::{Access, File};
pub use sqlite::{checkpoint, migrate, Checkpoints};
pub use store::{
    is_busy, is_commit_unknown, is_unique_violation, is_unreachable, Db, Lock, Pooled, Store, Tx,
    Upkeep,
};
pub use waker::{Waker, Work};

#[cfg(test)]
pub use store::Memory;
