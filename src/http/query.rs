//! Query strings are parsed by hand (not by Rocket's typed guards) so that a malformed
//! value becomes a 422 on the parameter's name and unknown parameters are ignored. A
//! value holding the NUL character (`%00`) is refused at once, a 422 on its name on
//! both engines (PostgreSQL's text cannot hold it), before the handler reads or
//! streams anything (the 422 catcher reads the errors this guard leaves).

use crate::domain::FieldErrors;
use crate::http::json_body::NUL_MESSAGE;
use rocket::http::Status;
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
    type Error = ();

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let map: HashMap<String, String> = req
            .uri()
            .query()
            .map(|q| {
                q.segments()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect()
            })
            .unwrap_or_default();
        let mut errors = FieldErrors::new();
        for (name, value) in &map {
            if value.contains('\0') {
                errors.add(name, NUL_MESSAGE);
            }
        }
        if !errors.is_empty() {
            req.local_cache(|| Some(errors));
            return Outcome::Error((Status::UnprocessableEntity, ()));
        }
        Outcome::Success(Query(map))
    }
}

impl Query {
    /// An optional UUID parameter (canonical form); a malformed one is a 422 on its name.
    pub fn uuid(&self, name: &str, errors: &mut crate::domain::FieldErrors) -> Option<String> {
        let v = self.get(name)?;
        match uuid::Uuid::parse_str(v.trim()) {
            Ok(u) => Some(u.to_string()),
            Err(_) => {
                errors.add(name, "must be a UUID");
                None
            }
        }
    }

    /// An optional parameter that must be one of `allowed`.
    pub fn one_of(
        &self,
        name: &str,
        allowed: &[&str],
        errors: &mut crate::domain::FieldErrors,
    ) -> Option<String> {
        let v = self.get(name)?;
        if allowed.contains(&v) {
            Some(v.to_string())
        } else {
            errors.add(name, &format!("must be one of {}", allowed.join(", ")));
            None
        }
    }

    /// An optional boolean parameter (`true`/`1` or `false`/`0`).
    pub fn flag(&self, name: &str, errors: &mut crate::domain::FieldErrors) -> Option<bool> {
        match self.get(name)? {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => {
                errors.add(name, "must be true or false");
                None
            }
        }
    }
}
