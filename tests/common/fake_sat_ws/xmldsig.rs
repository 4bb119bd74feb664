//! How the fake SAT checks a request's XML-DSig: a small DOM (quick-xml), a general
//! exclusive C14N (namespaces rendered where visibly used), and the two shapes the
//! service takes (a signed WS-Security timestamp; an enveloped signature over the
//! operation). Written apart from the library's signing code on purpose: it checks it.

use std::collections::BTreeMap;

use base64::Engine;
use chrono::{DateTime, Utc};
use quick_xml::events::{BytesStart, Event};
use rsa::pkcs8::DecodePublicKey;
use rsa::{Pkcs1v15Sign, RsaPublicKey};
use sha1::{Digest, Sha1};
use x509_cert::der::asn1::ObjectIdentifier;
use x509_cert::der::{Decode, Encode};
use x509_cert::Certificate;

pub const SOAP_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";
pub const SAT_NS: &str = "http://DescargaMasivaTerceros.sat.gob.mx";
const DSIG_NS: &str = "http://www.w3.org/2000/09/xmldsig#";
const WSU_NS: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
const WSSE_NS: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
const XML_NS: &str = "http://www.w3.org/XML/1998/namespace";
const EXC_C14N: &str = "http://www.w3.org/2001/10/xml-exc-c14n#";
const RSA_SHA1: &str = "http://www.w3.org/2000/09/xmldsig#rsa-sha1";
const SHA1: &str = "http://www.w3.org/2000/09/xmldsig#sha1";
/// `x500UniqueIdentifier`: the SAT writes the RFC there (`RFC / representative's RFC`).
const UNIQUE_ID: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.45");

/// Namespaces in scope: prefix ("" for the default) to URI.
pub type Scope = BTreeMap<String, String>;

#[derive(Debug, Clone)]
pub struct Element {
    /// As written (`prefix:local`).
    pub name: String,
    /// Attributes other than namespace declarations, values unescaped.
    pub attrs: Vec<(String, String)>,
    /// Namespace declarations made here.
    pub decls: Vec<(String, String)>,
    pub children: Vec<Node>,
}

#[derive(Debug, Clone)]
pub enum Node {
    Element(Element),
    Text(String),
}

impl Element {
    fn prefix(&self) -> &str {
        self.name.split_once(':').map_or("", |(p, _)| p)
    }

    pub fn local(&self) -> &str {
        self.name.rsplit(':').next().unwrap_or("")
    }

    /// An attribute by its local name (prefixes vary between senders).
    pub fn attr(&self, local: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|(n, _)| n.rsplit(':').next() == Some(local))
            .map(|(_, v)| v.as_str())
    }

    pub fn text(&self) -> String {
        self.children
            .iter()
            .filter_map(|c| match c {
                Node::Text(t) => Some(t.as_str()),
                Node::Element(_) => None,
            })
            .collect()
    }

    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|c| match c {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// The scope inside this element, given its parent's.
    pub fn scope(&self, parent: &Scope) -> Scope {
        let mut scope = parent.clone();
        scope.extend(self.decls.iter().cloned());
        scope
    }

    fn namespace(&self, parent: &Scope) -> String {
        self.scope(parent)
            .get(self.prefix())
            .cloned()
            .unwrap_or_default()
    }
}

fn start(e: &BytesStart<'_>) -> Result<Element, String> {
    let name = String::from_utf8(e.name().as_ref().to_vec()).map_err(|e| e.to_string())?;
    let mut element = Element {
        name,
        attrs: Vec::new(),
        decls: Vec::new(),
        children: Vec::new(),
    };
    for a in e.attributes() {
        let a = a.map_err(|e| e.to_string())?;
        let key = String::from_utf8(a.key.as_ref().to_vec()).map_err(|e| e.to_string())?;
        let value = a.unescape_value().map_err(|e| e.to_string())?.into_owned();
        match key.strip_prefix("xmlns") {
            Some("") => element.decls.push((String::new(), value)),
            Some(p) if p.starts_with(':') => element.decls.push((p[1..].to_string(), value)),
            _ => element.attrs.push((key, value)),
        }
    }
    Ok(element)
}

