//! HTTP Basic authentication for `/v1`.
//!
//! argon2id costs ~20 ms of CPU and 19 MiB by design, and Basic auth sends the password
//! with every request, so successful verifications are cached for a short time. The
//! cache key is an HMAC (keyed with a per-process secret) of the email, the password
//! and the stored hash: the password itself is never kept, and a password changed with
//! the CLI changes the stored hash, hence the key, so it takes effect on the next
//! request. Concurrent first requests with the same credentials share one verification
//! (single flight), and a semaphore bounds how many argon2 runs at once.
//!
//! Failed logins are throttled per (client address, email) and, more loosely, per
//! address, so wrong-password floods cannot monopolise the CPU while one client cannot
//! lock another out. The address is the TCP peer's; a forwarded-address header is
//! believed only when the peer is a proxy the operator named (`--trusted-proxy`).

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
/// Failed verifications one address may have for one email per window before further
/// attempts for that email from that address are refused unchecked until the window
/// (counted from the first failure) ends.
const FAILURES_PER_EMAIL: u32 = 20;
/// Failed verifications one address may have across all emails per window.
const FAILURES_PER_ADDRESS: u32 = 100;
pub const FAILURE_WINDOW: Duration = Duration::from_secs(60);

/// What a failure counter is kept for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum FailureKey {
    Address(IpAddr),
    AddressEmail(IpAddr, String),
}

pub struct Authenticator {
    key: [u8; 32],
    cache: Mutex<HashMap<CacheKey, (AuthUser, Instant)>>,
    inflight: Mutex<HashMap<CacheKey, Verification>>,
    argon2_slots: Semaphore,
    failures: Mutex<HashMap<FailureKey, (u32, Instant)>>,
    trusted_proxies: Vec<IpAddr>,
}

