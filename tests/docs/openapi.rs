//! The OpenAPI document: its structure, and that it lists exactly the routes the code
//! mounts (read from the `#[get(...)]`-style attributes under `src/routes`).

use crate::common::app::{files_under, TestApp};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

pub const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

/// The document as committed.
pub fn document() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("static/docs/api/openapi.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {path:?}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path:?} is not JSON: {e}"))
}

/// Follows a local `$ref` (`#/components/...`); panics on anything else.
pub fn resolve<'a>(doc: &'a Value, reference: &str) -> &'a Value {
    let pointer = reference
        .strip_prefix('#')
        .unwrap_or_else(|| panic!("only local $refs are supported, found {reference:?}"));
    doc.pointer(pointer)
        .unwrap_or_else(|| panic!("$ref {reference:?} does not resolve"))
}

/// `v`, or what its `$ref` points to (repeatedly).
pub fn deref<'a>(doc: &'a Value, mut v: &'a Value) -> &'a Value {
    for _ in 0..32 {
        match v.get("$ref").and_then(Value::as_str) {
            Some(r) => v = resolve(doc, r),
            None => return v,
        }
    }
    panic!("$ref loop at {v}")
}

/// One documented operation.
#[derive(Debug, Clone)]
pub struct Operation {
    pub method: String,
    pub path: String,
    pub op: Value,
    /// Path-level parameters followed by the operation's, dereferenced.
    pub parameters: Vec<Value>,
}

impl Operation {
    pub fn name(&self) -> String {
        format!("{} {}", self.method.to_uppercase(), self.path)
    }

    /// The documented response for `status` (exact code, then `4XX`-style, then
    /// `default`), dereferenced.
    pub fn response<'a>(&'a self, doc: &'a Value, status: u16) -> Option<&'a Value> {
        let responses = self.op.get("responses")?;
        let exact = status.to_string();
        let range = format!("{}XX", status / 100);
        [exact.as_str(), range.as_str(), "default"]
            .iter()
            .find_map(|k| responses.get(*k))
            .map(|r| deref(doc, r))
    }

    pub fn query_parameters(&self) -> Vec<&Value> {
        self.parameters
            .iter()
            .filter(|p| p["in"] == "query")
            .collect()
    }

    pub fn requires_auth(&self, doc: &Value) -> bool {
        let security = self.op.get("security").or_else(|| doc.get("security"));
        match security.and_then(Value::as_array) {
            Some(reqs) => !reqs.is_empty() && !reqs.iter().any(|r| r == &serde_json::json!({})),
            None => false,
        }
    }

    pub fn has_request_body(&self) -> bool {
        self.op.get("requestBody").is_some()
    }
}

/// Every operation of the document.
pub fn operations(doc: &Value) -> Vec<Operation> {
    let mut out = vec![];
    let paths = doc["paths"].as_object().expect("`paths` is an object");
    for (path, item) in paths {
        let item = deref(doc, item);
        let shared: Vec<Value> = item
            .get("parameters")
            .and_then(Value::as_array)
            .map(|ps| ps.iter().map(|p| deref(doc, p).clone()).collect())
            .unwrap_or_default();
        for method in METHODS {
            let Some(op) = item.get(*method) else {
                continue;
            };
            let mut parameters = shared.clone();
            if let Some(own) = op.get("parameters").and_then(Value::as_array) {
                for p in own {
                    let p = deref(doc, p).clone();
                    parameters.retain(|q| !(q["name"] == p["name"] && q["in"] == p["in"]));
                    parameters.push(p);
                }
            }
            out.push(Operation {
                method: method.to_string(),
                path: path.clone(),
                op: op.clone(),
                parameters,
            });
        }
    }
    out
}

