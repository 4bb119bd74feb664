//! XML-DSig for the few fixed shapes the web service takes. The project writes those
//! shapes already in exclusive canonical form (C14N: attributes sorted, explicit end
//! tags, namespace declarations where first used, C14N escaping), so the digest is the
//! SHA-1 of the text built, and no general canonicalizer is needed.
//!
//! The signature is RSA PKCS#1 v1.5 with SHA-1 over the canonical `SignedInfo` as a
//! standalone element (carrying the XML-DSig namespace). Both are deterministic: the same
//! e.firma and inputs reproduce the recorded requests byte for byte.

use base64::Engine;
use rsa::Pkcs1v15Sign;
use sha1::{Digest, Sha1};

use super::credential::Efirma;

pub const DSIG_NS: &str = "http://www.w3.org/2000/09/xmldsig#";
const EXC_C14N: &str = "http://www.w3.org/2001/10/xml-exc-c14n#";
const RSA_SHA1: &str = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
const SHA1_DIGEST: &str = "http://www.w3.org/2000/09/xmldsig#sha1";
pub const X509_TOKEN: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-x509-token-profile-1.0#X509v3";

/// Text content escaped as canonical XML writes it.
pub fn text(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
    out
}

/// An attribute value escaped as canonical XML writes it.
pub fn attr(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '"' => out.push_str("&quot;"),
            '\t' => out.push_str("&#x9;"),
            '\n' => out.push_str("&#xA;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
    out
}

fn base64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// How the signature points at the signer's certificate.
pub enum KeyInfo<'a> {
    /// Authentication: a reference to the `BinarySecurityToken` with this `u:Id`.
    TokenReference(&'a str),
    /// Every other call: issuer, serial and the certificate itself.
    X509,
}

/// `SignedInfo`'s children (shared by the signed canonical form and the wire form).
fn signed_info_children(reference_uri: &str, digest: &str) -> String {
    format!(
        concat!(
            r#"<CanonicalizationMethod Algorithm="{c14n}"></CanonicalizationMethod>"#,
            r#"<SignatureMethod Algorithm="{rsa}"></SignatureMethod>"#,
            r#"<Reference URI="{uri}"><Transforms><Transform Algorithm="{c14n}"></Transform></Transforms>"#,
            r#"<DigestMethod Algorithm="{sha1}"></DigestMethod><DigestValue>{digest}</DigestValue></Reference>"#,
        ),
        c14n = EXC_C14N,
        rsa = RSA_SHA1,
        uri = attr(reference_uri),
        sha1 = SHA1_DIGEST,
        digest = digest,
    )
}

fn key_info(efirma: &Efirma, kind: &KeyInfo<'_>) -> String {
    match kind {
        KeyInfo::TokenReference(id) => format!(
            r##"<KeyInfo><o:SecurityTokenReference><o:Reference URI="#{id}" ValueType="{X509_TOKEN}"></o:Reference></o:SecurityTokenReference></KeyInfo>"##,
            id = attr(id),
        ),
        KeyInfo::X509 => format!(
            concat!(
                "<KeyInfo><X509Data><X509IssuerSerial><X509IssuerName>{issuer}</X509IssuerName>",
                "<X509SerialNumber>{serial}</X509SerialNumber></X509IssuerSerial>",
                "<X509Certificate>{cert}</X509Certificate></X509Data></KeyInfo>",
            ),
            issuer = text(efirma.issuer_name()),
            serial = efirma.serial_decimal(),
            cert = certificate_base64(efirma),
        ),
    }
}

/// The certificate as the envelopes carry it: base64 of the DER, one line.
pub fn certificate_base64(efirma: &Efirma) -> String {
    base64(efirma.certificate_der())
}

/// The `Signature` element over `canonical` (the referenced content, already in
/// canonical form), as it goes on the wire.
pub fn signature(
    efirma: &Efirma,
    canonical: &str,
    reference_uri: &str,
    kind: KeyInfo<'_>,
) -> Result<String, rsa::Error> {
    let digest = base64(&Sha1::digest(canonical.as_bytes()));
    let children = signed_info_children(reference_uri, &digest);
    let signed_info = format!(r#"<SignedInfo xmlns="{DSIG_NS}">{children}</SignedInfo>"#);
    let hashed = Sha1::digest(signed_info.as_bytes());
    // Blinded (timing-safe); PKCS#1 v1.5 output does not depend on the randomness.
    let value = efirma.key().sign_with_rng(
        &mut rsa::rand_core::OsRng,
        Pkcs1v15Sign::new::<Sha1>(),
        &hashed,
    )?;
    Ok(format!(
        r#"<Signature xmlns="{DSIG_NS}"><SignedInfo>{children}</SignedInfo><SignatureValue>{value}</SignatureValue>{key_info}</Signature>"#,
        value = base64(&value),
        key_info = key_info(efirma, &kind),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_canonical_xml() {
        assert_eq!(text("A&B <x> \"q\"\r"), "A&amp;B &lt;x&gt; \"q\"&#xD;");
        assert_eq!(
            attr("A&B <x> \"q\"\t\n\r"),
            "A&amp;B &lt;x> &quot;q&quot;&#x9;&#xA;&#xD;"
        );
        assert_eq!(attr("ÑAÑ010101AAA"), "ÑAÑ010101AAA");
    }
}
