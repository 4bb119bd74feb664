//! Applies a compiled stylesheet to a document, writing its text output. The document's
//! root is the element given (the Comprobante, or the TimbreFiscalDigital on its own, as
//! the SAT builds the stamp's string from the stamp node alone).

use roxmltree::Node;

use super::compile::is_blank;
use super::program::{Axis, Expr, Instr, Name, Start, Step, Stylesheet, Test};

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

impl Item<'_, '_> {
    /// Document order: the root first, then nodes, an element's attributes right after it.
    fn order(&self) -> (usize, usize) {
        match self {
            Item::Root(_) => (0, 0),
            Item::Node(n) => (n.id().get_usize() + 1, 0),
            Item::Attribute(n, i) => (n.id().get_usize() + 1, i + 1),
        }
    }

    /// XPath's string-value.
    fn string(&self) -> String {
        match self {
            Item::Root(n) | Item::Node(n) if n.is_element() => n
                .descendants()
                .filter(Node::is_text)
                .filter_map(|t| t.text())
                .collect(),
            Item::Root(_) => String::new(),
            Item::Node(n) => n.text().unwrap_or("").to_string(),
            Item::Attribute(n, i) => n
                .attributes()
                .nth(*i)
                .map(|a| a.value().to_string())
                .unwrap_or_default(),
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

    fn string(&self) -> String {
        match self {
            Value::Nodes(n) => n.first().map(Item::string).unwrap_or_default(),
            Value::Text(s) => s.clone(),
            Value::Bool(b) => b.to_string(),
        }
    }

    /// The strings `=` compares: each node's for a node-set.
    fn strings(&self) -> Vec<String> {
        match self {
            Value::Nodes(n) => n.iter().map(Item::string).collect(),
            other => vec![other.string()],
        }
    }
}

/// XPath `normalize-space`: XML blanks trimmed and each run of them made one space.
pub(crate) fn normalize_space(value: &str) -> String {
    value
        .split(is_blank)
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A template's parameters, and the root element of the run.
#[derive(Clone)]
struct Env<'a, 'i> {
    root: Node<'a, 'i>,
    vars: Vec<(String, Value<'a, 'i>)>,
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
        out: String::new(),
    };
    run.apply(Item::Root(root))?;
    Ok(run.out)
}

impl<'a, 'i> Run<'_, 'a, 'i> {
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
                let name = Name {
                    uri: n.tag_name().namespace().unwrap_or("").to_string(),
                    local: n.tag_name().name().to_string(),
                };
                match sheet.matched.get(&name) {
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

    fn body(
        &mut self,
        body: &[Instr],
        context: Item<'a, 'i>,
        env: &Env<'a, 'i>,
    ) -> Result<(), String> {
        for instr in body {
            match instr {
                Instr::Text(text) => self.out.push_str(text),
                Instr::ValueOf(e) => {
                    let text = eval(e, context, env)?.string();
                    self.out.push_str(&text);
                }
                Instr::ApplyTemplates(select) => {
                    let items = match select {
                        Some(e) => nodes(e, context, env)?,
                        None => children(context),
                    };
                    for item in items {
                        self.apply(item)?;
                    }
                }
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
                        vars: Vec::new(),
                    };
                    for (param, default) in &named.params {
                        let value = match with.iter().find(|(n, _)| n == param) {
                            Some((_, e)) => eval(e, context, env)?,
                            None => match default {
                                Some(e) => eval(e, context, &inner)?,
                                None => Value::Text(String::new()),
                            },
                        };
                        inner.vars.push((param.clone(), value));
                    }
                    self.body(&named.body, context, &inner)?;
                }
            }
        }
        Ok(())
    }
}

fn children<'a, 'i>(item: Item<'a, 'i>) -> Vec<Item<'a, 'i>> {
    match item {
        Item::Root(element) => vec![Item::Node(element)],
        Item::Node(n) => n.children().map(Item::Node).collect(),
        Item::Attribute(..) => Vec::new(),
    }
}

fn nodes<'a, 'i>(
    e: &Expr,
    context: Item<'a, 'i>,
    env: &Env<'a, 'i>,
) -> Result<Vec<Item<'a, 'i>>, String> {
    match eval(e, context, env)? {
        Value::Nodes(items) => Ok(items),
        _ => Err("a node-set was expected".into()),
    }
}

fn eval<'a, 'i>(
    e: &Expr,
    context: Item<'a, 'i>,
    env: &Env<'a, 'i>,
) -> Result<Value<'a, 'i>, String> {
    Ok(match e {
        Expr::Literal(s) => Value::Text(s.clone()),
        Expr::String(inner) => Value::Text(eval(inner, context, env)?.string()),
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
                next.sort_by_key(Item::order);
                next.dedup_by_key(|i| i.order());
                items = next;
            }
            Value::Nodes(items)
        }
    })
}

fn matches(test: &Test, name: (&str, &str)) -> bool {
    match test {
        Test::Any => true,
        Test::Name(n) => n.uri == name.0 && n.local == name.1,
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
