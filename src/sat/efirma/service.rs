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
use super::envelope::Query;
use super::responses::{DownloadAnswer, QueryAnswer, ResponseError, SatCode, Token, VerifyAnswer};
use crate::domain::class::DocumentClass;
use crate::sat::{RunContext, SatError};
use chrono::Utc;
use std::collections::HashMap;
use std::sync::Mutex;
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
    /// A request by window, or for one invoice by UUID.
    fn query(&mut self, query: &Query) -> Result<QueryAnswer, SatError>;
    fn verify(&mut self, request_id: &str) -> Result<VerifyAnswer, SatError>;
    fn download(&mut self, package_id: &str) -> Result<DownloadAnswer, SatError>;
}

/// The real web service (or a fake at configured URLs) over SOAP: one client per
/// document class, each on its own hosts.
pub struct Soap {
    invoices: Client,
    retentions: Client,
    /// Tokens kept while they are valid, by document class and certificate: a token
    /// lasts five minutes, and each step of a run (a check every `--sat-ws-poll`, a
    /// download) would otherwise sign in again (11 authentications for 16 other calls in
    /// one recorded run). In memory only, never logged (`Token`'s Debug redacts it).
    tokens: Mutex<HashMap<(bool, String), Token>>,
}

impl Soap {
    /// `invoices` and `retentions`: each class's hosts (`Endpoints::sat` and
    /// `Endpoints::sat_retentions` for the SAT's).
    pub fn new(invoices: Endpoints, retentions: Endpoints, timeout: Duration) -> Self {
        Soap {
            invoices: Client::new(invoices, timeout),
            retentions: Client::new(retentions, timeout),
            tokens: Mutex::default(),
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<(bool, String), Token>> {
        self.tokens.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Tokens last five minutes; renew a little before.
const TOKEN_MARGIN: chrono::Duration = chrono::Duration::seconds(30);

fn fresh(token: &Token) -> bool {
    token
        .expires
        .is_none_or(|at| at - TOKEN_MARGIN > Utc::now())
}

impl Service for Soap {
    fn connect<'a>(
        &'a self,
        efirma: &'a Efirma,
        run: Option<&RunContext>,
        class: DocumentClass,
    ) -> Result<Box<dyn Session + 'a>, SatError> {
        let client = match class {
            DocumentClass::Invoices => &self.invoices,
            DocumentClass::Retentions => &self.retentions,
        };
        let key = (
            class == DocumentClass::Retentions,
            format!("{}/{}", efirma.rfc(), efirma.serial_decimal()),
        );
        let mut session = SoapSession {
            soap: self,
            client,
            efirma,
            key,
            token: None,
            kept: false,
        };
        // A credential check (no run) always signs in: that is what it checks.
        if run.is_some() {
            session.token = self.kept().get(&session.key).filter(|t| fresh(t)).cloned();
            session.kept = session.token.is_some();
        }
        if session.token.is_none() {
            session.sign_in()?;
        }
        Ok(Box::new(session))
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
    soap: &'a Soap,
    client: &'a Client,
    efirma: &'a Efirma,
    key: (bool, String),
    token: Option<Token>,
    /// Whether `token` was kept from an earlier step (not signed in for this one).
    kept: bool,
}

impl SoapSession<'_> {
    fn sign_in(&mut self) -> Result<&Token, SatError> {
        self.soap.kept().remove(&self.key);
        let token = authenticate(self.client, self.efirma)?;
        self.soap.kept().insert(self.key.clone(), token.clone());
        self.kept = false;
        Ok(self.token.insert(token))
    }

    fn token(&mut self) -> Result<Token, SatError> {
        match &self.token {
            Some(token) if fresh(token) => Ok(token.clone()),
            _ => self.sign_in().cloned(),
        }
    }

    /// One call with a valid token. A kept token that the SAT answers with 300 (invalid
    /// user) may have been dropped on its side: sign in once more before believing it,
    /// since 300 also says the e.firma itself is refused. A call that fails forgets the
    /// kept token, so the next step starts from a fresh one.
    fn call<T>(
        &mut self,
        code: impl Fn(&T) -> SatCode,
        f: impl Fn(&Client, &Efirma, &Token) -> Result<T, ClientError>,
    ) -> Result<T, SatError> {
        let token = self.token()?;
        let answer = f(self.client, self.efirma, &token).map_err(|e| self.failed(e))?;
        if self.kept && code(&answer) == SatCode::InvalidUser {
            let token = self.sign_in()?.clone();
            return f(self.client, self.efirma, &token).map_err(|e| self.failed(e));
        }
        Ok(answer)
    }

    fn failed(&self, e: ClientError) -> SatError {
        self.soap.kept().remove(&self.key);
        unavailable(e)
    }
}

impl Session for SoapSession<'_> {
    fn query(&mut self, query: &Query) -> Result<QueryAnswer, SatError> {
        self.call(
            |a: &QueryAnswer| a.status.code,
            |client, efirma, token| client.query(efirma, token, query),
        )
    }

    fn verify(&mut self, request_id: &str) -> Result<VerifyAnswer, SatError> {
        self.call(
            |a: &VerifyAnswer| a.status.code,
            |client, efirma, token| client.verify(efirma, token, request_id),
        )
    }

    fn download(&mut self, package_id: &str) -> Result<DownloadAnswer, SatError> {
        self.call(
            |a: &DownloadAnswer| a.status.code,
            |client, efirma, token| client.download(efirma, token, package_id),
        )
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
