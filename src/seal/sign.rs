//! Sealing and stamping, for documents the service makes itself (the sandbox's) and for
//! tests: a signer holds an RSA key and its certificate; as an authority it issues
//! certificates; as an issuer it seals a document, as the SAT it stamps one. Documents
//! are edited as text, only in the attributes the seal sets, so the rest stays as made.

use std::str::FromStr;
use std::time::Duration;

use base64::Engine;
use chrono::{DateTime, Utc};
use rsa::pkcs8::{DecodePrivateKey, EncodePublicKey};
use rsa::{Pkcs1v15Sign, RsaPrivateKey, RsaPublicKey};
use sha2_10::Digest;
use x509_cert::der::asn1::{BitString, GeneralizedTime, Null};
use x509_cert::der::{Decode, Encode};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::time::{Time, Validity};
use x509_cert::{TbsCertificate, Version};

use super::cadena::original_string;
use super::certificate::Certificate;
use super::crt::Crt;
use super::document::{Hash, Kind, Signed, Stamp};

const SHA256_RSA: &str = "1.2.840.113549.1.1.11";

/// An RSA key and the certificate of its public half.
#[derive(Debug, Clone)]
pub struct Signer {
    key: RsaPrivateKey,
    /// The key's CRT parts for fast signing (`None`: the `rsa` crate signs).
    crt: Option<Crt>,
    certificate: Certificate,
    certificate_base64: String,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn time(at: DateTime<Utc>) -> Result<Time, String> {
    let secs = u64::try_from(at.timestamp()).map_err(|_| "a date before 1970".to_string())?;
    GeneralizedTime::from_unix_duration(Duration::from_secs(secs))
        .map(Time::GeneralTime)
        .map_err(|e| e.to_string())
}

/// What a new certificate says: its subject (RFC 4514, e.g.
/// `CN=NAME,OU=Branch,2.5.4.45=RFC`), its serial (the SAT's 20 digits) and validity.
#[derive(Debug, Clone)]
pub struct Subject<'a> {
    pub name: &'a str,
    pub number: &'a str,
    pub valid_from: DateTime<Utc>,
    pub valid_to: DateTime<Utc>,
}

impl Signer {
    /// A PKCS#8 DER private key and its certificate's DER.
    pub fn new(key_pkcs8: &[u8], certificate: Certificate) -> Result<Self, String> {
        let key = RsaPrivateKey::from_pkcs8_der(key_pkcs8).map_err(|e| e.to_string())?;
        Ok(Self::from_parts(key, certificate))
    }

    fn from_parts(key: RsaPrivateKey, certificate: Certificate) -> Self {
        let certificate_base64 = b64(certificate.der());
        Signer {
            crt: Crt::of(&key),
            key,
            certificate,
            certificate_base64,
        }
    }

    /// An authority's self-signed certificate for a PKCS#8 DER key.
    pub fn self_signed(key_pkcs8: &[u8], subject: &Subject<'_>) -> Result<Self, String> {
        let key = RsaPrivateKey::from_pkcs8_der(key_pkcs8).map_err(|e| e.to_string())?;
        let public = RsaPublicKey::from(&key);
        let name = Name::from_str(subject.name).map_err(|e| e.to_string())?;
        let der = build(&key, name, subject, &public)?;
        Ok(Self::from_parts(key, Certificate::from_der(&der)?))
    }

    pub fn certificate(&self) -> &Certificate {
        &self.certificate
    }

    /// Issues a certificate for `public` (a PKCS#8 DER private key's public half).
    pub fn issue(&self, key_pkcs8: &[u8], subject: &Subject<'_>) -> Result<Signer, String> {
        let key = RsaPrivateKey::from_pkcs8_der(key_pkcs8).map_err(|e| e.to_string())?;
        let public = RsaPublicKey::from(&key);
        let der = build_issued(&self.key, &self.certificate, subject, &public)?;
        Ok(Self::from_parts(key, Certificate::from_der(&der)?))
    }

