//! A stored content's key: the first 16 bytes of its SHA-256, in lowercase hex. The
//! `seal` objects are kept once each under it (`db::seals`); PostgreSQL's version 27
//! step computes the same in SQL (`left(encode(sha256(...), 'hex'), 32)`).

use sha2::{Digest, Sha256};
use std::fmt::Write;

pub fn of(content: &str) -> String {
    Sha256::digest(content.as_bytes())[..16]
        .iter()
        .fold(String::with_capacity(32), |mut hex, b| {
            let _ = write!(hex, "{b:02x}");
            hex
        })
}

#[cfg(test)]
mod tests {
    /// The digest's first half, as `sha256sum` and PostgreSQL print it.
    #[test]
    fn is_the_first_half_of_the_sha256_in_hex() {
        assert_eq!(super::of(""), "e3b0c44298fc1c149afbf4c8996fb924");
        assert_eq!(super::of("abc"), "ba7816bf8f01cfea414140de5dae2223");
    }
}
