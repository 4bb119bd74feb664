//! The e.firma channel: the SAT's bulk-download web service ("Descarga Masiva", version
//! 1.5), reached with the taxpayer's e.firma instead of the CIEC: no captcha, up to
//! 200,000 CFDI (or 1,000,000 metadata rows) per request, answers in minutes to days.
//!
//! The conversation (/docs/efirma describes it for users):
//! 1. **authenticate**: a WS-Security header whose timestamp is signed with the e.firma;
//!    the answer is a token valid about five minutes, sent on every later call as
//!    `Authorization: WRAP access_token="..."`.
//! 2. **query**: ask for a window's issued or received CFDI or metadata (signed); the
//!    answer is the SAT's request id (`IdSolicitud`) or a refusal code.
//! 3. **verify** (repeatedly, over hours or days): the request's state and, once
//!    finished, its package ids.
//! 4. **download** each package (base64 of a ZIP) and read it.
//!
//! Files:
//! - `credential`: parse and check an uploaded e.firma (`.cer`, encrypted `.key`,
//!   password), with per-field errors; the key stays inside `Efirma`.
//! - `crate::seal::names` (shared with the seal checks): the certificate's distinguished names (RFC, branch, issuer text) and serial.
//! - `signing`: XML-DSig (exclusive C14N of the fixed shapes, SHA-1, RSA-SHA1).
//! - `envelope`: the four request bodies.
//! - `endpoints`: URLs (configurable bases) and `SOAPAction`s.
//! - `responses`: the answers as typed codes and states.
//! - `package`: a downloaded ZIP as CFDI XML files or metadata rows, with size caps.
//! - `client`: a blocking HTTP client for the four calls.
//! - `service`: the calls as an interface (`Service`), spoken by the SOAP client and by
//!   the sandbox.
//! - `run`: the channel and its run: the SAT's request state machine, its requests kept in
//!   `db::sat_requests`; `window`: request windows and waits; `store`: packages handed
//!   to the sink in batches with their resume point.
//! - `vault`: the e.firma as the service keeps it (sealed files and checked status).
//!
//! Verified against recorded requests and answers only, not the live service.

pub mod client;
pub mod credential;
pub mod endpoints;
pub mod envelope;
pub mod package;
pub mod responses;
mod run;
pub mod service;
pub mod signing;
pub mod store;
mod vault;
mod window;

pub use credential::{Efirma, EfirmaErrors, EfirmaField};
pub use run::EfirmaChannel;
pub use service::{Service, Session, Soap};
