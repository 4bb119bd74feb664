//! `/console`: every file under `static/console` is served at its URL with its type, the
//! security headers and no reference to another host; `/console` is its page; and the
//! docs carry the same headers.

use crate::common::app::{files_under, Resp, TestApp};
use crate::docs::static_files::{allowed_types, external_host, media_type, references};
use std::path::Path;

/// `(path relative to static/<dir> with '/' separators, contents)` of every file.
fn files(dir: &str) -> Vec<(String, Vec<u8>)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("static")
        .join(dir);
    let mut paths = files_under(&root);
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(&root).expect("under root");
            let rel = rel.to_string_lossy().replace('\\', "/");
            (rel, std::fs::read(&p).expect("read"))
        })
        .collect()
}

/// What is wrong with a response's security headers (empty: nothing).
fn header_problems(url: &str, res: &Resp) -> Vec<String> {
    let mut out = vec![];
    if res.header("x-content-type-options") != Some("nosniff") {
        out.push(format!("{url}: no X-Content-Type-Options: nosniff"));
    }
    match res.header("content-security-policy") {
        Some(csp) => {
            for needed in [
                "default-src 'self'",
                "script-src 'self'",
                "frame-ancestors 'none'",
            ] {
                if !csp.contains(needed) {
                    out.push(format!("{url}: CSP {csp:?} lacks {needed:?}"));
                }
            }
            if csp.contains("unsafe-inline") || csp.contains("unsafe-eval") {
                out.push(format!("{url}: CSP {csp:?} allows inline or eval'd code"));
            }
        }
        None => out.push(format!("{url}: no Content-Security-Policy")),
    }
    out
}

/// HTML that the CSP would break: an inline `<script>` body, a `<style>` element, or an
/// event-handler or style attribute.
fn inline_code(html: &str) -> Vec<String> {
    let lower = html.to_ascii_lowercase();
    let mut out = vec![];
    for (i, _) in lower.match_indices("<script") {
        let tag_end = lower[i..].find('>').map_or(lower.len(), |e| i + e);
        if !lower[i..tag_end].contains("src=") {
            out.push(format!("inline <script> at byte {i}"));
        }
    }
    for needle in [
        "<style",
        " style=\"",
        " onclick=",
        " onload=",
        " onerror=",
        " onsubmit=",
    ] {
        if lower.contains(needle) {
            out.push(format!("{needle:?}"));
        }
    }
    out
}

#[test]
fn every_console_file_is_served_with_its_type_headers_and_no_external_host() {
    let server = TestApp::spawn();
    let anon = server.anonymous();
    let files = files("console");
    assert!(
        files.iter().any(|(r, _)| r == "index.html") && files.len() >= 5,
        "the console's page, styles and modules: {:?}",
        files.iter().map(|(r, _)| r).collect::<Vec<_>>()
    );
    let mut failures = vec![];
    for (rel, on_disk) in &files {
        let url = format!("/console/{rel}");
        let res = anon.get(&url);
        if res.status != 200 {
            failures.push(format!(
                "{url}: status {} (touch src/docs.rs after adding a file)",
                res.status
            ));
            continue;
        }
        if &res.body != on_disk {
            failures.push(format!("{url}: the body differs from the file"));
        }
        let ct = media_type(res.content_type());
        match allowed_types(rel) {
            Some(allowed) if allowed.contains(&ct.as_str()) => {}
            _ => failures.push(format!("{url}: Content-Type {:?}", res.content_type())),
        }
        // The console's own code changes with each release: never a stale copy.
        if res.header("cache-control") != Some("no-cache") {
            failures.push(format!(
                "{url}: Cache-Control {:?}",
                res.header("cache-control")
            ));
        }
        failures.extend(header_problems(&url, &res));
        let body = res.text();
        let ext = rel.rsplit('.').next().unwrap_or("");
        if matches!(ext, "html" | "css" | "js") {
            for r in references(&body, ext) {
                if let Some(host) = external_host(&r) {
                    failures.push(format!("{url}: {r:?} (host {host})"));
                }
            }
        }
        if ext == "html" {
            failures.extend(
                inline_code(&body)
                    .into_iter()
                    .map(|p| format!("{url}: {p}")),
            );
        }
    }
    assert!(
        failures.is_empty(),
        "console files:\n  {}",
        failures.join("\n  ")
    );
}