/// The document element. Whitespace-only text is dropped: the wire form has none between
/// elements, and the recorded requests are pretty-printed.
pub fn parse(xml: &[u8]) -> Result<Element, String> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    let mut buf = Vec::new();
    let mut stack: Vec<Element> = Vec::new();
    let push = |stack: &mut Vec<Element>, node: Node| {
        if let Some(parent) = stack.last_mut() {
            parent.children.push(node);
        }
    };
    loop {
        match reader
            .read_event_into(&mut buf)
            .map_err(|e| e.to_string())?
        {
            Event::Start(e) => stack.push(start(&e)?),
            Event::Empty(e) => {
                let element = start(&e)?;
                if stack.is_empty() {
                    return Ok(element);
                }
                push(&mut stack, Node::Element(element));
            }
            Event::End(_) => {
                let element = stack.pop().ok_or("unbalanced end tag")?;
                if stack.is_empty() {
                    return Ok(element);
                }
                push(&mut stack, Node::Element(element));
            }
            Event::Text(t) => {
                let text = t.unescape().map_err(|e| e.to_string())?.into_owned();
                if !text.trim().is_empty() {
                    push(&mut stack, Node::Text(text));
                }
            }
            Event::CData(t) => {
                let text =
                    String::from_utf8(t.into_inner().into_owned()).map_err(|e| e.to_string())?;
                push(&mut stack, Node::Text(text));
            }
            Event::Eof => return Err("no document element".into()),
            _ => {}
        }
        buf.clear();
    }
}

/// The first element (depth first, `el` included) named `(ns, local)`, with the scope
/// of its parent.
pub fn find<'a>(
    el: &'a Element,
    parent: &Scope,
    ns: &str,
    local: &str,
) -> Option<(&'a Element, Scope)> {
    if el.local() == local && el.namespace(parent) == ns {
        return Some((el, parent.clone()));
    }
    let scope = el.scope(parent);
    el.elements()
        .find_map(|child| find(child, &scope, ns, local))
}

/// Exclusive XML canonicalization (without comments) of `el` and its descendants, less
/// the elements `skip` names (given each one's parent scope).
pub fn canonical(el: &Element, parent: &Scope, skip: &dyn Fn(&Element, &Scope) -> bool) -> String {
    let mut out = String::new();
    write(el, parent, &Scope::new(), skip, &mut out);
    out
}

