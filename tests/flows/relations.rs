//! Relations between documents (CfdiRelacionados): each invoice shows the documents it
//! names and those that name it, whichever arrived first.

use crate::common::app::{eventually, TestApp, DEADLINE};
use crate::common::engine::TestDb;
use crate::common::invoices::*;
use crate::flows::import::{edited_sample, REAL_40, REAL_40_ISSUER, REAL_40_UUID};
use serde_json::{json, Value};
use tempfile::TempDir;

const CREDIT_UUID: &str = "C2832671-DA6D-11EF-A83D-0000000000C1";
const SUBSTITUTE_UUID: &str = "C2832671-DA6D-11EF-A83D-0000000000C4";

/// REAL_40 as another document: its UUID, type and total changed, naming REAL_40 with
/// `relation` (the UUID written in lower case, as some issuers do).
fn relative(
    dir: &TempDir,
    name: &str,
    uuid: &str,
    kind: &str,
    total: &str,
    relation: &str,
) -> std::path::PathBuf {
    let related = format!(
        "<cfdi:CfdiRelacionados TipoRelacion=\"{relation}\"><cfdi:CfdiRelacionado UUID=\"{}\"/></cfdi:CfdiRelacionados>\n  <cfdi:Emisor",
        REAL_40_UUID.to_ascii_lowercase()
    );
    edited_sample(
        dir,
        name,
        REAL_40,
        &[
            (REAL_40_UUID, uuid),
            (
                "TipoDeComprobante=\"I\"",
                &format!("TipoDeComprobante=\"{kind}\""),
            ),
            ("Total=\"1000.00\"", &format!("Total=\"{total}\"")),
            ("<cfdi:Emisor", &related),
        ],
    )
}

fn relations(app: &TestApp, id: &str) -> Value {
    app.get(&format!("/v1/invoices/{id}")).expect(200)["relations"].clone()
}

fn import_one(app: &TestApp, entity: &str, file: &std::path::Path) -> String {
    import(app, entity, "issued", &[file.to_path_buf()])[0]
        .1
        .clone()
}

#[test]
fn credit_notes_and_substitutions_link_both_ways_whichever_arrives_first() {
    let mut app = TestApp::spawn();
    let dir = TempDir::new().expect("temp dir");
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    // The credit note arrives before the invoice it reduces: its UUID alone.
    let credit = relative(&dir, "credit.xml", CREDIT_UUID, "E", "116.00", "01");
    let credit_id = import_one(&app, &entity, &credit);
    let early = relations(&app, &credit_id);
    assert_eq!(
        early,
        json!({"relates_to": [{"relation_type": "01", "relation": "credit_note",
                               "uuid": REAL_40_UUID, "invoice": null}],
               "related_by": []}),
    );
    // The invoice arrives: the credit note now links to it, and it shows the credit note.
    let invoice_id = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    let linked = &relations(&app, &credit_id)["relates_to"][0]["invoice"];
    assert_eq!(linked["id"], json!(invoice_id), "{linked}");
    assert_eq!(linked["type"], json!("I"));
    assert_eq!(linked["status"], json!("active"));
    assert_amount(&linked["total"], "1000.00", "the invoice's total");
    // The substitute arrives after it.
    let substitute = relative(
        &dir,
        "substitute.xml",
        SUBSTITUTE_UUID,
        "I",
        "1000.50",
        "04",
    );
    let substitute_id = import_one(&app, &entity, &substitute);
    let of_invoice = relations(&app, &invoice_id);
    assert_eq!(of_invoice["relates_to"], json!([]));
    let by = of_invoice["related_by"].as_array().expect("related_by");
    assert_eq!(by.len(), 2, "{of_invoice}");
    let credit_entry = by
        .iter()
        .find(|r| r["relation_type"] == "01")
        .expect("the credit note");
    assert_eq!(credit_entry["relation"], json!("credit_note"));
    assert_eq!(credit_entry["uuid"], json!(CREDIT_UUID));
    assert_eq!(credit_entry["invoice"]["id"], json!(credit_id));
    assert_eq!(credit_entry["invoice"]["type"], json!("E"));
    assert_amount(
        &credit_entry["invoice"]["total"],
        "116.00",
        "the credit note's total",
    );
    let substitution = by
        .iter()
        .find(|r| r["relation_type"] == "04")
        .expect("the substitute");
    assert_eq!(substitution["relation"], json!("substitution"));
    assert_eq!(substitution["invoice"]["id"], json!(substitute_id));
    assert_amount(
        &substitution["invoice"]["total"],
        "1000.50",
        "the substitute's total",
    );
    // The list finds the invoice a stored, active CFDI substitutes.
    let substituted = app.client().list_all(
        &format!("/v1/invoices?entity_id={entity}&substituted=true"),
        100,
    );
    assert_eq!(substituted.len(), 1, "{substituted:?}");
    assert_eq!(substituted[0]["id"], json!(invoice_id));
    let of_substitute = relations(&app, &substitute_id);
    assert_eq!(
        of_substitute["relates_to"][0]["relation"],
        json!("substitution")
    );
    assert_eq!(
        of_substitute["relates_to"][0]["invoice"]["id"],
        json!(invoice_id)
    );

    // Another organization sees none of it.
    let other = app.create_user_in_new_org();
    app.client_as(&other)
        .get(&format!("/v1/invoices/{invoice_id}"))
        .expect_not_found();

    // Invoices stored before relations were kept get them from their XML at start.
    app.kill();
    TestDb::open(app.data_dir()).batch(
        "DELETE FROM invoice_relations;
         DELETE FROM settings WHERE name = 'invoice_relations_backfill';",
    );
    app.start();
    let again = eventually(DEADLINE, "the backfill", || {
        let r = relations(&app, &invoice_id);
        (r["related_by"].as_array().map(Vec::len) == Some(2)).then_some(r)
    });
    assert_eq!(again, of_invoice);
}

