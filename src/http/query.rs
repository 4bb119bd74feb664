//! Query strings are parsed by hand (not by Rocket's typed guards) so that a malformed
//! value becomes a 422 on the parameter's name and unknown parameters are ignored.

use rocket::request::{FromRequest, Outcome, Request};
use std::collections::HashMap;

/// The decoded query parameters of a request (last value wins).
pub struct Query(pub HashMap<String, String>);

impl Query {
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for Query {
    type Error = std::convert::Infallible;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let map = req
            .uri()
            .query()
            .map(|q| {
                q.segments()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        Outcome::Success(Query(map))
    }
}