/// `/v1/entities/{id}` -> `/v1/entities/{}`: templates compare by shape, not by name.
fn shape(path: &str) -> String {
    path.split('/')
        .map(|seg| {
            if seg.starts_with('{') && seg.ends_with('}') {
                "{}"
            } else {
                seg
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A route attribute found in the source.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Route {
    pub method: String,
    /// OpenAPI-style: `<id>` became `{id}`, the query part is dropped.
    pub path: String,
    pub origin: String,
}

/// The string literal starting at `s` (after optional whitespace), unescaped minimally.
fn string_literal(s: &str) -> Option<String> {
    let s = s.trim_start();
    let rest = s.strip_prefix('"')?;
    let end = rest.find('"')?;
    Some(rest[..end].to_string())
}

/// The routes declared with Rocket's method attributes in Rust source text.
pub fn routes_in(source: &str, origin: &str) -> Vec<Route> {
    let mut out = vec![];
    for (n, line) in source.lines().enumerate() {
        let line = line.trim_start();
        if line.starts_with("//") {
            continue;
        }
        let Some(attr) = line.strip_prefix("#[") else {
            continue;
        };
        let attr = attr.strip_prefix("rocket::").unwrap_or(attr);
        for method in METHODS {
            let Some(args) = attr.strip_prefix(&format!("{method}(")) else {
                continue;
            };
            let uri = string_literal(args)
                .unwrap_or_else(|| panic!("{origin}:{}: cannot read the route of {line:?}", n + 1));
            let path = uri.split('?').next().unwrap_or("").to_string();
            // Catch-alls (`/v1/<_path..>`) and the docs routes are not API operations.
            if path.contains("..>") || path == "/docs" || path.starts_with("/docs/") {
                continue;
            }
            let path = path
                .split('/')
                .map(
                    |seg| match seg.strip_prefix('<').and_then(|s| s.strip_suffix('>')) {
                        Some(name) => format!("{{{name}}}"),
                        None => seg.to_string(),
                    },
                )
                .collect::<Vec<_>>()
                .join("/");
            out.push(Route {
                method: method.to_string(),
                path,
                origin: format!("{origin}:{}", n + 1),
            });
        }
    }
    out
}

/// Every route under `src/routes` (recursively).
pub fn source_routes() -> Vec<Route> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = root.join("src/routes");
    let mut routes = vec![];
    for file in files_under(&dir) {
        if file.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("read {file:?}: {e}"));
        let origin = file
            .strip_prefix(root)
            .unwrap_or(&file)
            .to_string_lossy()
            .to_string();
        routes.extend(routes_in(&text, &origin));
    }
    routes.sort();
    routes
}

#[test]
fn route_attribute_parser() {
    let src = r#"
        #[get("/v1/things")]
        #[post("/v1/things", data = "<body>")]
        // #[get("/v1/commented")]
        #[rocket::patch("/v1/things/<id>?<q..>", data = "<body>")]
        #[get("/v1/<_path..>", rank = 100)]
        #[get("/docs/<path..>")]
        #[delete("/v1/things/<id>/parts/<part_id>")]
    "#;
    let got: Vec<(String, String)> = routes_in(src, "x.rs")
        .into_iter()
        .map(|r| (r.method, r.path))
        .collect();
    let want: Vec<(String, String)> = [
        ("get", "/v1/things"),
        ("post", "/v1/things"),
        ("patch", "/v1/things/{id}"),
        ("delete", "/v1/things/{id}/parts/{part_id}"),
    ]
    .iter()
    .map(|(m, p)| (m.to_string(), p.to_string()))
    .collect();
    assert_eq!(got, want);
}

#[test]
fn openapi_lists_exactly_the_mounted_routes() {
    let doc = document();
    let code = source_routes();
    assert!(
        code.len() >= 15,
        "expected the API's routes under src/routes, found {code:?}"
    );
    let documented: BTreeSet<(String, String)> = operations(&doc)
        .iter()
        .map(|o| (o.method.clone(), shape(&o.path)))
        .collect();
    let mounted: BTreeSet<(String, String)> = code
        .iter()
        .map(|r| (r.method.clone(), shape(&r.path)))
        .collect();
    let mut problems = vec![];
    for r in &code {
        if !documented.contains(&(r.method.clone(), shape(&r.path))) {
            problems.push(format!(
                "{} {} ({}) is not in static/docs/api/openapi.json",
                r.method.to_uppercase(),
                r.path,
                r.origin
            ));
        }
    }
    for (method, path) in &documented {
        if !mounted.contains(&(method.clone(), path.clone())) {
            problems.push(format!(
                "{} {path} is documented but no route in src/routes serves it",
                method.to_uppercase()
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn openapi_document_is_well_formed() {
    let doc = document();
    let version = doc["openapi"].as_str().unwrap_or("");
    assert!(
        version.starts_with("3.1."),
        "`openapi` is 3.1.x, found {version:?}"
    );
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());

    // Every $ref resolves inside the document.
    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, child) in m {
                    match (k.as_str(), child) {
                        ("$ref", Value::String(s)) => out.push(s.clone()),
                        _ => refs(child, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|i| refs(i, out)),
            _ => {}
        }
    }
    let mut all = vec![];
    refs(&doc, &mut all);
    for r in &all {
        assert!(r.starts_with("#/"), "$ref {r:?} is not local");
        assert!(
            doc.pointer(&r[1..]).is_some(),
            "$ref {r:?} does not resolve"
        );
    }

    let mut ids = BTreeSet::new();
    let mut problems = vec![];
    for op in operations(&doc) {
        let name = op.name();
        match op.op["operationId"].as_str() {
            Some(id) if ids.insert(id.to_string()) => {}
            Some(id) => problems.push(format!("{name}: operationId {id:?} is not unique")),
            None => problems.push(format!("{name}: no operationId")),
        }
        if !op.op["summary"].is_string() {
            problems.push(format!("{name}: no summary"));
        }
        // Path template parameters are declared, required, and nothing else is.
        let template: BTreeSet<String> = op
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(str::to_string)
            .collect();
        let declared: BTreeSet<String> = op
            .parameters
            .iter()
            .filter(|p| p["in"] == "path")
            .map(|p| {
                if p["required"] != true {
                    problems.push(format!(
                        "{name}: path parameter {} is not required",
                        p["name"]
                    ));
                }
                p["name"].as_str().unwrap_or("").to_string()
            })
            .collect();
        if template != declared {
            problems.push(format!(
                "{name}: path parameters {declared:?} differ from the template {template:?}"
            ));
        }
        for p in &op.parameters {
            if p.get("schema").is_none() && p.get("content").is_none() {
                problems.push(format!("{name}: parameter {} has no schema", p["name"]));
            }
        }
        let responses = op.op["responses"].as_object();
        let Some(responses) = responses else {
            problems.push(format!("{name}: no responses"));
            continue;
        };
        if !responses.keys().any(|k| k.starts_with('2')) {
            problems.push(format!("{name}: no success response"));
        }
        for (code, r) in responses {
            if !deref(&doc, r)["description"].is_string() {
                problems.push(format!("{name}: response {code} has no description"));
            }
        }
        if op.requires_auth(&doc) && !responses.contains_key("401") {
            problems.push(format!("{name}: authenticated but 401 is not documented"));
        }
        if !op.path.starts_with("/v1/") && op.requires_auth(&doc) {
            problems.push(format!(
                "{name}: outside /v1 the service needs no credentials"
            ));
        }
        if op.path.starts_with("/v1/") && !op.requires_auth(&doc) {
            problems.push(format!("{name}: /v1 routes need Basic credentials"));
        }
    }
    let schemes = &doc["components"]["securitySchemes"];
    let basic = schemes
        .as_object()
        .map(|m| {
            m.values()
                .any(|s| s["type"] == "http" && s["scheme"] == "basic")
        })
        .unwrap_or(false);
    assert!(basic, "an http/basic security scheme is declared");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn served_openapi_is_the_committed_document() {
    let server = TestApp::spawn();
    let res = server.anonymous().get("/docs/api/openapi.json");
    assert_eq!(res.status, 200);
    assert!(
        res.content_type().starts_with("application/json"),
        "{}",
        res.content_type()
    );
    assert_eq!(
        res.json(),
        document(),
        "a rebuild serves the committed document"
    );
}
