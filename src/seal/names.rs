//! X.509 names and serials as the SAT's certificates carry them (the e.firma's and the
//! CSD's alike): reading one attribute
//! (the RFC in `x500UniqueIdentifier`, the branch in `OU`) and writing the issuer the way
//! the web service's `X509IssuerName` expects it (OpenSSL short names, in certificate
//! order, joined by commas, unescaped: what the reference clients send).

use x509_cert::der::asn1::AnyRef;
use x509_cert::der::oid::ObjectIdentifier;
use x509_cert::der::{Tag, Tagged};
use x509_cert::name::Name;

pub const COMMON_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.3");
pub const ORGANIZATIONAL_UNIT: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.11");
/// Where the SAT writes the holder's RFC (`EKU9003173C9 / VADA800927DJ3`).
pub const UNIQUE_IDENTIFIER: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.45");

/// OpenSSL's short names for the attributes the SAT's certificates use.
const SHORT_NAMES: &[(&str, &str)] = &[
    ("2.5.4.3", "CN"),
    ("2.5.4.5", "serialNumber"),
    ("2.5.4.6", "C"),
    ("2.5.4.7", "L"),
    ("2.5.4.8", "ST"),
    ("2.5.4.9", "street"),
    ("2.5.4.10", "O"),
    ("2.5.4.11", "OU"),
    ("2.5.4.17", "postalCode"),
    ("2.5.4.41", "name"),
    ("2.5.4.45", "x500UniqueIdentifier"),
    ("1.2.840.113549.1.9.1", "emailAddress"),
    ("1.2.840.113549.1.9.2", "unstructuredName"),
];

fn short_name(oid: &ObjectIdentifier) -> String {
    let dotted = oid.to_string();
    SHORT_NAMES
        .iter()
        .find(|(o, _)| *o == dotted)
        .map(|(_, n)| (*n).to_string())
        .unwrap_or(dotted)
}

/// A directory string's text; `None` for value types a name should not hold.
fn text(value: AnyRef<'_>) -> Option<String> {
    let bytes = value.value();
    match value.tag() {
        Tag::Utf8String
        | Tag::PrintableString
        | Tag::Ia5String
        | Tag::VisibleString
        | Tag::TeletexString => Some(String::from_utf8_lossy(bytes).into_owned()),
        Tag::BmpString => {
            let units: Vec<u16> = bytes
                .chunks_exact(2)
                .map(|c| u16::from_be_bytes([c[0], c[1]]))
                .collect();
            Some(String::from_utf16_lossy(&units))
        }
        _ => None,
    }
}

/// Every value of one attribute type, in certificate order.
pub fn values(name: &Name, oid: ObjectIdentifier) -> Vec<String> {
    name.0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .filter(|atv| atv.oid == oid)
        .filter_map(|atv| text((&atv.value).into()))
        .collect()
}

/// `CN=AC UAT,O=SERVICIO DE ADMINISTRACION TRIBUTARIA,...` (see the module comment).
pub fn issuer_text(name: &Name) -> String {
    name.0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .map(|atv| {
            let value = text((&atv.value).into()).unwrap_or_default();
            format!("{}={}", short_name(&atv.oid), value)
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// ASCII digits as text (the SAT's convention), anything else as upper-case hex.
pub fn serial_text(bytes: &[u8]) -> String {
    let trimmed: &[u8] = match bytes.iter().position(|b| *b != 0) {
        Some(i) => &bytes[i..],
        None => bytes,
    };
    if !trimmed.is_empty() && trimmed.iter().all(u8::is_ascii_digit) {
        String::from_utf8_lossy(trimmed).into_owned()
    } else {
        trimmed.iter().map(|b| format!("{b:02X}")).collect()
    }
}
