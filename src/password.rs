//! argon2id password hashing with explicit parameters (OWASP's m=19 MiB, t=2, p=1).

use argon2::{Algorithm, Argon2, Params, PasswordHash, PasswordHasher, PasswordVerifier, Version};
use std::sync::LazyLock;

fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("static argon2 parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

pub fn hash(password: &str) -> anyhow::Result<String> {
    argon2()
        .hash_password(password.as_bytes())
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("cannot hash password: {e}"))
}

/// A hash of a random password, verified against when the email is unknown so that
/// the answer costs the same as a wrong password.
static DUMMY_HASH: LazyLock<String> = LazyLock::new(|| {
    let mut bytes = [0u8; 16];
    let _ = getrandom::fill(&mut bytes);
    hash(&base64_engine_encode(&bytes)).unwrap_or_default()
});

fn base64_engine_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Verifies `password` against a PHC string; `None` verifies against the dummy hash
/// (and always fails).
pub fn verify(password: &str, phc: Option<&str>) -> bool {
    let Some(phc) = phc else {
        let _ = check(password, &DUMMY_HASH);
        return false;
    };
    check(password, phc)
}

fn check(password: &str, phc: &str) -> bool {
    match PasswordHash::new(phc) {
        Ok(parsed) => argon2()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_argon2id_and_verify() {
        let h = hash("correct horse").expect("hash");
        assert!(h.starts_with("$argon2id$"));
        assert!(verify("correct horse", Some(&h)));
        assert!(!verify("wrong horse", Some(&h)));
        assert!(!verify("correct horse", None));
        assert!(!verify("x", Some("not a phc string")));
    }
}
