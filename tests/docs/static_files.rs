//! Every file under `static/docs` is served at its URL, with the right type and caching,
//! references no other host, and nothing outside `static/docs` can be reached.

use crate::common::app::{files_under, TestApp};
use crate::docs::harness::raw_get;
use std::path::{Path, PathBuf};

/// `static/docs` on disk.
fn docs_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("static")
        .join("docs")
}

/// `(path relative to static/docs with '/' separators, absolute path)` of every file.
fn docs_files() -> Vec<(String, PathBuf)> {
    let root = docs_dir();
    let mut paths = files_under(&root);
    paths.sort();
    let files: Vec<(String, PathBuf)> = paths
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(&root)
                .expect("under static/docs")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().to_string())
                .collect::<Vec<_>>()
                .join("/");
            (rel, p)
        })
        .collect();
    assert!(
        files.len() >= 10,
        "expected the guides, assets and API reference under {root:?}, found {files:?}"
    );
    files
}

/// The content types a file of this extension may be served with (`None`: unknown, and
/// the test asks for one to be chosen here).
pub(crate) fn allowed_types(rel: &str) -> Option<&'static [&'static str]> {
    let name = rel.rsplit('/').next().unwrap_or(rel);
    let ext = match name.rsplit_once('.') {
        Some((_, ext)) => ext.to_ascii_lowercase(),
        None => String::new(),
    };
    Some(match ext.as_str() {
        "html" => &["text/html"],
        "css" => &["text/css"],
        "js" | "mjs" => &["text/javascript", "application/javascript"],
        "json" => &["application/json"],
        "py" => &["text/plain", "text/x-python", "application/x-python"],
        "txt" | "md" => &["text/plain", "text/markdown"],
        // The systemd unit example, and the Dockerfile's ignore list.
        "service" | "dockerignore" => &["text/plain"],
        "svg" => &["image/svg+xml"],
        "png" => &["image/png"],
        "ico" => &["image/x-icon", "image/vnd.microsoft.icon"],
        "woff2" => &["font/woff2"],
        "map" => &["application/json"],
        // LICENSE, NOTICE: plain text would be nicer, but a download is acceptable.
        "" => &["text/plain", "application/octet-stream"],
        _ => return None,
    })
}

/// The media type of a Content-Type value (before `;`), lower case.
pub(crate) fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

