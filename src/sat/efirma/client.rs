//! A blocking client for the four calls: builds the signed envelope, POSTs it with its
//! `SOAPAction` (and, after authentication, `Authorization: WRAP access_token="..."`),
//! and parses the answer. Blocking: callers run it off the async executor. Errors name
//! the step and URL, never a token, a body or the key.

use std::time::Duration;

use chrono::{DateTime, Utc};

use super::credential::Efirma;
use super::endpoints::Endpoints;
use super::envelope::{self, Query, SoapRequest};
use super::responses::{self, DownloadAnswer, QueryAnswer, ResponseError, Token, VerifyAnswer};

/// Answers other than packages are a few KB.
pub const ANSWER_LIMIT: u64 = 1024 * 1024;
/// A package answer: base64 of a ZIP. Larger ones are refused rather than held in memory.
pub const PACKAGE_ANSWER_LIMIT: u64 = 512 * 1024 * 1024;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// Unreachable, timed out, or cut off.
    #[error("{step}: the web service at {url} is unreachable: {message}")]
    Transport {
        step: &'static str,
        url: String,
        message: String,
    },
    /// An HTTP error status without a SOAP answer to explain it.
    #[error("{step}: the web service at {url} answered HTTP {status}")]
    Http {
        step: &'static str,
        url: String,
        status: u16,
    },
    #[error("{step}: {source}")]
    Answer {
        step: &'static str,
        source: ResponseError,
    },
    #[error("{step}: the request could not be signed: {message}")]
    Signing { step: &'static str, message: String },
}

pub struct Client {
    agent: ureq::Agent,
    endpoints: Endpoints,
}

impl Client {
    pub fn new(endpoints: Endpoints, timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder()
            // SOAP faults come with HTTP 500: the body is read and judged here.
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .build();
        Self {
            agent: ureq::Agent::new_with_config(config),
            endpoints,
        }
    }

    /// A token for the next calls (valid about five minutes from `now`).
    pub fn authenticate(&self, efirma: &Efirma, now: DateTime<Utc>) -> Result<Token, ClientError> {
        let step = "authenticate";
        let token_id = format!("uuid-{}-1", uuid::Uuid::new_v4());
        let request = envelope::authenticate(efirma, now, &token_id).map_err(signing(step))?;
        let body = self.post(&request, None, ANSWER_LIMIT, step)?;
        responses::authenticate(&body).map_err(answer(step))
    }

    pub fn query(
        &self,
        efirma: &Efirma,
        token: &Token,
        query: &Query,
    ) -> Result<QueryAnswer, ClientError> {
        let step = "query";
        let request = envelope::query(efirma, query).map_err(signing(step))?;
        let body = self.post(&request, Some(token), ANSWER_LIMIT, step)?;
        responses::query(&body).map_err(answer(step))
    }

    pub fn verify(
        &self,
        efirma: &Efirma,
        token: &Token,
        request_id: &str,
    ) -> Result<VerifyAnswer, ClientError> {
        let step = "verify";
        let request = envelope::verify(efirma, request_id).map_err(signing(step))?;
        let body = self.post(&request, Some(token), ANSWER_LIMIT, step)?;
        responses::verify(&body).map_err(answer(step))
    }

    pub fn download(
        &self,
        efirma: &Efirma,
        token: &Token,
        package_id: &str,
    ) -> Result<DownloadAnswer, ClientError> {
        let step = "download";
        let request = envelope::download(efirma, package_id).map_err(signing(step))?;
        let body = self.post(&request, Some(token), PACKAGE_ANSWER_LIMIT, step)?;
        responses::download(&body).map_err(answer(step))
    }

    fn post(
        &self,
        request: &SoapRequest,
        token: Option<&Token>,
        limit: u64,
        step: &'static str,
    ) -> Result<String, ClientError> {
        let url = request.operation.url(&self.endpoints);
        crate::metrics::sat_call("web_service", step);
        let transport = |e: ureq::Error| ClientError::Transport {
            step,
            url: url.to_string(),
            message: e.to_string(),
        };
        let mut post = self
            .agent
            .post(url)
            .header("Content-Type", "text/xml; charset=utf-8")
            .header("SOAPAction", request.operation.soap_action());
        if let Some(token) = token {
            post = post.header(
                "Authorization",
                format!("WRAP access_token=\"{}\"", token.value),
            );
        }
        let mut response = post.send(request.body.as_bytes()).map_err(transport)?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_string()
            .map_err(transport)?;
        log::debug!("web service: {step}: HTTP {status}, {} bytes", body.len());
        if !(200..300).contains(&status) {
            // A fault explains the status; anything else is reported as the status.
            return match responses::fault(&body) {
                Some(fault) => Err(ClientError::Answer {
                    step,
                    source: fault,
                }),
                None => Err(ClientError::Http {
                    step,
                    url: url.to_string(),
                    status,
                }),
            };
        }
        Ok(body)
    }
}

fn signing(step: &'static str) -> impl Fn(rsa::Error) -> ClientError {
    move |e| ClientError::Signing {
        step,
        message: e.to_string(),
    }
}

fn answer(step: &'static str) -> impl Fn(ResponseError) -> ClientError {
    move |source| ClientError::Answer { step, source }
}
