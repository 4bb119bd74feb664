//! Applies a compiled stylesheet to a document, writing its text output. The document's
//! root is the element given (the Comprobante, or the TimbreFiscalDigital on its own, as
//! the SAT builds the stamp's string from the stamp node alone).
//!
//! Every document the sandbox makes and every document stored runs through here, so
//! the hot paths allocate nothing per attribute: values are borrowed from the document
//! and written (normalised) straight into the one output buffer, a template's
//! parameters are named by the stylesheet's own strings, and a path from one node
//! keeps document order without sorting.

use std::borrow::Cow;

use roxmltree::Node;

use super::compile::is_blank;
use super::program::{Axis, Expr, Instr, Start, Step, Stylesheet, Test};

/// A node an expression selects.
#[derive(Debug, Clone, Copy)]
enum Item<'a, 'i> {
    /// The document whose only child is the element.
    Root(Node<'a, 'i>),
    /// An element, text, comment or processing instruction.
    Node(Node<'a, 'i>),
    /// The element's attribute at this index.
    Attribute(Node<'a, 'i>, usize),
}

impl<'a> Item<'a, '_> {
    /// Document order: the root first, then nodes, an element's attributes right after it.
    fn order(&self) -> (usize, usize) {
        match self {
            Item::Root(_) => (0, 0),
            Item::Node(n) => (n.id().get_usize() + 1, 0),
            Item::Attribute(n, i) => (n.id().get_usize() + 1, i + 1),
        }
    }

    /// XPath's string-value, borrowed from the document where it is one piece.
    fn string(&self) -> Cow<'a, str> {
        match self {
            Item::Root(n) | Item::Node(n) if n.is_element() => Cow::Owned(
                n.descendants()
                    .filter(Node::is_text)
                    .filter_map(|t| t.text())
                    .collect(),
            ),
            Item::Root(_) => Cow::Borrowed(""),
            Item::Node(n) => Cow::Borrowed(n.text().unwrap_or("")),
            Item::Attribute(n, i) => {
                Cow::Borrowed(n.attributes().nth(*i).map(|a| a.value()).unwrap_or(""))
            }
        }
    }
}

#[derive(Debug, Clone)]
enum Value<'a, 'i> {
    Nodes(Vec<Item<'a, 'i>>),
    Text(String),
    Bool(bool),
}

impl Value<'_, '_> {
    fn truth(&self) -> bool {
        match self {
            Value::Nodes(n) => !n.is_empty(),
            Value::Text(s) => !s.is_empty(),
            Value::Bool(b) => *b,
        }
    }

    fn string(&self) -> Cow<'_, str> {
        match self {
            Value::Nodes(n) => n.first().map(Item::string).unwrap_or_default(),
            Value::Text(s) => Cow::Borrowed(s),
            Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        }
    }

    /// The strings `=` compares: each node's for a node-set.
    fn strings(&self) -> Vec<Cow<'_, str>> {
        match self {
            Value::Nodes(n) => n.iter().map(Item::string).collect(),
            other => vec![other.string()],
        }
    }
}

/// XPath `normalize-space`: XML blanks trimmed and each run of them made one space.
pub(crate) fn normalize_space(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    push_normalized(&mut out, value);
    out
}

/// Writes `normalize-space(value)` at the end of `out`.
fn push_normalized(out: &mut String, value: &str) {
    let mut first = true;
    for part in value.split(is_blank).filter(|part| !part.is_empty()) {
        if !first {
            out.push(' ');
        }
        out.push_str(part);
        first = false;
    }
}

/// A template's parameters (named by the stylesheet's strings), and the run's root.
#[derive(Clone)]
struct Env<'s, 'a, 'i> {
    root: Node<'a, 'i>,
    vars: Vec<(&'s str, Value<'a, 'i>)>,
}

struct Run<'s, 'a, 'i> {
    sheet: &'s Stylesheet,
    root: Node<'a, 'i>,
    out: String,
}