/// REAL_40 as a credit note (type E) of `total` in `currency`, naming `related` with 01.
fn credit_note(
    dir: &TempDir,
    uuid: &str,
    total: &str,
    currency: &str,
    related: &[&str],
) -> std::path::PathBuf {
    let names: String = related
        .iter()
        .map(|u| format!("<cfdi:CfdiRelacionado UUID=\"{u}\"/>"))
        .collect();
    let node = format!("<cfdi:CfdiRelacionados TipoRelacion=\"01\">{names}</cfdi:CfdiRelacionados>\n  <cfdi:Emisor");
    let money = format!(
        "Moneda=\"{currency}\" TipoCambio=\"{}\"",
        if currency == "MXN" { "1" } else { "17.50" }
    );
    edited_sample(
        dir,
        &format!("{uuid}.xml"),
        REAL_40,
        &[
            (REAL_40_UUID, uuid),
            ("TipoDeComprobante=\"I\"", "TipoDeComprobante=\"E\""),
            ("Total=\"1000.00\"", &format!("Total=\"{total}\"")),
            ("Moneda=\"MXN\" TipoCambio=\"1\"", &money),
            ("<cfdi:Emisor", &node),
        ],
    )
}

#[test]
fn credit_notes_naming_one_invoice_of_its_currency_are_credited_and_what_is_left_never_goes_below_zero(
) {
    let app = TestApp::spawn();
    let dir = TempDir::new().expect("temp dir");
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    // REAL_40 paid in installments (PPD): it owes its whole total, 1000.00.
    let ppd = edited_sample(
        &dir,
        "ppd.xml",
        REAL_40,
        &[("MetodoPago=\"PUE\"", "MetodoPago=\"PPD\"")],
    );
    let invoice = import_one(&app, &entity, &ppd);
    let read = |id: &str| app.get(&format!("/v1/invoices/{id}")).expect(200);
    let before = read(&invoice);
    assert_amount(
        &before["due_amount"],
        "1000.00",
        "PPD without payments owes its total",
    );
    assert_amount(&before["credited_amount"], "0.00", "nothing credited yet");
    assert_amount(
        &before["balance_after_credits"],
        "1000.00",
        "all of it left",
    );

    // Counted: 116.00 naming it alone. Not counted: one naming it and another invoice
    // (no per-invoice amount to split), and one in another currency.
    import_one(
        &app,
        &entity,
        &credit_note(
            &dir,
            "C2832671-DA6D-11EF-A83D-0000000000D1",
            "116.00",
            "MXN",
            &[REAL_40_UUID],
        ),
    );
    import_one(
        &app,
        &entity,
        &credit_note(
            &dir,
            "C2832671-DA6D-11EF-A83D-0000000000D2",
            "300.00",
            "MXN",
            &[REAL_40_UUID, "C2832671-DA6D-11EF-A83D-0000000000FF"],
        ),
    );
    import_one(
        &app,
        &entity,
        &credit_note(
            &dir,
            "C2832671-DA6D-11EF-A83D-0000000000D3",
            "10.00",
            "USD",
            &[REAL_40_UUID],
        ),
    );
    let after = read(&invoice);
    assert_eq!(
        after["relations"]["related_by"].as_array().map(Vec::len),
        Some(3),
        "{after}"
    );
    assert_amount(
        &after["credited_amount"],
        "116.00",
        "one credit note counted",
    );
    // 1000.00 - 116.00
    assert_amount(
        &after["balance_after_credits"],
        "884.00",
        "left after the credit",
    );
    assert_amount(
        &after["due_amount"],
        "1000.00",
        "due_amount keeps the spec's meaning",
    );

    // A second one of 900.00: 116.00 + 900.00 = 1016.00 credited, nothing below zero left.
    import_one(
        &app,
        &entity,
        &credit_note(
            &dir,
            "C2832671-DA6D-11EF-A83D-0000000000D4",
            "900.00",
            "MXN",
            &[REAL_40_UUID],
        ),
    );
    let over = read(&invoice);
    assert_amount(&over["credited_amount"], "1016.00", "both counted whole");
    assert_amount(&over["balance_after_credits"], "0.00", "never below zero");

    // Lists and exports find it: an active credit note names it (counted or not).
    let client = app.client();
    let ids = |query: &str| -> Vec<String> {
        client
            .list_all(&format!("/v1/invoices?entity_id={entity}&{query}"), 100)
            .iter()
            .map(|i| i["id"].as_str().expect("id").to_string())
            .collect()
    };
    assert_eq!(ids("credited=true"), vec![invoice.clone()]);
    assert_eq!(
        ids("credited=false").len(),
        4,
        "the four credit notes themselves"
    );
    assert!(!ids("credited=false").contains(&invoice));
    assert_eq!(ids("substituted=true"), Vec::<String>::new());
    let export = client.get(&format!(
        "/v1/invoices/export?format=csv&entity_id={entity}&credited=true"
    ));
    assert_eq!(export.status, 200, "{}", export.text());
    let csv = export.text();
    assert_eq!(
        csv.lines().count(),
        2,
        "a header and the credited invoice: {csv}"
    );
    assert!(csv.contains(REAL_40_UUID), "{csv}");
    let refused = client
        .get("/v1/invoices?credited=maybe&substituted=yes")
        .expect_error(422);
    assert!(refused["errors"]["credited"].is_array(), "{refused}");
    assert!(refused["errors"]["substituted"].is_array(), "{refused}");
}

