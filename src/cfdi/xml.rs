//! Namespace-aware element lookup and typed attribute access over roxmltree.

use roxmltree::Node;
use rust_decimal::Decimal;

use super::CfdiError;

/// CFDI 3.2 and 3.3 share this namespace.
pub(super) const CFD3: &str = "http://www.sat.gob.mx/cfd/3";
pub(super) const CFD4: &str = "http://www.sat.gob.mx/cfd/4";
pub(super) const TFD: &str = "http://www.sat.gob.mx/TimbreFiscalDigital";
pub(super) const PAGOS10: &str = "http://www.sat.gob.mx/Pagos";
pub(super) const PAGOS20: &str = "http://www.sat.gob.mx/Pagos20";

/// True when `node` is the element `{ns}name`.
pub(super) fn is_element(node: Node<'_, '_>, ns: &str, name: &str) -> bool {
    node.is_element() && node.tag_name().name() == name && node.tag_name().namespace() == Some(ns)
}

/// Child elements named `{ns}name`, in document order.
pub(super) fn children<'a, 'i>(
    node: Node<'a, 'i>,
    ns: &'a str,
    name: &'a str,
) -> impl Iterator<Item = Node<'a, 'i>> + 'a {
    node.children()
        .filter(move |child| is_element(*child, ns, name))
}

/// First child element named `{ns}name`.
pub(super) fn child<'a, 'i>(
    node: Node<'a, 'i>,
    ns: &'a str,
    name: &'a str,
) -> Option<Node<'a, 'i>> {
    children(node, ns, name).next()
}

/// An attribute as spelled by CFDI 3.3/4.0 (`modern`) and by 3.2
/// (`legacy`, lowerCamelCase), plus the label reported in errors.
#[derive(Debug, Clone, Copy)]
pub(super) struct Attr {
    modern: &'static str,
    legacy: &'static str,
    label: &'static str,
}

impl Attr {
    /// A root attribute; errors name it by its modern spelling.
    pub(super) const fn new(modern: &'static str, legacy: &'static str) -> Self {
        Attr {
            modern,
            legacy,
            label: modern,
        }
    }

    /// An attribute spelled the same in every version, with an error label
    /// such as "Pago@Monto".
    pub(super) const fn field(name: &'static str, label: &'static str) -> Self {
        Attr {
            modern: name,
            legacy: name,
            label,
        }
    }

    /// An attribute CFDI 3.2 does not have (3.2 documents never yield it).
    pub(super) const fn modern_only(modern: &'static str) -> Self {
        Attr {
            modern,
            legacy: "",
            label: modern,
        }
    }

    /// A versioned attribute of a nested element, with an explicit label.
    pub(super) const fn labeled(
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
pub(super) struct Reader<'a, 'i> {
    node: Node<'a, 'i>,
    legacy: bool,
}

impl<'a, 'i> Reader<'a, 'i> {
    pub(super) fn new(node: Node<'a, 'i>, legacy: bool) -> Self {
        Reader { node, legacy }
    }

    /// The attribute value with entities decoded and surrounding blanks trimmed: the
    /// one place values are read, so every field follows the same rule (an RFC written
    /// `" AAA010101AAA "` is found by a filter on `AAA010101AAA`).
    pub(super) fn raw(&self, attr: Attr) -> Option<&'a str> {
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

    pub(super) fn string(&self, attr: Attr) -> Option<String> {
        self.raw(attr).map(str::to_owned)
    }

    pub(super) fn required(&self, attr: Attr) -> Result<&'a str, CfdiError> {
        self.raw(attr).ok_or(CfdiError::Missing(attr.label))
    }

    /// A required date and time as the SAT writes it (`2026-01-31T18:00:00`, four-digit
    /// year; a fraction or an offset after it is tolerated), trimmed. Dates are stored
    /// and filtered as text, so anything else would never be found by a date filter.
    pub(super) fn required_datetime(&self, attr: Attr) -> Result<&'a str, CfdiError> {
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

    pub(super) fn uuid(&self, attr: Attr) -> Option<String> {
        self.raw(attr).and_then(normalize_uuid)
    }

    /// A UUID that must be well formed when present and not empty.
    pub(super) fn checked_uuid(&self, attr: Attr) -> Result<Option<String>, CfdiError> {
        match self.uuid(attr) {
            Some(uuid) if !is_uuid(&uuid) => Err(invalid(attr, &uuid)),
            other => Ok(other),
        }
    }

    /// An optional amount: absent or empty is None, anything else must parse.
    pub(super) fn decimal(&self, attr: Attr) -> Result<Option<Decimal>, CfdiError> {
        match self.raw(attr) {
            Some(value) if !value.trim().is_empty() => to_decimal(attr, value).map(Some),
            _ => Ok(None),
        }
    }

    /// A required amount: absent is Missing, empty or non-numeric is Invalid.
    pub(super) fn required_decimal(&self, attr: Attr) -> Result<Decimal, CfdiError> {
        to_decimal(attr, self.required(attr)?)
    }

    /// An optional count such as NumParcialidad.
    pub(super) fn integer(&self, attr: Attr) -> Result<Option<u32>, CfdiError> {
        match self.raw(attr).map(str::trim) {
            Some(value) if !value.is_empty() => {
                value.parse().map(Some).map_err(|_| invalid(attr, value))
            }
            _ => Ok(None),
        }
    }
}

/// Upper-cases a UUID; None when it is empty.
pub(super) fn normalize_uuid(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_ascii_uppercase())
}

/// The 8-4-4-4-12 hexadecimal form. The version digit is not checked: stamps carry
/// version-1 and version-5 UUIDs as well as version 4.
pub(super) fn is_uuid(value: &str) -> bool {
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
pub(super) fn parse_decimal(value: &str) -> Option<Decimal> {
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