/// The stylesheet's output for the document whose root element is `root`.
pub(crate) fn run(sheet: &Stylesheet, root: Node<'_, '_>) -> Result<String, String> {
    let mut run = Run {
        sheet,
        root,
        // Original strings run to about a tenth of their document.
        out: String::with_capacity(1024),
    };
    run.apply(Item::Root(root))?;
    Ok(run.out)
}

impl<'s, 'a, 'i> Run<'s, 'a, 'i> {
    /// The template rule for one node: the stylesheet's, or XSLT's built-in one (an
    /// element's children in turn, a text's or an attribute's value).
    fn apply(&mut self, item: Item<'a, 'i>) -> Result<(), String> {
        let sheet = self.sheet;
        match item {
            Item::Root(element) => match &sheet.root {
                Some(body) => self.body(
                    body,
                    item,
                    &Env {
                        root: element,
                        vars: Vec::new(),
                    },
                ),
                None => self.apply(Item::Node(element)),
            },
            Item::Node(n) if n.is_element() => {
                let (uri, local) = element_name(n);
                match sheet.template(uri, local) {
                    Some(body) => self.body(
                        body,
                        item,
                        &Env {
                            root: self.root,
                            vars: Vec::new(),
                        },
                    ),
                    None => {
                        for child in n.children() {
                            self.apply(Item::Node(child))?;
                        }
                        Ok(())
                    }
                }
            }
            Item::Node(n) => {
                if n.is_text() {
                    self.out.push_str(n.text().unwrap_or(""));
                }
                Ok(())
            }
            Item::Attribute(..) => {
                self.out.push_str(&item.string());
                Ok(())
            }
        }
    }

    /// `value-of`: the expression's string written into the output, not built apart.
    fn value_of(
        &mut self,
        e: &Expr,
        context: Item<'a, 'i>,
        env: &Env<'s, 'a, 'i>,
    ) -> Result<(), String> {
        match e {
            Expr::Literal(s) => self.out.push_str(s),
            Expr::String(inner) => self.value_of(inner, context, env)?,
            Expr::NormalizeSpace(inner) => {
                let inner = match inner.as_ref() {
                    Expr::String(inner) => inner,
                    other => other,
                };
                let value = eval(inner, context, env)?;
                push_normalized(&mut self.out, &value.string());
            }
            other => {
                let value = eval(other, context, env)?;
                self.out.push_str(&value.string());
            }
        }
        Ok(())
    }

    fn body(
        &mut self,
        body: &'s [Instr],
        context: Item<'a, 'i>,
        env: &Env<'s, 'a, 'i>,
    ) -> Result<(), String> {
        for instr in body {
            match instr {
                Instr::Text(text) => self.out.push_str(text),
                Instr::ValueOf(e) => self.value_of(e, context, env)?,
                Instr::ApplyTemplates(select) => match select {
                    Some(e) => {
                        for item in nodes(e, context, env)? {
                            self.apply(item)?;
                        }
                    }
                    None => match context {
                        Item::Root(element) => self.apply(Item::Node(element))?,
                        Item::Node(n) => {
                            for child in n.children() {
                                self.apply(Item::Node(child))?;
                            }
                        }
                        Item::Attribute(..) => {}
                    },
                },
                Instr::ForEach(select, inner) => {
                    for item in nodes(select, context, env)? {
                        self.body(inner, item, env)?;
                    }
                }
                Instr::If(test, inner) => {
                    if eval(test, context, env)?.truth() {
                        self.body(inner, context, env)?;
                    }
                }
                Instr::Choose(whens, otherwise) => {
                    let mut chosen = otherwise;
                    for (test, inner) in whens {
                        if eval(test, context, env)?.truth() {
                            chosen = inner;
                            break;
                        }
                    }
                    self.body(chosen, context, env)?;
                }
                Instr::CallTemplate(name, with) => {
                    let named = self
                        .sheet
                        .named
                        .get(name)
                        .ok_or_else(|| format!("no template named {name}"))?;
                    let mut inner = Env {
                        root: env.root,
                        vars: Vec::with_capacity(named.params.len()),
                    };
                    for (param, default) in &named.params {
                        let value = match with.iter().find(|(n, _)| n == param) {
                            Some((_, e)) => eval(e, context, env)?,
                            None => match default {
                                Some(e) => eval(e, context, &inner)?,
                                None => Value::Text(String::new()),
                            },
                        };
                        inner.vars.push((param.as_str(), value));
                    }
                    self.body(&named.body, context, &inner)?;
                }
            }
        }
        Ok(())
    }
}