impl Authenticator {
    /// `trusted_proxies`: peers whose `X-Forwarded-For` / `X-Real-IP` name the client.
    pub fn new(trusted_proxies: Vec<IpAddr>) -> Self {
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
            trusted_proxies,
        }
    }

    /// The address failures are counted against: the TCP peer, or, when the peer is a
    /// trusted proxy, the client it forwarded for (the right-most untrusted
    /// `X-Forwarded-For` hop, else `X-Real-IP`). Anything unparsable falls back to the
    /// peer, so a header can never make a request count against someone else.
    pub fn client_address(
        &self,
        peer: Option<IpAddr>,
        forwarded_for: Option<&str>,
        real_ip: Option<&str>,
    ) -> Option<IpAddr> {
        let peer = peer?;
        if !self.trusted_proxies.contains(&peer) {
            return Some(peer);
        }
        if let Some(list) = forwarded_for {
            for hop in list.rsplit(',') {
                match hop.trim().parse::<IpAddr>() {
                    Ok(ip) if self.trusted_proxies.contains(&ip) => continue,
                    Ok(ip) => return Some(ip),
                    Err(_) => return Some(peer),
                }
            }
        }
        Some(real_ip.and_then(|v| v.trim().parse().ok()).unwrap_or(peer))
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
                if db::is_busy(&e) {
                    log::warn!("authentication lookup: {e:#}");
                    AuthFailure::Busy
                } else {
                    log::error!("authentication lookup failed: {e:#}");
                    AuthFailure::Invalid
                }
            })?;
        let stored_hash = user.as_ref().map(|u| u.password_hash.clone());
        let key = self.cache_key(&email, &password, stored_hash.as_deref());

        if let Some(hit) = self.cached(&key) {
            return Ok(hit);
        }
        if client.is_some_and(|ip| self.throttled(ip, &email)) {
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
                    self.record_failure(ip, &email);
                }
                Err(AuthFailure::Invalid)
            }
        }
    }

    fn throttled(&self, ip: IpAddr, email: &str) -> bool {
        self.throttled_at(ip, email, Instant::now())
    }

    fn throttled_at(&self, ip: IpAddr, email: &str, now: Instant) -> bool {
        let failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        let over = |key: FailureKey, allowed: u32| {
            failures.get(&key).is_some_and(|(n, since)| {
                *n >= allowed && now.saturating_duration_since(*since) < FAILURE_WINDOW
            })
        };
        over(FailureKey::Address(ip), FAILURES_PER_ADDRESS)
            || over(
                FailureKey::AddressEmail(ip, email.to_string()),
                FAILURES_PER_EMAIL,
            )
    }

    fn record_failure(&self, ip: IpAddr, email: &str) {
        let mut failures = self.failures.lock().unwrap_or_else(|p| p.into_inner());
        if failures.len() >= CACHE_MAX {
            failures.retain(|_, (_, since)| since.elapsed() < FAILURE_WINDOW);
        }
        for key in [
            FailureKey::Address(ip),
            FailureKey::AddressEmail(ip, email.to_string()),
        ] {
            let entry = failures.entry(key).or_insert((0, Instant::now()));
            if entry.1.elapsed() >= FAILURE_WINDOW {
                *entry = (0, Instant::now());
            }
            entry.0 += 1;
        }
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
        let headers = req.headers();
        let client = auth.client_address(
            req.remote().map(|a| a.ip()),
            headers.get_one("X-Forwarded-For"),
            headers.get_one("X-Real-IP"),
        );
        match auth
            .authenticate(db, headers.get_one("Authorization"), client)
            .await
        {
            Ok(user) => Outcome::Success(user),
            Err(failure) => {
                // The catchers read which answer applies from the request cache.
                req.local_cache(|| Some(failure));
                Outcome::Error((failure.status(), failure))
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
        let a = Authenticator::new(vec![]);
        let k = a.cache_key("a@b.c", "pw", Some("h1"));
        assert_eq!(k, a.cache_key("a@b.c", "pw", Some("h1")));
        assert_ne!(k, a.cache_key("a@b.c", "pw", Some("h2")));
        assert_ne!(k, a.cache_key("a@b.c", "pw2", Some("h1")));
        assert_ne!(k, a.cache_key("a@b.cpw", "", Some("h1")));
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn an_email_is_throttled_per_address_and_others_are_not() {
        let a = Authenticator::new(vec![]);
        for _ in 0..FAILURES_PER_EMAIL - 1 {
            a.record_failure(ip("192.0.2.1"), "a@x.mx");
        }
        assert!(!a.throttled(ip("192.0.2.1"), "a@x.mx"));
        a.record_failure(ip("192.0.2.1"), "a@x.mx");
        assert!(a.throttled(ip("192.0.2.1"), "a@x.mx"));
        assert!(!a.throttled(ip("192.0.2.1"), "b@x.mx"));
        assert!(!a.throttled(ip("192.0.2.2"), "a@x.mx"));
        // The documented bound: a minute after the first failure the right password
        // (say, after a password change) is checked again.
        let later = Instant::now() + FAILURE_WINDOW;
        assert!(!a.throttled_at(ip("192.0.2.1"), "a@x.mx", later));
    }

    #[test]
    fn an_address_failing_across_many_emails_is_throttled_for_all() {
        let a = Authenticator::new(vec![]);
        for i in 0..FAILURES_PER_ADDRESS {
            a.record_failure(ip("192.0.2.1"), &format!("u{i}@x.mx"));
        }
        assert!(a.throttled(ip("192.0.2.1"), "new@x.mx"));
        assert!(!a.throttled(ip("192.0.2.9"), "new@x.mx"));
    }

    #[test]
    fn forwarded_headers_count_only_from_a_trusted_proxy() {
        let direct = Authenticator::new(vec![]);
        let peer = Some(ip("192.0.2.7"));
        assert_eq!(
            direct.client_address(peer, Some("203.0.113.1"), Some("203.0.113.2")),
            peer
        );
        let proxied = Authenticator::new(vec![ip("10.0.0.1"), ip("10.0.0.2")]);
        let proxy = Some(ip("10.0.0.1"));
        assert_eq!(
            proxied.client_address(proxy, Some("198.51.100.1, 203.0.113.5, 10.0.0.2"), None),
            Some(ip("203.0.113.5"))
        );
        assert_eq!(
            proxied.client_address(proxy, None, Some(" 203.0.113.9 ")),
            Some(ip("203.0.113.9"))
        );
        assert_eq!(proxied.client_address(proxy, Some("junk"), None), proxy);
        assert_eq!(proxied.client_address(proxy, None, None), proxy);
        // A request from elsewhere cannot pose as the proxy's client.
        assert_eq!(
            proxied.client_address(peer, Some("203.0.113.5"), None),
            peer
        );
    }
}
