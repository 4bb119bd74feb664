//! Secrets at rest and on the wire: the CIEC password is sealed with ChaCha20-Poly1305
//! (key in `secret.key` in the data directory, or given by the environment), and
//! webhook tokens are `whsec_` + base64 of 32 random bytes (a Standard Webhooks secret).

use anyhow::{bail, Context};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use std::path::Path;

const NONCE_LEN: usize = 12;

#[derive(Clone)]
pub struct Cipher {
    aead: ChaCha20Poly1305,
}

impl Cipher {
    pub fn from_key(key: &[u8; 32]) -> Self {
        Self {
            aead: ChaCha20Poly1305::new(Key::from_slice(key)),
        }
    }

    /// The key from `configured` (base64) or else from the key file, created with mode
    /// 0600 on first use.
    pub fn load(configured: Option<&str>, key_file: &Path) -> anyhow::Result<Cipher> {
        if let Some(b64) = configured {
            return Ok(Self::from_key(
                &decode_key(b64).context("invalid encryption key")?,
            ));
        }
        if key_file.exists() {
            let text = std::fs::read_to_string(key_file)
                .with_context(|| format!("cannot read {}", key_file.display()))?;
            let key = decode_key(&text)
                .with_context(|| format!("{} does not hold a valid key", key_file.display()))?;
            return Ok(Self::from_key(&key));
        }
        let key = random_bytes::<32>()?;
        write_private(key_file, &STANDARD.encode(key))?;
        Ok(Self::from_key(&key))
    }

    /// nonce || ciphertext
    pub fn seal(&self, plaintext: &str) -> anyhow::Result<Vec<u8>> {
        let nonce = random_bytes::<NONCE_LEN>()?;
        let mut out = nonce.to_vec();
        let sealed = self
            .aead
            .encrypt(Nonce::from_slice(&nonce), plaintext.as_bytes())
            .map_err(|_| anyhow::anyhow!("encryption failed"))?;
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    pub fn open(&self, sealed: &[u8]) -> anyhow::Result<String> {
        if sealed.len() < NONCE_LEN {
            bail!("sealed value too short");
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        let plain = self
            .aead
            .decrypt(Nonce::from_slice(nonce), body)
            .map_err(|_| {
                anyhow::anyhow!("cannot decrypt a stored credential: wrong encryption key?")
            })?;
        Ok(String::from_utf8(plain)?)
    }
}

fn decode_key(b64: &str) -> anyhow::Result<[u8; 32]> {
    let bytes = STANDARD.decode(b64.trim())?;
    bytes
        .try_into()
        .map_err(|_| anyhow::anyhow!("the key must be 32 bytes, base64-encoded"))
}

pub fn random_bytes<const N: usize>() -> anyhow::Result<[u8; N]> {
    let mut buf = [0u8; N];
    getrandom::fill(&mut buf).map_err(|e| anyhow::anyhow!("no system randomness: {e}"))?;
    Ok(buf)
}

/// A new webhook token / signing secret.
pub fn webhook_token() -> anyhow::Result<String> {
    Ok(format!("whsec_{}", STANDARD.encode(random_bytes::<32>()?)))
}

#[cfg(unix)]
fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(contents.as_bytes())?;
    f.sync_all()?;
    Ok(())
}

#[cfg(not(unix))]
fn write_private(path: &Path, contents: &str) -> anyhow::Result<()> {
    std::fs::write(path, contents).with_context(|| format!("cannot create {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_round_trips_and_detects_tampering() {
        let c = Cipher::from_key(&[7u8; 32]);
        let sealed = c.seal("abc12345").expect("seal");
        assert!(!sealed.windows(8).any(|w| w == b"abc12345"));
        assert_eq!(c.open(&sealed).expect("open"), "abc12345");
        let mut bad = sealed.clone();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        assert!(c.open(&bad).is_err());
        assert!(Cipher::from_key(&[8u8; 32]).open(&sealed).is_err());
    }

    #[test]
    fn key_file_is_created_private_and_reused() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("secret.key");
        let a = Cipher::load(None, &path).expect("create");
        let sealed = a.seal("x").expect("seal");
        let b = Cipher::load(None, &path).expect("reuse");
        assert_eq!(b.open(&sealed).expect("open"), "x");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn tokens_are_whsec_with_32_bytes() {
        let t = webhook_token().expect("token");
        let raw = STANDARD
            .decode(t.strip_prefix("whsec_").expect("prefix"))
            .expect("b64");
        assert_eq!(raw.len(), 32);
    }
}