fn nodes<'a, 'i>(
    e: &Expr,
    context: Item<'a, 'i>,
    env: &Env<'_, 'a, 'i>,
) -> Result<Vec<Item<'a, 'i>>, String> {
    match eval(e, context, env)? {
        Value::Nodes(items) => Ok(items),
        _ => Err("a node-set was expected".into()),
    }
}

fn eval<'a, 'i>(
    e: &Expr,
    context: Item<'a, 'i>,
    env: &Env<'_, 'a, 'i>,
) -> Result<Value<'a, 'i>, String> {
    Ok(match e {
        Expr::Literal(s) => Value::Text(s.clone()),
        Expr::String(inner) => Value::Text(eval(inner, context, env)?.string().into_owned()),
        Expr::NormalizeSpace(inner) => {
            Value::Text(normalize_space(&eval(inner, context, env)?.string()))
        }
        Expr::Equals(left, right) => {
            let (l, r) = (eval(left, context, env)?, eval(right, context, env)?);
            let rs = r.strings();
            Value::Bool(l.strings().iter().any(|s| rs.contains(s)))
        }
        Expr::Path { start, steps } => {
            let mut items = match start {
                Start::Context => vec![context],
                Start::Root => vec![Item::Root(env.root)],
                Start::Variable(name) => match env.vars.iter().rev().find(|(n, _)| n == name) {
                    Some((_, Value::Nodes(items))) if steps.is_empty() => {
                        return Ok(Value::Nodes(items.clone()))
                    }
                    Some((_, Value::Nodes(items))) => items.clone(),
                    Some((_, value)) if steps.is_empty() => return Ok(value.clone()),
                    Some(_) => return Err(format!("${name} is not a node-set")),
                    None => return Err(format!("${name} is not bound")),
                },
            };
            for step_ in steps {
                let mut next = Vec::new();
                for item in &items {
                    step(step_, *item, &mut next);
                }
                // One node's children, descendants or attributes come in document
                // order, each once; several nodes' may interleave or repeat.
                if items.len() > 1 {
                    next.sort_by_key(Item::order);
                    next.dedup_by_key(|i| i.order());
                }
                items = next;
            }
            Value::Nodes(items)
        }
    })
}

fn matches(test: &Test, name: (&str, &str)) -> bool {
    match test {
        Test::Any => true,
        Test::Name(n) => n.local == name.1 && n.uri == name.0,
    }
}

fn element_name<'a>(n: Node<'a, '_>) -> (&'a str, &'a str) {
    (n.tag_name().namespace().unwrap_or(""), n.tag_name().name())
}

fn step<'a, 'i>(step: &Step, item: Item<'a, 'i>, out: &mut Vec<Item<'a, 'i>>) {
    let elements = |iter: &mut dyn Iterator<Item = Node<'a, 'i>>, out: &mut Vec<Item<'a, 'i>>| {
        for n in iter {
            if n.is_element() && matches(&step.test, element_name(n)) {
                out.push(Item::Node(n));
            }
        }
    };
    match (step.axis, item) {
        (Axis::SelfNode, _) => out.push(item),
        (Axis::Child, Item::Root(e)) => elements(&mut std::iter::once(e), out),
        (Axis::Child, Item::Node(n)) => elements(&mut n.children(), out),
        (Axis::Descendant, Item::Root(e)) => elements(&mut e.descendants(), out),
        (Axis::Descendant, Item::Node(n)) => elements(&mut n.descendants().skip(1), out),
        (Axis::Attribute, Item::Node(n)) if n.is_element() => {
            for (i, a) in n.attributes().enumerate() {
                if matches(&step.test, (a.namespace().unwrap_or(""), a.name())) {
                    out.push(Item::Attribute(n, i));
                }
            }
        }
        _ => {}
    }
}
