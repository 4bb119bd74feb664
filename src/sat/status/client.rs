//! A blocking client for the one call: POST the envelope with its `SOAPAction`, read a
//! bounded answer, parse it. Callers run it off the async executor.

use std::time::Duration;

use super::answer::{self, Answer};
use super::envelope::{self, SOAP_ACTION};
use super::service::{StatusError, StatusService, Subject};
use crate::sat::efirma::responses::ResponseError;

/// The SAT's service (FACTS.md §1).
pub const SAT_STATUS_URL: &str =
    "https://consultaqr.facturaelectronica.sat.gob.mx/ConsultaCFDIService.svc";

/// An answer is well under 2 KB.
const ANSWER_LIMIT: u64 = 64 * 1024;

pub struct Client {
    agent: ureq::Agent,
    url: String,
}

impl Client {
    pub fn new(url: &str, timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder()
            // SOAP faults come with HTTP 500: the body is read and judged here.
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build();
        Client {
            agent: ureq::Agent::new_with_config(config),
            url: url.to_owned(),
        }
    }
}

impl StatusService for Client {
    fn check(&self, subject: &Subject<'_>) -> Result<Answer, StatusError> {
        let transport = |e: ureq::Error| StatusError::Transport {
            url: self.url.clone(),
            message: e.to_string(),
        };
        crate::metrics::sat_call("status", "consulta");
        let mut response = self
            .agent
            .post(&self.url)
            .header("Content-Type", "text/xml;charset=\"utf-8\"")
            .header("Accept", "text/xml")
            .header("SOAPAction", SOAP_ACTION)
            .send(envelope::request(subject.expression).as_bytes())
            .map_err(transport)?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(ANSWER_LIMIT)
            .read_to_string()
            .map_err(transport)?;
        match answer::parse(&body) {
            Ok(answer) if (200..300).contains(&status) => Ok(answer),
            Err(fault @ ResponseError::Fault { .. }) => Err(fault.into()),
            Err(_) if !(200..300).contains(&status) => Err(StatusError::Http {
                url: self.url.clone(),
                status,
            }),
            Ok(_) => Err(StatusError::Http {
                url: self.url.clone(),
                status,
            }),
            Err(other) => Err(other.into()),
        }
    }
}
