//! Reads the SAT's XSLT files (bundled, `src/seal/stylesheets`) into a `Stylesheet`:
//! `xsl:include` followed relative to the including file, prefixes resolved to
//! namespace URIs where they are written, whitespace-only text dropped as XSLT does.

use roxmltree::Node;

use super::program::{Axis, Expr, Instr, Name, Named, Start, Step, Stylesheet, Test};

const XSL: &str = "http://www.w3.org/1999/XSL/Transform";

/// Reads a bundled file by its path under `stylesheets/`.
pub(crate) type Files = dyn Fn(&str) -> Option<&'static str>;

/// Compiles the stylesheet at `path` and every file it includes.
pub(crate) fn compile(files: &Files, path: &str) -> Result<Stylesheet, String> {
    let mut sheet = Stylesheet::default();
    let mut stack = Vec::new();
    include(files, path, &mut sheet, &mut stack)?;
    Ok(sheet)
}

fn include(
    files: &Files,
    path: &str,
    sheet: &mut Stylesheet,
    stack: &mut Vec<String>,
) -> Result<(), String> {
    if stack.iter().any(|p| p == path) {
        return Err(format!("{path} includes itself"));
    }
    let text = files(path).ok_or_else(|| format!("{path}: no such stylesheet"))?;
    let doc = roxmltree::Document::parse(text).map_err(|e| format!("{path}: {e}"))?;
    stack.push(path.to_string());
    for node in doc.root_element().children().filter(Node::is_element) {
        let at = |e: String| format!("{path}: {e}");
        match xsl_name(node) {
            Some("include") => {
                let href = attr(node, "href").map_err(at)?;
                include(files, &resolve(path, href), sheet, stack)?;
            }
            Some("output") => {}
            Some("template") => template(node, sheet).map_err(at)?,
            _ => {
                return Err(at(format!(
                    "unsupported top-level <{}>",
                    node.tag_name().name()
                )))
            }
        }
    }
    stack.pop();
    Ok(())
}

/// `href` relative to the directory of `from`.
fn resolve(from: &str, href: &str) -> String {
    let mut parts: Vec<&str> = from.split('/').collect();
    parts.pop();
    for part in href.split('/') {
        match part {
            ".." => {
                parts.pop();
            }
            "." | "" => {}
            p => parts.push(p),
        }
    }
    parts.join("/")
}

fn xsl_name<'a>(node: Node<'a, '_>) -> Option<&'a str> {
    (node.tag_name().namespace() == Some(XSL)).then(|| node.tag_name().name())
}

fn attr<'a>(node: Node<'a, '_>, name: &str) -> Result<&'a str, String> {
    node.attribute(name)
        .ok_or_else(|| format!("<{}> without {name}", node.tag_name().name()))
}

fn template(node: Node<'_, '_>, sheet: &mut Stylesheet) -> Result<(), String> {
    let mut params = Vec::new();
    let mut rest = Vec::new();
    for child in node.children() {
        if xsl_name(child) == Some("param") {
            params.push(param(child)?);
        } else {
            rest.push(child);
        }
    }
    let body = body(rest.into_iter())?;
    if let Some(name) = node.attribute("name") {
        sheet.named.insert(name.to_string(), Named { params, body });
    } else {
        match attr(node, "match")? {
            "/" => sheet.root = Some(body),
            pattern => {
                sheet.insert_matched(qname(node, pattern)?, body);
            }
        }
    }
    Ok(())
}

fn param(node: Node<'_, '_>) -> Result<(String, Option<Expr>), String> {
    let default = node
        .attribute("select")
        .map(|s| expr(node, s))
        .transpose()?;
    Ok((attr(node, "name")?.to_string(), default))
}

fn body<'a, 'i: 'a>(nodes: impl Iterator<Item = Node<'a, 'i>>) -> Result<Vec<Instr>, String> {
    let mut out = Vec::new();
    for node in nodes {
        if node.is_text() {
            let text = node.text().unwrap_or("");
            if !text.chars().all(is_blank) {
                out.push(Instr::Text(text.to_string()));
            }
            continue;
        }
        if !node.is_element() {
            continue;
        }
        let select = |n: Node<'_, '_>| attr(n, "select").and_then(|s| expr(n, s));
        let test = |n: Node<'_, '_>| attr(n, "test").and_then(|s| expr(n, s));
        out.push(match xsl_name(node) {
            Some("value-of") => Instr::ValueOf(select(node)?),
            Some("apply-templates") => Instr::ApplyTemplates(
                node.attribute("select")
                    .map(|s| expr(node, s))
                    .transpose()?,
            ),
            Some("for-each") => Instr::ForEach(select(node)?, body(node.children())?),
            Some("if") => Instr::If(test(node)?, body(node.children())?),
            Some("call-template") => {
                let mut with = Vec::new();
                for p in node.children().filter(Node::is_element) {
                    if xsl_name(p) != Some("with-param") {
                        return Err("<call-template> holds other than <with-param>".into());
                    }
                    with.push((attr(p, "name")?.to_string(), select(p)?));
                }
                Instr::CallTemplate(attr(node, "name")?.to_string(), with)
            }
            Some("choose") => {
                let mut whens = Vec::new();
                let mut otherwise = Vec::new();
                for c in node.children().filter(Node::is_element) {
                    match xsl_name(c) {
                        Some("when") => whens.push((test(c)?, body(c.children())?)),
                        Some("otherwise") => otherwise = body(c.children())?,
                        _ => return Err("<choose> holds other than <when>/<otherwise>".into()),
                    }
                }
                Instr::Choose(whens, otherwise)
            }
            Some("text") => Instr::Text(node.text().unwrap_or("").to_string()),
            _ => return Err(format!("unsupported <{}>", node.tag_name().name())),
        });
    }
    Ok(out)
}

