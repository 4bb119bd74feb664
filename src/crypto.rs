//! Secrets at rest and on the wire: the CIEC password is sealed with ChaCha20-Poly1305
//! (key in `secret.key` in the data directory, or given by the environment), and
//! webhook tokens are `whsec_` + base64 of 32 random bytes (a Standard Webhooks secret).

use crate::db::{self, Conn};
use anyhow::{bail, Context};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use chacha20poly1305::aead::Aead;
use chacha20poly1305::KeyInit as _;
use chacha20poly1305::{ChaCha20Poly1305, Key, Nonce};
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;
use std::path::Path;

const NONCE_LEN: usize = 12;

/// The name of the key fingerprint in `settings`.
const KEY_CHECK: &str = "key_check";

#[derive(Clone)]
pub struct Cipher {
    aead: ChaCha20Poly1305,
    key: [u8; 32],
}

impl Cipher {
    pub fn from_key(key: &[u8; 32]) -> Self {
        Self {
            aead: ChaCha20Poly1305::new(Key::from_slice(key)),
            key: *key,
        }
    }

    /// The key from `configured` (base64) or else from the key file, created with mode
    /// 0600 on first use, checked against what `conn`'s database was sealed with. A
    /// missing key file next to sealed credentials, or a key that cannot open them, is
    /// an error: silently starting with a new key would make every stored credential
    /// unreadable.
    pub fn load(conn: &Conn, configured: Option<&str>, key_file: &Path) -> anyhow::Result<Cipher> {
        let cipher = match Self::verify(conn, configured, key_file)? {
            Some(cipher) => cipher,
            None => {
                let key = random_bytes::<32>()?;
                crate::data_dir::create_private(key_file, STANDARD.encode(key).as_bytes())?;
                Self::from_key(&key)
            }
        };
        if db::settings::get(conn, KEY_CHECK)?.is_none() {
            db::settings::set(conn, KEY_CHECK, &cipher.key_check())?;
        }
        Ok(cipher)
    }

    /// `load` without writing anything (for `cfdi-extract check` and backups): the key
    /// `serve` would use, refused when missing or different as `load` refuses it; None
    /// when there is no key yet and nothing needs one (the first start creates it).
    pub fn verify(
        conn: &Conn,
        configured: Option<&str>,
        key_file: &Path,
    ) -> anyhow::Result<Option<Cipher>> {
        let recorded = db::settings::get(conn, KEY_CHECK)?;
        let sealed_sample = db::entities::any_ciphertext(conn)?;
        let cipher = if let Some(b64) = configured {
            Self::from_key(&decode_key(b64).context("invalid encryption key")?)
        } else if key_file.exists() {
            let text = std::fs::read_to_string(key_file)
                .with_context(|| format!("cannot read {}", key_file.display()))?;
            let key = decode_key(&text)
                .with_context(|| format!("{} does not hold a valid key", key_file.display()))?;
            Self::from_key(&key)
        } else if recorded.is_some() || sealed_sample.is_some() {
            bail!(
                "{} is missing, but the database holds credentials sealed with it: restore the key file from your backup (or pass --encryption-key); refusing to start with a new key that could not open them",
                key_file.display()
            );
        } else {
            return Ok(None);
        };
        let matches = match (&recorded, &sealed_sample) {
            (Some(r), _) => *r == cipher.key_check(),
            (None, Some(sample)) => cipher.open(sample).is_ok(),
            (None, None) => true,
        };
        if !matches {
            bail!(
                "the encryption key ({}) is not the one this database's credentials were sealed with: restore the original key",
                configured.map_or_else(|| key_file.display().to_string(), |_| "--encryption-key".into())
            );
        }
        Ok(Some(cipher))
    }

    /// A key as `secret.key` holds it (base64).
    pub fn from_key_text(text: &str) -> anyhow::Result<Cipher> {
        Ok(Self::from_key(&decode_key(text)?))
    }

    /// The key as `secret.key` holds it (base64), for `backup --with-key`.
    pub fn key_text(&self) -> String {
        STANDARD.encode(self.key)
    }

    /// A fingerprint of the key that reveals nothing about it (a keyed hash of a
    /// constant), stored so a later start can tell whether it has the same key.
    fn key_check(&self) -> String {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key)
            .expect("HMAC accepts any key length");
        mac.update(b"cfdi-extract key check v1");
        STANDARD.encode(mac.finalize().into_bytes())
    }

    /// nonce || ciphertext
    pub fn seal(&self, plaintext: &str) -> anyhow::Result<Vec<u8>> {
        self.seal_bytes(plaintext.as_bytes())
    }

    /// A webhook's token as `db` stores it: sealed, or plain from schema 1.
    pub fn open_token(&self, token: &db::webhooks::Token) -> anyhow::Result<String> {
        match token {
            db::webhooks::Token::Sealed(sealed) => self.open(sealed),
            db::webhooks::Token::Plain(plain) => Ok(plain.clone()),
        }
    }

    pub fn open(&self, sealed: &[u8]) -> anyhow::Result<String> {
        Ok(String::from_utf8(self.open_bytes(sealed)?)?)
    }

    /// `seal` for binary secrets (an e.firma's key file).
    pub fn seal_bytes(&self, plaintext: &[u8]) -> anyhow::Result<Vec<u8>> {
        let nonce = random_bytes::<NONCE_LEN>()?;
        let mut out = nonce.to_vec();
        let sealed = self
            .aead
            .encrypt(Nonce::from_slice(&nonce), plaintext)
            .map_err(|_| anyhow::anyhow!("encryption failed"))?;
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    pub fn open_bytes(&self, sealed: &[u8]) -> anyhow::Result<Vec<u8>> {
        if sealed.len() < NONCE_LEN {
            bail!("sealed value too short");
        }
        let (nonce, body) = sealed.split_at(NONCE_LEN);
        self.aead
            .decrypt(Nonce::from_slice(nonce), body)
            .map_err(|_| {
                anyhow::anyhow!("cannot decrypt a stored credential: wrong encryption key?")
            })
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

    fn memory_db() -> crate::db::Memory {
        crate::db::Memory::new()
    }

    #[test]
    fn key_file_is_created_private_and_reused() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("secret.key");
        let conn = memory_db();
        let a = Cipher::load(&conn, None, &path).expect("create");
        let sealed = a.seal("x").expect("seal");
        let b = Cipher::load(&conn, None, &path).expect("reuse");
        assert_eq!(b.open(&sealed).expect("open"), "x");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).expect("meta").permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn a_missing_or_different_key_is_refused_once_the_database_knows_one() {
        let dir = tempfile::tempdir().expect("tmp");
        let path = dir.path().join("secret.key");
        let conn = memory_db();
        Cipher::load(&conn, None, &path).expect("create");
        std::fs::remove_file(&path).expect("rm");
        let missing = Cipher::load(&conn, None, &path).err().expect("refused");
        assert!(missing.to_string().contains("is missing"), "{missing}");
        assert!(!path.exists(), "no new key is written");
        let other = STANDARD.encode([9u8; 32]);
        let wrong = Cipher::load(&conn, Some(&other), &path)
            .err()
            .expect("refused");
        assert!(wrong.to_string().contains("not the one"), "{wrong}");
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
