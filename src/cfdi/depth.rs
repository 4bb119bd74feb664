//! A nesting-depth guard run before roxmltree.
//!
//! roxmltree parses elements recursively and has no depth limit, so a
//! hostile document nested a few thousand levels deep overflows the stack,
//! which aborts the whole process instead of returning an error. This scan
//! over-estimates (never under-estimates) the depth roxmltree would reach,
//! so rejecting above [`MAX_DEPTH`] keeps the parser total.

/// Real CFDIs nest under ten levels deep (addenda add a few more). Each
/// level costs roxmltree a few KiB of stack in unoptimised builds, so 128
/// levels stay well inside a 2 MiB thread stack (tokio's default).
pub(super) const MAX_DEPTH: usize = 128;

/// True when some element in `text` is nested deeper than `limit`.
pub(super) fn exceeds(text: &str, limit: usize) -> bool {
    let mut depth: usize = 0;
    let mut rest = text;
    while let Some(markup) = rest.find('<').and_then(|at| rest.get(at..)) {
        let (consumed, change) = measure(markup);
        match change {
            Change::Open => depth = depth.saturating_add(1),
            Change::Close => depth = depth.saturating_sub(1),
            Change::Same => {}
        }
        if depth > limit {
            return true;
        }
        // An unterminated construct ends the scan; roxmltree will reject it.
        match consumed.and_then(|n| markup.get(n..)) {
            Some(next) => rest = next,
            None => return false,
        }
    }
    false
}

enum Change {
    Open,
    Close,
    Same,
}

/// Classifies the markup starting at `markup` (which starts with '<') and
/// returns how many bytes it spans, or None when it is unterminated.
fn measure(markup: &str) -> (Option<usize>, Change) {
    const SKIPPED: [(&str, &str); 4] = [
        ("<!--", "-->"),
        ("<![CDATA[", "]]>"),
        ("<?", "?>"),
        ("<!", ">"),
    ];
    for (open, close) in SKIPPED {
        if markup.starts_with(open) {
            return (past(markup, open.len(), close), Change::Same);
        }
    }
    if markup.starts_with("</") {
        return (past(markup, 2, ">"), Change::Close);
    }
    start_tag(markup)
}

/// Offset just after the first `close` found at or after `from`.
fn past(markup: &str, from: usize, close: &str) -> Option<usize> {
    let found = markup.get(from..)?.find(close)?;
    Some(from + found + close.len())
}

/// Scans a start tag, honouring quoted attribute values (which may hold
/// '>' or '/'). A stray '<' ends the tag early and counts it as open, which
/// can only over-estimate the depth.
fn start_tag(markup: &str) -> (Option<usize>, Change) {
    let mut quote: Option<char> = None;
    let mut previous = '<';
    for (at, c) in markup.char_indices().skip(1) {
        match (quote, c) {
            (_, '<') => return (Some(at), Change::Open),
            (Some(q), _) if c == q => quote = None,
            (None, '"' | '\'') => quote = Some(c),
            (None, '>') => {
                let change = if previous == '/' {
                    Change::Same
                } else {
                    Change::Open
                };
                return (Some(at + 1), change);
            }
            _ => {}
        }
        previous = c;
    }
    (None, Change::Open)
}
