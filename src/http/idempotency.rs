//! `Idempotency-Key` on POST requests, as payment APIs have it. A client that sends the
//! header may send the same request again (after a timeout, a lost connection, a 503)
//! and never have it done twice: per organization and key, the first request's answer
//! is kept `KEEP` and given again, with `Idempotent-Replayed: true`, to a request with
//! the same method, path and body (JSON compared as data, not as text); another request
//! with the key is a 422 on the header's name. The key and the request's work commit in
//! one transaction (`db::idempotency`), so a retry after a lost answer finds one or the
//! other, and a retry that arrives while the first still runs waits for its answer.
//! Refusals (4xx) are not kept: a corrected request may reuse its key.

use crate::app::Context;
use crate::db::idempotency::{Claim, KEEP};
use crate::db::{self, Tx};
use crate::http::error::{ApiError, ApiResult};
use rocket::http::{Header, Status};
use rocket::request::{FromRequest, Outcome};
use rocket::response::{self, content::RawJson, Responder};
use rocket::Request;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub const HEADER: &str = "Idempotency-Key";
/// Set on an answer given again for a key.
pub const REPLAYED: &str = "Idempotent-Replayed";
const MAX_LEN: usize = 255;

const MALFORMED: &str = "must be 1 to 255 visible ASCII characters, given once";
const MISMATCH: &str =
    "was used with another request (method, path or body) in the last 24 hours; use a new key for a new request";

/// The request's `Idempotency-Key`, as a route guard: the header as given, and the
/// method and path it is bound to. `once` checks it and fingerprints the request.
pub struct KeyHeader {
    key: Result<Option<String>, ()>,
    method: String,
    path: String,
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for KeyHeader {
    type Error = std::convert::Infallible;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let mut given = req.headers().get(HEADER);
        let key = match (given.next(), given.next()) {
            (None, _) => Ok(None),
            (Some(key), None) if well_formed(key) => Ok(Some(key.to_string())),
            _ => Err(()),
        };
        Outcome::Success(KeyHeader {
            key,
            method: req.method().as_str().to_string(),
            path: req.uri().path().to_string(),
        })
    }
}

fn well_formed(key: &str) -> bool {
    (1..=MAX_LEN).contains(&key.len()) && key.bytes().all(|b| b.is_ascii_graphic())
}

/// A request to be done once: its key and fingerprint.
pub struct Once {
    key: String,
    hash: Vec<u8>,
}

impl KeyHeader {
    /// The request to do once, `None` without the header; a 422 on the header when it
    /// is malformed. `body`: the request's JSON object, if it has one.
    pub fn once(&self, body: Option<&Map<String, Value>>) -> ApiResult<Option<Once>> {
        let key = self
            .key
            .clone()
            .map_err(|()| ApiError::validation(HEADER, MALFORMED))?;
        Ok(key.map(|key| Once {
            hash: fingerprint(&self.method, &self.path, body),
            key,
        }))
    }
}

/// SHA-256 of the method, the path and the body as data: objects' members in key
/// order, so the same object written in another order or spacing is the same request.
fn fingerprint(method: &str, path: &str, body: Option<&Map<String, Value>>) -> Vec<u8> {
    let mut hash = Sha256::new();
    for part in [method, path] {
        hash.update(part.as_bytes());
        hash.update([0]);
    }
    if let Some(body) = body {
        let mut text = String::new();
        canonical(&mut text, &Value::Object(body.clone()));
        hash.update(text.as_bytes());
    }
    hash.finalize().to_vec()
}