    /// Base64 of the RSA PKCS#1 v1.5 signature of `message` hashed with `hash`.
    pub fn sign(&self, hash: Hash, message: &[u8]) -> Result<String, String> {
        let (scheme, digest) = match hash {
            Hash::Sha1 => (
                Pkcs1v15Sign::new::<sha1::Sha1>(),
                sha1::Sha1::digest(message).to_vec(),
            ),
            Hash::Sha256 => (
                Pkcs1v15Sign::new::<sha2_10::Sha256>(),
                sha2_10::Sha256::digest(message).to_vec(),
            ),
        };
        let signature = match &self.crt {
            Some(crt) => crt.sign(&scheme, &digest),
            None => self.key.sign(scheme, &digest).map_err(|e| e.to_string()),
        };
        signature.map(|s| b64(&s))
    }

    /// Seals a document as its issuer: writes the certificate's number and the
    /// certificate, then the seal over the original string. The stamp, if any, is
    /// left as it is (stamp it after). A document that already names this certificate
    /// (the sandbox writes it) is parsed once.
    pub fn seal_document(&self, xml: &str) -> Result<String, String> {
        let number = self.certificate.number();
        let (kind, root, ready) = {
            let doc = parse(xml)?;
            let root = doc.root_element();
            let kind = Kind::of(root).ok_or("not a sealed class")?;
            let (_, cert_attr, number_attr) = kind.seal_attributes().ok_or("not a sealed class")?;
            let named = root.attribute(number_attr) == Some(number.as_str())
                && root.attribute(cert_attr) == Some(self.certificate_base64.as_str());
            let ready = named.then(|| original_string(kind, root)).transpose()?;
            (kind, root.range().start, ready)
        };
        let (seal_attr, cert_attr, number_attr) =
            kind.seal_attributes().ok_or("not a sealed class")?;
        let (xml, cadena) = match ready {
            Some(cadena) => (xml.to_string(), cadena),
            None => {
                let xml = set_attribute(xml, root, number_attr, &number)?;
                let xml = set_attribute(&xml, root, cert_attr, &self.certificate_base64)?;
                let cadena = original_string(kind, parse(&xml)?.root_element())?;
                (xml, cadena)
            }
        };
        let hash = kind.hashes().last().copied().unwrap_or(Hash::Sha256);
        let seal = self.sign(hash, cadena.as_bytes())?;
        set_attribute(&xml, root, seal_attr, &seal)
    }

    /// Seals a document as its issuer and stamps it as `sat`, parsing the document
    /// once: the stamp's original string is built from the stamp alone (as the SAT
    /// builds it), so when the stamp declares its own namespace (the sandbox's and the
    /// SAT's do) only that element is parsed again. Anything else takes the two steps.
    pub fn seal_and_stamp(&self, sat: &Signer, xml: &str) -> Result<String, String> {
        let number = self.certificate.number();
        let sat_number = sat.certificate.number();
        let sealed = {
            let doc = parse(xml)?;
            let root = doc.root_element();
            let signed = Signed::read(root).ok_or("not a sealed class")?;
            let (seal_attr, cert_attr, number_attr) =
                signed.kind.seal_attributes().ok_or("not a sealed class")?;
            let named = root.attribute(number_attr) == Some(number.as_str())
                && root.attribute(cert_attr) == Some(self.certificate_base64.as_str());
            match (named, signed.stamp) {
                (true, Some(stamp)) => {
                    let cadena = original_string(signed.kind, root)?;
                    let hash = signed.kind.hashes().last().copied().unwrap_or(Hash::Sha256);
                    let seal = self.sign(hash, cadena.as_bytes())?;
                    Some((seal_attr, root.range().start, seal, stamp.range()))
                }
                _ => None,
            }
        };
        let Some((seal_attr, root, seal, stamp)) = sealed else {
            return sat.stamp_document(&self.seal_document(xml)?);
        };
        let alone = set_attribute(&xml[stamp.clone()], 0, "SelloCFD", &seal)?;
        let alone = set_attribute(&alone, 0, "NoCertificadoSAT", &sat_number)?;
        let cadena = {
            let Ok(doc) = roxmltree::Document::parse(&alone) else {
                return sat.stamp_document(&self.seal_document(xml)?);
            };
            let node = doc.root_element();
            let kind = Stamp::read(node)
                .kind
                .ok_or("the stamp's version is not 1.0 or 1.1")?;
            (kind, original_string(kind, node)?)
        };
        let sat_seal = sat.sign(cadena.0.hashes()[0], cadena.1.as_bytes())?;
        let alone = set_attribute(&alone, 0, "SelloSAT", &sat_seal)?;
        // The stamp comes after the root's start tag: replace it first, then the seal.
        let spliced = format!("{}{alone}{}", &xml[..stamp.start], &xml[stamp.end..]);
        set_attribute(&spliced, root, seal_attr, &seal)
    }