/// XPath's blanks (and XML's whitespace).
pub(crate) fn is_blank(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// `prefix:local` (or `local`, no namespace) with the prefix bound where it is written.
fn qname(at: Node<'_, '_>, text: &str) -> Result<Name, String> {
    let (uri, local) = match text.split_once(':') {
        Some((prefix, local)) => {
            let uri = at
                .lookup_namespace_uri(Some(prefix))
                .ok_or_else(|| format!("unbound prefix {prefix} in {text}"))?;
            (uri.to_string(), local)
        }
        None => (String::new(), text),
    };
    Ok(Name {
        uri,
        local: local.to_string(),
    })
}

/// Parses an XPath expression of the supported subset.
pub(crate) fn expr(at: Node<'_, '_>, text: &str) -> Result<Expr, String> {
    let mut p = Parser { at, text, pos: 0 };
    let e = p.equality()?;
    p.blanks();
    if p.pos != text.len() {
        return Err(format!("unsupported expression {text:?}"));
    }
    Ok(e)
}

struct Parser<'a, 'i, 't> {
    at: Node<'a, 'i>,
    text: &'t str,
    pos: usize,
}

impl Parser<'_, '_, '_> {
    fn rest(&self) -> &str {
        &self.text[self.pos..]
    }

    fn blanks(&mut self) {
        let trimmed = self.rest().trim_start_matches(is_blank);
        self.pos = self.text.len() - trimmed.len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.blanks();
        if self.rest().starts_with(token) {
            self.pos += token.len();
            true
        } else {
            false
        }
    }

    fn unsupported(&self) -> String {
        format!("unsupported expression {:?}", self.text)
    }

    fn equality(&mut self) -> Result<Expr, String> {
        let left = self.primary()?;
        if self.eat("=") {
            let right = self.primary()?;
            return Ok(Expr::Equals(Box::new(left), Box::new(right)));
        }
        Ok(left)
    }

    /// A name made of XML name characters (letters of any script, digits, `.-_:`).
    fn name(&mut self) -> Option<String> {
        self.blanks();
        let len = self
            .rest()
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
            .unwrap_or(self.rest().len());
        if len == 0 {
            return None;
        }
        let name = self.rest()[..len].to_string();
        self.pos += len;
        Some(name)
    }

    fn primary(&mut self) -> Result<Expr, String> {
        self.blanks();
        for quote in ['\'', '"'] {
            if let Some(body) = self.rest().strip_prefix(quote) {
                let end = body.find(quote).ok_or_else(|| self.unsupported())?;
                let literal = body[..end].to_string();
                self.pos += end + 2;
                return Ok(Expr::Literal(literal));
            }
        }
        for (function, build) in [
            (
                "normalize-space(",
                Expr::NormalizeSpace as fn(Box<Expr>) -> Expr,
            ),
            ("string(", Expr::String),
        ] {
            if self.eat(function) {
                let inner = self.equality()?;
                if !self.eat(")") {
                    return Err(self.unsupported());
                }
                return Ok(build(Box::new(inner)));
            }
        }
        self.path()
    }

    fn path(&mut self) -> Result<Expr, String> {
        let mut steps = Vec::new();
        let start = if self.eat("$") {
            Start::Variable(self.name().ok_or_else(|| self.unsupported())?)
        } else if self.rest().starts_with('/') {
            Start::Root
        } else {
            steps.push(self.step(Axis::Child)?);
            Start::Context
        };
        loop {
            let axis = if self.eat("//") {
                Axis::Descendant
            } else if self.eat("/") {
                Axis::Child
            } else {
                break;
            };
            steps.push(self.step(axis)?);
        }
        if start == Start::Root && steps.is_empty() {
            return Err(self.unsupported());
        }
        Ok(Expr::Path { start, steps })
    }

    fn step(&mut self, axis: Axis) -> Result<Step, String> {
        if self.eat(".") {
            if axis != Axis::Child {
                // `//.` is not used by the SAT's files.
                return Err(self.unsupported());
            }
            return Ok(Step {
                axis: Axis::SelfNode,
                test: Test::Any,
            });
        }
        let axis = if self.eat("@") {
            if axis != Axis::Child {
                return Err(self.unsupported());
            }
            Axis::Attribute
        } else {
            axis
        };
        if self.eat("*") {
            return Ok(Step {
                axis,
                test: Test::Any,
            });
        }
        let name = self.name().ok_or_else(|| self.unsupported())?;
        let name = if axis == Axis::Attribute && !name.contains(':') {
            // An unprefixed attribute is in no namespace.
            Name {
                uri: String::new(),
                local: name,
            }
        } else {
            qname(self.at, &name)?
        };
        Ok(Step {
            axis,
            test: Test::Name(name),
        })
    }
}
