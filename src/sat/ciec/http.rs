//! The HTTP side of one portal conversation. One `Client` wraps one ureq `Agent`, and
//! with ureq's `cookies` feature each agent keeps its own cookie jar: one client per
//! validation or extraction is "one cookie jar per session" (facts §2).
//!
//! Every failure here becomes `SatError::Unavailable` with a detail that names the step
//! and the URL path, never a query string (the `Datos=` tokens), a cookie or a form body
//! (which carries the CIEC and the captcha answer).

use super::html::{decode, Fields};
use crate::sat::SatError;
use std::time::Duration;
use url::Url;

/// The facts' scraper presents itself as Firefox 91; the portal has served that for years.
const USER_AGENT: &str = "Mozilla/5.0 (X11; Linux x86_64; rv:91.0) Gecko/20100101 Firefox/91.0";
const ACCEPT_HTML: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const ACCEPT_LANGUAGE: &str = "es-MX,es;q=0.8,en-US;q=0.5,en;q=0.3";
/// A 500-row result table is a few MB; anything far beyond that is not a portal page.
const BODY_LIMIT: u64 = 64 * 1024 * 1024;

pub(super) struct Client {
    agent: ureq::Agent,
    timeout: Duration,
}

/// A response whose status the caller judges (downloads).
pub(super) struct Fetched {
    pub status: u16,
    pub body: Vec<u8>,
}

impl Client {
    pub(super) fn new(timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder()
            // Statuses are judged here, per step, not turned into opaque errors.
            .http_status_as_error(false)
            .timeout_global(Some(timeout))
            .user_agent(USER_AGENT)
            .accept(ACCEPT_HTML)
            .max_redirects(10)
            .build();
        Self {
            agent: ureq::Agent::new_with_config(config),
            timeout,
        }
    }

    /// GET a page that must answer 2xx with a body.
    pub(super) fn get_page(&self, url: &Url, step: &str) -> Result<String, SatError> {
        let request = self
            .agent
            .get(url.as_str())
            .header("Accept-Language", ACCEPT_LANGUAGE);
        let fetched = self.finish(request.call(), url, step)?;
        page(fetched, url, step)
    }

    /// POST a form the way a browser submits it, with the page it came from as Referer.
    pub(super) fn post_form(
        &self,
        url: &Url,
        referer: &Url,
        fields: &Fields,
        step: &str,
    ) -> Result<String, SatError> {
        let request = self
            .agent
            .post(url.as_str())
            .header("Accept-Language", ACCEPT_LANGUAGE)
            .header("Referer", referer.as_str());
        let fetched = self.finish(request.send_form(fields.pairs()), url, step)?;
        page(fetched, url, step)
    }

    /// POST an ASP.NET MS-Ajax partial postback; the answer is a delta, not a page.
    pub(super) fn post_async(
        &self,
        url: &Url,
        fields: &Fields,
        step: &str,
    ) -> Result<String, SatError> {
        let request = self
            .agent
            .post(url.as_str())
            .header("Accept-Language", ACCEPT_LANGUAGE)
            .header("Referer", url.as_str())
            .header("X-MicrosoftAjax", "Delta=true")
            .header("X-Requested-With", "XMLHttpRequest")
            .header("Accept", "*/*")
            .header("Cache-Control", "no-cache");
        let fetched = self.finish(request.send_form(fields.pairs()), url, step)?;
        page(fetched, url, step)
    }

    /// GET a resource (XML, PDF); only transport errors and 5xx fail here.
    pub(super) fn get_resource(&self, url: &Url, step: &str) -> Result<Fetched, SatError> {
        let fetched = self.finish(self.agent.get(url.as_str()).call(), url, step)?;
        if fetched.status >= 500 {
            return Err(unavailable(step, url, format!("HTTP {}", fetched.status)));
        }
        Ok(fetched)
    }

    fn finish(
        &self,
        sent: Result<ureq::http::Response<ureq::Body>, ureq::Error>,
        url: &Url,
        step: &str,
    ) -> Result<Fetched, SatError> {
        crate::metrics::sat_call("portal", &path_of(url));
        let mut response = sent.map_err(|e| self.transport(e, url, step))?;
        let status = response.status().as_u16();
        let body = response
            .body_mut()
            .with_config()
            .limit(BODY_LIMIT)
            .read_to_vec()
            .map_err(|e| self.transport(e, url, step))?;
        log::debug!(
            "portal: {step}: {} {status}, {} bytes",
            path_of(url),
            body.len()
        );
        Ok(Fetched { status, body })
    }

    fn transport(&self, e: ureq::Error, url: &Url, step: &str) -> SatError {
        let detail = match e {
            ureq::Error::Timeout(_) => format!("no answer within {:?}", self.timeout),
            other => other.to_string(),
        };
        unavailable(step, url, detail)
    }
}

/// A page must come back 2xx and non-empty; 5xx and anything else are outages.
fn page(fetched: Fetched, url: &Url, step: &str) -> Result<String, SatError> {
    match fetched.status {
        200..=299 if fetched.body.is_empty() => Err(unavailable(step, url, "empty response")),
        200..=299 => Ok(decode(&fetched.body)),
        s => Err(unavailable(step, url, format!("HTTP {s}"))),
    }
}

pub(super) fn unavailable(step: &str, url: &Url, detail: impl std::fmt::Display) -> SatError {
    SatError::Unavailable(format!("portal {step} ({}): {detail}", path_of(url)))
}

/// Host and path only: query strings carry session-bound tokens.
pub(super) fn path_of(url: &Url) -> String {
    format!("{}{}", url.host_str().unwrap_or(""), url.path())
}
