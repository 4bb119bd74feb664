//! HTTP Basic authentication for `/v1`.
//!
//! argon2id costs ~20 ms of CPU and 19 MiB by design, and Basic auth sends the password
//! with every request, so successful logins are cached for a short time, keyed by an
//! HMAC (with a per-process secret) of the email and password: the password itself is
//! never kept. A cached login needs no database read; it stays good until the CLI
//! changes a password (`users_stamp`, checked on every request) or the TTL passes, so a
//! changed password is in force from the next request. Concurrent first requests with
//! the same credentials share one verification (single flight), and a semaphore bounds
//! how many argon2 runs at once.
//!
//! Failed logins are throttled per (client address, email) and, more loosely, per
//! address, so wrong-password floods cannot monopolise the CPU while one client cannot
//! lock another out. The address is the TCP peer's; a forwarded-address header is
//! believed only when the peer is a proxy the operator named (`--trusted-proxy`).

use crate::db::{self, Db};
use crate::http::error::AuthFailure;
pub mod users_stamp;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, KeyInit, Mac};
use rocket::http::Status;
use rocket::request::{FromRequest, Outcome, Request};
use sha2::Sha256;
use std::collections::HashMap;
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{OnceCell, Semaphore};
use users_stamp::Stamp;

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

/// Which users' state a login was checked against: it changes with `users.stamp`.
type Generation = u64;

pub struct Authenticator {
    key: [u8; 32],
    /// Logins checked against the current generation, until their expiry.
    cache: Mutex<HashMap<CacheKey, (AuthUser, Instant, Generation)>>,
    inflight: Mutex<HashMap<(CacheKey, Generation), Verification>>,
    stamp_path: Option<PathBuf>,
    /// The stamp last seen and its generation.
    seen: Mutex<(Option<Stamp>, Generation)>,
    /// Several instances share the database (PostgreSQL): the users' stamp and the
    /// failure counts are the database's (`db::users::stamp`, `db::login_failures`).
    shared: Option<Shared>,
    argon2_slots: Semaphore,
    failures: Mutex<HashMap<FailureKey, (u32, Instant)>>,
    trusted_proxies: Vec<IpAddr>,
}

impl Authenticator {
    /// `trusted_proxies`: peers whose `X-Forwarded-For` / `X-Real-IP` name the client.
    /// `data_dir`: where the CLI leaves `users.stamp` (`None`: only the TTL expires logins).
    pub fn new(trusted_proxies: Vec<IpAddr>, data_dir: Option<&std::path::Path>) -> Self {
        let stamp_path = data_dir.map(users_stamp::path);
        let stamp = stamp_path.as_deref().and_then(users_stamp::read);
        let mut key = [0u8; 32];
        // A failure leaves a zero key: still keyed per credential, only less secret.
        let _ = getrandom::fill(&mut key);
        let slots = std::thread::available_parallelism().map_or(2, |n| n.get());
        Self {
            key,
            cache: Mutex::new(HashMap::new()),
            inflight: Mutex::new(HashMap::new()),
            stamp_path,
            seen: Mutex::new((stamp, 0)),
            shared: None,
            argon2_slots: Semaphore::new(slots),
            failures: Mutex::new(HashMap::new()),
            trusted_proxies,
        }
    }

