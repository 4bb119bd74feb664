//! The SAT's public status service for CFDI (`ConsultaCFDIService`): for one CFDI,
//! given its printed expression, whether it is active, cancelled or unknown to the
//! SAT, whether and how it can be cancelled, the state of a cancellation request, and
//! whether its issuer is on the EFOS list. No credential, one SOAP 1.1 call.
//!
//! Not an extraction channel (it does not implement `sat::Channel`): it checks invoices
//! the service already holds, whichever way they came in.
//!
//! Files:
//! - `expression`: the printed expression (`expresionImpresa`) of a CFDI, per version,
//!   as the SAT defines it.
//! - `envelope`: the request body and its `SOAPAction`.
//! - `answer`: the answer as the service's values (`domain::sat_status`).
//! - `service`: the call as an interface (`StatusService`), spoken by the SAT's client
//!   and by the sandbox, and the checker's settings (`Checks`).
//! - `client`: a blocking HTTP client for the call.
//! - `policy`: when to ask again, and when "not found" means "not registered".
//!
//! `tests/fixtures/sat-status-fixtures/FACTS.md` has the sources. Verified against recorded and
//! documented answers, not the live service.

pub mod answer;
pub mod client;
pub mod envelope;
pub mod expression;
pub mod policy;
pub mod service;

#[cfg(test)]
mod tests;

pub use answer::{Answer, Code};
pub use client::{Client, SAT_STATUS_URL};
pub use service::{Checks, StatusError, StatusService, Subject};
