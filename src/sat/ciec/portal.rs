//! The real CFDI portal behind the CIEC channel's conversation: log in (captcha
//! included), then a session that lists and downloads.

use super::config::PortalConfig;
use super::conversation::Credential;
use super::conversation::{Authority, Session};
use super::http::Client;
use super::login;
use super::session::PortalSession;
use crate::sat::RunContext;
use crate::sat::SatError;

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
