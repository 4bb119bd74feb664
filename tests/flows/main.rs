//! Black-box flow tests of `cfdi-extract`: invoices imported through the CLI or extracted
//! from the sandbox tax authority, then read over HTTP. Each test starts the real binary
//! on its own data directory. The harness is shared with `tests/api`.

#[allow(dead_code)]
#[path = "../common/efirma_files.rs"]
mod efirma_files;
#[allow(dead_code)]
#[path = "../api/helpers.rs"]
mod helpers;
#[allow(dead_code)]
#[path = "../api/receiver.rs"]
mod receiver;

#[allow(dead_code)]
#[path = "../common/fake_sat_ws.rs"]
mod fake_sat_ws;
#[allow(dead_code)]
mod support;

mod backup;
mod bounds;
mod documents;
mod efirma;
mod efirma_ws;
mod events;
mod exports;
mod extractions;
mod fairness;
mod import;
mod incremental;
mod invoices;
mod items;
mod metrics;
mod summary;
mod upgrade;
