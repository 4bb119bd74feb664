//! HTTP Basic authentication for `/v1`.
//!
//! argon2id costs ~20 ms of CPU and 19 MiB by design, and Basic auth sends the password
//! with every request, so successful verifications are cached for a short time. The
//! cache key is an HMAC (keyed with a per-process secret) of the email, the password
//! and the stored hash: the password itself is never kept, and a password changed with
//! the CLI changes the stored hash, hence the key, so it takes effect on the next
//! request. Concurrent first requests with the same credentials share one verification
//! (single flight), and a semaphore bounds how many argon2 runs at once. A client
//! address that keeps failing is answered "Invalid credentials" without argon2 for a
//! while, so wrong-password floods cannot monopolise the CPU.

use crate::db::{self, Db};
use crate::error::AuthFailure;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use rocket::http::Status;
use rocket::request::{FromRequest, Outcome, Request};
use sha2::Sha256;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, Semaphore};

/// The authenticated caller: every query it makes is scoped to `org_id`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthUser {
    pub user_id: String,
    pub org_id: String,
}

type CacheKey = [u8; 32];
type Verification = Arc<OnceCell<Option<AuthUser>>>;

const CACHE_TTL: Duration = Duration::from_secs(60);
const CACHE_MAX: usize = 10_000;
/// Failed verifications an address may have per window before it is throttled.
const FAILURES_ALLOWED: u32 = 20;
const FAILURE_WINDOW: Duration = Duration::from_secs(60);

pub struct Authenticator {
    key: [u8; 32],
    cache: Mutex<HashMap<CacheKey, (AuthUser, Instant)>>,
    inflight: Mutex<HashMap<CacheKey, Verification>>,
    argon2_slots: Semaphore,
    failures: Mutex<HashMap<IpAddr, (u32, Instant)>>,
}

impl Authenticator {
    pub fn new() -> Self {
        let mut key = [0u8; 32];
        // A failure leaves a zero key: still keyed per credential, only less secret.
        let _ = getrandom::fill(&mut key);
        let slots = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self {
            key,
            cache: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            argon2_slots: Semaphore::new(slots),
            failures: Mutex::new(HashMap::new()),
        }
    }

    /// Checks an `Authorization` header value.
    pub async fn authenticate(
        &self,
        db: &Db,
        header: Option<&str>,
        client: Option<IpAddr>,
    ) -> Result<AuthUser, AuthFailure> {
        let (email, password) = parse_basic(header)?;
        let lookup_email = email.clone();
        let user = db
            .read(move |conn| db::users::find_by_email(conn, &lookup_email))
            .await
            .map_err(|e| {
                log::error!("authentication lookup failed: {e:#}");
                AuthFailure::Invalid
            })?;
        let stored_hash = user.as_ref().map(|u| u.password_hash.clone());
        let key = self.cache_key(&email, &password, stored_hash.as_deref());

        if let Some(hit) = self.cached(&key) {
            return Ok(hit);
        }
        if client.is_some_and(|ip| self.throttled(ip)) {
            return Err(AuthFailure::Invalid);
        }
        let cell = self.inflight_cell(key);
        let verdict = cell
            .get_or_init(|| async {
                let _permit = self.argon2_slots.acquire().await.ok();
                let verified = tokio::task::spawn_blocking(move || {
                    crate::password::verify(&password, stored_hash.as_deref())
                })
                .await
                .unwrap_or(false);
                user.filter(|_| verified).map(|u| AuthUser {
                    user_id: u.id,
                    org_id: u.org_id,
                })
            })
            .await
            .clone();
        self.inflight
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&key);
        match verdict {
            Some(user) => {
                self.remember(key, user.clone());
                Ok(user)
            }
            None => {
                if let Some(ip) = client {
                    self.record_failure(ip);
                }
                Err(AuthFailure::Invalid)
            }
        }
    }

    fn throttled(&self, ip: IpAddr) -> bool {
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        failures
            .get(&ip)
            .is_some_and(|(n, since)| *n >= FAILURES_ALLOWED && since.elapsed() < FAILURE_WINDOW)
    }

    fn record_failure(&self, ip: IpAddr) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.len() >= CACHE_MAX {
            failures.retain(|_, (_, since)| since.elapsed() < FAILURE_WINDOW);
        }
        let entry = failures.entry(ip).or_insert((0, Instant::now()));
        if entry.1.elapsed() >= FAILURE_WINDOW {
            *entry = (0, Instant::now());
        }
        entry.0 += 1;
    }

    fn cache_key(&self, email: &str, password: &str, stored_hash: Option<&str>) -> CacheKey {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC accepts any key length");
        for part in [
            email.as_bytes(),
            password.as_bytes(),
            stored_hash.unwrap_or("").as_bytes(),
        ] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    fn cached(&self, key: &CacheKey) -> Option<AuthUser> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(key)
            .filter(|(_, expires)| *expires > Instant::now())
            .map(|(user, _)| user.clone())
    }

    fn inflight_cell(&self, key: CacheKey) -> Verification {
        let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        inflight.entry(key).or_default().clone()
    }

    fn remember(&self, key: CacheKey, user: AuthUser) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= CACHE_MAX {
            let now = Instant::now();
            cache.retain(|_, (_, expires)| *expires > now);
            if cache.len() >= CACHE_MAX {
                cache.clear();
            }
        }
        cache.insert(key, (user, Instant::now() + CACHE_TTL));
    }
}

