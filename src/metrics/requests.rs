//! The fairing that times every API request and counts it by method, route template and
//! status.

use super::{Metrics, RequestLabels};
use rocket::fairing::{Fairing, Info, Kind};
use rocket::{Data, Request, Response};
use std::sync::Arc;
use std::time::Instant;

pub struct RequestMetrics(pub Arc<Metrics>);

/// When the request arrived (in the request's local cache).
struct Arrived(Instant);

#[rocket::async_trait]
impl Fairing for RequestMetrics {
    fn info(&self) -> Info {
        Info {
            name: "request metrics",
            kind: Kind::Request | Kind::Response,
        }
    }

    async fn on_request(&self, req: &mut Request<'_>, _: &mut Data<'_>) {
        req.local_cache(|| Arrived(Instant::now()));
    }

    async fn on_response<'r>(&self, req: &'r Request<'_>, res: &mut Response<'r>) {
        let arrived = req.local_cache(|| Arrived(Instant::now())).0;
        let labels = RequestLabels {
            method: req.method().as_str().to_string(),
            route: route_of(req),
            status: res.status().code,
        };
        self.0
            .observe_request(&labels, arrived.elapsed().as_secs_f64());
    }
}

/// The matched route's URI template, or `unmatched` (404s of unknown paths, whose raw
/// paths would make the label unbounded).
pub fn route_of(req: &Request<'_>) -> String {
    req.route()
        .map_or_else(|| "unmatched".to_string(), |r| r.uri.as_str().to_string())
}
