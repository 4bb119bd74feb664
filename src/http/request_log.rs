//! Every API request gets an id (`X-Request-Id`: the client's when it is a sane token,
//! else a new UUID), returned on the response, and one access log line (target
//! `cfdi_extract::access`) with that id, the route template, status and duration, and is
//! counted in the request metrics. The line carries the path without its query string
//! and no header: nothing secret.

use crate::metrics::{Metrics, RequestLabels};
use rocket::fairing::{Fairing, Info, Kind};
use rocket::http::Header;
use rocket::{Data, Request, Response};
use std::sync::Arc;
use std::time::Instant;

pub const HEADER: &str = "X-Request-Id";
const MAX_LEN: usize = 128;

pub struct RequestLog(pub Arc<Metrics>);

/// The request's id and arrival, in its local cache.
struct Started {
    id: String,
    at: Instant,
}

/// The request's id as a route guard, for routes that queue jobs (`Db::write_for`);
/// the others never copy it.
pub struct RequestId(pub String);

#[rocket::async_trait]
impl<'r> rocket::request::FromRequest<'r> for RequestId {
    type Error = std::convert::Infallible;
    async fn from_request(req: &'r Request<'_>) -> rocket::request::Outcome<Self, Self::Error> {
        rocket::request::Outcome::Success(RequestId(request_id(req).to_string()))
    }
}

/// The request's id (a new one if the fairing did not see the request).
pub fn request_id<'r>(req: &'r Request<'_>) -> &'r str {
    &started(req).id
}

fn started<'r>(req: &'r Request<'_>) -> &'r Started {
    req.local_cache(|| Started {
        id: choose_id(req.headers().get_one(HEADER)),
        at: Instant::now(),
    })
}

/// The client's id when it is 1 to 128 characters of `A-Z a-z 0-9 - _ . :`; otherwise
/// (absent, too long, anything that could forge or break a log line) a new UUID.
fn choose_id(given: Option<&str>) -> String {
    match given {
        Some(id)
            if (1..=MAX_LEN).contains(&id.len())
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-_.:".contains(&b)) =>
        {
            id.to_string()
        }
        // A v4 UUID from the thread's generator: no system call per request.
        _ => uuid::Builder::from_random_bytes(rand::random())
            .into_uuid()
            .to_string(),
    }
}

/// The matched route's URI template, or `unmatched` (404s of unknown paths, whose raw
/// paths would make a metrics label unbounded).
fn route_of(req: &Request<'_>) -> String {
    req.route()
        .map_or_else(|| "unmatched".to_string(), |r| r.uri.as_str().to_string())
}

#[rocket::async_trait]
impl Fairing for RequestLog {
    fn info(&self) -> Info {
        Info {
            name: "request id, access log and metrics",
            kind: Kind::Request | Kind::Response,
        }
    }

    async fn on_request(&self, req: &mut Request<'_>, _: &mut Data<'_>) {
        started(req);
    }

    async fn on_response<'r>(&self, req: &'r Request<'_>, res: &mut Response<'r>) {
        let started = started(req);
        let seconds = started.at.elapsed().as_secs_f64();
        res.set_header(Header::new(HEADER, started.id.clone()));
        let labels = RequestLabels {
            method: req.method().as_str().to_string(),
            route: route_of(req),
            status: res.status().code,
        };
        self.0.observe_request(&labels, seconds);
        let path = req.uri().path();
        log::info!(
            target: "cfdi_extract::access",
            request_id = started.id.as_str(),
            method = labels.method.as_str(),
            path = path.as_str(),
            route = labels.route.as_str(),
            status = labels.status,
            duration_ms = (seconds * 1000.0 * 1000.0).round() / 1000.0;
            "{} {} {}",
            labels.method,
            path,
            labels.status
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sane_client_ids_are_kept_and_others_replaced() {
        assert_eq!(choose_id(Some("abc-123_x.y:z")), "abc-123_x.y:z");
        for bad in [
            None,
            Some(""),
            Some("has space"),
            Some("quote\"s"),
            Some("a\nb"),
        ] {
            let id = choose_id(bad);
            assert!(uuid::Uuid::parse_str(&id).is_ok(), "{bad:?} -> {id}");
        }
        let long = "a".repeat(MAX_LEN + 1);
        assert_ne!(choose_id(Some(&long)), long);
        assert_eq!(choose_id(Some(&long[..MAX_LEN])), &long[..MAX_LEN]);
    }
}
