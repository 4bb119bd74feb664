//! The printed expression (`expresionImpresa`) the status service is asked with: the
//! CFDI's verification QR text as Anexo 20 defines it for its version
//! (phpcfdi/cfdi-expresiones `Comprobante20170701` / `Comprobante32`, FACTS.md §3).
//!
//! - 3.3 and 4.0: `https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx?
//!   id=UUID&re=ISSUER&rr=RECEIVER&tt=TOTAL&fe=LAST8`, the total "18.6" (six decimals
//!   at most, trailing zeros dropped, one kept) and LAST8 the seal's last 8 characters.
//! - 3.2: `?re=ISSUER&rr=RECEIVER&tt=TOTAL&id=UUID`, the total "10.6" (zero padded to 17).
//!
//! RFCs are XML-escaped inside the text (`Ñ&A010101AAA` -> `Ñ&amp;A010101AAA`, `Ñ` kept),
//! the UUID is written as the stamp has it. (The printed PDF's QR code percent-encodes
//! RFCs instead, for a phone's browser: `pdf::verification`.)

use crate::cfdi::printed::{legacy_total, seal_tail, total};
use crate::cfdi::{Cfdi, Version};

pub const VERIFY_URL: &str = "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx";

/// The printed expression of a stamped `cfdi`; None without a stamp UUID. The parser
/// upper-cases the UUID: `of_xml` keeps it as written.
pub fn of(cfdi: &Cfdi) -> Option<String> {
    with_id(cfdi, cfdi.uuid().ok()?)
}

/// `of`, with the UUID as the stamp in `xml` writes it (its case kept).
pub fn of_xml(xml: &[u8], cfdi: &Cfdi) -> Option<String> {
    let parsed = cfdi.uuid().ok()?;
    match raw_uuid(xml) {
        Some(raw) if raw.eq_ignore_ascii_case(parsed) => with_id(cfdi, &raw),
        _ => with_id(cfdi, parsed),
    }
}

/// `TimbreFiscalDigital@UUID` as written.
fn raw_uuid(xml: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(xml)
        .ok()?
        .trim_start_matches('\u{FEFF}');
    let doc = roxmltree::Document::parse(text).ok()?;
    let stamp = doc
        .descendants()
        .find(|n| n.is_element() && n.tag_name().name() == "TimbreFiscalDigital")?;
    Some(stamp.attribute("UUID")?.trim().to_owned())
}

fn with_id(cfdi: &Cfdi, id: &str) -> Option<String> {
    let re = rfc(&cfdi.issuer.tax_id);
    let rr = rfc(&cfdi.receiver.tax_id);
    if cfdi.version == Version::V32 {
        let tt = legacy_total(cfdi.total);
        return Some(format!("?re={re}&rr={rr}&tt={tt}&id={id}"));
    }
    let tt = total(cfdi.total);
    let fe = seal_tail(cfdi.seal.as_deref().unwrap_or(""));
    Some(format!(
        "{VERIFY_URL}?id={id}&re={re}&rr={rr}&tt={tt}&fe={fe}"
    ))
}

/// An RFC as `FormatRfcXml` writes it: XML special characters escaped.
fn rfc(tax_id: &str) -> String {
    let mut out = String::with_capacity(tax_id.len());
    for c in tax_id.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// The fields of an expression in either form (what the sandbox and fakes answer on).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Fields {
    pub id: String,
    pub re: String,
    pub rr: String,
    pub tt: String,
    pub fe: Option<String>,
}

/// Reads an expression's fields by name; None when `id`, `re`, `rr` or `tt` is missing.
/// Values are split on `&` that does not start an escape (an RFC may hold `&amp;`).
pub fn fields(expression: &str) -> Option<Fields> {
    let query = expression.split_once('?')?.1;
    let mut fields = Fields::default();
    let mut seen = [false; 4];
    for pair in split_pairs(query) {
        let (key, value) = pair.split_once('=')?;
        let value = value.to_owned();
        match key {
            "id" => (fields.id, seen[0]) = (value, true),
            "re" => (fields.re, seen[1]) = (value, true),
            "rr" => (fields.rr, seen[2]) = (value, true),
            "tt" => (fields.tt, seen[3]) = (value, true),
            "fe" => fields.fe = Some(value),
            _ => {}
        }
    }
    seen.iter().all(|s| *s).then_some(fields)
}

fn split_pairs(query: &str) -> Vec<&str> {
    const ESCAPES: [&str; 5] = ["amp;", "lt;", "gt;", "quot;", "apos;"];
    let mut pairs = Vec::new();
    let mut start = 0;
    for (at, _) in query.match_indices('&') {
        let rest = &query[at + 1..];
        if ESCAPES.iter().any(|e| rest.starts_with(e)) {
            continue;
        }
        pairs.push(&query[start..at]);
        start = at + 1;
    }
    pairs.push(&query[start..]);
    pairs
}
