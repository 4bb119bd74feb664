//! The sandbox: a deterministic simulation of the SAT, so the service runs with zero
//! setup and tests need no network (`--sat sandbox`, the default; its rules are in
//! `/docs/sandbox`). It simulates the SAT's side of both channels, the CIEC portal
//! (`ciec`) and the e.firma web service (`efirma`), over the same generated documents
//! (`docs`), and runs them through the channels' own logic (`sat::ciec`,
//! `sat::efirma`), so a sandbox run takes the real code paths. What the simulated SAT
//! remembers is kept in a store of its own (`db::sandbox`, `sandbox.db`), never in the
//! service's database.

pub mod ciec;
pub mod docs;
pub mod efirma;
pub mod list_69b;
pub mod rccf;
pub mod status;

use crate::db::sandbox::SandboxStore;
use crate::sat::{ciec::Authority, efirma::Service};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// The simulated SAT's side of both channels, for the channels' own runs.
pub struct Sandbox {
    pub portal: Arc<dyn Authority>,
    pub web_service: Arc<dyn Service>,
}

impl Sandbox {
    /// Opens the sandbox's store in `data_dir`; `latency` is `--sim-latency`.
    pub fn open(data_dir: &Path, latency: Duration) -> anyhow::Result<Sandbox> {
        let store = SandboxStore::open(data_dir)?;
        Ok(Sandbox {
            portal: Arc::new(ciec::SandboxPortal::new(store.clone(), latency)),
            web_service: Arc::new(efirma::SandboxService::new(store, latency)),
        })
    }
}
