//! Real responses of a running server, checked against the OpenAPI document: every
//! status a request produced must be documented for its operation, and its JSON body
//! must validate against the documented schema (with formats asserted) and carry no
//! property the schema does not list.

use crate::common::app::{eventually, Resp, TestApp};
use crate::common::efirma_files::efirma_upload;
use crate::docs::openapi::{deref, document, operations, Operation};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// Validates `instance` against `schema`, whose `$ref`s point into `doc`'s components.
/// Returns the errors as text.
pub fn schema_errors(doc: &Value, schema: &Value, instance: &Value) -> Vec<String> {
    let root = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "components": doc["components"].clone(),
        "allOf": [schema],
    });
    let validator = jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .should_validate_formats(true)
        .build(&root)
        .unwrap_or_else(|e| panic!("the documented schema does not compile: {e}\n{schema}"));
    let mut errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("at {:?}: {e}", e.instance_path().as_str()))
        .collect();
    let mut extra = vec![];
    undocumented(doc, schema, instance, "", &mut extra);
    errors.extend(
        extra
            .into_iter()
            .map(|p| format!("at {p:?}: a property the schema does not document")),
    );
    errors
}

/// The `properties` an object schema declares, following `$ref` and `allOf`, with
/// the schema that declares each; and the `additionalProperties` schema, if any.
fn object_properties<'a>(
    doc: &'a Value,
    schema: &'a Value,
    props: &mut BTreeMap<String, &'a Value>,
    additional: &mut Option<&'a Value>,
) {
    let schema = deref(doc, schema);
    if let Some(p) = schema.get("properties").and_then(Value::as_object) {
        for (k, v) in p {
            props.entry(k.clone()).or_insert(v);
        }
    }
    if let Some(a) = schema.get("additionalProperties") {
        if a.is_object() {
            *additional = Some(a);
        }
    }
    for key in ["allOf"] {
        if let Some(all) = schema.get(key).and_then(Value::as_array) {
            for s in all {
                object_properties(doc, s, props, additional);
            }
        }
    }
}

/// Collects the paths of object properties in `value` that `schema` does not declare.
/// Schemas with `oneOf`/`anyOf` are checked against the branch that validates.
fn undocumented(doc: &Value, schema: &Value, value: &Value, at: &str, out: &mut Vec<String>) {
    let schema = deref(doc, schema);
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = schema.get(key).and_then(Value::as_array) {
            for b in branches {
                if schema_valid(doc, b, value) {
                    undocumented(doc, b, value, at, out);
                    return;
                }
            }
            return;
        }
    }
    match value {
        Value::Object(map) => {
            let mut props = BTreeMap::new();
            let mut additional = None;
            object_properties(doc, schema, &mut props, &mut additional);
            let declares_object = !props.is_empty() || additional.is_some();
            for (k, v) in map {
                let here = format!("{at}/{k}");
                match (props.get(k), additional) {
                    (Some(s), _) => undocumented(doc, s, v, &here, out),
                    (None, Some(a)) => undocumented(doc, a, v, &here, out),
                    (None, None) if declares_object => out.push(here),
                    (None, None) => {}
                }
            }
        }
        Value::Array(items) => {
            if let Some(item_schema) = schema.get("items") {
                for (i, v) in items.iter().enumerate() {
                    undocumented(doc, item_schema, v, &format!("{at}/{i}"), out);
                }
            }
        }
        _ => {}
    }
}

fn schema_valid(doc: &Value, schema: &Value, value: &Value) -> bool {
    let root = json!({
        "components": doc["components"].clone(),
        "allOf": [schema],
    });
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&root)
        .map(|v| v.is_valid(value))
        .unwrap_or(false)
}

