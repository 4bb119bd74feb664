//! The CIEC channel: the SAT CFDI portal, logged into with the taxpayer's CIEC and a
//! captcha (the SAT portal's public research notes describe the
//! flow).
//!
//! - `run`: the channel: a run lists the period's metadata window by window, then
//!   downloads the XML in batches, downloading ahead of the storing.
//! - `login`: login page, captcha, credential POST, WS-Federation hop into the portal.
//! - `session`: per-day queries on `ConsultaEmisor.aspx` / `ConsultaReceptor.aspx`,
//!   windows halved while the portal's 500-row cap is hit, then the row links' downloads.
//! - `html`, `delta`, `results`, `query`: reading pages and building requests, pure and
//!   unit-tested against the recorded pages.
//! - `captcha`: the resolver interface and its command and anti-captcha implementations.
//! - `vault`: the CIEC as the service keeps it (sealed, with its `credential_status`).
//!
//! Every conversation (a validation, an extraction) gets its own HTTP agent and so its
//! own cookie jar. Nothing retries beyond the captcha and login tries: an outage fails
//! the call as `Unavailable` and the job layer decides when to come back.

pub mod captcha;
mod config;
mod conversation;
mod delta;
mod html;
mod http;
mod login;
mod portal;
mod query;
mod results;
mod run;
mod session;
mod vault;

// The web service's metadata dates share the portal's format.
pub use captcha::{AntiCaptchaResolver, CaptchaError, CaptchaResolver, CommandResolver};
pub use config::{CaptchaConfig, PortalConfig, ANTICAPTCHA_URL, SAT_LOGIN_URL, SAT_PORTAL_URL};
pub(in crate::sat) use results::local_time;

pub use conversation::{Authority, Credential, Session, DOWNLOAD_BATCH};
pub use portal::{Portal, NO_RESOLVER};
pub use run::CiecChannel;