#[test]
fn every_docs_file_is_served_with_its_type_and_cache_control() {
    let server = TestApp::spawn();
    let anon = server.anonymous();
    let mut failures = vec![];
    for (rel, path) in docs_files() {
        let url = format!("/docs/{rel}");
        let res = anon.get(&url);
        if res.status != 200 {
            failures.push(format!(
                "{url}: status {} (a file added under static/ needs a rebuild of the \
                 crate: touch src/docs.rs)",
                res.status
            ));
            continue;
        }
        let on_disk = std::fs::read(&path).unwrap_or_else(|e| panic!("read {path:?}: {e}"));
        if res.body != on_disk {
            failures.push(format!("{url}: the body differs from {path:?}"));
        }
        let ct = media_type(res.content_type());
        match allowed_types(&rel) {
            Some(allowed) if allowed.contains(&ct.as_str()) => {}
            Some(allowed) => failures.push(format!(
                "{url}: Content-Type {:?}, expected one of {allowed:?}",
                res.content_type()
            )),
            None => failures.push(format!(
                "{url}: no expected Content-Type is known for this extension (served as {:?}); \
                 add it to allowed_types in tests/docs/static_files.rs",
                res.content_type()
            )),
        }
        if ct.starts_with("text/") || ct == "application/json" || ct.ends_with("javascript") {
            let charset_ok = res
                .content_type()
                .to_ascii_lowercase()
                .contains("charset=utf-8")
                || std::str::from_utf8(&res.body).is_ok();
            if !charset_ok {
                failures.push(format!("{url}: a text file that is not UTF-8"));
            }
        }
        match res.header("cache-control") {
            Some(v) if !v.trim().is_empty() => {}
            _ => failures.push(format!("{url}: no Cache-Control header")),
        }
        // A guide (an .html file) is also reachable without its extension, and an
        // index.html at its directory's URL.
        if let Some(stem) = rel.strip_suffix(".html") {
            let mut aliases = vec![format!("/docs/{stem}")];
            if let Some(dir) = stem.strip_suffix("index") {
                let dir = dir.trim_end_matches('/');
                aliases.push(if dir.is_empty() {
                    "/docs".to_string()
                } else {
                    format!("/docs/{dir}")
                });
            }
            for alias in aliases {
                let res = anon.get(&alias);
                if res.status != 200 {
                    failures.push(format!("{alias}: status {}", res.status));
                } else if res.body != on_disk {
                    failures.push(format!("{alias}: not the content of {rel}"));
                } else if media_type(res.content_type()) != "text/html" {
                    failures.push(format!("{alias}: Content-Type {:?}", res.content_type()));
                } else if res.header("cache-control").is_none() {
                    failures.push(format!("{alias}: no Cache-Control header"));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "docs files not served as expected:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn docs_and_api_reference_are_html_pages() {
    let server = TestApp::spawn();
    let anon = server.anonymous();
    for url in ["/docs", "/docs/", "/docs/api", "/docs/api/"] {
        let res = anon.get(url);
        assert_eq!(res.status, 200, "{url}: body {}", res.text());
        assert_eq!(media_type(res.content_type()), "text/html", "{url}");
        let body = res.text();
        assert!(
            body.to_ascii_lowercase().starts_with("<!doctype html"),
            "{url} is an HTML document: {}",
            &body[..body.len().min(200)]
        );
        assert!(body.contains("<title>"), "{url} has a title");
    }
    let api = anon.get("/docs/api").text();
    assert!(
        api.contains("/docs/api/swagger-ui/swagger-ui-bundle.js")
            && api.contains("/docs/api/init.js"),
        "/docs/api loads the vendored Swagger UI"
    );
    let init = anon.get("/docs/api/init.js").text();
    assert!(
        init.contains("/docs/api/openapi.json"),
        "the Swagger UI renders our OpenAPI document"
    );
    // The guides' navigation reaches every guide.
    let index = anon.get("/docs").text();
    for (rel, _) in docs_files() {
        let Some(stem) = rel.strip_suffix(".html") else {
            continue;
        };
        if rel.contains('/') || stem == "index" {
            continue;
        }
        assert!(
            index.contains(&format!("href=\"/docs/{stem}\"")),
            "the /docs navigation links to /docs/{stem}"
        );
    }
}

#[test]
fn unknown_or_escaping_docs_paths_are_json_404s() {
    let server = TestApp::spawn();
    let anon = server.anonymous();
    for url in [
        "/docs/nope.css",
        "/docs/nope",
        "/docs/api/nope.js",
        "/docs/assets/",
    ] {
        let res = anon.get(url);
        if url == "/docs/assets/" && res.status == 200 {
            // A directory with an index.html would be fine; there is none today.
            continue;
        }
        assert_eq!(res.status, 404, "{url}: body {}", res.text());
        assert_eq!(media_type(res.content_type()), "application/json", "{url}");
        assert!(res.json()["message"].is_string(), "{url}: {}", res.text());
    }
    // Paths that try to leave static/docs, sent as written (no client normalization).
    for url in [
        "/docs/../Cargo.toml",
        "/docs/../../Cargo.toml",
        "/docs/api/../../Cargo.toml",
        "/docs/%2e%2e/Cargo.toml",
        "/docs/..%2fCargo.toml",
        "/docs/%2e%2e%2fsrc%2fmain.rs",
        "/docs/..",
        "/docs/../src/main.rs",
        "/docs/.hidden",
    ] {
        let (status, head, body) = raw_get(&server, url);
        assert!(
            !body.contains("[package]") && !body.contains("fn main"),
            "{url} must not serve a file outside static/docs: {body}"
        );
        // Some of these normalize to an existing page (`/docs/..` is `/`): only a 404
        // or a page of ours is acceptable, and a 404 is JSON.
        if status != 200 {
            assert_eq!(status, 404, "{url}: {head}\n{body}");
            assert!(
                head.contains("content-type: application/json"),
                "{url}: a JSON 404; {head}"
            );
            let json: serde_json::Value = serde_json::from_str(&body)
                .unwrap_or_else(|e| panic!("{url}: JSON 404 body ({e}): {body}"));
            assert!(json["message"].is_string(), "{url}: {body}");
        }
    }
}

/// A reference (`src=`, `href=`, `url(`, `@import`, or a quoted absolute URL in a script)
/// found in a served text file.
pub(crate) fn references(body: &str, kind: &str) -> Vec<String> {
    let mut out = vec![];
    let lower = body.to_ascii_lowercase();
    let take_value = |from: usize| -> String {
        let rest = &body[from..];
        let rest = rest.trim_start();
        let (quote, rest) = match rest.chars().next() {
            Some(q @ ('"' | '\'')) => (Some(q), &rest[1..]),
            _ => (None, rest),
        };
        let end = rest
            .find(|c: char| match quote {
                Some(q) => c == q,
                None => c.is_whitespace() || c == '>' || c == ')',
            })
            .unwrap_or(rest.len());
        rest[..end].trim().to_string()
    };
    for needle in [
        "src=", "href=", "action=", "poster=", "srcset=", "url(", "@import",
    ] {
        let mut from = 0;
        while let Some(i) = lower[from..].find(needle) {
            let at = from + i + needle.len();
            out.push(take_value(at));
            from = at;
        }
    }
    if kind == "js" {
        // String literals holding absolute URLs (comments may say "//", so only quoted).
        for quote in ['"', '\'', '`'] {
            for prefix in ["http://", "https://", "//"] {
                let needle = format!("{quote}{prefix}");
                let mut from = 0;
                while let Some(i) = body[from..].find(&needle) {
                    let at = from + i + 1;
                    let end = body[at..].find(quote).map_or(body.len(), |e| at + e);
                    out.push(body[at..end].to_string());
                    from = end.max(at);
                }
            }
        }
    }
    out
}

/// The host of an absolute or protocol-relative URL; None for a relative one.
pub(crate) fn external_host(reference: &str) -> Option<String> {
    let r = reference.trim().to_ascii_lowercase();
    let rest = r
        .strip_prefix("http://")
        .or_else(|| r.strip_prefix("https://"))
        .or_else(|| r.strip_prefix("//"))
        .or_else(|| r.strip_prefix("ws://"))
        .or_else(|| r.strip_prefix("wss://"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host_port = authority.rsplit('@').next().unwrap_or("");
    let host = if host_port.starts_with('[') {
        host_port.split(']').next().unwrap_or("").to_string() + "]"
    } else {
        host_port.split(':').next().unwrap_or("").to_string()
    };
    let local = ["localhost", "127.0.0.1", "[::1]", ""];
    (!local.contains(&host.as_str())).then_some(host)
}

/// Every string value in an OpenAPI document that a renderer may fetch or link to:
/// `$ref`s, `servers[].url`, `externalDocs.url`, `info.*.url`, security scheme URLs.
fn openapi_references(v: &serde_json::Value, key: &str, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(map) => {
            for (k, child) in map {
                // Examples are data, not references.
                if k == "example" || k == "examples" || k == "default" || k == "const" {
                    continue;
                }
                openapi_references(child, k, out);
            }
        }
        serde_json::Value::Array(items) => {
            for item in items {
                openapi_references(item, key, out);
            }
        }
        serde_json::Value::String(s) => {
            let linkish = [
                "$ref",
                "url",
                "termsOfService",
                "authorizationUrl",
                "tokenUrl",
                "refreshUrl",
                "openIdConnectUrl",
                "$id",
                "$schema",
                "jsonSchemaDialect",
            ];
            if linkish.contains(&key) && !s.starts_with('#') {
                // The JSON Schema dialect URIs are identifiers, never fetched.
                if !s.starts_with("https://json-schema.org/")
                    && !s.starts_with("https://spec.openapis.org/oas/3.1/dialect")
                {
                    out.push(s.clone());
                }
            }
        }
        _ => {}
    }
}

#[test]
fn served_docs_reference_no_external_host() {
    let server = TestApp::spawn();
    let anon = server.anonymous();
    let mut failures = vec![];
    let mut checked = 0;
    for (rel, _) in docs_files() {
        // The vendored Swagger UI bundle is third-party code (it mentions URLs it never
        // loads with our settings); its HTML and init script are ours and are checked.
        if rel.starts_with("api/swagger-ui/") {
            continue;
        }
        let ext = rel.rsplit('.').next().unwrap_or("");
        let url = format!("/docs/{rel}");
        let body = anon.get(&url).text();
        let refs = match ext {
            "html" | "css" => references(&body, ext),
            "js" => references(&body, "js"),
            "json" => {
                let doc: serde_json::Value =
                    serde_json::from_str(&body).unwrap_or_else(|e| panic!("{url} is JSON: {e}"));
                let mut out = vec![];
                openapi_references(&doc, "", &mut out);
                out
            }
            _ => continue,
        };
        checked += 1;
        for r in refs {
            if let Some(host) = external_host(&r) {
                failures.push(format!("{url}: {r:?} (host {host})"));
            }
        }
    }
    assert!(checked >= 10, "checked only {checked} files");
    assert!(
        failures.is_empty(),
        "the docs must work offline and reference no other host:\n  {}",
        failures.join("\n  ")
    );
}

#[test]
fn reference_scanner_finds_external_hosts() {
    let html = r#"<link href="https://cdn.example.net/x.css"><script src='//cdn2.example.com/a.js'></script>
        <a href="/docs/quickstart">ok</a><img src="http://localhost:8000/x.png">"#;
    let mut hosts: Vec<String> = references(html, "html")
        .iter()
        .filter_map(|r| external_host(r))
        .collect();
    hosts.sort();
    assert_eq!(hosts, ["cdn.example.net", "cdn2.example.com"]);
    let css = "body { background: url(https://fonts.example.org/f.woff2) } @import 'http://127.0.0.1/x.css';";
    let hosts: Vec<String> = references(css, "css")
        .iter()
        .filter_map(|r| external_host(r))
        .collect();
    assert_eq!(hosts, ["fonts.example.org"]);
    let js = "// see https://swagger.io\nfetch(\"https://api.example.com/v1\"); load('/docs/x')";
    let hosts: Vec<String> = references(js, "js")
        .iter()
        .filter_map(|r| external_host(r))
        .collect();
    assert_eq!(hosts, ["api.example.com"]);
    let doc = serde_json::json!({
        "servers": [{"url": "https://api.example.com"}],
        "components": {"schemas": {"A": {"$ref": "#/components/schemas/B"},
                                   "W": {"properties": {"url": {"example": "https://ok.example.com"}}}}}
    });
    let mut refs = vec![];
    openapi_references(&doc, "", &mut refs);
    assert_eq!(refs, ["https://api.example.com"]);
    assert_eq!(external_host("[::1]"), None);
    assert_eq!(external_host("http://[::1]:80/x"), None);
}

/// A newcomer's map: `/docs`' index lists every guide on disk (in "All guides") and
/// every route of the OpenAPI document (in "Endpoints at a glance"), and nothing else.
#[test]
fn the_index_lists_every_guide_and_every_endpoint() {
    let index = std::fs::read_to_string(docs_dir().join("index.html")).expect("index.html");
    let section = |id: &str| {
        let start = index
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("section {id}"));
        let end = index[start..]
            .find("<h2")
            .map_or(index.len(), |n| start + n);
        index[start..end].to_string()
    };

    let guides = section("guides");
    let linked: std::collections::BTreeSet<String> =
        regex::Regex::new(r#"href="/docs/([a-z0-9-]+)""#)
            .expect("re")
            .captures_iter(&guides)
            .map(|c| c[1].to_string())
            .filter(|g| g != "api")
            .collect();
    let on_disk: std::collections::BTreeSet<String> = docs_files()
        .into_iter()
        .filter_map(|(rel, _)| rel.strip_suffix(".html").map(String::from))
        .filter(|g| !g.contains('/') && g != "index")
        .collect();
    assert_eq!(
        linked, on_disk,
        "the guides \"All guides\" links against static/docs"
    );

    let endpoints = section("endpoints");
    let listed: std::collections::BTreeSet<String> =
        regex::Regex::new(r#"<span class="m \w+">(\w+)</span>([^<]+)</td>"#)
            .expect("re")
            .captures_iter(&endpoints)
            .map(|c| format!("{} {}", &c[1], c[2].trim()))
            .collect();
    let openapi: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(docs_dir().join("api/openapi.json")).expect("openapi.json"),
    )
    .expect("json");
    let mut documented = std::collections::BTreeSet::new();
    for (path, item) in openapi["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("item").keys() {
            if ["get", "post", "put", "patch", "delete"].contains(&method.as_str()) {
                documented.insert(format!("{} {path}", method.to_uppercase()));
            }
        }
    }
    assert_eq!(
        listed, documented,
        "\"Endpoints at a glance\" against openapi.json"
    );
}

/// `/docs/exports` shows the accountant's layout column by column: each table lists the
/// headers the code writes, in order, and nothing else.
#[test]
fn the_accountant_layout_is_documented_column_by_column() {
    use cfdi_extract::export::accountant::{Table, INVOICES, ITEMS, RETENTIONS};
    let page = std::fs::read_to_string(docs_dir().join("exports.html")).expect("exports.html");
    let cell = regex::Regex::new(r"<tr><td>([^<]+)</td>").expect("re");
    for (id, table) in [
        ("accountant-invoice-columns", &INVOICES as &Table),
        ("accountant-item-columns", &ITEMS),
        ("accountant-retention-columns", &RETENTIONS),
    ] {
        let start = page
            .find(&format!("id=\"{id}\""))
            .unwrap_or_else(|| panic!("table {id}"));
        let end = start + page[start..].find("</table>").expect("the table's end");
        let documented: Vec<String> = cell
            .captures_iter(&page[start..end])
            .map(|c| c[1].replace("&amp;", "&"))
            .collect();
        let written: Vec<&str> = table.columns.iter().map(|c| c.header).collect();
        assert_eq!(documented, written, "{id} against export::accountant");
    }
}
