//! The CIEC channel: the SAT CFDI portal, logged into with the taxpayer's CIEC and a
//! captcha (`shared/research/sat-portal-facts.md`, beside the repository, describes the
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
//!
//! Every conversation (a validation, an extraction) gets its own HTTP agent and so its
//! own cookie jar. Nothing retries beyond the captcha and login tries: an outage fails
//! the call as `Unavailable` and the job layer decides when to come back.

pub mod captcha;
mod config;
mod delta;
mod html;
mod http;
mod login;
mod query;
mod results;
mod run;
mod session;

// The web service's metadata dates share the portal's format.
pub use captcha::{AntiCaptchaResolver, CaptchaError, CaptchaResolver, CommandResolver};
pub use config::{CaptchaConfig, PortalConfig, ANTICAPTCHA_URL, SAT_LOGIN_URL, SAT_PORTAL_URL};
pub(in crate::sat) use results::local_time;

pub use run::CiecChannel;

use crate::domain::extraction::{Direction, Period};
use crate::sat::{Credential, Document, Metadata, RunContext, SatError};
use http::Client;
use session::PortalSession;

/// The SAT's side of the CIEC channel: the real portal (`Portal`), or the sandbox's.
pub trait Authority: Send + Sync {
    /// Logs in once to check the credential.
    fn validate(&self, credential: &Credential) -> Result<(), SatError>;
    /// Logs in for an extraction.
    fn login(
        &self,
        credential: &Credential,
        run: &RunContext,
    ) -> Result<Box<dyn Session>, SatError>;
}

/// A logged-in conversation with the portal.
pub trait Session: Send {
    /// Stage 1: the metadata of the period's invoices.
    fn list(&mut self, direction: Direction, period: Period) -> Result<Vec<Metadata>, SatError>;
    /// Stage 2: the XML (and PDF) of some listed invoices, in the same order.
    fn download(
        &mut self,
        direction: Direction,
        items: &[Metadata],
    ) -> Result<Vec<Document>, SatError>;
}

/// How many documents one download call asks for.
pub const DOWNLOAD_BATCH: usize = 50;

/// What the API reports while no resolver is configured, so validations stay pending
/// and extractions fail `sat_unavailable` with a reason an operator can act on.
pub const NO_RESOLVER: &str =
    "no captcha resolver configured: set --captcha-command or --anticaptcha-key";

pub struct Portal {
    config: PortalConfig,
}

impl Portal {
    pub fn new(config: PortalConfig) -> Portal {
        Portal { config }
    }

    /// A fresh conversation, logged in.
    fn logged_in(&self, credential: &Credential) -> Result<Client, SatError> {
        let Some(resolver) = self.config.captcha.resolver() else {
            return Err(SatError::Unavailable(NO_RESOLVER.into()));
        };
        let client = Client::new(self.config.timeout);
        login::login(&client, &self.config, resolver.as_ref(), credential)?;
        log::debug!("portal: {} logged in", credential.tax_id);
        Ok(client)
    }
}

impl Authority for Portal {
    fn validate(&self, credential: &Credential) -> Result<(), SatError> {
        self.logged_in(credential).map(|_| ())
    }

    fn login(
        &self,
        credential: &Credential,
        run: &RunContext,
    ) -> Result<Box<dyn Session>, SatError> {
        let client = self.logged_in(credential)?;
        log::debug!("portal: session for extraction {}", run.extraction_id);
        Ok(Box::new(PortalSession::new(client, self.config.clone())))
    }
}
