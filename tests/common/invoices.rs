//! Invoices into the app and back: importing the CFDI samples through the CLI, running
//! extractions, the sandbox's expected documents, and exact-amount comparisons.

use crate::common::app::{as_u64, eventually, Client, TestApp};
use crate::common::engine::TestDb;
use cfdi_extract::sandbox::docs::{self as sandbox_docs, Direction, SandboxInvoice};
use chrono::{Months, NaiveDate};
use rust_decimal::Decimal;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How long an extraction of a month (or a day of a `BIG` tax id) may take, polled:
/// generous, since a sealed sandbox month on a busy 2-core machine under two
/// PostgreSQL instances took 66 s once (polling returns as soon as it ends).
pub const EXTRACTION_DEADLINE: Duration = Duration::from_secs(180);

/// The local time format of CFDI dates (`issued_at`, `cancelled_at`, `FechaPago`).
pub const LOCAL_TIME: &str = "%Y-%m-%dT%H:%M:%S";

// ---------------------------------------------------------------------------------------
// Samples

pub const SAMPLES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cfdi-samples/");

pub fn sample_path(name: &str) -> PathBuf {
    Path::new(SAMPLES).join(name)
}

pub fn sample_bytes(name: &str) -> Vec<u8> {
    std::fs::read(sample_path(name)).unwrap_or_else(|e| panic!("read sample {name}: {e}"))
}

/// Runs `invoices import` for `files` into `entity_id`; asserts success and returns
/// (file name, invoice id) in the order printed.
pub fn import(
    app: &TestApp,
    entity_id: &str,
    direction: &str,
    files: &[PathBuf],
) -> Vec<(String, String)> {
    let files: Vec<String> = files
        .iter()
        .map(|f| f.to_string_lossy().to_string())
        .collect();
    let mut args: Vec<&str> = vec![
        "invoices",
        "import",
        "--entity",
        entity_id,
        "--direction",
        direction,
    ];
    args.extend(files.iter().map(String::as_str));
    let out = app.cli(&args, None);
    let stdout = out.expect_success("invoices import");
    let imported: Vec<(String, String)> = stdout
        .lines()
        .filter_map(|line| {
            let mut parts = line.split('\t');
            match (parts.next(), parts.next(), parts.next()) {
                (Some("imported"), Some(path), Some(id)) => Some((
                    Path::new(path)
                        .file_name()
                        .map(|n| n.to_string_lossy().to_string())
                        .unwrap_or_default(),
                    id.trim().to_string(),
                )),
                _ => None,
            }
        })
        .collect();
    assert_eq!(
        imported.len(),
        files.len(),
        "every file is imported; stdout: {stdout}"
    );
    imported
}

/// Imports samples by name; returns file name -> invoice id.
pub fn import_samples(
    app: &TestApp,
    entity_id: &str,
    direction: &str,
    names: &[&str],
) -> BTreeMap<String, String> {
    let paths: Vec<PathBuf> = names.iter().map(|n| sample_path(n)).collect();
    import(app, entity_id, direction, &paths)
        .into_iter()
        .collect()
}

/// The RFC of a sample's issuer (`Emisor@Rfc`).
pub fn issuer_of(name: &str) -> String {
    cfdi_extract::cfdi::Cfdi::parse(&sample_bytes(name))
        .unwrap_or_else(|e| panic!("parse sample {name}: {e}"))
        .issuer
        .tax_id
}

/// Imports samples as `issued`, each into the entity whose tax id is its issuer's RFC
/// (import refuses any other): entities are taken from `entities` (tax id -> id) or
/// created and recorded there. Returns file name -> invoice id.
pub fn import_by_issuer(
    app: &TestApp,
    entities: &mut BTreeMap<String, String>,
    names: &[&str],
) -> BTreeMap<String, String> {
    let mut by_entity: BTreeMap<String, Vec<&str>> = BTreeMap::new();
    for name in names {
        let rfc = issuer_of(name);
        let entity = entities
            .entry(rfc.clone())
            .or_insert_with(|| id_of(&app.client().create_entity(&rfc, "sandbox1")));
        by_entity.entry(entity.clone()).or_default().push(name);
    }
    by_entity
        .iter()
        .flat_map(|(entity, names)| import_samples(app, entity, "issued", names))
        .collect()
}

// ---------------------------------------------------------------------------------------
// Entities and extractions

