//! The engines answer alike (issue 42): the same documents, stored through a server on
//! SQLite and one on PostgreSQL, read back byte for byte the same, JSON built in SQL
//! included (invoice relations, `invoice.updated` changes, an extraction's conflicts).
//! The service's own ids and clocks differ between two servers: each is replaced, in
//! order of first appearance, by its ordinal, so what is compared is everything else.

use crate::common::app::TestApp;
use crate::common::engine::postgres_only;
use crate::common::invoices::{date, extract, id_of, import_by_issuer, valid_entity};
use regex::Regex;
use std::collections::{BTreeMap, HashMap};

/// The samples a test imports through each server: invoices, payments, credit notes and
/// relations, in pesos and dollars, CFDI 3.2 to 4.0.
const SAMPLES: &[&str] = &[
    "cfdi32-ingreso-real-legacy-tfd10.xml",
    "cfdi33-ingreso-ppd-multiples-tasas-tfd.xml",
    "cfdi33-ingreso-pue-real-implocal-tfd.xml",
    "cfdi33-pago10-tfd-usd-docto-mxn-payment.xml",
    "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
    "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
    "cfdi40-ingreso-pue-real-tfd.xml",
    "cfdi40-ingreso-pue-descuento-tfd.xml",
    "cfdi40-nomina-compensacion-tfd.xml",
];

/// Ids (UUIDs) and clock readings (the service's timestamps), each replaced by its
/// ordinal of first appearance.
struct Normal {
    pattern: Regex,
    seen: HashMap<String, usize>,
}

impl Normal {
    fn new() -> Normal {
        Normal {
            pattern: Regex::new(
                r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z",
            )
            .expect("re"),
            seen: HashMap::new(),
        }
    }

    fn of(&mut self, text: &str) -> String {
        let matches: Vec<String> = self
            .pattern
            .find_iter(text)
            .map(|m| m.as_str().to_string())
            .collect();
        for m in matches {
            let next = self.seen.len();
            self.seen.entry(m).or_insert(next);
        }
        self.pattern
            .replace_all(text, |c: &regex::Captures| {
                format!("<{}>", self.seen[&c[0]])
            })
            .into_owned()
    }
}

/// What one server answers, in order: (request, normalized body).
fn answers(app: &TestApp, tax_id: &str) -> Vec<(String, String)> {
    let client = app.client();
    let mut normal = Normal::new();
    let mut out = Vec::new();
    let mut get = |path: &str, normal: &mut Normal| {
        let res = client.get(path);
        assert!(
            res.status < 300,
            "GET {path}: {} {}",
            res.status,
            res.text()
        );
        out.push((path.to_string(), normal.of(&res.text())));
        res
    };
    let entity = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    let run = extract(
        &client,
        &entity,
        date("2026-01-05"),
        date("2026-01-09"),
        "issued",
    );
    let mut entities = BTreeMap::new();
    import_by_issuer(app, &mut entities, SAMPLES);
    get(&format!("/v1/extractions/{}", id_of(&run)), &mut normal);
    let list = get("/v1/invoices?limit=500", &mut normal).json();
    for invoice in list["data"].as_array().expect("data") {
        let id = id_of(invoice);
        for path in [
            format!("/v1/invoices/{id}"),
            format!("/v1/invoices/{id}/cfdi?format=json"),
            format!("/v1/invoices/{id}/items"),
            format!("/v1/invoices/{id}/payments"),
        ] {
            get(&path, &mut normal);
        }
    }
    get("/v1/events?limit=500&order=oldest", &mut normal);
    get(
        &format!("/v1/entities/{entity}/summary?from=2026-01-01&to=2026-12-31&direction=issued"),
        &mut normal,
    );
    for other in entities.values() {
        get(&format!("/v1/invoices?entity_id={other}"), &mut normal);
    }
    get(
        "/v1/invoices/export?format=csv&issued_from=2000-01-01",
        &mut normal,
    );
    out
}

#[test]
fn the_same_documents_read_back_byte_for_byte_alike_on_both_engines() {
    postgres_only!("SQLite's answers against PostgreSQL's");
    let sqlite = TestApp::spawn_on_sqlite(&[]);
    let postgres = TestApp::spawn();
    let (a, b) = std::thread::scope(|s| {
        // A sandbox taxpayer of its own (the samples' issuers get entities below).
        let a = s.spawn(|| answers(&sqlite, "ENG010101AAA"));
        let b = s.spawn(|| answers(&postgres, "ENG010101AAA"));
        (a.join().expect("sqlite"), b.join().expect("postgres"))
    });
    assert!(a.len() > 40, "{} answers", a.len());
    assert_eq!(a.len(), b.len(), "as many answers");
    for ((path, on_sqlite), (_, on_postgres)) in a.iter().zip(&b) {
        assert_eq!(
            on_sqlite, on_postgres,
            "GET {path}: SQLite's answer, then PostgreSQL's"
        );
    }
}

/// The planner's statistics keep up with an ingest on a new database
/// (`db::postgres::statistics`): autovacuum would analyze the invoices a minute or more
/// later, and until then a new database's plans come from an empty table's statistics.
/// `last_analyze` is set by an ANALYZE statement (ours), never by autovacuum.
#[test]
fn a_new_database_s_tables_are_analyzed_as_they_grow() {
    postgres_only!("PostgreSQL's planner statistics");
    let app = TestApp::spawn();
    let client = app.client();
    // Autovacuum could analyze the table first (it did, on a busy CI server), and the
    // server's thread would then find it analyzed: only the thread may here.
    let mut db = crate::common::engine::TestDb::open(app.data_dir());
    db.batch("ALTER TABLE invoices SET (autovacuum_enabled = false)");
    let entity = id_of(&valid_entity(&client, "BIGS010101AAA", "sandbox1"));
    let done = extract(
        &client,
        &entity,
        date("2026-03-02"),
        date("2026-03-03"),
        "issued",
    );
    assert!(
        crate::common::invoices::found(&done) > 600,
        "a BIG taxpayer's two days: {done}"
    );
    let analyzed = |db: &mut crate::common::engine::TestDb| {
        db.value(
            "SELECT CASE WHEN last_analyze IS NULL THEN 0 ELSE 1 END FROM pg_stat_user_tables
              WHERE schemaname = current_schema() AND relname = 'invoices'",
            &[],
        )
        .int()
            == Some(1)
    };
    crate::common::app::eventually(
        std::time::Duration::from_secs(60),
        "the invoices table analyzed by the server",
        || analyzed(&mut db).then_some(()),
    );
}