fn write(
    el: &Element,
    parent: &Scope,
    rendered: &Scope,
    skip: &dyn Fn(&Element, &Scope) -> bool,
    out: &mut String,
) {
    let scope = el.scope(parent);
    let mut rendered = rendered.clone();
    let mut decls = Scope::new();
    let attr_prefixes = el
        .attrs
        .iter()
        .filter_map(|(n, _)| n.split_once(':').map(|(p, _)| p));
    for prefix in std::iter::once(el.prefix()).chain(attr_prefixes) {
        if prefix == "xml" {
            continue;
        }
        let uri = scope.get(prefix).cloned().unwrap_or_default();
        if rendered.get(prefix).cloned().unwrap_or_default() != uri {
            decls.insert(prefix.to_string(), uri.clone());
            rendered.insert(prefix.to_string(), uri);
        }
    }
    out.push('<');
    out.push_str(&el.name);
    for (prefix, uri) in &decls {
        let colon = if prefix.is_empty() { "" } else { ":" };
        out.push_str(&format!(r#" xmlns{colon}{prefix}="{}""#, escape(uri, true)));
    }
    let mut attrs: Vec<(String, &str, &str, &str)> = el
        .attrs
        .iter()
        .map(|(name, value)| {
            let (ns, local) = match name.split_once(':') {
                Some(("xml", local)) => (XML_NS.to_string(), local),
                Some((p, local)) => (scope.get(p).cloned().unwrap_or_default(), local),
                None => (String::new(), name.as_str()),
            };
            (ns, local, name.as_str(), value.as_str())
        })
        .collect();
    attrs.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    for (_, _, name, value) in attrs {
        out.push_str(&format!(r#" {name}="{}""#, escape(value, true)));
    }
    out.push('>');
    for child in &el.children {
        match child {
            Node::Text(t) => out.push_str(&escape(t, false)),
            Node::Element(e) if !skip(e, &scope) => write(e, &scope, &rendered, skip, out),
            Node::Element(_) => {}
        }
    }
    out.push_str(&format!("</{}>", el.name));
}

fn escape(s: &str, attribute: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' if !attribute => out.push_str("&gt;"),
            '"' if attribute => out.push_str("&quot;"),
            '\t' if attribute => out.push_str("&#x9;"),
            '\n' if attribute => out.push_str("&#xA;"),
            '\r' => out.push_str("&#xD;"),
            c => out.push(c),
        }
    }
    out
}

/// Why a request's security is refused, as the SAT's code for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 301
    Malformed(String),
    /// 302
    Seal(String),
    /// 305
    Certificate(String),
}

impl Refusal {
    pub fn code(&self) -> u32 {
        match self {
            Refusal::Malformed(_) => 301,
            Refusal::Seal(_) => 302,
            Refusal::Certificate(_) => 305,
        }
    }
}

fn malformed(what: &str) -> Refusal {
    Refusal::Malformed(format!("no {what}"))
}

/// The signer's certificate, as the checks read it.
#[derive(Debug, Clone)]
pub struct Signer {
    pub rfc: String,
    pub serial: String,
    pub not_before: DateTime<Utc>,
    pub not_after: DateTime<Utc>,
    key: RsaPublicKey,
}

fn b64(text: &str) -> Result<Vec<u8>, String> {
    let compact: String = text.chars().filter(|c| !c.is_whitespace()).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .map_err(|e| e.to_string())
}

fn time(t: x509_cert::time::Time) -> DateTime<Utc> {
    let secs = i64::try_from(t.to_unix_duration().as_secs()).unwrap_or(i64::MAX);
    DateTime::from_timestamp(secs, 0).unwrap_or_default()
}

pub fn signer(base64: &str) -> Result<Signer, Refusal> {
    let bad = |e: String| Refusal::Certificate(e);
    let der = b64(base64).map_err(bad)?;
    let cert = Certificate::from_der(&der).map_err(|e| bad(e.to_string()))?;
    let tbs = &cert.tbs_certificate;
    let spki = tbs
        .subject_public_key_info
        .to_der()
        .map_err(|e| bad(e.to_string()))?;
    let key = RsaPublicKey::from_public_key_der(&spki).map_err(|e| bad(e.to_string()))?;
    let rfc = tbs
        .subject
        .0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .find(|atv| atv.oid == UNIQUE_ID)
        .and_then(|atv| std::str::from_utf8(atv.value.value()).ok())
        .and_then(|v| v.split('/').next())
        .map(|v| v.trim().to_string())
        .ok_or_else(|| bad("the certificate names no RFC".into()))?;
    Ok(Signer {
        rfc,
        serial: rsa::BigUint::from_bytes_be(tbs.serial_number.as_bytes()).to_string(),
        not_before: time(tbs.validity.not_before),
        not_after: time(tbs.validity.not_after),
        key,
    })
}

fn sha1(text: &str) -> Vec<u8> {
    Sha1::digest(text.as_bytes()).to_vec()
}

/// Checks a `Signature` (child of an element in scope `parent`) whose one reference is
/// `uri` over `referenced` (already canonical), made by `signer`.
fn check_signature(
    sig: &Element,
    parent: &Scope,
    uri: &str,
    referenced: &str,
    signer: &Signer,
) -> Result<(), Refusal> {
    let seal = |what: &str| Refusal::Seal(what.to_string());
    let (info, info_parent) =
        find(sig, parent, DSIG_NS, "SignedInfo").ok_or_else(|| malformed("SignedInfo"))?;
    let algorithm = |local: &str| {
        find(info, &info_parent, DSIG_NS, local).and_then(|(e, _)| e.attr("Algorithm"))
    };
    if algorithm("CanonicalizationMethod") != Some(EXC_C14N)
        || algorithm("SignatureMethod") != Some(RSA_SHA1)
        || algorithm("DigestMethod") != Some(SHA1)
        || algorithm("Transform") != Some(EXC_C14N)
    {
        return Err(seal("unexpected signature algorithms"));
    }
    let (reference, _) =
        find(info, &info_parent, DSIG_NS, "Reference").ok_or_else(|| malformed("Reference"))?;
    if reference.attr("URI") != Some(uri) {
        return Err(seal("the signature references something else"));
    }
    let digest =
        find(info, &info_parent, DSIG_NS, "DigestValue").ok_or_else(|| malformed("DigestValue"))?;
    if b64(&digest.0.text()).map_err(Refusal::Seal)? != sha1(referenced) {
        return Err(seal("the digest does not match the signed content"));
    }
    let value =
        find(sig, parent, DSIG_NS, "SignatureValue").ok_or_else(|| malformed("SignatureValue"))?;
    let value = b64(&value.0.text()).map_err(Refusal::Seal)?;
    let signed_info = canonical(info, &info_parent, &|_, _| false);
    signer
        .key
        .verify(Pkcs1v15Sign::new::<Sha1>(), &sha1(&signed_info), &value)
        .map_err(|_| seal("the signature value does not verify"))
}

/// A checked authentication: who signed, and the timestamp's window.
#[derive(Debug, Clone)]
pub struct Authentication {
    pub signer: Signer,
    pub created: DateTime<Utc>,
    pub expires: DateTime<Utc>,
}

fn timestamp_time(ts: &Element, scope: &Scope, local: &str) -> Result<DateTime<Utc>, Refusal> {
    let (el, _) = find(ts, scope, WSU_NS, local).ok_or_else(|| malformed(local))?;
    DateTime::parse_from_rfc3339(el.text().trim())
        .map(|t| t.with_timezone(&Utc))
        .map_err(|e| Refusal::Malformed(format!("{local}: {e}")))
}

/// The WS-Security header of an authentication: the timestamp signed with the key of the
/// certificate in the binary security token the signature points at.
pub fn check_authentication(doc: &Element) -> Result<Authentication, Refusal> {
    let root = Scope::new();
    let (security, parent) =
        find(doc, &root, WSSE_NS, "Security").ok_or_else(|| malformed("Security header"))?;
    let (ts, ts_parent) =
        find(security, &parent, WSU_NS, "Timestamp").ok_or_else(|| malformed("Timestamp"))?;
    let (token, _) = find(security, &parent, WSSE_NS, "BinarySecurityToken")
        .ok_or_else(|| malformed("BinarySecurityToken"))?;
    let (sig, sig_parent) =
        find(security, &parent, DSIG_NS, "Signature").ok_or_else(|| malformed("Signature"))?;
    let (pointer, _) = find(sig, &sig_parent, WSSE_NS, "Reference")
        .ok_or_else(|| malformed("SecurityTokenReference"))?;
    let token_id = token.attr("Id").ok_or_else(|| malformed("token id"))?;
    if pointer.attr("URI") != Some(format!("#{token_id}").as_str()) {
        return Err(Refusal::Seal(
            "the key is not the binary security token".into(),
        ));
    }
    let signer = signer(&token.text())?;
    let ts_id = ts.attr("Id").ok_or_else(|| malformed("Timestamp id"))?;
    let referenced = canonical(ts, &ts_parent, &|_, _| false);
    check_signature(sig, &sig_parent, &format!("#{ts_id}"), &referenced, &signer)?;
    Ok(Authentication {
        created: timestamp_time(ts, &ts_parent, "Created")?,
        expires: timestamp_time(ts, &ts_parent, "Expires")?,
        signer,
    })
}

/// A checked signed call: the signer, and the operation element (the child of `s:Body`)
/// with its parent scope.
pub fn check_enveloped(doc: &Element) -> Result<(Signer, &Element, Scope), Refusal> {
    let (body, parent) =
        find(doc, &Scope::new(), SOAP_NS, "Body").ok_or_else(|| malformed("Body"))?;
    let scope = body.scope(&parent);
    let operation = body
        .elements()
        .next()
        .ok_or_else(|| malformed("operation"))?;
    let (sig, sig_parent) =
        find(operation, &scope, DSIG_NS, "Signature").ok_or_else(|| malformed("Signature"))?;
    let (cert, _) = find(sig, &sig_parent, DSIG_NS, "X509Certificate")
        .ok_or_else(|| malformed("X509Certificate"))?;
    let signer = signer(&cert.text())?;
    let serial = find(sig, &sig_parent, DSIG_NS, "X509SerialNumber").map(|(e, _)| e.text());
    if serial.as_deref().map(str::trim) != Some(signer.serial.as_str()) {
        return Err(Refusal::Certificate(
            "X509SerialNumber is not the certificate's".into(),
        ));
    }
    let is_signature =
        |e: &Element, parent: &Scope| e.local() == "Signature" && e.namespace(parent) == DSIG_NS;
    let referenced = canonical(operation, &scope, &is_signature);
    check_signature(sig, &sig_parent, "", &referenced, &signer)?;
    Ok((signer, operation, scope))
}
