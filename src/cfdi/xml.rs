//! Namespace-aware element lookup and typed attribute access over roxmltree.

use roxmltree::Node;
use rust_decimal::Decimal;

use super::{limits, CfdiError};

const UTF8_BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// Checks a document's size, encoding and shape limits, then builds its tree: the one
/// way every document class (the Comprobante, the Retenciones) is read.
pub(crate) fn with_tree<T>(
    bytes: &[u8],
    read: impl FnOnce(roxmltree::Node<'_, '_>) -> Result<T, CfdiError>,
) -> Result<T, CfdiError> {
    if bytes.len() > limits::MAX_DOCUMENT_BYTES {
        let mib = limits::MAX_DOCUMENT_BYTES / (1024 * 1024);
        return Err(CfdiError::OverLimit(format!("larger than {mib} MiB")));
    }
    let text = decode(bytes)?;
    limits::scan(text, &limits::LIMITS).map_err(|e| CfdiError::OverLimit(e.to_string()))?;
    let options = roxmltree::ParsingOptions {
        nodes_limit: limits::MAX_NODES,
        ..roxmltree::ParsingOptions::default()
    };
    let doc = roxmltree::Document::parse_with_options(text, options).map_err(|e| match e {
        roxmltree::Error::NodesLimitReached => {
            CfdiError::OverLimit(format!("more than {} XML nodes", limits::MAX_NODES))
        }
        e => CfdiError::Malformed(e.to_string()),
    })?;
    read(doc.root_element())
}

/// Strips a UTF-8 BOM and checks the input is non-blank UTF-8.
fn decode(bytes: &[u8]) -> Result<&str, CfdiError> {
    let bytes = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(CfdiError::Empty);
    }
    std::str::from_utf8(bytes).map_err(|e| CfdiError::Malformed(format!("invalid UTF-8: {e}")))
}

/// `{namespace}name` of an element, for errors naming what a root is.
pub(crate) fn expanded_name(node: roxmltree::Node<'_, '_>) -> String {
    let tag = node.tag_name();
    match tag.namespace() {
        Some(ns) => format!("{{{ns}}}{}", tag.name()),
        None => tag.name().to_owned(),
    }
}

/// CFDI 3.2 and 3.3 share this namespace.
pub(crate) const CFD3: &str = "http://www.sat.gob.mx/cfd/3";
pub(crate) const CFD4: &str = "http://www.sat.gob.mx/cfd/4";
pub(crate) const TFD: &str = "http://www.sat.gob.mx/TimbreFiscalDigital";
pub(crate) const PAGOS10: &str = "http://www.sat.gob.mx/Pagos";
pub(crate) const PAGOS20: &str = "http://www.sat.gob.mx/Pagos20";

/// True when `node` is the element `{ns}name`.
pub(crate) fn is_element(node: Node<'_, '_>, ns: &str, name: &str) -> bool {
    node.is_element() && node.tag_name().name() == name && node.tag_name().namespace() == Some(ns)
}

/// Child elements named `{ns}name`, in document order.
pub(crate) fn children<'a, 'i>(
    node: Node<'a, 'i>,
    ns: &'a str,
    name: &'a str,
) -> impl Iterator<Item = Node<'a, 'i>> + 'a {
    node.children()
        .filter(move |child| is_element(*child, ns, name))
}

/// First child element named `{ns}name`.
pub(crate) fn child<'a, 'i>(
    node: Node<'a, 'i>,
    ns: &'a str,
    name: &'a str,
) -> Option<Node<'a, 'i>> {
    children(node, ns, name).next()
}

/// Where a document's elements live and how its attributes are spelled: its namespace,
/// its version (`V`, each document class's own), and whether that version spells
/// attributes the legacy way (CFDI 3.2, Retenciones 1.0).
#[derive(Clone, Copy)]
pub(crate) struct Dialect<V> {
    pub(crate) ns: &'static str,
    pub(crate) version: V,
    legacy: bool,
}

impl<V: Copy> Dialect<V> {
    pub(crate) fn new(ns: &'static str, version: V, legacy: bool) -> Self {
        Dialect {
            ns,
            version,
            legacy,
        }
    }

    /// Whether attributes are spelled the legacy way.
    pub(crate) fn legacy(self) -> bool {
        self.legacy
    }

    pub(crate) fn reader<'a, 'i>(self, node: Node<'a, 'i>) -> Reader<'a, 'i> {
        Reader::new(node, self.legacy)
    }

    pub(crate) fn child<'a, 'i>(
        self,
        node: Node<'a, 'i>,
        name: &'static str,
    ) -> Option<Node<'a, 'i>> {
        child(node, self.ns, name)
    }

    pub(crate) fn children<'a, 'i>(
        self,
        node: Node<'a, 'i>,
        name: &'static str,
    ) -> impl Iterator<Item = Node<'a, 'i>> + 'a {
        children(node, self.ns, name)
    }
}

/// An attribute as spelled by CFDI 3.3/4.0 (`modern`) and by 3.2
/// (`legacy`, lowerCamelCase), plus the label reported in errors.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Attr {
    modern: &'static str,
    legacy: &'static str,
    label: &'static str,
}

impl Attr {
    /// A root attribute; errors name it by its modern spelling.
    pub(crate) const fn new(modern: &'static str, legacy: &'static str) -> Self {
        Attr {
            modern,
            legacy,
            label: modern,
        }
    }

    /// An attribute spelled the same in every version, with an error label
    /// such as "Pago@Monto".
    pub(crate) const fn field(name: &'static str, label: &'static str) -> Self {
        Attr {
            modern: name,
            legacy: name,
            label,
        }
    }