    /// Stamps a sealed document as the SAT: its TimbreFiscalDigital (1.0 or 1.1) takes
    /// the document's seal, this certificate's number and the SAT's seal over the stamp.
    pub fn stamp_document(&self, xml: &str) -> Result<String, String> {
        let number = self.certificate.number();
        let (start, seal, ready) = {
            let doc = parse(xml)?;
            let signed = Signed::read(doc.root_element()).ok_or("not a sealed class")?;
            let node = signed
                .stamp
                .ok_or("the document has no TimbreFiscalDigital")?;
            let stamp = Stamp::read(node);
            let seal = signed.seal.unwrap_or("").to_string();
            let ready = if stamp.seal_cfd == Some(seal.as_str())
                && stamp.sat_certificate_number == Some(number.as_str())
            {
                let kind = stamp.kind.ok_or("the stamp's version is not 1.0 or 1.1")?;
                Some((kind, original_string(kind, node)?))
            } else {
                None
            };
            (node.range().start, seal, ready)
        };
        let (xml, (kind, cadena)) = match ready {
            Some(ready) => (xml.to_string(), ready),
            None => {
                let xml = set_attribute(xml, start, "SelloCFD", &seal)?;
                let xml = set_attribute(&xml, start, "NoCertificadoSAT", &number)?;
                let doc = parse(&xml)?;
                let node = doc
                    .descendants()
                    .find(|n| n.range().start == start)
                    .ok_or("the stamp moved")?;
                let kind = Stamp::read(node)
                    .kind
                    .ok_or("the stamp's version is not 1.0 or 1.1")?;
                let cadena = original_string(kind, node)?;
                drop(doc);
                (xml, (kind, cadena))
            }
        };
        let sat_seal = self.sign(kind.hashes()[0], cadena.as_bytes())?;
        set_attribute(&xml, start, "SelloSAT", &sat_seal)
    }
}

fn parse(xml: &str) -> Result<roxmltree::Document<'_>, String> {
    roxmltree::Document::parse(xml).map_err(|e| e.to_string())
}

fn algorithm() -> Result<AlgorithmIdentifierOwned, String> {
    Ok(AlgorithmIdentifierOwned {
        oid: x509_cert::der::oid::ObjectIdentifier::new(SHA256_RSA).map_err(|e| e.to_string())?,
        parameters: Some(Null.into()),
    })
}

fn build(
    key: &RsaPrivateKey,
    name: Name,
    subject: &Subject<'_>,
    public: &RsaPublicKey,
) -> Result<Vec<u8>, String> {
    sign_tbs(key, name.clone(), name, subject, public)
}