/// The media type of a Content-Type value.
fn media_type(ct: &str) -> String {
    ct.split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// Checks responses against the document and remembers what was exercised.
struct Checker {
    doc: Value,
    ops: Vec<Operation>,
    problems: Vec<String>,
    /// Schema mismatches, grouped: (operation, status, what) -> (count, an example).
    mismatches: BTreeMap<String, (usize, String)>,
    /// (operation, status) pairs seen.
    seen: BTreeSet<(String, u16)>,
    checked_bodies: usize,
}

impl Checker {
    fn new() -> Checker {
        let doc = document();
        let ops = operations(&doc);
        Checker {
            doc,
            ops,
            problems: vec![],
            mismatches: BTreeMap::new(),
            seen: BTreeSet::new(),
            checked_bodies: 0,
        }
    }

    fn op(&self, method: &str, path: &str) -> Operation {
        self.ops
            .iter()
            .find(|o| o.method.eq_ignore_ascii_case(method) && o.path == path)
            .cloned()
            .unwrap_or_else(|| panic!("{method} {path} is not in the OpenAPI document"))
    }

    /// Checks `res`, the answer of `url` to operation `(method, path)`: its status is
    /// documented, its Content-Type is one documented for that status, and a JSON body
    /// matches the schema. Returns the response.
    fn check(&mut self, method: &str, path: &str, url: &str, res: Resp) -> Resp {
        let op = self.op(method, path);
        let name = format!("{} {url}", method.to_uppercase());
        self.seen.insert((op.name(), res.status));
        let Some(documented) = op.response(&self.doc, res.status).cloned() else {
            self.problems.push(format!(
                "{name}: status {} is not documented for {} (body {})",
                res.status,
                op.name(),
                res.text()
            ));
            return res;
        };
        let content = documented.get("content").and_then(Value::as_object);
        let ct = media_type(res.content_type());
        match content {
            None => {
                if !res.body.is_empty() {
                    self.problems.push(format!(
                        "{name}: {} is documented without a body, got {ct:?}: {}",
                        res.status,
                        res.text()
                    ));
                }
            }
            Some(content) => {
                let Some(media) = content.get(&ct) else {
                    self.problems.push(format!(
                        "{name}: {} answered {ct:?}; documented: {:?}",
                        res.status,
                        content.keys().collect::<Vec<_>>()
                    ));
                    return res;
                };
                if ct == "application/json" {
                    let body: Value = match serde_json::from_slice(&res.body) {
                        Ok(b) => b,
                        Err(e) => {
                            self.problems
                                .push(format!("{name}: not JSON ({e}): {}", res.text()));
                            return res;
                        }
                    };
                    match media.get("schema") {
                        Some(schema) => {
                            self.checked_bodies += 1;
                            for e in schema_errors(&self.doc, schema, &body) {
                                let key =
                                    format!("{} {}: {}", op.name(), res.status, generalize(&e));
                                let entry = self.mismatches.entry(key).or_insert_with(|| {
                                    (
                                        0,
                                        format!(
                                            "e.g. {name}: {e}\n      body: {}",
                                            truncate(&body.to_string(), 400)
                                        ),
                                    )
                                });
                                entry.0 += 1;
                            }
                        }
                        None => self
                            .problems
                            .push(format!("{name}: {} JSON has no schema", res.status)),
                    }
                }
            }
        }
        res
    }

    /// Asserts that every operation was seen with a 2xx, and every check passed.
    fn finish(self, also_expected: &[(&str, u16)]) {
        let mut problems = self.problems;
        for (key, (count, example)) in &self.mismatches {
            problems.push(format!("{key} ({count} times)\n    {example}"));
        }
        for op in &self.ops {
            if !self
                .seen
                .iter()
                .any(|(n, s)| *n == op.name() && (200..300).contains(s))
            {
                problems.push(format!(
                    "{}: never answered a 2xx in this test; teach tests/docs/shapes.rs to \
                     exercise it",
                    op.name()
                ));
            }
            for (code, _) in op.op["responses"].as_object().into_iter().flatten() {
                let Ok(code) = code.parse::<u16>() else {
                    continue;
                };
                // 500 and 503 cannot be provoked from outside; 413 and the rest should be.
                // 429 needs one organization's heavy work to outrun its share, seconds of
                // it: tests/flows/fairness.rs provokes it and checks its body and header.
                if code >= 500 || code == 429 {
                    continue;
                }
                if !self.seen.contains(&(op.name(), code)) {
                    problems.push(format!(
                        "{}: documented status {code} was never produced by this test",
                        op.name()
                    ));
                }
            }
        }
        for (name, code) in also_expected {
            if !self.seen.contains(&(name.to_string(), *code)) {
                problems.push(format!("{name}: expected to see {code}"));
            }
        }
        assert!(
            self.checked_bodies >= 40,
            "only {} bodies were validated",
            self.checked_bodies
        );
        assert!(
            problems.is_empty(),
            "{} responses disagree with static/docs/api/openapi.json:\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
}

/// A sandbox invoice's XML, sealed and stamped by the sandbox (whose SAT certificate the
/// server has at hand with `--sat sandbox`).
fn sandbox_xml() -> String {
    use cfdi_extract::sandbox::docs::{invoices_for_day, render_xml, Direction};
    let day = chrono::NaiveDate::from_ymd_opt(2025, 3, 3).expect("a date");
    let invoice = invoices_for_day("AAA010101AAA", Direction::Issued, day)
        .into_iter()
        .next()
        .expect("an invoice");
    String::from_utf8(render_xml("AAA010101AAA", Direction::Issued, &invoice).expect("xml"))
        .expect("utf-8")
}

/// A schema error without its instance's value and array indices, so that one
/// mismatch seen in many responses is reported once.
fn generalize(error: &str) -> String {
    let mut out = String::new();
    let mut rest = error;
    // `at "/items/3/amount": "309.30" is not of type "number"`
    if let Some((path, msg)) = rest.split_once(": ") {
        let path: Vec<String> = path
            .split('/')
            .map(|seg| {
                let bare = seg.trim_end_matches('"');
                if !bare.is_empty() && bare.chars().all(|c| c.is_ascii_digit()) {
                    seg.replacen(bare, "N", 1)
                } else {
                    seg.to_string()
                }
            })
            .collect();
        out.push_str(&path.join("/"));
        out.push_str(": ");
        rest = msg;
    }
    // Drop the leading value: `"309.30" is not of type` -> `is not of type`.
    match rest
        .find(" is not ")
        .or_else(|| rest.find(" is a required"))
    {
        Some(i) if rest.starts_with('"') || rest.starts_with('{') || rest.starts_with('[') => {
            out.push_str("<value>");
            out.push_str(&rest[i..]);
        }
        _ => out.push_str(rest),
    }
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        s.to_string()
    } else {
        let mut end = n;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", &s[..end])
    }
}

/// What the local receiver was sent (bodies).
type Received = Arc<Mutex<Vec<Vec<u8>>>>;

/// A local webhook receiver that answers 200 to every request; returns its URL and the
/// bodies it receives.
fn start_receiver() -> (String, Received) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a receiver");
    let port = listener.local_addr().expect("addr").port();
    let received: Received = Arc::default();
    let store = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let store = store.clone();
            std::thread::spawn(move || {
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                let mut length = 0usize;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let lower = line.to_ascii_lowercase();
                    if let Some(v) = lower.strip_prefix("content-length:") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    if line == "\r\n" || line == "\n" {
                        break;
                    }
                }
                let mut body = vec![0; length];
                if reader.read_exact(&mut body).is_ok() {
                    store.lock().expect("receiver lock").push(body);
                }
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok",
                );
            });
        }
    });
    (format!("http://127.0.0.1:{port}/hooks"), received)
}

/// The supplier RFC `{rfc}` path segments take.
const SUPPLIER: &str = "SUP010101AB1";

/// Replaces `{name}` in `template` with `value`.
/// A valid query for an operation with required query parameters (the summary's, its
/// completion's, the IVA's); its
/// dates are the sample date parameters get, so either may be replaced by it.
fn required_query(path: &str) -> &'static str {
    if path.ends_with("/summary") {
        "?from=2024-03-05&to=2024-03-05&direction=issued"
    } else if path.ends_with("/summary/complete") {
        "?from=2024-03-05&to=2024-03-05"
    } else if path.ends_with("/iva") || path.ends_with("/diot") {
        "?month=2024-03"
    } else {
        ""
    }
}

fn fill(template: &str, value: &str) -> String {
    let mut out = String::new();
    for (i, seg) in template.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        if seg == "{rfc}" {
            // A supplier's RFC: the path's other id decides.
            out.push_str(SUPPLIER);
        } else if seg.starts_with('{') && seg.ends_with('}') {
            out.push_str(value);
        } else {
            out.push_str(seg);
        }
    }
    out
}