/// Creates an entity and waits for its credential to be `valid`.
pub fn valid_entity(client: &Client, tax_id: &str, password: &str) -> Value {
    let entity = client.create_entity(tax_id, password);
    let id = entity["id"].as_str().expect("entity id").to_string();
    client.wait_for_credential(&id, "valid")
}

pub fn id_of(v: &Value) -> String {
    v["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no id in {v}"))
        .to_string()
}

pub fn extraction_body(entity_id: &str, from: NaiveDate, to: NaiveDate, direction: &str) -> Value {
    json!({
        "entity_id": entity_id,
        "options": {
            "period": { "from": from.to_string(), "to": to.to_string() },
            "download_type": direction,
        }
    })
}

/// Creates an extraction, asserting 201 and `pending`.
pub fn create_extraction(
    client: &Client,
    entity_id: &str,
    from: NaiveDate,
    to: NaiveDate,
    direction: &str,
) -> Value {
    let created = client
        .post_json(
            "/v1/extractions",
            &extraction_body(entity_id, from, to, direction),
        )
        .expect(201);
    assert_eq!(created["status"], "pending", "{created}");
    created
}

/// Polls the extraction until it is `finished` or `failed`.
pub fn wait_extraction_done(client: &Client, id: &str) -> Value {
    let path = format!("/v1/extractions/{id}");
    eventually(
        EXTRACTION_DEADLINE,
        &format!("extraction {id} to end"),
        || {
            let e = client.get(&path).expect(200);
            matches!(e["status"].as_str(), Some("finished" | "failed")).then_some(e)
        },
    )
}

/// Runs an extraction to its end and asserts it finished.
pub fn extract(
    client: &Client,
    entity_id: &str,
    from: NaiveDate,
    to: NaiveDate,
    direction: &str,
) -> Value {
    let created = create_extraction(client, entity_id, from, to, direction);
    let done = wait_extraction_done(client, &id_of(&created));
    assert_eq!(done["status"], "finished", "{done}");
    done
}

pub fn found(extraction: &Value) -> u64 {
    as_u64(&extraction["invoices_found"])
}

pub fn processed(extraction: &Value) -> u64 {
    as_u64(&extraction["invoices_processed"])
}

/// Every invoice of a list query (`query` without `?`, may be empty).
pub fn invoices(client: &Client, query: &str) -> Vec<Value> {
    let path = if query.is_empty() {
        "/v1/invoices".to_string()
    } else {
        format!("/v1/invoices?{query}")
    };
    client.list_all(&path, 500)
}

/// The invoices of an entity, asserting their UUIDs are distinct; uuid -> invoice.
pub fn invoices_by_uuid(client: &Client, entity_id: &str) -> BTreeMap<String, Value> {
    let all = invoices(client, &format!("entity_id={entity_id}"));
    let mut out = BTreeMap::new();
    for inv in all {
        let uuid = inv["uuid"].as_str().expect("uuid").to_string();
        assert!(
            out.insert(uuid.clone(), inv).is_none(),
            "invoice {uuid} listed twice"
        );
    }
    out
}

/// The single invoice listed with `uuid`, if any.
pub fn invoice_by_uuid(client: &Client, uuid: &str) -> Option<Value> {
    let list = client.get(&format!("/v1/invoices?uuid={uuid}")).expect(200);
    let data = list["data"].as_array().expect("data");
    assert!(data.len() <= 1, "one invoice per uuid: {list}");
    data.first().cloned()
}

// ---------------------------------------------------------------------------------------
// The sandbox's documents

pub fn date(s: &str) -> NaiveDate {
    NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap_or_else(|e| panic!("date {s}: {e}"))
}

/// The first and last day of a month.
pub fn month(year: i32, month: u32) -> (NaiveDate, NaiveDate) {
    let from = NaiveDate::from_ymd_opt(year, month, 1).expect("first day");
    let to = from
        .checked_add_months(Months::new(1))
        .and_then(|d| d.pred_opt())
        .expect("last day");
    (from, to)
}

pub fn docs_direction(direction: &str) -> Direction {
    match direction {
        "issued" => Direction::Issued,
        "received" => Direction::Received,
        other => panic!("direction {other}"),
    }
}