impl Default for Authenticator {
    fn default() -> Self {
        Self::new()
    }
}

/// Splits `Basic base64(email:password)`. Absent or another scheme: `Missing`;
/// present but undecodable: `Invalid`.
fn parse_basic(header: Option<&str>) -> Result<(String, String), AuthFailure> {
    let value = header.ok_or(AuthFailure::Missing)?.trim();
    let (scheme, encoded) = value.split_once(' ').unwrap_or((value, ""));
    if !scheme.eq_ignore_ascii_case("basic") {
        return Err(AuthFailure::Missing);
    }
    let decoded = STANDARD
        .decode(encoded.trim())
        .map_err(|_| AuthFailure::Invalid)?;
    let decoded = String::from_utf8(decoded).map_err(|_| AuthFailure::Invalid)?;
    let (email, password) = decoded.split_once(':').ok_or(AuthFailure::Invalid)?;
    if email.trim().is_empty() || password.is_empty() {
        return Err(AuthFailure::Invalid);
    }
    Ok((db::users::normalize_email(email), password.to_string()))
}

#[rocket::async_trait]
impl<'r> FromRequest<'r> for AuthUser {
    type Error = AuthFailure;

    async fn from_request(req: &'r Request<'_>) -> Outcome<Self, Self::Error> {
        let (Some(auth), Some(db)) = (
            req.rocket().state::<Authenticator>(),
            req.rocket().state::<Db>(),
        ) else {
            return Outcome::Error((Status::InternalServerError, AuthFailure::Invalid));
        };
        match auth
            .authenticate(db, req.headers().get_one("Authorization"), req.client_ip())
            .await
        {
            Ok(user) => Outcome::Success(user),
            Err(failure) => {
                // The 401 catcher reads which message applies from the request cache.
                req.local_cache(|| Some(failure));
                Outcome::Error((Status::Unauthorized, failure))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn basic(s: &str) -> String {
        format!("Basic {}", STANDARD.encode(s))
    }

    #[test]
    fn parse_basic_distinguishes_missing_from_invalid() {
        assert_eq!(parse_basic(None), Err(AuthFailure::Missing));
        assert_eq!(parse_basic(Some("Bearer abc")), Err(AuthFailure::Missing));
        assert_eq!(parse_basic(Some("Basic !!!")), Err(AuthFailure::Invalid));
        assert_eq!(
            parse_basic(Some(&basic("no-colon"))),
            Err(AuthFailure::Invalid)
        );
        assert_eq!(
            parse_basic(Some(&basic("A@Example.com:p:w"))),
            Ok(("a@example.com".into(), "p:w".into()))
        );
        assert_eq!(
            parse_basic(Some(&format!("basic  {}", STANDARD.encode("a@b.c:x")))),
            Ok(("a@b.c".into(), "x".into()))
        );
    }

    #[test]
    fn cache_key_depends_on_every_part() {
        let a = Authenticator::new();
        let k = a.cache_key("a@b.c", "pw", Some("h1"));
        assert_eq!(k, a.cache_key("a@b.c", "pw", Some("h1")));
        assert_ne!(k, a.cache_key("a@b.c", "pw", Some("h2")));
        assert_ne!(k, a.cache_key("a@b.c", "pw2", Some("h1")));
        assert_ne!(k, a.cache_key("a@b.cpw", "", Some("h1")));
    }

    #[test]
    fn an_address_is_throttled_after_repeated_failures_only() {
        let a = Authenticator::new();
        let ip: IpAddr = "192.0.2.1".parse().expect("ip");
        let other: IpAddr = "192.0.2.2".parse().expect("ip");
        for _ in 0..FAILURES_ALLOWED - 1 {
            a.record_failure(ip);
        }
        assert!(!a.throttled(ip));
        a.record_failure(ip);
        assert!(a.throttled(ip));
        assert!(!a.throttled(other));
    }
}
