//! Limits a document must fit before roxmltree builds its tree.
//!
//! roxmltree has no guard of its own against most hostile shapes, and parsing runs on
//! shared threads (an import, an extraction's download thread), so each cost is capped:
//! - nesting depth: roxmltree recurses per level, so a few thousand levels overflow
//!   the stack, which aborts the whole process;
//! - attributes of one element: each attribute (and namespace declaration) is compared
//!   with the element's earlier ones, so 100k attributes on one element cost ~20 s;
//! - attributes and namespace declarations in all, and nodes (roxmltree's own
//!   `nodes_limit`): memory, about 50 bytes each.
//!
//! One linear scan checks all but the node count. It over-estimates (never
//! under-estimates) what roxmltree would see, so passing it keeps the parser total.
//! The limits are generous for real CFDI: a Concepto with its taxes is about 10 nodes,
//! 20 attributes and 600 bytes, so 20 MiB holds some 30,000 concepts, far more than
//! the largest invoices seen, and real elements carry under 40 attributes each.

use std::fmt;

/// Largest document accepted, in bytes.
pub const MAX_DOCUMENT_BYTES: usize = 20 * 1024 * 1024;
/// XML nodes (elements, text runs, comments) in a document.
pub const MAX_NODES: u32 = 1_000_000;

/// The shape limits the scan checks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    /// Real CFDIs nest under ten levels deep (addenda add a few more). Each level
    /// costs roxmltree a few KiB of stack in unoptimised builds, so 128 levels stay
    /// well inside a 2 MiB thread stack (tokio's default).
    pub depth: usize,
    /// Attributes, namespace declarations included, of one element.
    pub element_attributes: usize,
    /// Attributes of the whole document.
    pub attributes: usize,
    /// Namespace declarations of the whole document (real ones have under 20).
    pub namespaces: usize,
}

pub(crate) const LIMITS: Limits = Limits {
    depth: 128,
    element_attributes: 256,
    attributes: 1_000_000,
    namespaces: 256,
};

/// The first limit a document goes over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Exceeded {
    Depth(usize),
    ElementAttributes(usize),
    Attributes(usize),
    Namespaces(usize),
}

impl fmt::Display for Exceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Exceeded::Depth(n) => write!(f, "elements nested deeper than {n} levels"),
            Exceeded::ElementAttributes(n) => write!(f, "an element with more than {n} attributes"),
            Exceeded::Attributes(n) => write!(f, "more than {n} attributes"),
            Exceeded::Namespaces(n) => write!(f, "more than {n} namespace declarations"),
        }
    }
}

/// Scans `text` once and reports the first limit it goes over.
pub(crate) fn scan(text: &str, limits: &Limits) -> Result<(), Exceeded> {
    let mut depth: usize = 0;
    let (mut attributes, mut namespaces) = (0usize, 0usize);
    let mut rest = text;
    while let Some(markup) = rest.find('<').and_then(|at| rest.get(at..)) {
        let m = measure(markup);
        match m.change {
            Change::Open => depth = depth.saturating_add(1),
            Change::Close => depth = depth.saturating_sub(1),
            Change::Same => {}
        }
        attributes = attributes.saturating_add(m.attributes);
        namespaces = namespaces.saturating_add(m.namespaces);
        if depth > limits.depth {
            return Err(Exceeded::Depth(limits.depth));
        }
        if m.attributes > limits.element_attributes {
            return Err(Exceeded::ElementAttributes(limits.element_attributes));
        }
        if attributes > limits.attributes {
            return Err(Exceeded::Attributes(limits.attributes));
        }
        if namespaces > limits.namespaces {
            return Err(Exceeded::Namespaces(limits.namespaces));
        }
        // An unterminated construct ends the scan; roxmltree will reject it.
        match m.len.and_then(|n| markup.get(n..)) {
            Some(next) => rest = next,
            None => return Ok(()),
        }
    }
    Ok(())
}

enum Change {
    Open,
    Close,
    Same,
}

/// One piece of markup: its length in bytes (None when unterminated), how it
/// changes the depth, and the attributes and namespace declarations it carries.
struct Markup {
    len: Option<usize>,
    change: Change,
    attributes: usize,
    namespaces: usize,
}

impl Markup {
    fn plain(len: Option<usize>, change: Change) -> Self {
        Markup {
            len,
            change,
            attributes: 0,
            namespaces: 0,
        }
    }
}

/// Classifies the markup starting at `markup` (which starts with '<').
fn measure(markup: &str) -> Markup {
    const SKIPPED: [(&str, &str); 4] = [
        ("<!--", "-->"),
        ("<![CDATA[", "]]>"),
        ("<?", "?>"),
        ("<!", ">"),
    ];
    for (open, close) in SKIPPED {
        if markup.starts_with(open) {
            return Markup::plain(past(markup, open.len(), close), Change::Same);
        }
    }
    if markup.starts_with("</") {
        return Markup::plain(past(markup, 2, ">"), Change::Close);
    }
    start_tag(markup)
}

/// Offset just after the first `close` found at or after `from`.
fn past(markup: &str, from: usize, close: &str) -> Option<usize> {
    let found = markup.get(from..)?.find(close)?;
    Some(from + found + close.len())
}

/// Scans a start tag, honouring quoted attribute values (which may hold '>', '/'
/// or '='). Every '=' outside quotes is an attribute; a name starting `xmlns` after
/// a blank is a namespace declaration. A stray '<' ends the tag early and counts it
/// as open, which can only over-estimate the depth.
fn start_tag(markup: &str) -> Markup {
    let mut tag = Markup::plain(None, Change::Open);
    let mut quote: Option<char> = None;
    let mut previous = '<';
    for (at, c) in markup.char_indices().skip(1) {
        match (quote, c) {
            (_, '<') => {
                tag.len = Some(at);
                return tag;
            }
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '=') => tag.attributes += 1,
            (None, '>') => {
                if previous == '/' {
                    tag.change = Change::Same;
                }
                tag.len = Some(at + 1);
                return tag;
            }
            (None, _)
                if c.is_ascii_whitespace()
                    && markup.get(at + 1..).is_some_and(|r| r.starts_with("xmlns")) =>
            {
                tag.namespaces += 1;
            }
            _ => {}
        }
        previous = c;
    }
    tag
}
