//! The call as an interface: the SAT's client (`client`) and the sandbox speak it, and
//! the checker (`jobs::sat_status`) runs it with its settings (`Checks`).

use std::sync::Arc;

use super::answer::Answer;
use super::policy::Pace;
use crate::sat::efirma::responses::ResponseError;

/// What one check asks about.
#[derive(Debug, Clone, Copy)]
pub struct Subject<'a> {
    /// The printed expression (`expression::of`): all the SAT is sent.
    pub expression: &'a str,
    /// The CFDI's `Fecha` as written: the sandbox, which regenerates its documents
    /// day by day, finds them by it. The SAT's client ignores it.
    pub issued_at: &'a str,
}

/// One status check, spoken by the SAT's client and by the sandbox.
pub trait StatusService: Send + Sync {
    /// The SAT's answer for one CFDI. Blocking.
    fn check(&self, subject: &Subject<'_>) -> Result<Answer, StatusError>;
}

#[derive(Debug, thiserror::Error)]
pub enum StatusError {
    /// Unreachable, timed out, or cut off.
    #[error("the status service at {url} is unreachable: {message}")]
    Transport { url: String, message: String },
    /// An HTTP error status without a SOAP fault to explain it.
    #[error("the status service at {url} answered HTTP {status}")]
    Http { url: String, status: u16 },
    /// A SOAP fault, or an answer that is not the service's.
    #[error("the status service's answer: {0}")]
    Answer(#[from] ResponseError),
}

/// The status checker's settings: which service, how fast, at what pace.
#[derive(Clone)]
pub struct Checks {
    pub service: Arc<dyn StatusService>,
    /// Checks a second at most (> 0).
    pub rate: f64,
    pub pace: Pace,
}
