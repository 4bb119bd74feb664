//! The SAT's side of the e.firma channel: the web service's calls. Unlike the CIEC
//! portal it is asynchronous: a query is accepted at once and answered minutes to days
//! later, so the channel asks, stores the SAT's request id, and checks back later
//! (`requests`). Two implementations speak this interface: the real service's SOAP
//! client (`Soap`, also pointed at local fakes by tests), and the sandbox's simulation
//! (`crate::sandbox::efirma`). Answers use the web service's own vocabulary
//! (`responses`). CFDI de Retenciones are asked the same way on hosts of their own,
//! with a token of their own: a conversation is for one document class.

use super::client::{Client, ClientError};
use super::credential::Efirma;
use super::endpoints::Endpoints;
use super::envelope::{Query, WindowQuery};
use super::responses::{DownloadAnswer, QueryAnswer, ResponseError, SatCode, Token, VerifyAnswer};
use crate::domain::extraction::DocumentClass;
use crate::sat::{RunContext, SatError};
use chrono::Utc;
use std::time::Duration;

pub trait Service: Send + Sync {
    /// Authenticates with the e.firma: `InvalidCredentials` when the SAT refuses it.
    /// `run` names the extraction (None for a credential check); only the sandbox,
    /// which keys its simulated state on it, looks at it. `class` chooses the hosts
    /// (and so the token): invoices or retentions.
    fn connect<'a>(
        &'a self,
        efirma: &'a Efirma,
        run: Option<&RunContext>,
        class: DocumentClass,
    ) -> Result<Box<dyn Session + 'a>, SatError>;
}

/// An authenticated conversation; it renews its token as needed.
pub trait Session {
    fn query(&mut self, query: &WindowQuery) -> Result<QueryAnswer, SatError>;
    fn verify(&mut self, request_id: &str) -> Result<VerifyAnswer, SatError>;
    fn download(&mut self, package_id: &str) -> Result<DownloadAnswer, SatError>;
}

/// The real web service (or a fake at configured URLs) over SOAP: one client per
/// document class, each on its own hosts.
pub struct Soap {
    invoices: Client,
    retentions: Client,
}

impl Soap {
    /// `invoices` and `retentions`: each class's hosts (`Endpoints::sat` and
    /// `Endpoints::sat_retentions` for the SAT's).
    pub fn new(invoices: Endpoints, retentions: Endpoints, timeout: Duration) -> Self {
        Soap {
            invoices: Client::new(invoices, timeout),
            retentions: Client::new(retentions, timeout),
        }
    }
}

/// Tokens last five minutes; renew a little before.
const TOKEN_MARGIN: chrono::Duration = chrono::Duration::seconds(30);

impl Service for Soap {
    fn connect<'a>(
        &'a self,
        efirma: &'a Efirma,
        _run: Option<&RunContext>,
        class: DocumentClass,
    ) -> Result<Box<dyn Session + 'a>, SatError> {
        let client = match class {
            DocumentClass::Invoices => &self.invoices,
            DocumentClass::Retentions => &self.retentions,
        };
        let token = authenticate(client, efirma)?;
        Ok(Box::new(SoapSession {
            client,
            efirma,
            token,
        }))
    }
}

fn authenticate(client: &Client, efirma: &Efirma) -> Result<Token, SatError> {
    client
        .authenticate(efirma, Utc::now())
        .map_err(|e| match e {
            // The service answers a refused signature or certificate with a security fault.
            ClientError::Answer {
                source: ResponseError::Fault { .. },
                ..
            } => SatError::InvalidCredentials,
            other => unavailable(other),
        })
}

struct SoapSession<'a> {
    client: &'a Client,
    efirma: &'a Efirma,
    token: Token,
}

impl SoapSession<'_> {
    fn token(&mut self) -> Result<&Token, SatError> {
        let stale = self
            .token
            .expires
            .is_some_and(|at| at - TOKEN_MARGIN <= Utc::now());
        if stale {
            self.token = authenticate(self.client, self.efirma)?;
        }
        Ok(&self.token)
    }
}

impl Session for SoapSession<'_> {
    fn query(&mut self, query: &WindowQuery) -> Result<QueryAnswer, SatError> {
        self.token()?;
        self.client
            .query(self.efirma, &self.token, &Query::Window(query.clone()))
            .map_err(unavailable)
    }

    fn verify(&mut self, request_id: &str) -> Result<VerifyAnswer, SatError> {
        self.token()?;
        self.client
            .verify(self.efirma, &self.token, request_id)
            .map_err(unavailable)
    }

    fn download(&mut self, package_id: &str) -> Result<DownloadAnswer, SatError> {
        self.token()?;
        self.client
            .download(self.efirma, &self.token, package_id)
            .map_err(unavailable)
    }
}

/// Transport failures, HTTP errors, faults and unreadable answers: come back later.
fn unavailable(e: ClientError) -> SatError {
    SatError::Unavailable(e.to_string())
}

/// Codes that mean the SAT refused the e.firma itself, in any answer.
pub fn refuses_certificate(code: SatCode) -> bool {
    matches!(
        code,
        SatCode::InvalidUser
            | SatCode::SealRfcMismatch
            | SatCode::CertificateRevokedOrExpired
            | SatCode::InvalidCertificate
    )
}
