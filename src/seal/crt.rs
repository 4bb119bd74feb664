//! RSA PKCS#1 v1.5 signing by the Chinese remainder theorem in num-bigint 0.4, whose
//! Montgomery `modpow` on 64-bit digits signs several times faster than the `rsa`
//! crate's own arithmetic (bench/seal.rs: `seal_sandbox_sign_rate`): the sandbox signs
//! every document it makes twice. Not constant-time, which the sandbox's public keys do
//! not need; the `rsa` crate still verifies, and the tests hold both to one signature.

use num_bigint::BigUint;
use rsa::traits::{PrivateKeyParts, PublicKeyParts};
use rsa::{Pkcs1v15Sign, RsaPrivateKey};

/// A private key's CRT parts.
#[derive(Debug, Clone)]
pub(super) struct Crt {
    p: BigUint,
    q: BigUint,
    dp: BigUint,
    dq: BigUint,
    qinv: BigUint,
    /// The modulus's length in bytes: the signature's.
    size: usize,
}

fn big(n: &rsa::BigUint) -> BigUint {
    BigUint::from_bytes_be(&n.to_bytes_be())
}

impl Crt {
    /// `None` for a key of other than two primes.
    pub fn of(key: &RsaPrivateKey) -> Option<Crt> {
        let [p, q] = key.primes() else {
            return None;
        };
        let (p, q, d) = (big(p), big(q), big(key.d()));
        let one = BigUint::from(1u8);
        Some(Crt {
            dp: &d % (&p - &one),
            dq: &d % (&q - &one),
            qinv: q.modinv(&p)?,
            p,
            q,
            size: key.size(),
        })
    }

    /// The signature of `digest` (the message's hash) with `scheme`'s DigestInfo prefix.
    pub fn sign(&self, scheme: &Pkcs1v15Sign, digest: &[u8]) -> Result<Vec<u8>, String> {
        // EM = 0x00 0x01 PS(0xff...) 0x00 DigestInfo, as long as the modulus.
        let t = scheme.prefix.len() + digest.len();
        if self.size < t + 11 {
            return Err("the key is too short for this hash".into());
        }
        let mut em = vec![0xff; self.size];
        em[0] = 0;
        em[1] = 1;
        em[self.size - t - 1] = 0;
        em[self.size - t..self.size - digest.len()].copy_from_slice(&scheme.prefix);
        em[self.size - digest.len()..].copy_from_slice(digest);
        let c = BigUint::from_bytes_be(&em);
        let m1 = c.modpow(&self.dp, &self.p);
        let m2 = c.modpow(&self.dq, &self.q);
        // h = qinv (m1 - m2) mod p; s = m2 + h q.
        let h = (&self.qinv * (&m1 + &self.p - (&m2 % &self.p))) % &self.p;
        let s = (m2 + h * &self.q).to_bytes_be();
        let mut signature = vec![0; self.size - s.len()];
        signature.extend_from_slice(&s);
        Ok(signature)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rsa::pkcs8::DecodePrivateKey;
    use sha2_10::Digest;

    /// PKCS#1 v1.5 is deterministic: the CRT's signature is the `rsa` crate's, byte for
    /// byte, for the sandbox's 512-bit keys and its 2048-bit authority, with both hashes.
    #[test]
    fn signs_exactly_as_the_rsa_crate() {
        let keys: [&[u8]; 3] = [
            include_bytes!("../sandbox/docs/keys/issuer0.der"),
            include_bytes!("../sandbox/docs/keys/sat.der"),
            include_bytes!("../sandbox/docs/keys/authority.der"),
        ];
        for der in keys {
            let key = RsaPrivateKey::from_pkcs8_der(der).unwrap();
            let crt = Crt::of(&key).unwrap();
            for message in [&b""[..], b"||4.0|A|1|2025-03-01T10:00:00||", &[0xff; 300]] {
                let sha1 = sha1::Sha1::digest(message);
                let sha256 = sha2_10::Sha256::digest(message);
                let (s1, s256) = (
                    Pkcs1v15Sign::new::<sha1::Sha1>(),
                    Pkcs1v15Sign::new::<sha2_10::Sha256>(),
                );
                assert_eq!(
                    crt.sign(&s1, &sha1).unwrap(),
                    key.sign(Pkcs1v15Sign::new::<sha1::Sha1>(), &sha1).unwrap()
                );
                assert_eq!(
                    crt.sign(&s256, &sha256).unwrap(),
                    key.sign(Pkcs1v15Sign::new::<sha2_10::Sha256>(), &sha256)
                        .unwrap()
                );
            }
        }
    }
}