/// `value` as JSON text with every object's members sorted by key.
fn canonical(out: &mut String, value: &Value) {
    match value {
        Value::Object(map) => {
            let mut members: Vec<_> = map.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (key, value)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                canonical(out, value);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(out, item);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// A write's answer: its status and JSON body; `replayed` when it is a key's kept one.
pub struct Answer {
    status: Status,
    body: String,
    replayed: bool,
}

impl Answer {
    pub fn new(status: Status, body: &Value) -> Answer {
        Answer::raw(status, body.to_string())
    }

    /// A body already written as JSON text.
    pub fn raw(status: Status, body: String) -> Answer {
        Answer {
            status,
            body,
            replayed: false,
        }
    }
}

impl<'r> Responder<'r, 'static> for Answer {
    fn respond_to(self, req: &'r Request<'_>) -> response::Result<'static> {
        let mut res = RawJson(self.body).respond_to(req)?;
        res.set_status(self.status);
        if self.replayed {
            res.set_header(Header::new(REPLAYED, "true"));
        }
        Ok(res)
    }
}

/// Runs `work` in a write transaction on behalf of request `request_id` of `org_id`,
/// once per key when `once` is given: a kept answer is given again instead, and a
/// fresh answer is kept in the same transaction. `work` answers a success, or a
/// refusal that leaves nothing behind (its transaction still commits what it wrote).
pub async fn write<F>(
    ctx: &Context,
    org_id: &str,
    once: Option<Once>,
    request_id: String,
    work: F,
) -> anyhow::Result<ApiResult<Answer>>
where
    F: FnOnce(&Tx) -> anyhow::Result<ApiResult<Answer>> + Send + 'static,
{
    let Some(once) = once else {
        return ctx.db.write_for(request_id, work).await;
    };
    let cipher = ctx.cipher.clone();
    let org_id = org_id.to_string();
    ctx.db
        .write_for(request_id, move |tx| {
            let now = chrono::Utc::now();
            let keep = chrono::Duration::from_std(KEEP)?;
            let expired_before = crate::time::format(now - keep);
            let now = crate::time::format(now);
            let claim =
                db::idempotency::claim(tx, &org_id, &once.key, &once.hash, &now, &expired_before)?;
            match claim {
                Claim::Mismatch => Ok(Err(ApiError::validation(HEADER, MISMATCH))),
                Claim::Answered { status, sealed } => Ok(Ok(Answer {
                    status: Status::from_code(status)
                        .ok_or_else(|| anyhow::anyhow!("a kept answer's status {status}"))?,
                    body: cipher.open(&sealed)?,
                    replayed: true,
                })),
                Claim::Fresh => match work(tx)? {
                    Ok(answer) => {
                        let sealed = cipher.seal(&answer.body)?;
                        db::idempotency::answer(
                            tx,
                            &org_id,
                            &once.key,
                            answer.status.code,
                            &sealed,
                        )?;
                        Ok(Ok(answer))
                    }
                    Err(refused) => {
                        db::idempotency::release(tx, &org_id, &once.key)?;
                        Ok(Err(refused))
                    }
                },
            }
        })
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_visible_ascii_up_to_255() {
        assert!(well_formed("a"));
        assert!(well_formed("0b1c8d7e-retry:1"));
        assert!(well_formed(&"k".repeat(255)));
        assert!(!well_formed(""));
        assert!(!well_formed(&"k".repeat(256)));
        assert!(!well_formed("two words"));
        assert!(!well_formed("tab\tkey"));
        assert!(!well_formed("llavé"));
    }

    #[test]
    fn the_fingerprint_reads_the_body_as_data_and_binds_method_and_path() {
        let body = |text: &str| match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(map)) => map,
            other => panic!("{other:?}"),
        };
        let a = body(r#"{"tax_id": "AAA010101AAA", "name": "A", "o": {"y": 1, "x": [2]}}"#);
        let b = body(r#"{"o":{"x":[2],"y":1},"name":"A","tax_id":"AAA010101AAA"}"#);
        let c = body(r#"{"o":{"x":[2],"y":1},"name":"B","tax_id":"AAA010101AAA"}"#);
        let print = |path, body| fingerprint("POST", path, Some(body));
        assert_eq!(print("/v1/entities", &a), print("/v1/entities", &b));
        assert_ne!(print("/v1/entities", &a), print("/v1/entities", &c));
        assert_ne!(print("/v1/entities", &a), print("/v1/webhooks", &a));
        assert_ne!(
            fingerprint("POST", "/v1/x", None),
            fingerprint("PUT", "/v1/x", None)
        );
    }
}
