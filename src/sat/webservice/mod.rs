//! The SAT's bulk-download web service ("Descarga Masiva", version 1.5), reached with the
//! taxpayer's e.firma instead of the CIEC: no captcha, up to 200,000 CFDI (or 1,000,000
//! metadata rows) per request, answers in minutes to days.
//!
//! The conversation (`shared/research/sat-webservice-facts.md` has the details):
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
//!   password), with per-field errors; the key stays inside `Fiel`.
//! - `names`: the certificate's distinguished names (RFC, branch, issuer text).
//! - `signing`: XML-DSig (exclusive C14N of the fixed shapes, SHA-1, RSA-SHA1).
//! - `envelope`: the four request bodies.
//! - `endpoints`: URLs (configurable bases) and `SOAPAction`s.
//! - `responses`: the answers as typed codes and states.
//! - `package`: a downloaded ZIP as CFDI XML files or metadata rows, with size caps.
//! - `client`: a blocking HTTP client for the four calls.
//!
//! Verified against recorded requests and answers only, not the live service.

pub mod client;
pub mod credential;
pub mod endpoints;
pub mod envelope;
mod names;
pub mod package;
pub mod responses;
pub mod signing;

pub use credential::{Fiel, FielErrors, FielField, FielSummary};