/// Names come from users and documents: the served console breaks a long one inside its
/// cell, isolates each cell's direction and shows bidirectional controls as code points
/// (`.ci/browser-console-steps.js` checks the rendering in chromium).
#[test]
fn console_tables_keep_long_and_bidi_names_readable() {
    let server = TestApp::spawn();
    let anon = server.anonymous();
    let css = anon.get("/console/console.css").text();
    let rules: Vec<&str> = css
        .lines()
        .filter(|l| !l.trim_start().starts_with("/*"))
        .collect();
    let rule = |selector: &str, declaration: &str| {
        rules.iter().any(|l| {
            let (selectors, body) = l.split_once('{').unwrap_or(("", ""));
            selectors.split(',').any(|s| s.trim() == selector) && body.contains(declaration)
        })
    };
    assert!(rule(".user", "overflow-wrap: anywhere"), "{css}");
    // Every other text breaks between words only ("Programad a" was a muted label
    // broken inside its word).
    assert!(!rule("td > .muted", "overflow-wrap: anywhere"), "{css}");
    for selector in ["th", "td", ".badge", ".muted", "label"] {
        assert!(rule(selector, "overflow-wrap: normal"), "{selector}: {css}");
    }
    assert!(rule("td", "unicode-bidi: plaintext"), "{css}");
    assert!(rule(".badge", "white-space: nowrap"), "{css}");
    let dom = anon.get("/console/dom.js").text();
    assert!(
        dom.contains(r"\u202A-\u202E\u2066-\u2069"),
        "bidi controls shown"
    );
    assert!(
        dom.contains("document.createTextNode(plain(c))"),
        "in every text node"
    );
    for (file, cells) in [
        ("entities.js", "h('td', { class: 'user' }, e.name)"),
        ("invoice.js", "h('td', { class: 'user' }, it.description)"),
        ("extractions.js", "h('td', { class: 'user' }, e ?"),
        (
            "invoices.js",
            "h('div', { class: 'muted user' }, i.issuer.name",
        ),
        (
            "retentions.js",
            "h('div', { class: 'muted user' }, r.issuer.name",
        ),
        ("schedules.js", "h('td', { class: 'user' }, who)"),
    ] {
        let js = anon.get(&format!("/console/{file}")).text();
        assert!(js.contains(cells), "{file}: {cells}");
    }
}

#[test]
fn console_page_is_its_index_and_unknown_files_are_json_404s() {
    let server = TestApp::spawn();
    let anon = server.anonymous();
    for url in ["/console", "/console/", "/console/index.html"] {
        let res = anon.get(url);
        assert_eq!(res.status, 200, "{url}: {}", res.text());
        assert_eq!(media_type(res.content_type()), "text/html", "{url}");
        assert!(
            res.text().contains("/console/app.js"),
            "{url} loads the app"
        );
        assert_eq!(header_problems(url, &res), Vec::<String>::new());
    }
    for url in [
        "/console/nope.js",
        "/console/../Cargo.toml",
        "/console/.hidden",
    ] {
        let res = anon.get(url);
        assert_eq!(res.status, 404, "{url}: {}", res.text());
        assert_eq!(media_type(res.content_type()), "application/json", "{url}");
        assert!(!res.text().contains("[package]"), "{url}");
    }
}

#[test]
fn docs_pages_carry_the_security_headers_and_no_inline_code() {
    let server = TestApp::spawn();
    let anon = server.anonymous();
    let mut failures = vec![];
    for (rel, _) in files("docs") {
        if rel.starts_with("api/swagger-ui/") && !rel.ends_with(".html") {
            continue;
        }
        let url = format!("/docs/{rel}");
        let res = anon.get(&url);
        failures.extend(header_problems(&url, &res));
        if rel.ends_with(".html") {
            failures.extend(
                inline_code(&res.text())
                    .into_iter()
                    .map(|p| format!("{url}: {p}")),
            );
        }
    }
    assert!(failures.is_empty(), "docs:\n  {}", failures.join("\n  "));
}
