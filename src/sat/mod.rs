//! The SAT's channels, one folder each behind one interface (`channel::Channel`):
//! - `ciec`: the CFDI portal, logged into with the RFC and CIEC and a captcha; a run
//!   lists each window's metadata, then downloads the XML.
//! - `efirma`: the bulk-download web service, reached with the e.firma; a run asks, keeps
//!   the SAT's request ids and checks back minutes to days later.
//!
//! Each channel talks to the SAT through its own conversation trait (`ciec::Authority`,
//! `efirma::Service`), implemented by the real SAT's client and by the sandbox
//! (`crate::sandbox`), so the sandbox runs the channels' own logic. Each channel also
//! keeps its own credential (its `vault.rs`). A new channel is a new folder here
//! implementing `Channel`, and its place in the registry (`commands/serve.rs`).
//!
//! `status` is not a channel: the SAT's public status service, asked about one CFDI
//! the service already holds.

pub mod certificates;
pub mod channel;
pub mod ciec;
pub mod efirma;
pub mod list_69b;
pub mod status;

pub use crate::domain::listing::{Document, Metadata};
pub use channel::{
    Channel, Channels, Due, Fetched, Readiness, Resume, Run, RunContext, SatError, Secret, Sink,
    Step, Verdict,
};