/// What the sandbox lists for an entity, direction and period.
pub fn sandbox(
    tax_id: &str,
    direction: &str,
    from: NaiveDate,
    to: NaiveDate,
) -> Vec<SandboxInvoice> {
    sandbox_docs::invoices_for_period(tax_id, docs_direction(direction), from, to)
}

pub fn withheld(invoices: &[SandboxInvoice]) -> usize {
    invoices.iter().filter(|i| i.xml_withheld_first).count()
}

pub fn uuids(invoices: &[SandboxInvoice]) -> HashSet<String> {
    invoices.iter().map(|i| i.uuid.clone()).collect()
}

// ---------------------------------------------------------------------------------------
// Values

/// A JSON amount as an exact decimal (never through f64).
pub fn dec(v: &Value) -> Decimal {
    assert!(v.is_number(), "expected a JSON number, got {v}");
    v.to_string()
        .parse()
        .unwrap_or_else(|e| panic!("amount {v}: {e}"))
}

/// Asserts a JSON amount equals `expected` numerically (scale aside).
#[track_caller]
pub fn assert_amount(v: &Value, expected: &str, what: &str) {
    let expected: Decimal = expected.parse().expect("expected decimal");
    assert_eq!(dec(v), expected, "{what}: got {v}");
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ`
pub fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.into_iter().all(|i| b[i].is_ascii_digit());
    b.len() == 27
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b[19] == b'.'
        && digits(20..26)
        && b[26] == b'Z'
        && chrono::NaiveDateTime::parse_from_str(&s[..26], "%Y-%m-%dT%H:%M:%S%.6f").is_ok()
}

#[track_caller]
pub fn assert_timestamp(v: &Value, what: &str) {
    let s = v
        .as_str()
        .unwrap_or_else(|| panic!("{what} should be a timestamp, got {v}"));
    assert!(is_timestamp(s), "{what} has the wrong format: {s:?}");
}

/// How an invoice's stored `kind` document is kept: its codec and stored size, read
/// from the data directory's database (a reader beside the server, WAL mode).
/// Which `certificates` row a stored document's issuer certificate was kept in (`None`
/// when the document keeps its own, or there is no such document).
pub fn stored_certificate(data_dir: &Path, invoice_id: &str) -> Option<i64> {
    TestDb::open(data_dir)
        .value(
            "SELECT certificate_id FROM documents WHERE invoice_id = ?1 AND kind = 'xml'",
            &[invoice_id],
        )
        .int()
}

pub fn stored_document(data_dir: &Path, invoice_id: &str, kind: &str) -> Option<(String, usize)> {
    let row = TestDb::open(data_dir).row(
        "SELECT codec, length(content) FROM documents WHERE invoice_id = ?1 AND kind = ?2",
        &[invoice_id, kind],
    )?;
    let codec = row[0].text().expect("a codec");
    let len = row[1].int().expect("a length");
    Some((codec, usize::try_from(len).expect("a length")))
}

/// Excel's serial of a date or timestamp as the API writes it (days since 1899-12-30,
/// the wall-clock time as the fraction of a day): what a date cell must hold.
pub fn excel_serial(text: &str) -> Option<f64> {
    let at = chrono::NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .ok()
        .or_else(|| {
            chrono::DateTime::parse_from_rfc3339(text)
                .ok()
                .map(|t| t.naive_local())
        })
        .or_else(|| {
            NaiveDate::parse_from_str(text, "%Y-%m-%d")
                .ok()
                .and_then(|d| d.and_hms_opt(0, 0, 0))
        })?;
    let epoch = NaiveDate::from_ymd_opt(1899, 12, 30)?.and_hms_opt(0, 0, 0)?;
    Some((at - epoch).num_milliseconds() as f64 / 86_400_000.0)
}

/// Whether a printed PDF shows `text` inside one of its strings: pdf-writer writes a
/// string as is (a literal) when its bytes are plain ASCII, else in hexadecimal (a line
/// with an accent), so both spellings of its WinAnsi bytes are looked for.
pub fn pdf_shows(pdf: &[u8], text: &str) -> bool {
    let bytes = cfdi_extract::pdf::win_ansi(text);
    let hex: String = bytes.iter().map(|b| format!("{b:02X}")).collect();
    let found = |needle: &[u8]| pdf.windows(needle.len()).any(|w| w == needle);
    found(&bytes) || found(hex.as_bytes()) || found(hex.to_lowercase().as_bytes())
}