    /// Several instances share the database: a password changed through any of them
    /// retires every instance's cached logins from its next request, and failures
    /// count across them.
    pub fn shared(self) -> Self {
        Self {
            shared: Some(Shared::default()),
            ..self
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
        let generation = match &self.shared {
            Some(shared) => shared.generation(db).await?,
            None => self.generation(),
        };
        let key = self.cache_key(&email, &password);
        if let Some(hit) = self.cached(&key, generation) {
            return Ok(hit);
        }
        let throttled = match (client, &self.shared) {
            (Some(ip), Some(shared)) => shared.throttled(db, failure_keys(ip, &email)).await,
            (Some(ip), None) => self.throttled(ip, &email),
            (None, _) => false,
        };
        if throttled {
            return Err(AuthFailure::Invalid);
        }
        let lookup_email = email.clone();
        let user = db
            .read(move |conn| db::users::find_by_email(conn, &lookup_email))
            .await
            .map_err(|e| match AuthFailure::of(&e) {
                Some(failure) => {
                    log::warn!("authentication lookup: {e:#}");
                    failure
                }
                None => {
                    log::error!("authentication lookup failed: {e:#}");
                    AuthFailure::Invalid
                }
            })?;
        let stored_hash = user.as_ref().map(|u| u.password_hash.clone());
        // Keyed by generation too: a verification against a hash read before a password
        // change is never handed to a request that came after it.
        let cell = self.inflight_cell((key, generation));
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
            .remove(&(key, generation));
        match verdict {
            Some(user) => {
                self.remember(key, user.clone(), generation);
                Ok(user)
            }
            None => {
                match (client, &self.shared) {
                    (Some(ip), Some(shared)) => {
                        shared.record_failure(db, failure_keys(ip, &email)).await
                    }
                    (Some(ip), None) => self.record_failure(ip, &email),
                    (None, _) => {}
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

    /// The users' generation now: it moves when `users.stamp` differs from the last look.
    fn generation(&self) -> Generation {
        let stamp = self.stamp_path.as_deref().and_then(users_stamp::read);
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.0 != stamp {
            *seen = (stamp, seen.1 + 1);
        }
        seen.1
    }

    fn cache_key(&self, email: &str, password: &str) -> CacheKey {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC accepts any key length");
        for part in [email.as_bytes(), password.as_bytes()] {
            mac.update(&(part.len() as u64).to_le_bytes());
            mac.update(part);
        }
        mac.finalize().into_bytes().into()
    }

    fn cached(&self, key: &CacheKey, generation: Generation) -> Option<AuthUser> {
        let cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache
            .get(key)
            .filter(|(_, expires, checked)| *checked == generation && *expires > Instant::now())
            .map(|(user, _, _)| user.clone())
    }

    fn inflight_cell(&self, key: (CacheKey, Generation)) -> Verification {
        let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        inflight.entry(key).or_default().clone()
    }

    fn remember(&self, key: CacheKey, user: AuthUser, generation: Generation) {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        if cache.len() >= CACHE_MAX {
            let now = Instant::now();
            cache.retain(|_, (_, expires, _)| *expires > now);
            if cache.len() >= CACHE_MAX {
                cache.clear();
            }
        }
        cache.insert(key, (user, Instant::now() + CACHE_TTL, generation));
    }
}

/// The failure counts an attempt adds to, with what each allows per window, as the
/// database keys them: the address, and the address with a digest of the email.
fn failure_keys(ip: IpAddr, email: &str) -> [(String, u32); 2] {
    use sha2::Digest;
    let digest = Sha256::digest(email.as_bytes());
    let email: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    [
        (format!("a:{ip}"), FAILURES_PER_ADDRESS),
        (format!("e:{ip}:{email}"), FAILURES_PER_EMAIL),
    ]
}

/// The users' stamp last read from the database, and its generation.
#[derive(Default)]
struct Shared {
    seen: Mutex<(Option<String>, Generation)>,
}

impl Shared {
    async fn generation(&self, db: &Db) -> Result<Generation, AuthFailure> {
        let stamp = db.read(db::users::stamp).await.map_err(|e| {
            log::warn!("reading the users' stamp: {e:#}");
            AuthFailure::of(&e).unwrap_or(AuthFailure::Busy)
        })?;
        let mut seen = self.seen.lock().unwrap_or_else(|p| p.into_inner());
        if seen.0 != stamp {
            *seen = (stamp, seen.1 + 1);
        }
        Ok(seen.1)
    }

    /// Whether any count is at its limit within the window. A database that does not
    /// answer throttles no one (the lookup that follows reports it).
    async fn throttled(&self, db: &Db, keys: [(String, u32); 2]) -> bool {
        let since = window_start();
        let over = db
            .read(move |conn| {
                for (key, allowed) in &keys {
                    if db::login_failures::count(conn, key, &since)? >= i64::from(*allowed) {
                        return Ok(true);
                    }
                }
                Ok(false)
            })
            .await;
        over.unwrap_or_else(|e| {
            log::warn!("reading failed logins: {e:#}");
            false
        })
    }

    async fn record_failure(&self, db: &Db, keys: [(String, u32); 2]) {
        let (now, since) = (crate::time::now(), window_start());
        let recorded = db
            .read(move |conn| {
                for (key, _) in &keys {
                    db::login_failures::record(conn, key, &now, &since)?;
                }
                // Now and then, the counts of past windows go.
                if rand::random_ratio(1, 100) {
                    db::login_failures::purge(conn, &since)?;
                }
                Ok(())
            })
            .await;
        if let Err(e) = recorded {
            log::warn!("recording a failed login: {e:#}");
        }
    }
}

/// Where the current failure window began, in the service's timestamp format.
fn window_start() -> String {
    let start = chrono::Utc::now() - chrono::Duration::from_std(FAILURE_WINDOW).unwrap_or_default();
    crate::time::format(start)
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
    // No user's email holds a NUL (nor could PostgreSQL's text compare one).
    if email.trim().is_empty() || password.is_empty() || email.contains('\0') {
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
        let a = Authenticator::new(vec![], None);
        let k = a.cache_key("a@b.c", "pw");
        assert_eq!(k, a.cache_key("a@b.c", "pw"));
        assert_ne!(k, a.cache_key("a@b.c", "pw2"));
        assert_ne!(k, a.cache_key("a@b.cpw", ""));
    }

    #[test]
    fn a_moved_stamp_retires_cached_logins() {
        let dir = tempfile::tempdir().expect("dir");
        let a = Authenticator::new(vec![], Some(dir.path()));
        let user = AuthUser {
            user_id: "u".into(),
            org_id: "o".into(),
        };
        let key = a.cache_key("a@b.c", "pw");
        let before = a.generation();
        a.remember(key, user.clone(), before);
        assert_eq!(a.cached(&key, a.generation()), Some(user.clone()));
        users_stamp::bump(dir.path()).expect("bump");
        let after = a.generation();
        assert_ne!(after, before);
        assert_eq!(a.cached(&key, after), None);
        // A verification that began before the change cannot be cached as current.
        a.remember(key, user, before);
        assert_eq!(a.cached(&key, a.generation()), None);
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().expect("ip")
    }

    #[test]
    fn an_email_is_throttled_per_address_and_others_are_not() {
        let a = Authenticator::new(vec![], None);
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
        let a = Authenticator::new(vec![], None);
        for i in 0..FAILURES_PER_ADDRESS {
            a.record_failure(ip("192.0.2.1"), &format!("u{i}@x.mx"));
        }
        assert!(a.throttled(ip("192.0.2.1"), "new@x.mx"));
        assert!(!a.throttled(ip("192.0.2.9"), "new@x.mx"));
    }

    #[test]
    fn forwarded_headers_count_only_from_a_trusted_proxy() {
        let direct = Authenticator::new(vec![], None);
        let peer = Some(ip("192.0.2.7"));
        assert_eq!(
            direct.client_address(peer, Some("203.0.113.1"), Some("203.0.113.2")),
            peer
        );
        let proxied = Authenticator::new(vec![ip("10.0.0.1"), ip("10.0.0.2")], None);
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