/// The most relations of each direction an invoice object carries (/docs/invoices#relations).
const EMBEDDED: usize = 100;

/// The `n`-th synthetic UUID a large credit note names (none of them stored).
fn named_uuid(n: usize) -> String {
    format!("00000000-0000-4000-8000-{n:012}")
}

/// The UUIDs of a relation list's entries, in order.
fn uuids_of(entries: &[Value]) -> Vec<String> {
    entries
        .iter()
        .map(|e| e["uuid"].as_str().expect("uuid").to_string())
        .collect()
}

/// A credit note naming 20,001 documents, and another naming one invoice 20,000 times:
/// every relation is stored, but the invoice object (its read, its JSON document, its
/// events and so the feed) carries 100 of each direction with their counts, and the
/// paged endpoints reach every one, in order, both ways.
#[test]
fn huge_relations_stay_out_of_reads_and_events_and_page_through_both_ways() {
    const MANY: usize = 20_000;
    let app = TestApp::spawn();
    let client = app.client();
    let dir = TempDir::new().expect("temp dir");
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let invoice = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    // The wide one: REAL_40 first, then 20,000 documents the service does not hold.
    let mut wide_names = vec![REAL_40_UUID.to_string()];
    wide_names.extend((0..MANY).map(named_uuid));
    let refs: Vec<&str> = wide_names.iter().map(String::as_str).collect();
    let wide = credit_note(
        &dir,
        "C2832671-DA6D-11EF-A83D-0000000000E1",
        "50.00",
        "MXN",
        &refs,
    );
    let wide = import_one(&app, &entity, &wide);
    // The deep one: REAL_40 20,000 times (so it credits REAL_40 alone, once).
    let refs = vec![REAL_40_UUID; MANY];
    let deep = credit_note(
        &dir,
        "C2832671-DA6D-11EF-A83D-0000000000E2",
        "116.00",
        "MXN",
        &refs,
    );
    let deep = import_one(&app, &entity, &deep);

    // The wide credit note's read: 100 of 20,001, its first one linked to REAL_40.
    let read = client.get(&format!("/v1/invoices/{wide}"));
    assert_eq!(read.status, 200);
    let size = read.body.len();
    let object = read.json();
    let carried = object["relations"]["relates_to"]
        .as_array()
        .expect("relates_to");
    assert_eq!(uuids_of(carried), wide_names[..EMBEDDED].to_vec());
    assert_eq!(carried[0]["invoice"]["id"], json!(invoice));
    assert_eq!(object["relations"]["related_by"], json!([]));
    assert_eq!(
        object["relations_count"],
        json!({"relates_to": MANY + 1, "related_by": 0})
    );
    assert_eq!(object["relations_truncated"], true);
    assert!(size < 64 * 1024, "the read is {size} bytes");
    let document = client
        .get(&format!("/v1/invoices/{wide}/cfdi?format=json"))
        .expect(200);
    assert_eq!(document["relations"], object["relations"]);
    assert_eq!(document["relations_count"], object["relations_count"]);

    // REAL_40's read: named 20,001 times, 100 carried, oldest first (the wide note's
    // one entry, then the deep note's in document order); the deep note credits it.
    let read = client.get(&format!("/v1/invoices/{invoice}"));
    assert_eq!(read.status, 200);
    let size = read.body.len();
    let object = read.json();
    let by = object["relations"]["related_by"]
        .as_array()
        .expect("related_by");
    assert_eq!(by.len(), EMBEDDED);
    assert_eq!(by[0]["invoice"]["id"], json!(wide));
    assert!(by[1..].iter().all(|e| e["invoice"]["id"] == json!(deep)));
    assert_eq!(
        object["relations_count"],
        json!({"relates_to": 0, "related_by": MANY + 1})
    );
    assert_eq!(object["relations_truncated"], true);
    assert_amount(&object["credited_amount"], "116.00", "the deep note, once");
    assert!(size < 64 * 1024, "the read is {size} bytes");

    // The events carry the same bounded objects, and so does the feed.
    let feed = client.get("/v1/events?limit=10");
    assert_eq!(feed.status, 200);
    let size = feed.body.len();
    let events = feed.json()["data"].as_array().expect("data").clone();
    let created = events
        .iter()
        .filter(|e| e["event"] == "invoice.created")
        .count();
    assert_eq!(created, 3, "three invoices created: {events:?}");
    for e in events.iter().filter(|e| e["event"] == "invoice.created") {
        let relations = &e["object"]["relations"];
        assert!(relations["relates_to"].as_array().expect("list").len() <= EMBEDDED);
        assert!(relations["related_by"].as_array().expect("list").len() <= EMBEDDED);
    }
    assert!(size < 3 * 64 * 1024, "the feed's page is {size} bytes");

    // Every relation, a page at a time, both ways.
    let relates_to = client.list_all(&format!("/v1/invoices/{wide}/relates-to"), 500);
    assert_eq!(uuids_of(&relates_to), wide_names);
    assert_eq!(relates_to[..EMBEDDED], carried[..]);
    let related_by = client.list_all(&format!("/v1/invoices/{invoice}/related-by"), 333);
    assert_eq!(related_by.len(), MANY + 1);
    assert_eq!(related_by[..EMBEDDED], by[..]);
    assert_eq!(related_by[0]["invoice"]["id"], json!(wide));
    assert!(related_by[1..].iter().all(|e| e["uuid"]
        == json!("C2832671-DA6D-11EF-A83D-0000000000E2")
        && e["relation"] == json!("credit_note")));
    let deep_names = client.list_all(&format!("/v1/invoices/{deep}/relates-to"), 500);
    assert_eq!(deep_names.len(), MANY);
    assert!(deep_names
        .iter()
        .all(|e| e["invoice"]["id"] == json!(invoice)));
    // An invoice with no relations pages to nothing.
    let empty = client
        .get(&format!("/v1/invoices/{wide}/related-by"))
        .expect(200);
    assert_eq!(empty, json!({"data": [], "next_cursor": null}));

    // Bad pages are 422s on their parameter; another organization's invoice is a 404.
    for path in ["relates-to", "related-by"] {
        let path = format!("/v1/invoices/{invoice}/{path}");
        client
            .get(&format!("{path}?limit=501"))
            .expect_field_error("limit");
        client
            .get(&format!("{path}?cursor=zz"))
            .expect_field_error("cursor");
        let other = app.client_as(&app.create_user_in_new_org());
        other.get(&path).expect_not_found();
        client
            .get(&format!(
                "/v1/invoices/0190b5a4-0000-7000-8000-000000000000/{}",
                path.rsplit('/').next().unwrap_or_default()
            ))
            .expect_not_found();
    }
}
