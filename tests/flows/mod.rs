//! Black-box flow tests of `cfdi-extract`: invoices imported through the CLI or extracted
//! from the sandbox tax authority, then read over HTTP. Each test starts the real binary
//! on its own data directory.

mod accountant;
mod backup;
mod bounds;
mod diot;
mod documents;
mod efirma;
pub(crate) mod efirma_ws;
mod engines;
mod events;
mod exports;
mod extractions;
mod fairness;
mod import;
mod incremental;
mod invoices;
mod items;
pub(crate) mod iva;
mod list_69b;
pub(crate) mod metrics;
mod relations;
mod retention_extractions;
mod retentions;
mod sat_status;
mod seals;
mod summary;
mod upgrade;
