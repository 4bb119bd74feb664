//! An X.509 certificate as the SAT issues them (CSD, e.firma, its own stamping
//! certificates): its number as the SAT writes it, the holder's RFC, validity, and RSA
//! signatures checked with its key, including its issuer's signature over it.

use base64::Engine;
use chrono::{DateTime, Utc};
use rsa::pkcs8::DecodePublicKey;
use rsa::{Pkcs1v15Sign, RsaPublicKey};
use sha2_10::Digest;
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::der::{Decode, Encode};

use super::document::Hash;
use super::names::{self, serial_text};

const SHA1_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.5");
const SHA256_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const SHA384_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const SHA512_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");

#[derive(Debug, Clone)]
pub struct Certificate {
    der: Vec<u8>,
    cert: x509_cert::Certificate,
    key: Option<RsaPublicKey>,
}

impl PartialEq for Certificate {
    fn eq(&self, other: &Self) -> bool {
        self.der == other.der
    }
}

impl Certificate {
    pub fn from_der(der: &[u8]) -> Result<Self, String> {
        let cert = x509_cert::Certificate::from_der(der)
            .map_err(|_| "is not a readable X.509 certificate".to_string())?;
        let key = cert
            .tbs_certificate
            .subject_public_key_info
            .to_der()
            .ok()
            .and_then(|spki| RsaPublicKey::from_public_key_der(&spki).ok());
        Ok(Certificate {
            der: der.to_vec(),
            cert,
            key,
        })
    }

    /// A certificate as CFDI carry it: base64 of the DER, blanks allowed.
    pub fn from_base64(text: &str) -> Result<Self, String> {
        let compact: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(compact)
            .map_err(|_| "is not base64".to_string())?;
        Self::from_der(&der)
    }

    /// A `.cer` file: DER, or PEM.
    pub fn from_file_bytes(bytes: &[u8]) -> Result<Self, String> {
        let text = std::str::from_utf8(bytes)
            .ok()
            .filter(|t| t.contains("-----BEGIN"));
        match text {
            Some(pem) => {
                let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
                Self::from_base64(&body)
            }
            None => Self::from_der(bytes),
        }
    }

    pub fn der(&self) -> &[u8] {
        &self.der
    }

    /// The serial number as the SAT writes it (`NoCertificado`): the serial's bytes are
    /// ASCII digits, read as text.
    pub fn number(&self) -> String {
        serial_text(self.cert.tbs_certificate.serial_number.as_bytes())
    }

    /// The holder's RFC (`x500UniqueIdentifier`, `RFC / representative's RFC`).
    pub fn rfc(&self) -> Option<String> {
        names::values(&self.cert.tbs_certificate.subject, names::UNIQUE_IDENTIFIER)
            .into_iter()
            .next()
            .and_then(|v| v.split('/').next().map(|r| r.trim().to_uppercase()))
            .filter(|r| !r.is_empty())
    }

    pub fn name(&self) -> Option<String> {
        names::values(&self.cert.tbs_certificate.subject, names::COMMON_NAME)
            .into_iter()
            .next()
    }

    /// The issuer's common name, for reasons.
    pub fn issuer_name(&self) -> String {
        names::values(&self.cert.tbs_certificate.issuer, names::COMMON_NAME)
            .into_iter()
            .next()
            .unwrap_or_else(|| "an unnamed authority".into())
    }

    /// A CSD (certificado de sello digital) names the branch in `OU`; an e.firma
    /// does not (the rule `sat::efirma` also applies).
    pub fn is_csd(&self) -> bool {
        !names::values(
            &self.cert.tbs_certificate.subject,
            names::ORGANIZATIONAL_UNIT,
        )
        .is_empty()
    }

    pub fn valid_from(&self) -> DateTime<Utc> {
        utc(self.cert.tbs_certificate.validity.not_before)
    }

    pub fn valid_to(&self) -> DateTime<Utc> {
        utc(self.cert.tbs_certificate.validity.not_after)
    }

    /// Whether `signature` is this certificate's key's RSA PKCS#1 v1.5 signature of
    /// `message` hashed with `hash`.
    pub fn verifies(&self, hash: Hash, message: &[u8], signature: &[u8]) -> bool {
        let Some(key) = &self.key else {
            return false;
        };
        match hash {
            Hash::Sha1 => {
                let digest = sha1::Sha1::digest(message);
                key.verify(Pkcs1v15Sign::new::<sha1::Sha1>(), &digest, signature)
                    .is_ok()
            }
            Hash::Sha256 => {
                let digest = sha2_10::Sha256::digest(message);
                key.verify(Pkcs1v15Sign::new::<sha2_10::Sha256>(), &digest, signature)
                    .is_ok()
            }
        }
    }

    /// Whether `issuer` issued this certificate: its subject is this one's issuer and
    /// its key verifies this one's signature.
    pub fn issued_by(&self, issuer: &Certificate) -> bool {
        let tbs = &self.cert.tbs_certificate;
        if tbs.issuer != issuer.cert.tbs_certificate.subject {
            return false;
        }
        let (Some(key), Ok(signed)) = (&issuer.key, tbs.to_der()) else {
            return false;
        };
        let Some(signature) = self.cert.signature.as_bytes() else {
            return false;
        };
        let oid = self.cert.signature_algorithm.oid;
        let ok = if oid == SHA1_RSA {
            key.verify(
                Pkcs1v15Sign::new::<sha1::Sha1>(),
                &sha1::Sha1::digest(&signed),
                signature,
            )
        } else if oid == SHA256_RSA {
            let d = sha2_10::Sha256::digest(&signed);
            key.verify(Pkcs1v15Sign::new::<sha2_10::Sha256>(), &d, signature)
        } else if oid == SHA384_RSA {
            let d = sha2_10::Sha384::digest(&signed);
            key.verify(Pkcs1v15Sign::new::<sha2_10::Sha384>(), &d, signature)
        } else if oid == SHA512_RSA {
            let d = sha2_10::Sha512::digest(&signed);
            key.verify(Pkcs1v15Sign::new::<sha2_10::Sha512>(), &d, signature)
        } else {
            return false;
        };
        ok.is_ok()
    }
}

fn utc(time: x509_cert::time::Time) -> DateTime<Utc> {
    let secs = i64::try_from(time.to_unix_duration().as_secs()).unwrap_or(i64::MAX);
    DateTime::from_timestamp(secs, 0).unwrap_or(DateTime::<Utc>::MAX_UTC)
}