#[test]
fn real_responses_match_the_documented_schemas() {
    let server = TestApp::spawn_with(&[
        "--webhook-retry-schedule",
        "0s,50ms",
        "--schedule-tick",
        "100ms",
        // The sandbox's status service answers, so `sat_status` objects are validated.
        "--sat-status-rate",
        "50",
        // e.firma runs (by UUID, the summary's completion) end in a second.
        "--sat-ws-poll",
        "50ms",
    ]);
    // Requests as the provisioned user.
    let api = server.client();
    let mut c = Checker::new();

    // --- Create what the reads will show.
    let res = api.post_json(
        "/v1/entities",
        &json!({"tax_id": "DOC010101AB1", "name": "Docs Shapes SA", "ciec_password": "goodpass"}),
    );
    let entity = c
        .check("post", "/v1/entities", "/v1/entities", res)
        .expect(201);
    let entity_id = entity["id"].as_str().expect("entity id").to_string();
    // A second entity, deleted at the end.
    let res = api.post_json(
        "/v1/entities",
        &json!({"tax_id": "DEL010101AB1", "name": "To delete", "ciec_password": "goodpass"}),
    );
    let doomed = c
        .check("post", "/v1/entities", "/v1/entities", res)
        .expect(201);
    let doomed_id = doomed["id"].as_str().expect("entity id").to_string();

    eventually(DEADLINE, "the credential to be validated", || {
        let e = api.get(&format!("/v1/entities/{entity_id}")).expect(200);
        (e["credential_status"] == "valid").then_some(())
    });

    // Schedules: a daily one, paused; an hourly one on the second entity, whose first
    // run starts at once (so the lists show an extraction with `schedule_id`) and which
    // pauses itself when that entity's CIEC turns invalid below.
    let res = api.post_json(
        "/v1/schedules",
        &json!({"entity_id": entity_id, "daily_at": "07:00"}),
    );
    let schedule = c
        .check("post", "/v1/schedules", "/v1/schedules", res)
        .expect(201);
    let res = api.post_json(
        "/v1/schedules",
        &json!({"entity_id": doomed_id, "every": "1h", "directions": ["issued"], "lookback_days": 1}),
    );
    let hourly = c
        .check("post", "/v1/schedules", "/v1/schedules", res)
        .expect(201);
    let schedule_ids: Vec<String> = [&schedule, &hourly]
        .iter()
        .map(|s| s["id"].as_str().expect("schedule id").to_string())
        .collect();
    let url = format!("/v1/schedules/{}", schedule_ids[0]);
    let res = api.patch_json(&url, &json!({"status": "paused"}));
    c.check("patch", "/v1/schedules/{id}", &url, res)
        .expect(200);
    eventually(DEADLINE, "a scheduled extraction", || {
        let page = api
            .get(&format!("/v1/extractions?entity_id={doomed_id}"))
            .expect(200);
        let data = page["data"].as_array().cloned().unwrap_or_default();
        data.iter()
            .any(|e| e["schedule_id"] == hourly["id"])
            .then_some(())
    });

    let (receiver, received) = start_receiver();
    let res = api.post_json("/v1/webhooks", &json!({"url": receiver}));
    let hook_ok = c
        .check("post", "/v1/webhooks", "/v1/webhooks", res)
        .expect(201);
    // Port 9 (discard) refuses connections: failed attempts with an error.
    let res = api.post_json(
        "/v1/webhooks",
        &json!({"url": "http://127.0.0.1:9/refused", "events": ["extraction.update"]}),
    );
    let hook_refused = c
        .check("post", "/v1/webhooks", "/v1/webhooks", res)
        .expect(201);
    let res = api.post_json("/v1/webhooks", &json!({"url": "http://127.0.0.1:9/gone"}));
    let hook_doomed = c
        .check("post", "/v1/webhooks", "/v1/webhooks", res)
        .expect(201);
    let webhook_ids: Vec<String> = [&hook_ok, &hook_refused]
        .iter()
        .map(|h| h["id"].as_str().expect("webhook id").to_string())
        .collect();

    // Invoices of every version and several types, imported as a user would.
    let samples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cfdi-samples");
    assert!(
        samples.is_dir(),
        "the CFDI samples are expected at {samples:?}"
    );
    // Import takes only the entity's own documents: the copies name it as issuer.
    let copies = tempfile::TempDir::new().expect("temp dir");
    let sample = |name: &str| {
        let bytes = std::fs::read(samples.join(name)).expect("sample");
        let issuer = cfdi_extract::cfdi::Cfdi::parse(&bytes)
            .expect("sample parses")
            .issuer
            .tax_id
            .replace('&', "&amp;");
        let text = String::from_utf8(bytes).expect("utf8");
        let copy = copies.path().join(name);
        std::fs::write(&copy, text.replacen(&issuer, "DOC010101AB1", 1)).expect("copy");
        copy.to_string_lossy().to_string()
    };
    let issued = [
        "cfdi40-ingreso-pue-real-tfd.xml",
        "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
        "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
        "cfdi33-ingreso-pue-real-implocal-tfd.xml",
        "cfdi32-ingreso-real-legacy-tfd10.xml",
        "cfdi40-nomina-compensacion-tfd.xml",
    ];
    let mut files: Vec<String> = issued.iter().map(|n| sample(n)).collect();
    // A credit note of the real 4.0 invoice (`relations` with a held document) that
    // also names one the service does not hold.
    let credit = copies.path().join("credit-note.xml");
    let text = std::fs::read_to_string(&files[0]).expect("the copy");
    let text = text
        .replacen("C2832671-DA6D-11EF-A83D-00155D012007", "C2832671-DA6D-11EF-A83D-0000000000C1", 1)
        .replacen("TipoDeComprobante=\"I\"", "TipoDeComprobante=\"E\"", 1)
        .replacen(
            "<cfdi:Emisor",
            "<cfdi:CfdiRelacionados TipoRelacion=\"01\"><cfdi:CfdiRelacionado UUID=\"C2832671-DA6D-11EF-A83D-00155D012007\"/>\
             <cfdi:CfdiRelacionado UUID=\"00000000-0000-4000-8000-0000000000AA\"/></cfdi:CfdiRelacionados><cfdi:Emisor",
            1,
        );
    std::fs::write(&credit, text).expect("write the credit note");
    files.push(credit.to_string_lossy().to_string());
    let mut args = vec![
        "invoices",
        "import",
        "--entity",
        entity_id.as_str(),
        "--direction",
        "issued",
    ];
    args.extend(files.iter().map(String::as_str));
    server.cli(&args, None).expect_success("invoices import");
    // Retentions of both versions, received by the entity (the copies name it receiver).
    let retentions_dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/retenciones-samples");
    let retention_files: Vec<String> = [
        "ret10-plataformastecnologicas-tfd10.xml",
        "ret20-todos-complementos-relacionado-tfd11.xml",
    ]
    .iter()
    .map(|name| {
        let text = std::fs::read_to_string(retentions_dir.join(name)).expect("sample");
        let copy = copies.path().join(name);
        let text = text
            .replacen("RFCRecep=\"AAA010101AAA\"", "RFCRecep=\"DOC010101AB1\"", 1)
            .replacen("RfcR=\"XAXX010101000\"", "RfcR=\"DOC010101AB1\"", 1);
        std::fs::write(&copy, text).expect("copy");
        copy.to_string_lossy().to_string()
    })
    .collect();
    let mut args = vec![
        "invoices",
        "import",
        "--entity",
        entity_id.as_str(),
        "--direction",
        "received",
    ];
    args.extend(retention_files.iter().map(String::as_str));
    server.cli(&args, None).expect_success("retentions import");
    let retention_ids: Vec<String> = api.get("/v1/retentions").expect(200)["data"]
        .as_array()
        .expect("data")
        .iter()
        .map(|r| r["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(retention_ids.len(), 2);

    // A sandbox extraction: a month of received invoices.
    let res = api.post_json(
        "/v1/extractions",
        &json!({"entity_id": entity_id, "options": {
            "period": {"from": "2024-03-01", "to": "2024-03-31"}, "download_type": "received"}}),
    );
    let extraction = c
        .check("post", "/v1/extractions", "/v1/extractions", res)
        .expect(201);
    let extraction_id = extraction["id"]
        .as_str()
        .expect("extraction id")
        .to_string();
    let done = eventually(DEADLINE, "the extraction to finish", || {
        let e = api
            .get(&format!("/v1/extractions/{extraction_id}"))
            .expect(200);
        matches!(e["status"].as_str(), Some("finished" | "failed")).then_some(e)
    });
    assert_eq!(
        done["status"], "finished",
        "the sandbox extraction finishes: {done}"
    );
    // The 69-B list, loaded now that there are invoices: the sandbox's built-in one
    // (some of its issuers) plus the receiver of the real 4.0 invoice and the entity
    // itself, so the entity's `list_69b`, its flagged counterparties, the summary's
    // warning and the `counterparty.69b_changed` events all have content.
    let list = copies.path().join("Listado_Completo_69-B.csv");
    let mut text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sandbox/list_69b.csv"),
    )
    .expect("the sandbox's list");
    text.push_str(
        "6,COSC8001137NA,\"COSC, S.A. DE C.V.\",Presunto,o,01/06/2023,o,26/06/2023,,,,,,,,,,,,\n",
    );
    text.push_str("7,DOC010101AB1,\"DOCS SHAPES, S.A.\",Desvirtuado,o,01/06/2023,o,26/06/2023,o,04/03/2024,o,22/03/2024,,,,,,,,\n");
    std::fs::write(&list, text).expect("write the list");
    server
        .cli(&["list-69b", "load", &list.to_string_lossy()], None)
        .expect_success("list-69b load");
    // A failing one too (the second entity's credential is still pending or valid; a
    // password starting with `bad` makes it invalid).
    let res = api.request(
        "PATCH",
        &format!("/v1/entities/{doomed_id}"),
        Some(br#"{"name": "To delete (renamed)", "ciec_password": "badpass1"}"#),
        &[],
    );
    c.check("patch", "/v1/entities/{id}", "/v1/entities/{id}", res)
        .expect(200);
    eventually(DEADLINE, "the bad credential to be rejected", || {
        let e = api.get(&format!("/v1/entities/{doomed_id}")).expect(200);
        (e["credential_status"] == "invalid").then_some(())
    });
    let res = api.post_json(
        "/v1/extractions",
        &json!({"entity_id": doomed_id, "options": {
            "period": {"from": "2024-03-01", "to": "2024-03-02"}, "download_type": "issued"}}),
    );
    let failing = c
        .check("post", "/v1/extractions", "/v1/extractions", res)
        .expect(201);
    let failing_id = failing["id"].as_str().expect("id").to_string();
    eventually(DEADLINE, "the extraction to fail", || {
        let e = api
            .get(&format!("/v1/extractions/{failing_id}"))
            .expect(200);
        (e["status"] == "failed").then_some(())
    });

    // Deliveries: one succeeded (receiver), one failed after its attempts (refused).
    eventually(DEADLINE, "deliveries to settle", || {
        let ok = api
            .get(&format!("/v1/webhooks/{}/deliveries", webhook_ids[0]))
            .expect(200);
        let refused = api
            .get(&format!("/v1/webhooks/{}/deliveries", webhook_ids[1]))
            .expect(200);
        let any = |v: &Value, status: &str| {
            v["data"]
                .as_array()
                .is_some_and(|d| d.iter().any(|x| x["status"] == status))
        };
        let got = |event: &str| {
            received
                .lock()
                .expect("receiver lock")
                .iter()
                .any(|b| serde_json::from_slice::<Value>(b).is_ok_and(|v| v["event"] == event))
        };
        (any(&ok, "succeeded")
            && any(&refused, "failed")
            && got("entity.update")
            && got("extraction.update")
            && got("counterparty.69b_changed"))
        .then_some(())
    });

    // The events delivered match their documented schemas.
    let bodies = received.lock().expect("receiver lock").clone();
    let mut kinds = BTreeSet::new();
    for body in &bodies {
        let event: Value = match serde_json::from_slice(body) {
            Ok(v) => v,
            Err(e) => {
                c.problems.push(format!("a delivery is not JSON ({e})"));
                continue;
            }
        };
        let schema = match event["event"].as_str() {
            Some("extraction.update") => "ExtractionUpdateEvent",
            Some("entity.update") => "EntityUpdateEvent",
            Some("invoice.created") => "InvoiceCreatedEvent",
            Some("invoice.updated") => "InvoiceUpdatedEvent",
            Some("retention.created") => "RetentionCreatedEvent",
            Some("retention.updated") => "RetentionUpdatedEvent",
            Some("counterparty.69b_changed") => "Counterparty69bChangedEvent",
            other => {
                c.problems
                    .push(format!("a delivery of an unknown event {other:?}: {event}"));
                continue;
            }
        };
        kinds.insert(schema);
        let reference = json!({"$ref": format!("#/components/schemas/{schema}")});
        for e in schema_errors(&c.doc, &reference, &event) {
            let key = format!("webhook delivery {schema}: {}", generalize(&e));
            let entry = c.mismatches.entry(key).or_insert_with(|| {
                (
                    0,
                    format!(
                        "e.g. {e}\n      body: {}",
                        truncate(&event.to_string(), 400)
                    ),
                )
            });
            entry.0 += 1;
        }
    }
    for kind in [
        "ExtractionUpdateEvent",
        "EntityUpdateEvent",
        "InvoiceCreatedEvent",
        "RetentionCreatedEvent",
        "Counterparty69bChangedEvent",
    ] {
        assert!(kinds.contains(kind), "{kind} was delivered: {kinds:?}");
    }

    // --- Every invoice, every way.
    let mut invoices: Vec<Value> = vec![];
    let mut cursor: Option<String> = None;
    loop {
        let url = match &cursor {
            Some(cur) => format!("/v1/invoices?limit=100&cursor={cur}"),
            None => "/v1/invoices?limit=100".to_string(),
        };
        let res = api.get(&url);
        let page = c.check("get", "/v1/invoices", &url, res).expect(200);
        invoices.extend(page["data"].as_array().expect("data").iter().cloned());
        match page["next_cursor"].as_str() {
            Some(cur) => cursor = Some(cur.to_string()),
            None => break,
        }
    }
    let versions: BTreeSet<&str> = invoices
        .iter()
        .filter_map(|i| i["version"].as_str())
        .collect();
    let types: BTreeSet<&str> = invoices.iter().filter_map(|i| i["type"].as_str()).collect();
    assert!(
        versions.len() >= 3 && types.len() >= 3,
        "varied invoices to check: versions {versions:?}, types {types:?}"
    );
    let invoice_ids: Vec<String> = invoices
        .iter()
        .map(|i| i["id"].as_str().expect("id").to_string())
        .collect();
    let with_pdf = invoices
        .iter()
        .find(|i| i["has_pdf"] == true)
        .map(|i| i["id"].clone());
    let without_pdf = invoices
        .iter()
        .find(|i| i["has_pdf"] == false)
        .map(|i| i["id"].clone());

    // A supplier's settings on both entities, for the supplier reads below.
    for entity in [&entity_id, &doomed_id] {
        let url = format!("/v1/entities/{entity}/suppliers/{SUPPLIER}");
        let res = api.request(
            "PUT",
            &url,
            Some(br#"{"non_creditable": "proportion"}"#),
            &[],
        );
        c.check("put", "/v1/entities/{id}/suppliers/{rfc}", &url, res)
            .expect(200);
    }

    // --- Every documented GET with a JSON 200, for every id we have.
    let get_ops: Vec<Operation> = c
        .ops
        .iter()
        .filter(|o| o.method == "get")
        .cloned()
        .collect();
    for op in &get_ops {
        let ids: Vec<String> = if !op.path.contains('{') {
            vec![String::new()]
        } else if op.path.starts_with("/v1/entities/") {
            vec![entity_id.clone(), doomed_id.clone()]
        } else if op.path.starts_with("/v1/extractions/") {
            vec![extraction_id.clone(), failing_id.clone()]
        } else if op.path == "/v1/invoices/{id}/cfdi" {
            // An invoice with the SAT's PDF first: its every `format` answers 200 (one
            // without answers a PDF with the spec's 404, checked below).
            let first = with_pdf.as_ref().and_then(Value::as_str);
            let mut ids = invoice_ids.clone();
            ids.sort_by_key(|id| Some(id.as_str()) != first);
            ids
        } else if op.path.starts_with("/v1/invoices/") {
            invoice_ids.clone()
        } else if op.path.starts_with("/v1/retentions/") {
            retention_ids.clone()
        } else if op.path.starts_with("/v1/catalogs/") {
            vec!["c_FormaPago".into(), "c_CveRetenc".into()]
        } else if op.path.starts_with("/v1/webhooks/") {
            webhook_ids.clone()
        } else if op.path.starts_with("/v1/schedules/") {
            schedule_ids.clone()
        } else if op.path.starts_with("/v1/events/") {
            // One event of each type.
            let mut seen = BTreeSet::new();
            api.get("/v1/events?limit=500").expect(200)["data"]
                .as_array()
                .expect("data")
                .iter()
                .filter(|e| seen.insert(e["event"].to_string()))
                .map(|e| e["id"].as_str().expect("id").to_string())
                .collect()
        } else {
            panic!(
                "{}: no sample id for this path; teach tests/docs/shapes.rs",
                op.name()
            )
        };
        for id in &ids {
            let url = format!("{}{}", fill(&op.path, id), required_query(&op.path));
            let res = api.get(&url);
            let res = c.check("get", &op.path, &url, res);
            assert_eq!(res.status, 200, "GET {url}: {}", res.text());
            // Lists: a page of one, so that next_cursor is a string, then the cursor.
            let has_limit = op.query_parameters().iter().any(|p| p["name"] == "limit");
            if has_limit && id == ids.first().unwrap_or(id) {
                let url1 = format!("{url}?limit=1");
                let page = c.check("get", &op.path, &url1, api.get(&url1));
                if let Some(cur) = page.json()["next_cursor"].as_str() {
                    let url2 = format!("{url}?limit=1&cursor={cur}");
                    c.check("get", &op.path, &url2, api.get(&url2));
                }
            }
        }
        // Every documented enum value of a query parameter is accepted (200), and
        // a value outside the enum is a 422 on the parameter.
        for p in op.query_parameters() {
            let name = p["name"].as_str().unwrap_or("");
            let schema = deref(&c.doc, &p["schema"]).clone();
            // Later values win, so one parameter varies over the required ones.
            let base = format!(
                "{}{}",
                fill(&op.path, ids.first().map(String::as_str).unwrap_or("")),
                required_query(&op.path)
            );
            let sep = if base.contains('?') { '&' } else { '?' };
            let samples: Vec<String> = if let Some(values) = schema["enum"].as_array() {
                values
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            } else if schema["format"] == "date" {
                vec!["2024-03-05".into()]
            } else if schema["format"] == "uuid" {
                vec![entity_id.clone()]
            } else if schema["type"] == "boolean" {
                vec!["true".into(), "false".into()]
            } else {
                continue;
            };
            for v in samples {
                let url = format!("{base}{sep}{name}={v}");
                let res = c.check("get", &op.path, &url, api.get(&url));
                assert_eq!(res.status, 200, "GET {url}: {}", res.text());
            }
            if schema["enum"].is_array() || schema["format"] == "date" || schema["format"] == "uuid"
            {
                let url = format!("{base}{sep}{name}=not-a-valid-value");
                let res = c.check("get", &op.path, &url, api.get(&url));
                if res.status != 422 || !res.json()["errors"][name].is_array() {
                    c.problems.push(format!(
                        "GET {url}: a bad {name} should be a 422 on {name:?}, got {} {}",
                        res.status,
                        res.text()
                    ));
                }
            }
        }
    }

    // --- The invoice document: negotiated formats.
    let cfdi = "/v1/invoices/{id}/cfdi";
    let some_invoice = invoice_ids[0].clone();
    for (accept, query, want) in [
        ("application/xml", "", "application/xml"),
        ("text/xml", "", "text/xml"),
        ("application/json", "", "application/json"),
        ("*/*", "?format=xml", "application/xml"),
    ] {
        let url = format!("/v1/invoices/{some_invoice}/cfdi{query}");
        let res = api.request("GET", &url, None, &[("accept", accept)]);
        let res = c.check("get", cfdi, &url, res);
        assert_eq!(res.status, 200, "GET {url} ({accept}): {}", res.text());
        let ct = media_type(res.content_type());
        assert!(
            ct == want || (want.ends_with("/xml") && ct.ends_with("/xml")),
            "GET {url} with Accept {accept}: {ct}"
        );
    }
    if let Some(id) = with_pdf.as_ref().and_then(Value::as_str) {
        let url = format!("/v1/invoices/{id}/cfdi?format=pdf");
        let res = c.check("get", cfdi, &url, api.get(&url));
        assert_eq!(res.status, 200);
        assert!(res.body.starts_with(b"%PDF"), "a PDF");
        assert_eq!(res.header("x-cfdi-pdf"), Some("original"));
    } else {
        c.problems.push("no invoice with a PDF to check".into());
    }
    if let Some(id) = without_pdf.as_ref().and_then(Value::as_str) {
        // The spec's 404, in the documented shape.
        let url = format!("/v1/invoices/{id}/cfdi?format=pdf");
        let res = c.check("get", cfdi, &url, api.get(&url));
        assert_eq!(res.status, 404, "no PDF: {}", res.text());
        let url = format!("/v1/invoices/{id}/cfdi?format=pdf&render=true");
        let res = c.check("get", cfdi, &url, api.get(&url));
        assert_eq!(res.status, 200, "a rendered PDF: {}", res.text());
        assert!(res.body.starts_with(b"%PDF"), "a PDF");
        assert_eq!(res.header("x-cfdi-pdf"), Some("rendered"));
    }
    // --- A SAT status check on demand.
    let url = format!("/v1/invoices/{some_invoice}/status-check");
    let res = c.check(
        "post",
        "/v1/invoices/{id}/status-check",
        &url,
        api.post_json(&url, &json!({})),
    );
    assert_eq!(res.status, 202, "POST {url}: {}", res.text());
    // Again with an Idempotency-Key: the kept answer, then the same key on another
    // request's path, a 422 on the header.
    let keyed = |url: &str| {
        api.request(
            "POST",
            url,
            None,
            &[("Idempotency-Key", "shapes-status-check")],
        )
    };
    let res = c.check("post", "/v1/invoices/{id}/status-check", &url, keyed(&url));
    assert_eq!(res.status, 202, "POST {url}: {}", res.text());
    let replayed = keyed(&url);
    assert_eq!(replayed.header("idempotent-replayed"), Some("true"));
    assert_eq!(replayed.body, res.body, "the kept answer");
    let other = format!("/v1/invoices/{}/status-check", uuid::Uuid::now_v7());
    let res = c.check(
        "post",
        "/v1/invoices/{id}/status-check",
        &other,
        keyed(&other),
    );
    assert_eq!(res.status, 422, "POST {other}: {}", res.text());
    // --- The exports: a file, not JSON, in the documented media types.
    for path in ["/v1/invoices/export", "/v1/invoices/export/items"] {
        for (format, media, magic) in [
            ("csv", "text/csv", &b"\xEF\xBB\xBF"[..]),
            (
                "xlsx",
                "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                b"PK",
            ),
        ] {
            let url = format!("{path}?format={format}&issued_from=2000-01-01");
            let res = c.check("get", path, &url, api.get(&url));
            assert_eq!(res.status, 200, "GET {url}: {}", res.text());
            assert_eq!(media_type(res.content_type()), media, "GET {url}");
            assert!(res.body.starts_with(magic), "GET {url}");
            let disposition = res.header("content-disposition").unwrap_or("");
            assert!(
                disposition.starts_with("attachment; filename="),
                "{disposition}"
            );
        }
    }
    let url = format!("/v1/invoices/{some_invoice}/cfdi");
    let res = api.request("GET", &url, None, &[("accept", "image/png")]);
    c.check("get", cfdi, &url, res);
    // --- The retention document: every format, and the printed PDF.
    let retention_cfdi = "/v1/retentions/{id}/cfdi";
    for id in &retention_ids {
        for (format, media) in [("xml", "/xml"), ("pdf", "/pdf"), ("json", "/json")] {
            let url = format!("/v1/retentions/{id}/cfdi?format={format}");
            let res = c.check("get", retention_cfdi, &url, api.get(&url));
            assert_eq!(res.status, 200, "GET {url}: {}", res.text());
            let got = media_type(res.content_type());
            assert!(got.ends_with(media), "GET {url}: {got}");
        }
    }

    // --- The period summary: JSON with lines of every section (the imported 2020 PPD
    // invoice and its complement, the 2018 implocal invoice, the 2017 CFDI 3.2, the 2026
    // payroll, a month of the sandbox's received invoices), with the warning of invalid
    // seals, XLSX, 422.
    let summary = "/v1/entities/{id}/summary";
    for (query, media) in [
        (
            "from=2020-01-01&to=2020-12-31&direction=issued",
            "application/json",
        ),
        (
            "from=2018-01-01&to=2018-01-31&direction=issued",
            "application/json",
        ),
        (
            "from=2017-03-01&to=2017-03-31&direction=issued",
            "application/json",
        ),
        (
            "from=2017-03-01&to=2017-03-31&direction=issued&invalid_seals=true",
            "application/json",
        ),
        (
            "from=2026-01-01&to=2026-01-31&direction=issued",
            "application/json",
        ),
        (
            "from=2024-03-01&to=2024-03-31&direction=received",
            "application/json",
        ),
        (
            "from=2024-03-01&to=2024-03-31&direction=received&format=xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
    ] {
        let url = format!("/v1/entities/{entity_id}/summary?{query}");
        let res = c.check("get", summary, &url, api.get(&url));
        assert_eq!(res.status, 200, "GET {url}: {}", res.text());
        assert_eq!(media_type(res.content_type()), media, "GET {url}");
    }
    let url = format!("/v1/entities/{entity_id}/summary?to=2020-01-01&direction=both");
    let res = c.check("get", summary, &url, api.get(&url));
    assert_eq!(res.status, 422, "GET {url}: {}", res.text());

    // --- The month's IVA determination: the 2020 PPD paid by its complement, the
    // sandbox's March 2024 (received), as JSON and XLSX; a bad month.
    let iva = "/v1/entities/{id}/iva";
    for query in [
        "month=2020-01",
        "month=2024-03",
        "month=2024-03&format=xlsx",
    ] {
        let url = format!("/v1/entities/{entity_id}/iva?{query}");
        let res = c.check("get", iva, &url, api.get(&url));
        assert_eq!(res.status, 200, "GET {url}: {}", res.text());
    }
    let url = format!("/v1/entities/{entity_id}/iva?month=2024-13");
    let res = c.check("get", iva, &url, api.get(&url));
    assert_eq!(res.status, 422, "GET {url}: {}", res.text());

    // --- The DIOT: a supplier's settings saved, read, listed, used by the month's DIOT
    // (JSON, TXT, XLSX; both layouts), the codes; bad month, format and RFC; forgotten.
    let supplier = "/v1/entities/{id}/suppliers/{rfc}";
    let url = format!("/v1/entities/{entity_id}/suppliers/{SUPPLIER}");
    let body = json!({"operation_type": "03", "border_region": "south", "tax_effects": false});
    let res = api.request(
        "PUT",
        &url,
        Some(&serde_json::to_vec(&body).expect("json")),
        &[],
    );
    c.check("put", supplier, &url, res).expect(200);
    c.check("get", supplier, &url, api.get(&url)).expect(200);
    let res = api.request("PUT", &url, Some(br#"{"operation_type": "99"}"#), &[]);
    assert_eq!(c.check("put", supplier, &url, res).status, 422);
    let url = format!("/v1/entities/{entity_id}/suppliers/NOT-AN-RFC");
    for method in ["GET", "PUT", "DELETE"] {
        let res = api.request(method, &url, Some(b"{}"), &[]);
        let res = c.check(&method.to_lowercase(), supplier, &url, res);
        assert_eq!(res.status, 422, "{method} {url}: {}", res.text());
    }
    let list = "/v1/entities/{id}/suppliers";
    let url = format!("/v1/entities/{entity_id}/suppliers");
    c.check("get", list, &url, api.get(&url)).expect(200);
    c.check(
        "get",
        "/v1/diot/codes",
        "/v1/diot/codes",
        api.get("/v1/diot/codes"),
    )
    .expect(200);
    let diot = "/v1/entities/{id}/diot";
    for (query, media) in [
        ("month=2024-03", "application/json"),
        ("month=2025-03", "application/json"),
        ("month=2020-01", "application/json"),
        ("month=2024-03&format=txt", "text/plain"),
        (
            "month=2024-03&format=xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        ),
    ] {
        let url = format!("/v1/entities/{entity_id}/diot?{query}");
        let res = c.check("get", diot, &url, api.get(&url));
        assert_eq!(res.status, 200, "GET {url}: {}", res.text());
        assert_eq!(media_type(res.content_type()), media, "GET {url}");
    }
    for query in ["month=2024-13", "month=2024-03&format=pdf"] {
        let url = format!("/v1/entities/{entity_id}/diot?{query}");
        let res = c.check("get", diot, &url, api.get(&url));
        assert_eq!(res.status, 422, "GET {url}: {}", res.text());
    }
    let url = format!("/v1/entities/{entity_id}/suppliers/{SUPPLIER}");
    let res = api.request("DELETE", &url, None, &[]);
    assert_eq!(c.check("delete", supplier, &url, res).status, 204);

    // --- A seal verified: a sandbox invoice (valid), and one that is no CFDI (422).
    let res = api.post_json("/v1/seals/verify", &json!({"xml": sandbox_xml()}));
    let seal = c
        .check("post", "/v1/seals/verify", "/v1/seals/verify", res)
        .expect(200);
    assert_eq!(seal["status"], "valid", "{seal}");
    let res = api.post_json("/v1/seals/verify", &json!({"xml": "<a/>"}));
    let res = c.check("post", "/v1/seals/verify", "/v1/seals/verify", res);
    assert_eq!(res.status, 422, "{}", res.text());

    // --- Errors, for every operation.
    let random = uuid::Uuid::new_v4().to_string();
    let valid_bodies: BTreeMap<&str, Value> = [
        (
            "/v1/entities",
            json!({"tax_id": "ERR010101AB1", "name": "x", "ciec_password": "goodpass"}),
        ),
        ("/v1/entities/{id}", json!({"name": "renamed"})),
        (
            "/v1/extractions",
            json!({"entity_id": random, "options": {
                "period": {"from": "2024-03-01", "to": "2024-03-02"}, "download_type": "issued"}}),
        ),
        ("/v1/webhooks", json!({"url": "http://127.0.0.1:9/x"})),
        ("/v1/schedules", json!({"entity_id": random, "every": "6h"})),
        ("/v1/schedules/{id}", json!({"lookback_days": 10})),
        ("/v1/entities/{id}/efirma", efirma_upload()),
        ("/v1/seals/verify", json!({"xml": sandbox_xml()})),
        (
            "/v1/entities/{id}/suppliers/{rfc}",
            json!({"operation_type": "03"}),
        ),
    ]
    .into_iter()
    .collect();
    let all_ops = c.ops.clone();
    let mut wrong_passwords = 0;
    for op in &all_ops {
        let real_id = if op.path.starts_with("/v1/entities/") {
            entity_id.clone()
        } else if op.path.starts_with("/v1/extractions/") {
            extraction_id.clone()
        } else if op.path.starts_with("/v1/webhooks/") {
            webhook_ids[0].clone()
        } else if op.path.starts_with("/v1/schedules/") {
            schedule_ids[0].clone()
        } else {
            some_invoice.clone()
        };
        // Required query parameters are valid, so the id decides (404s below).
        let query = required_query(&op.path);
        let url = format!("{}{query}", fill(&op.path, &real_id));
        let method = op.method.to_uppercase();
        let body = valid_bodies
            .get(op.path.as_str())
            .map(|b| serde_json::to_vec(b).expect("json"));
        if op.has_request_body() && body.is_none() {
            c.problems.push(format!(
                "{}: no sample body; teach tests/docs/shapes.rs",
                op.name()
            ));
        }
        if op.requires_auth(&c.doc) {
            // 401: no credentials, wrong password, unknown user, undecodable value. The
            // wrong password only on the first operations: past 20 failures a minute the
            // throttle refuses the user's own login from this address once its cached
            // one expires, and a slow run outlasts the cache.
            wrong_passwords += 1;
            let mut attempts = vec![None, Some(("nobody@example.com", "x"))];
            if wrong_passwords <= 10 {
                attempts.push(Some((server.creds.email.as_str(), "wrong-password")));
            }
            for auth in attempts {
                let res = server.request(&method, &url, auth, body.as_deref(), &[]);
                let res = c.check(&op.method, &op.path, &url, res);
                assert_eq!(res.status, 401, "{method} {url} with {auth:?}");
            }
            let res = server.request(
                &method,
                &url,
                None,
                body.as_deref(),
                &[("authorization", "Basic !!!not-base64")],
            );
            c.check(&op.method, &op.path, &url, res);
        }
        // 404: a well-formed id that does not exist, and a malformed one.
        if op.path.contains('{') {
            for id in [random.as_str(), "not-a-uuid"] {
                let url = format!("{}{query}", fill(&op.path, id));
                let res = api.request(&method, &url, body.as_deref(), &[]);
                let res = c.check(&op.method, &op.path, &url, res);
                assert_eq!(res.status, 404, "{method} {url}: {}", res.text());
            }
        }
        if op.has_request_body() {
            // 422: a body that is not a JSON object, an empty one, an empty object.
            for bad in [&b"[1, 2]"[..], b"not json", b"", b"{}"] {
                if bad == b"{}" && (op.method == "patch" || op.path.ends_with("/{rfc}")) {
                    continue; // every PATCH field is optional, and a supplier's
                }
                let res = api.request(&method, &url, Some(bad), &[]);
                let res = c.check(&op.method, &op.path, &url, res);
                assert_eq!(
                    res.status,
                    422,
                    "{method} {url} with {bad:?}: {}",
                    res.text()
                );
            }
            // 413: over 1 MiB.
            let big = format!("{{\"name\": \"{}\"}}", "x".repeat(1024 * 1024 + 10));
            let res = api.request(&method, &url, Some(big.as_bytes()), &[]);
            let res = c.check(&op.method, &op.path, &url, res);
            assert_eq!(res.status, 413, "{method} {url} with 1 MiB: {}", res.text());
        }
        if op.query_parameters().iter().any(|p| p["name"] == "limit") {
            for bad in ["limit=0", "limit=501", "limit=abc", "cursor=%21%21"] {
                let url = format!("{url}?{bad}");
                let res = api.request(&method, &url, None, &[]);
                let res = c.check(&op.method, &op.path, &url, res);
                assert_eq!(res.status, 422, "{method} {url}: {}", res.text());
            }
        }
    }
    // Field errors of the bodies.
    for (path, body) in [
        (
            "/v1/entities",
            json!({"tax_id": "SHORT", "name": " ", "ciec_password": "x"}),
        ),
        (
            "/v1/entities",
            json!({"tax_id": "DOC010101AB1", "name": "dup", "ciec_password": "goodpass"}),
        ),
        (
            "/v1/extractions",
            json!({"entity_id": "nope", "options": {}}),
        ),
        (
            "/v1/extractions",
            json!({"entity_id": entity_id, "options": {
            "period": {"from": "2024-03-05", "to": "2024-03-01"}, "download_type": "both"}}),
        ),
        (
            "/v1/extractions",
            json!({"entity_id": entity_id, "options": {"period": {"from": "2024-03-01",
            "to": "2024-03-31"}, "download_type": "issued", "document_class": "receipts"}}),
        ),
        (
            "/v1/extractions",
            json!({"entity_id": entity_id, "options": {"period": {"from": "2024-03-01",
            "to": "2024-03-31"}, "download_type": "issued", "document_class": "retentions"}}),
        ),
        (
            "/v1/webhooks",
            json!({"url": "ftp://example.com", "events": ["nope"]}),
        ),
        (
            "/v1/schedules",
            json!({"entity_id": "nope", "every": "1m", "lookback_days": 0}),
        ),
        // The same run at the same slot as the entity's daily schedule.
        (
            "/v1/schedules",
            json!({"entity_id": entity_id, "daily_at": "07:00"}),
        ),
        (
            "/v1/schedules",
            json!({"entity_id": entity_id, "every": "1M"}),
        ),
    ] {
        let res = c.check("post", path, path, api.post_json(path, &body));
        assert_eq!(res.status, 422, "POST {path} {body}: {}", res.text());
    }
    let url = format!("/v1/entities/{entity_id}");
    let res = api.request("PATCH", &url, Some(br#"{"tax_id": "OTHER0101AB1"}"#), &[]);
    let res = c.check("patch", "/v1/entities/{id}", &url, res);
    assert_eq!(res.status, 422, "tax_id cannot change: {}", res.text());
    let url = format!("/v1/schedules/{}", schedule_ids[0]);
    let res = api.request("PATCH", &url, Some(br#"{"daily_at": "7am"}"#), &[]);
    let res = c.check("patch", "/v1/schedules/{id}", &url, res);
    assert_eq!(res.status, 422, "daily_at is HH:MM: {}", res.text());
    // The field-scoped 404s of an extraction and a schedule on a missing entity.
    for path in ["/v1/extractions", "/v1/schedules"] {
        let res = api.post_json(path, &valid_bodies[path]);
        let res = c.check("post", path, path, res);
        assert_eq!(res.status, 404, "{}", res.text());
    }
    // The hourly schedule paused itself when its entity's CIEC turned invalid.
    let url = format!("/v1/schedules/{}", schedule_ids[1]);
    let paused = eventually(DEADLINE, "the hourly schedule to pause", || {
        let s = api.get(&url).expect(200);
        (s["status"] == "paused").then_some(s)
    });
    assert_eq!(paused["paused_reason"], "invalid_credentials", "{paused}");
    c.check("get", "/v1/schedules/{id}", &url, api.get(&url));

    // --- The e.firma of an entity with the public test e.firma's RFC: upload, read, remove.
    let efirma_entity = api
        .post_json(
            "/v1/entities",
            &json!({"tax_id": "EKU9003173C9", "name": "Efirma", "ciec_password": "goodpass"}),
        )
        .json();
    let efirma_id = efirma_entity["id"].as_str().expect("id");
    let url = format!("/v1/entities/{efirma_id}/efirma");
    let body = serde_json::to_vec(&efirma_upload()).expect("json");
    let res = api.request("PUT", &url, Some(&body), &[]);
    let efirma = "/v1/entities/{id}/efirma";
    assert_eq!(c.check("put", efirma, &url, res).status, 200);
    let entity_url = format!("/v1/entities/{efirma_id}");
    let res = c.check(
        "get",
        "/v1/entities/{id}",
        &entity_url,
        api.get(&entity_url),
    );
    assert!(res.json()["efirma"].is_object(), "{}", res.text());
    // A run of its retentions shows its document class.
    let res = api.post_json(
        "/v1/extractions",
        &json!({"entity_id": efirma_id, "options": {"period": {"from": "2024-03-01",
            "to": "2024-03-31"}, "download_type": "received", "document_class": "retentions"}}),
    );
    let retentions_run = c
        .check("post", "/v1/extractions", "/v1/extractions", res)
        .expect(201);
    assert_eq!(retentions_run["options"]["document_class"], "retentions");
    let run_id = retentions_run["id"].as_str().expect("id");
    let run_url = format!("/v1/extractions/{run_id}");
    c.check("get", "/v1/extractions/{id}", &run_url, api.get(&run_url))
        .expect(200);
    // A run by UUID (one the sandbox never issued: `uuids_not_found`), and the
    // completion of a summary that misses invoices: its issued days of March 2024 (202),
    // its received ones (nothing missing: 200), the CIEC entity's received March (202,
    // through the portal), no period (422), an unknown entity (404).
    eventually(DEADLINE, "the e.firma to be checked valid", || {
        let e = api.get(&entity_url).expect(200);
        (e["efirma"]["status"] == "valid").then_some(())
    });
    let ended = |c: &mut Checker, id: &str| {
        let url = format!("/v1/extractions/{id}");
        eventually(DEADLINE, "the run to end", || {
            let e = api.get(&url).expect(200);
            matches!(e["status"].as_str(), Some("finished" | "failed")).then_some(())
        });
        c.check("get", "/v1/extractions/{id}", &url, api.get(&url))
            .expect(200)
    };
    let march = |direction: &str, uuids: Option<Value>| {
        let mut options = json!({"period": {"from": "2024-03-01", "to": "2024-03-10"},
            "download_type": direction});
        if let Some(uuids) = uuids {
            options["uuids"] = uuids;
        }
        json!({"entity_id": efirma_id, "options": options})
    };
    let never = json!(["0F000000-0000-4000-8000-000000000000"]);
    let res = api.post_json("/v1/extractions", &march("issued", Some(never.clone())));
    let by_uuid = c
        .check("post", "/v1/extractions", "/v1/extractions", res)
        .expect(201);
    let by_uuid = ended(&mut c, by_uuid["id"].as_str().expect("id"));
    assert_eq!(by_uuid["uuids_not_found"], never, "{by_uuid}");
    let res = api.post_json("/v1/extractions", &march("issued", None));
    let issued = c
        .check("post", "/v1/extractions", "/v1/extractions", res)
        .expect(201);
    assert_eq!(
        ended(&mut c, issued["id"].as_str().expect("id"))["status"],
        "finished"
    );
    let complete = "/v1/entities/{id}/summary/complete";
    for (entity, query, status) in [
        (
            efirma_id,
            "from=2024-03-01&to=2024-03-10&direction=issued",
            202,
        ),
        (
            efirma_id,
            "from=2024-03-01&to=2024-03-10&direction=received",
            200,
        ),
        (
            entity_id.as_str(),
            "from=2024-03-01&to=2024-03-31&direction=received",
            202,
        ),
        (efirma_id, "to=2024-03-31", 422),
        (
            "00000000-0000-4000-8000-000000000000",
            "from=2024-03-01&to=2024-03-31",
            404,
        ),
    ] {
        let url = format!("/v1/entities/{entity}/summary/complete?{query}");
        let res = api.request("POST", &url, None, &[]);
        assert_eq!(c.check("post", complete, &url, res).status, status, "{url}");
    }
    let res = api.request("DELETE", &url, None, &[]);
    assert_eq!(c.check("delete", efirma, &url, res).status, 204);

    // --- Deletes last.
    let url = format!("/v1/schedules/{}", schedule_ids[1]);
    let res = api.request("DELETE", &url, None, &[]);
    assert_eq!(
        c.check("delete", "/v1/schedules/{id}", &url, res).status,
        204
    );
    let hook_doomed_id = hook_doomed["id"].as_str().expect("id");
    let url = format!("/v1/webhooks/{hook_doomed_id}");
    let res = api.request("DELETE", &url, None, &[]);
    assert_eq!(
        c.check("delete", "/v1/webhooks/{id}", &url, res).status,
        204
    );
    let url = format!("/v1/entities/{doomed_id}");
    let res = api.request("DELETE", &url, None, &[]);
    assert_eq!(
        c.check("delete", "/v1/entities/{id}", &url, res).status,
        204
    );

    // /up needs no credentials.
    let res = c.check("get", "/up", "/up", server.anonymous().get("/up"));
    assert_eq!(res.status, 200);

    c.finish(&[
        ("POST /v1/extractions", 404),
        ("POST /v1/schedules", 404),
        ("GET /v1/invoices/{id}/cfdi", 404),
    ]);
}

#[test]
fn schema_checker_reports_wrong_and_undocumented_fields() {
    let doc = json!({"components": {"schemas": {
        "Thing": {"type": "object", "required": ["id"], "properties": {
            "id": {"type": "string", "format": "uuid"},
            "when": {"type": ["string", "null"], "format": "date-time"}}},
        "Detail": {"allOf": [{"$ref": "#/components/schemas/Thing"},
            {"type": "object", "properties": {"items": {"type": "array",
                "items": {"type": "object", "properties": {"n": {"type": "integer"}}}}}}]}
    }}});
    let schema = json!({"$ref": "#/components/schemas/Detail"});
    let good =
        json!({"id": "01a1ffdf-6ae8-74b8-a93c-fea7fe8a04b9", "when": null, "items": [{"n": 1}]});
    assert_eq!(schema_errors(&doc, &schema, &good), Vec::<String>::new());
    let bad = json!({"id": "nope", "when": "yesterday", "items": [{"n": 1, "m": 2}], "extra": 1});
    let errors = schema_errors(&doc, &schema, &bad);
    assert_eq!(errors.len(), 4, "{errors:#?}");
    assert!(
        errors.iter().any(|e| e.contains("/items/0/m")),
        "{errors:#?}"
    );
    assert!(errors.iter().any(|e| e.contains("/extra")), "{errors:#?}");
    // Numbers as the service writes them (arbitrary precision, trailing zeros).
    let money = json!({"type": "object", "properties": {"total": {"type": "number"},
        "n": {"type": "integer"}}});
    let v: Value = serde_json::from_str(r#"{"total": 1000.00, "n": 3}"#).expect("json");
    assert_eq!(schema_errors(&doc, &money, &v), Vec::<String>::new());
}
