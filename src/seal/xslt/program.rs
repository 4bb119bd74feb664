//! A compiled stylesheet: the part of XSLT 1.0 and XPath 1.0 the SAT's cadena original
//! files use (templates matched by element name, named templates with parameters,
//! `apply-templates`, `for-each`, `if`, `choose`, `value-of`, literal text; location
//! paths over the child, descendant and attribute axes, variables, `=` with a literal,
//! `string()` and `normalize-space()`). Anything else is refused when the file is
//! compiled, so a new SAT file that needs more fails its test instead of a document.

use std::collections::HashMap;

/// An element or attribute name: its namespace URI (empty for none) and local part.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct Name {
    pub uri: String,
    pub local: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Axis {
    /// `.`
    SelfNode,
    /// `name` or `*` after `/` (or first in a relative path).
    Child,
    /// `name` or `*` after `//`: any depth below the context.
    Descendant,
    /// `@name`
    Attribute,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Test {
    /// `*`, or the node of `.`.
    Any,
    Name(Name),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Step {
    pub axis: Axis,
    pub test: Test,
}

/// Where a location path starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Start {
    Context,
    /// `/`: the document.
    Root,
    /// `$name`
    Variable(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expr {
    Path { start: Start, steps: Vec<Step> },
    Literal(String),
    Equals(Box<Expr>, Box<Expr>),
    String(Box<Expr>),
    NormalizeSpace(Box<Expr>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Instr {
    Text(String),
    ValueOf(Expr),
    /// `None`: every child node (`<xsl:apply-templates/>`).
    ApplyTemplates(Option<Expr>),
    ForEach(Expr, Vec<Instr>),
    CallTemplate(String, Vec<(String, Expr)>),
    If(Expr, Vec<Instr>),
    Choose(Vec<(Expr, Vec<Instr>)>, Vec<Instr>),
}

/// A named template: its parameters (with their default values) and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Named {
    pub params: Vec<(String, Option<Expr>)>,
    pub body: Vec<Instr>,
}

/// A stylesheet with its included files merged in document order; when two templates
/// match the same name the later one applies (libxslt's choice: the SAT's 3.2 file
/// includes ine10 and ine11, which match the same elements, and vehiculousado's `/`
/// comes before the master's own).
#[derive(Debug, Default)]
pub(crate) struct Stylesheet {
    pub root: Option<Vec<Instr>>,
    /// Templates by the local name they match, then its namespace URI: found for a
    /// document's element by its borrowed names, without building a `Name`.
    matched: HashMap<String, Vec<(String, Vec<Instr>)>>,
    pub named: HashMap<String, Named>,
}

impl Stylesheet {
    /// Adds a template matching `name`, replacing one before it for the same name.
    pub fn insert_matched(&mut self, name: Name, body: Vec<Instr>) {
        let same_local = self.matched.entry(name.local).or_default();
        match same_local.iter_mut().find(|(uri, _)| *uri == name.uri) {
            Some(slot) => slot.1 = body,
            None => same_local.push((name.uri, body)),
        }
    }

    /// The template for an element named `uri` and `local`.
    pub fn template(&self, uri: &str, local: &str) -> Option<&Vec<Instr>> {
        self.matched
            .get(local)?
            .iter()
            .find(|(u, _)| u == uri)
            .map(|(_, body)| body)
    }
}
