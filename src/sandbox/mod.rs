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
use crate::db::Db;
use crate::sat::ciec::CiecChannel;
use crate::sat::efirma::EfirmaChannel;
use crate::sat::{Channel, Run, SatError, Secret, Sink, Step};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// Both channels against the simulated SAT.
pub struct Sandbox {
    ciec: CiecChannel,
    efirma: EfirmaChannel,
}

impl Sandbox {
    /// Opens the sandbox's store in `data_dir`. `db` keeps the e.firma channel's
    /// requests, as with the real SAT; `poll` is `--sat-ws-poll`, `latency` is
    /// `--sim-latency`.
    pub fn open(
        data_dir: &Path,
        db: Db,
        latency: Duration,
        poll: Duration,
    ) -> anyhow::Result<Sandbox> {
        let store = SandboxStore::open(data_dir)?;
        Ok(Sandbox {
            ciec: CiecChannel::new(Arc::new(ciec::SandboxPortal::new(store.clone(), latency))),
            efirma: EfirmaChannel::new(
                Arc::new(efirma::SandboxService::new(store, latency)),
                db,
                poll,
            ),
        })
    }

    fn channel(&self, secret: &Secret) -> &dyn Channel {
        match secret {
            Secret::Ciec(_) => &self.ciec,
            Secret::Efirma(_) => &self.efirma,
        }
    }
}

impl Channel for Sandbox {
    fn validate(&self, secret: &Secret) -> Result<(), SatError> {
        self.channel(secret).validate(secret)
    }

    fn advance(&self, run: &Run, sink: &dyn Sink) -> anyhow::Result<Step> {
        self.channel(run.secret).advance(run, sink)
    }
}