fn build_issued(
    key: &RsaPrivateKey,
    issuer: &Certificate,
    subject: &Subject<'_>,
    public: &RsaPublicKey,
) -> Result<Vec<u8>, String> {
    let issuer_name = x509_cert::Certificate::from_der(issuer.der())
        .map_err(|e| e.to_string())?
        .tbs_certificate
        .subject;
    let name = Name::from_str(subject.name).map_err(|e| e.to_string())?;
    sign_tbs(key, issuer_name, name, subject, public)
}

fn sign_tbs(
    key: &RsaPrivateKey,
    issuer: Name,
    name: Name,
    subject: &Subject<'_>,
    public: &RsaPublicKey,
) -> Result<Vec<u8>, String> {
    let spki_der = public.to_public_key_der().map_err(|e| e.to_string())?;
    let tbs = TbsCertificate {
        version: Version::V3,
        serial_number: SerialNumber::new(subject.number.as_bytes()).map_err(|e| e.to_string())?,
        signature: algorithm()?,
        issuer,
        validity: Validity {
            not_before: time(subject.valid_from)?,
            not_after: time(subject.valid_to)?,
        },
        subject: name,
        subject_public_key_info: SubjectPublicKeyInfoOwned::from_der(spki_der.as_bytes())
            .map_err(|e| e.to_string())?,
        issuer_unique_id: None,
        subject_unique_id: None,
        extensions: None,
    };
    let tbs_der = tbs.to_der().map_err(|e| e.to_string())?;
    let signature = key
        .sign(
            Pkcs1v15Sign::new::<sha2_10::Sha256>(),
            &sha2_10::Sha256::digest(&tbs_der),
        )
        .map_err(|e| e.to_string())?;
    let cert = x509_cert::Certificate {
        tbs_certificate: tbs,
        signature_algorithm: algorithm()?,
        signature: BitString::from_bytes(&signature).map_err(|e| e.to_string())?,
    };
    cert.to_der().map_err(|e| e.to_string())
}

/// The end of the start tag that begins at `start` (the `>`), quotes respected.
fn start_tag_end(xml: &str, start: usize) -> Option<usize> {
    let mut quote = None;
    for (i, c) in xml[start..].char_indices() {
        match (quote, c) {
            (None, '"' | '\'') => quote = Some(c),
            (Some(q), c) if c == q => quote = None,
            (None, '>') => return Some(start + i),
            _ => {}
        }
    }
    None
}

/// `xml` with the attribute `name` of the element whose start tag begins at byte
/// `start` set to `value` (replaced where it is, else added at the tag's end). Values
/// written here are base64 and digits: nothing to escape.
pub fn set_attribute(xml: &str, start: usize, name: &str, value: &str) -> Result<String, String> {
    if !xml[start..].starts_with('<') {
        return Err("no element starts there".into());
    }
    let end = start_tag_end(xml, start).ok_or("an unterminated start tag")?;
    let tag = &xml[start..end];
    let mut quote = None;
    let bytes = tag.as_bytes();
    let mut i = 0;
    while i < tag.len() {
        let c = bytes[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            None => {
                let before_ok = i > 0 && bytes[i - 1].is_ascii_whitespace();
                if before_ok && tag[i..].starts_with(name) {
                    let rest = tag[i + name.len()..].trim_start();
                    if let Some(after_eq) = rest.strip_prefix('=') {
                        let after_eq = after_eq.trim_start();
                        let q = after_eq
                            .chars()
                            .next()
                            .ok_or("an attribute without value")?;
                        let value_start = end - after_eq.len() + 1;
                        let close = after_eq[1..].find(q).ok_or("an unterminated value")?;
                        let value_end = value_start + close;
                        return Ok(format!(
                            "{}{value}{}",
                            &xml[..value_start],
                            &xml[value_end..]
                        ));
                    }
                }
            }
        }
        i += 1;
    }
    let insert = if tag.ends_with('/') { end - 1 } else { end };
    Ok(format!(
        "{} {name}=\"{value}\"{}",
        &xml[..insert],
        &xml[insert..]
    ))
}