    /// An attribute CFDI 3.2 does not have (3.2 documents never yield it).
    pub(crate) const fn modern_only(modern: &'static str) -> Self {
        Attr {
            modern,
            legacy: "",
            label: modern,
        }
    }

    /// A versioned attribute of a nested element, with an explicit label.
    pub(crate) const fn labeled(
        modern: &'static str,
        legacy: &'static str,
        label: &'static str,
    ) -> Self {
        Attr {
            modern,
            legacy,
            label,
        }
    }
}

/// Reads an element's attributes using the spelling of its CFDI version.
#[derive(Clone, Copy)]
pub(crate) struct Reader<'a, 'i> {
    node: Node<'a, 'i>,
    legacy: bool,
}

impl<'a, 'i> Reader<'a, 'i> {
    pub(crate) fn new(node: Node<'a, 'i>, legacy: bool) -> Self {
        Reader { node, legacy }
    }

    /// The attribute value with entities decoded and surrounding blanks trimmed: the
    /// one place values are read, so every field follows the same rule (an RFC written
    /// `" AAA010101AAA "` is found by a filter on `AAA010101AAA`).
    pub(crate) fn raw(&self, attr: Attr) -> Option<&'a str> {
        let name = if self.legacy {
            attr.legacy
        } else {
            attr.modern
        };
        if name.is_empty() {
            return None;
        }
        self.node.attribute(name).map(str::trim)
    }

    pub(crate) fn string(&self, attr: Attr) -> Option<String> {
        self.raw(attr).map(str::to_owned)
    }

    pub(crate) fn required(&self, attr: Attr) -> Result<&'a str, CfdiError> {
        self.raw(attr).ok_or(CfdiError::Missing(attr.label))
    }

    /// A required date and time as the SAT writes it (`2026-01-31T18:00:00`, four-digit
    /// year; a fraction or an offset after it is tolerated), trimmed. Dates are stored
    /// and filtered as text, so anything else would never be found by a date filter.
    pub(crate) fn required_datetime(&self, attr: Attr) -> Result<&'a str, CfdiError> {
        let value = self.required(attr)?.trim();
        let local = |v: &str| chrono::NaiveDateTime::parse_from_str(v, "%Y-%m-%dT%H:%M:%S%.f");
        let four_digit_year = value.as_bytes().get(4) == Some(&b'-')
            && value.as_bytes()[..4].iter().all(u8::is_ascii_digit);
        if four_digit_year
            && (local(value).is_ok() || chrono::DateTime::parse_from_rfc3339(value).is_ok())
        {
            Ok(value)
        } else {
            Err(invalid(attr, value))
        }
    }

    pub(crate) fn uuid(&self, attr: Attr) -> Option<String> {
        self.raw(attr).and_then(normalize_uuid)
    }

    /// A UUID that must be well formed when present and not empty.
    pub(crate) fn checked_uuid(&self, attr: Attr) -> Result<Option<String>, CfdiError> {
        match self.uuid(attr) {
            Some(uuid) if !is_uuid(&uuid) => Err(invalid(attr, &uuid)),
            other => Ok(other),
        }
    }

    /// An optional amount: absent or empty is None, anything else must parse.
    pub(crate) fn decimal(&self, attr: Attr) -> Result<Option<Decimal>, CfdiError> {
        match self.raw(attr) {
            Some(value) if !value.trim().is_empty() => to_decimal(attr, value).map(Some),
            _ => Ok(None),
        }
    }

    /// A required amount: absent is Missing, empty or non-numeric is Invalid.
    pub(crate) fn required_decimal(&self, attr: Attr) -> Result<Decimal, CfdiError> {
        to_decimal(attr, self.required(attr)?)
    }

    /// An optional count such as NumParcialidad.
    pub(crate) fn integer(&self, attr: Attr) -> Result<Option<u32>, CfdiError> {
        match self.raw(attr).map(str::trim) {
            Some(value) if !value.is_empty() => {
                value.parse().map(Some).map_err(|_| invalid(attr, value))
            }
            _ => Ok(None),
        }
    }
}

/// Upper-cases a UUID; None when it is empty.
pub(crate) fn normalize_uuid(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_ascii_uppercase())
}

/// The 8-4-4-4-12 hexadecimal form. The version digit is not checked: stamps carry
/// version-1 and version-5 UUIDs as well as version 4.
pub(crate) fn is_uuid(value: &str) -> bool {
    let groups: Vec<&str> = value.split('-').collect();
    let lengths = groups.iter().map(|g| g.len());
    value.len() == 36
        && lengths.eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn to_decimal(attr: Attr, value: &str) -> Result<Decimal, CfdiError> {
    parse_decimal(value).ok_or_else(|| invalid(attr, value))
}

fn invalid(attr: Attr, value: &str) -> CfdiError {
    CfdiError::invalid(attr.label, value)
}

/// Parses an `xs:decimal` keeping its written scale ("6.9" stays 6.9).
/// The lexical check comes first because rust_decimal also accepts forms
/// such as "1_000" that are not valid in a CFDI.
pub(crate) fn parse_decimal(value: &str) -> Option<Decimal> {
    let value = value.trim();
    if !is_decimal_lexical(value) {
        return None;
    }
    let unsigned = value.strip_prefix('+').unwrap_or(value);
    Decimal::from_str_exact(unsigned).ok()
}

/// `[+-]?(digits[.digits?] | .digits)`.
fn is_decimal_lexical(value: &str) -> bool {
    let unsigned = value.strip_prefix(['+', '-']).unwrap_or(value);
    let (int, frac) = unsigned.split_once('.').unwrap_or((unsigned, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (!int.is_empty() || !frac.is_empty()) && all_digits(int) && all_digits(frac)
}
