//! The ingestion path against the shared CFDI samples: every order of invoices and
//! complements gives the same balances.

use super::*;
use crate::cfdi::{Cfdi, CfdiError};
use crate::db::invoices::{list, Filter};
use crate::db::{self, testing};
use crate::domain::extraction::Direction;
use crate::domain::listing::Metadata;
use crate::seal::Verifier;

const ORG: &str = "org-1";
const ENTITY: &str = "entity-1";
const OWNER: Owner = Owner {
    org_id: ORG,
    entity_id: ENTITY,
    batch: "batch-1",
};

fn db() -> db::Memory {
    let conn = db::Memory::new();
    testing::org_with_entity(&conn, ORG, ENTITY);
    conn
}

fn sample(name: &str) -> Vec<u8> {
    std::fs::read(format!(
        "{}/tests/fixtures/cfdi-samples/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .expect("sample")
}

/// A copy of a stamped sample with another UUID, currency and total (to pair
/// complements whose paid invoice is not in the sample set).
fn variant(name: &str, uuid: &str, currency: &str, total: &str) -> Vec<u8> {
    let xml = String::from_utf8(sample(name)).expect("utf8");
    let original = Cfdi::parse(xml.as_bytes()).expect("parses");
    let old_uuid = original.stamp.and_then(|s| s.uuid).expect("stamped");
    let xml = xml
        .replace(&old_uuid, uuid)
        .replace(&old_uuid.to_lowercase(), uuid)
        .replace("Moneda=\"MXN\"", &format!("Moneda=\"{currency}\""))
        .replace(
            &format!("Total=\"{}\"", original.total),
            &format!("Total=\"{total}\""),
        );
    xml.into_bytes()
}

fn field(conn: &db::Conn, uuid: &str, name: &str) -> Option<String> {
    testing::invoice_column(conn, uuid, name)
}

fn ingest_all(conn: &db::Conn, docs: &[Vec<u8>]) {
    for d in docs {
        ingest_invoice(conn, OWNER, Direction::Issued, None, d, None).expect("ingests");
    }
}

/// Stores `docs` as an extraction stores a batch: in one transaction, with what the
/// batch reads ahead of their UUIDs (`Ahead`); each document's outcome.
fn store_batch(conn: &db::Memory, docs: &[Vec<u8>]) -> Vec<Result<String, IngestError>> {
    let prepared: Vec<AnyPrepared> = docs
        .iter()
        .map(|d| prepare_any(d, None, Verifier::offline()).expect("prepares"))
        .collect();
    conn.tx(|tx| {
        let uuids = prepared.iter().filter_map(|p| p.uuid()).map(str::to_owned);
        let mut ahead = Ahead::read(tx, ENTITY, uuids)?;
        Ok(prepared
            .iter()
            .map(|p| p.store(tx, OWNER, Direction::Issued, None, &mut ahead))
            .collect())
    })
    .expect("tx")
}

/// Each order of `docs` stored one by one, and as one batch: the same balances.
fn every_order(docs: Vec<Vec<u8>>, check: impl Fn(&db::Memory)) {
    for order in permutations(docs) {
        let conn = db();
        ingest_all(&conn, &order);
        check(&conn);
        let conn = db();
        for stored in store_batch(&conn, &order) {
            stored.expect("stored in one batch");
        }
        check(&conn);
    }
}

/// Every permutation of `docs`.
fn permutations(docs: Vec<Vec<u8>>) -> Vec<Vec<Vec<u8>>> {
    if docs.len() <= 1 {
        return vec![docs];
    }
    let mut out = vec![];
    for i in 0..docs.len() {
        let mut rest = docs.clone();
        let first = rest.remove(i);
        for mut p in permutations(rest) {
            p.insert(0, first.clone());
            out.push(p);
        }
    }
    out
}

#[test]
fn scenario_1_in_both_orders_pays_the_ppd_invoice_in_full() {
    let uuid = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
    let docs = vec![
        sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml"),
        sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml"),
    ];
    every_order(docs, |conn| {
        assert_eq!(
            field(conn, uuid, "paid_amount").as_deref(),
            Some("17852.75")
        );
        assert_eq!(field(conn, uuid, "due_amount").as_deref(), Some("0.00"));
        assert!(field(conn, uuid, "fully_paid_at").is_some());
    });
}

#[test]
fn scenario_4_and_8_every_order_of_a_usd_invoice_and_its_complements() {
    let uuid = "1A3CD882-EB73-484A-6971-1C2D29C9F264";
    let invoice = variant(
        "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
        uuid,
        "USD",
        "5000.00",
    );
    let payment = sample("cfdi33-pago10-tfd-usd-docto-mxn-payment.xml");
    // A second complement naming the same invoice in MXN: a currency conflict.
    let conflicting = variant(
        "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
        "ABCDEF00-0000-4000-8000-000000000001",
        "MXN",
        "0",
    );
    let conflicting = String::from_utf8(conflicting)
        .expect("utf8")
        .replace("6d7434a6-e3f2-47ad-9e4c-08849946afa0", uuid)
        .replace("6D7434A6-E3F2-47AD-9E4C-08849946AFA0", uuid)
        .into_bytes();
    every_order(vec![invoice, payment, conflicting], |conn| {
        assert_eq!(field(conn, uuid, "paid_amount").as_deref(), Some("4000.00"));
        assert_eq!(field(conn, uuid, "due_amount").as_deref(), Some("1000.00"));
        let conflicts: bool = testing::invoice_column(conn, uuid, "payment_conflicts");
        assert!(conflicts);
    });
}

/// A batch naming a UUID twice, or a document and a retention under one UUID, sees
/// its own writes, not what it read ahead: the second is the same document, or is
/// refused, as when stored alone.
#[test]
fn a_batch_sees_what_it_stored_under_a_uuid_it_read_ahead() {
    let (complement, paid) = (
        sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml"),
        "6D7434A6-E3F2-47AD-9E4C-08849946AFA0",
    );
    let uuid = "5B64ADA3-AA4C-40B4-A2F5-572CED52BE31";
    let forged = with_uuid("cfdi40-ingreso-pue-tfd-ampersand-rfc.xml", uuid);
    let conn = db();
    let stored = store_batch(&conn, &[complement.clone(), complement.clone(), forged]);
    let id = stored[0].as_ref().expect("the complement").clone();
    assert_eq!(stored[1].as_ref().expect("the same document again"), &id);
    match &stored[2] {
        Err(IngestError::UuidTaken { uuid: u }) => assert_eq!(u, uuid),
        other => panic!("refused as taken, not {other:?}"),
    }
    assert_eq!(testing::count(&conn, "invoices"), 1);
    // The invoice it pays, later in a batch that read its entries ahead of it.
    let ppd = sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml");
    for stored in store_batch(&conn, &[ppd, complement]) {
        stored.expect("stored");
    }
    assert_eq!(
        field(&conn, paid, "paid_amount").as_deref(),
        Some("17852.75")
    );

    let retention = retention_sample("ret10-intereses-tfd10.xml");
    let ret_uuid = prepare_retention(&retention, None, Verifier::offline())
        .expect("prepares")
        .retention
        .uuid()
        .expect("stamped")
        .to_string();
    let invoice = variant(
        "cfdi40-ingreso-pue-real-tfd.xml",
        &ret_uuid,
        "MXN",
        "1000.00",
    );
    let conn = db();
    let stored = store_batch(&conn, &[retention, invoice]);
    stored[0].as_ref().expect("the retention");
    match &stored[1] {
        Err(IngestError::UuidTaken { uuid: u }) => assert_eq!(u, &ret_uuid),
        other => panic!("refused as taken, not {other:?}"),
    }
    assert_eq!(testing::count(&conn, "invoices"), 0);
}

#[test]
fn reingesting_is_idempotent_and_keeps_the_xml_byte_for_byte() {
    let conn = db();
    let xml = sample("cfdi33-pago10-duplicate-docto-bom.xml");
    let stamped = sample("cfdi40-ingreso-pue-real-tfd.xml");
    assert!(matches!(
        ingest_invoice(&conn, OWNER, Direction::Issued, None, &xml, None),
        Err(IngestError::Cfdi(CfdiError::Unstamped))
    ));
    let a = ingest_invoice(
        &conn,
        OWNER,
        Direction::Issued,
        None,
        &stamped,
        Some(b"%PDF-1.7"),
    )
    .expect("first");
    let b = ingest_invoice(&conn, OWNER, Direction::Issued, None, &stamped, None).expect("again");
    assert_eq!(a, b);
    let n = testing::count(&conn, "invoices");
    assert_eq!(n, 1);
    assert_eq!(
        db::documents::get(&conn, &a, "xml").expect("doc"),
        Some(stamped)
    );
    let has_pdf: bool = testing::invoice_column_by_id(&conn, &a, "has_pdf");
    assert!(has_pdf, "a later download without PDF keeps the stored one");
    assert_eq!(
        field(&conn, "C2832671-DA6D-11EF-A83D-00155D012007", "paid_amount").as_deref(),
        Some("1000.00")
    );
}

/// A listing's new entries are written many to a statement; one the page names again,
/// cancelled, is written before its cancellation applies.
#[test]
fn a_listing_page_writes_its_new_entries_together_and_a_repeated_one_in_order() {
    let conn = db();
    let entry = |i: usize, cancelled: bool| Metadata {
        uuid: format!("00000000-0000-4000-8000-{i:012x}"),
        issuer_tax_id: "AAA010101AAA".into(),
        receiver_tax_id: "KIJ0906199R1".into(),
        total: Some("100.50".parse().expect("dec")),
        invoice_type: Some(if i % 2 == 0 { "I" } else { "X" }.into()),
        cancelled,
        cancelled_at: cancelled.then(|| "2026-03-02T10:00:00".into()),
        ..Metadata::default()
    };
    let mut page: Vec<Metadata> = (0..300).map(|i| entry(i, false)).collect();
    page.insert(7, entry(1000, false));
    page.push(entry(1000, true));
    let pending = record_listing(&conn, OWNER, Direction::Issued, &page).expect("listing");
    assert_eq!(pending.len(), page.len(), "every entry still needs its XML");
    assert_eq!(testing::count(&conn, "invoices"), 301);
    let repeated = "00000000-0000-4000-8000-0000000003E8";
    assert_eq!(
        field(&conn, repeated, "status").as_deref(),
        Some("cancelled")
    );
    assert_eq!(
        field(&conn, repeated, "cancelled_at").as_deref(),
        Some("2026-03-02T10:00:00")
    );
    let last = "00000000-0000-4000-8000-00000000012A";
    assert_eq!(field(&conn, last, "total").as_deref(), Some("100.50"));
    assert_eq!(field(&conn, last, "type").as_deref(), Some("I"));
    // A type outside the SAT's catalog is not stored.
    assert_eq!(
        field(&conn, "00000000-0000-4000-8000-000000000129", "type"),
        None
    );
}

#[test]
fn metadata_only_invoices_are_invisible_until_processed_and_cancellations_apply() {
    let conn = db();
    let uuid = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
    let meta = Metadata {
        uuid: uuid.to_lowercase(),
        issuer_tax_id: "H&E951128469".into(),
        issuer_name: None,
        receiver_tax_id: "KIJ0906199R1".into(),
        receiver_name: None,
        issued_at: Some("2020-01-01T22:40:38".into()),
        certified_at: None,
        total: Some("17852.75".parse().expect("dec")),
        invoice_type: Some("I".into()),
        cancelled: false,
        cancelled_at: None,
    };
    assert_eq!(
        record_listing(&conn, OWNER, Direction::Issued, std::slice::from_ref(&meta))
            .expect("listing"),
        vec![0]
    );
    let visible = |c: &db::Conn| {
        list(c, ORG, &Filter::default(), None, 10)
            .expect("list")
            .len()
    };
    assert_eq!(visible(&conn), 0);
    let xml = sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml");
    ingest_invoice(&conn, OWNER, Direction::Issued, Some(&meta), &xml, None).expect("ingest");
    assert_eq!(visible(&conn), 1);
    assert!(
        record_listing(&conn, OWNER, Direction::Issued, std::slice::from_ref(&meta))
            .expect("again")
            .is_empty()
    );
    let cancelled = Metadata {
        cancelled: true,
        cancelled_at: Some("2020-01-03T10:00:00".into()),
        ..meta
    };
    record_listing(&conn, OWNER, Direction::Issued, &[cancelled]).expect("cancel");
    assert_eq!(field(&conn, uuid, "status").as_deref(), Some("cancelled"));
    assert_eq!(field(&conn, uuid, "due_amount").as_deref(), Some("0.00"));
    let wrong = meta_for("00000000-0000-0000-0000-000000000001");
    assert!(matches!(
        ingest_invoice(&conn, OWNER, Direction::Issued, Some(&wrong), &xml, None),
        Err(IngestError::UuidMismatch { .. })
    ));
}

fn meta_for(uuid: &str) -> Metadata {
    Metadata {
        uuid: uuid.into(),
        ..Metadata::default()
    }
}

#[test]
fn a_cancelled_complement_stops_counting() {
    let conn = db();
    let uuid = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
    ingest_all(
        &conn,
        &[
            sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml"),
            sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml"),
        ],
    );
    let payment = Cfdi::parse(&sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml")).expect("parse");
    let payment_uuid = payment.stamp.and_then(|s| s.uuid).expect("uuid");
    let cancel = Metadata {
        cancelled: true,
        ..meta_for(&payment_uuid)
    };
    record_listing(&conn, OWNER, Direction::Issued, &[cancel]).expect("cancel");
    assert_eq!(field(&conn, uuid, "paid_amount").as_deref(), Some("0.00"));
    assert_eq!(
        field(&conn, uuid, "due_amount").as_deref(),
        Some("17852.75")
    );
}

#[test]
fn every_parseable_stamped_sample_ingests_and_bad_ones_fail_cleanly() {
    let conn = db();
    // Two samples share a stamp UUID (an Ingreso and a Pago, EXPECTED.md): the second
    // one ingested is refused, the first kept.
    let mut taken = vec![];
    for (name, bytes) in crate::samples::xml_files("cfdi-samples") {
        let parsed = Cfdi::parse_stamped(&bytes);
        let ingested = ingest_invoice(&conn, OWNER, Direction::Received, None, &bytes, None);
        if let Err(IngestError::UuidTaken { uuid }) = &ingested {
            taken.push((name, uuid.clone()));
            continue;
        }
        assert_eq!(parsed.is_ok(), ingested.is_ok(), "{name}");
    }
    assert_eq!(
        taken,
        [(
            "cfdi33-pago10-tfd-usd-docto-mxn-payment.xml".to_string(),
            "9FB6ED1A-5F37-4FEF-980A-7F8C83B51894".to_string()
        )]
    );
    assert_eq!(
        field(&conn, "9FB6ED1A-5F37-4FEF-980A-7F8C83B51894", "type").as_deref(),
        Some("I")
    );
    let half = &sample("cfdi40-ingreso-pue-real-tfd.xml")[..500];
    assert!(matches!(
        ingest_invoice(&conn, OWNER, Direction::Issued, None, half, None),
        Err(IngestError::Cfdi(_))
    ));
}

/// A batch's events read their invoices together (`get_all`): each object is the one
/// `get` reads alone, relations and credits included; a metadata-only row and another
/// organization's read are absent.
#[test]
fn invoices_read_together_are_the_ones_read_alone() {
    let conn = db();
    for (_, bytes) in crate::samples::xml_files("cfdi-samples") {
        let _ = ingest_invoice(&conn, OWNER, Direction::Received, None, &bytes, None);
    }
    let listed = meta_for("00000000-0000-4000-8000-000000000001");
    record_listing(&conn, OWNER, Direction::Received, &[listed]).expect("listing");
    assert!(testing::count(&conn, "invoice_relations") > 0);
    let ids: Vec<String> = conn
        .all("SELECT id FROM invoices", db::sql::params![], |r| r.get(0))
        .expect("ids");
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    let together = db::invoices::get_all(&conn, ORG, &ids).expect("together");
    assert!(
        together.len() >= 10,
        "the samples that store: {}",
        together.len()
    );
    assert_eq!(
        together.len(),
        ids.len() - 1,
        "all but the metadata-only row"
    );
    for id in &ids {
        let alone = db::invoices::get(&conn, ORG, id).expect("alone");
        assert_eq!(together.get(*id), alone.as_ref());
    }
    let other = db::invoices::get_all(&conn, "another-org", &ids).expect("none");
    assert!(other.is_empty());
}

/// The events of `batch` once it ends: (event, invoice uuid, changes).
fn flush_events(conn: &db::Memory, batch: &str) -> Vec<(String, String, serde_json::Value)> {
    let before = testing::count(conn, "events");
    conn.tx(|tx| crate::events::documents::flush(tx, batch, i64::MAX))
        .expect("flush");
    testing::event_payloads(conn, before)
        .into_iter()
        .map(|p| {
            let p: serde_json::Value = serde_json::from_str(&p).expect("json");
            let uuid = p["object"]["uuid"].as_str().expect("uuid").to_string();
            (
                p["event"].as_str().expect("event").to_string(),
                uuid,
                p["changes"].clone(),
            )
        })
        .collect()
}

#[test]
fn each_batch_sends_one_event_per_invoice_it_changed_visibly() {
    let conn = db();
    let ppd = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
    let pay_xml = sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml");
    let pay_uuid = Cfdi::parse(&pay_xml)
        .expect("parse")
        .stamp
        .and_then(|s| s.uuid)
        .expect("uuid");
    let batch = |b| Owner { batch: b, ..OWNER };
    // Listed only: metadata is invisible, so nothing is announced.
    let listing = [meta_for(ppd), meta_for(&pay_uuid)];
    record_listing(&conn, batch("a"), Direction::Issued, &listing).expect("list");
    assert!(flush_events(&conn, "a").is_empty());
    // Processed: each appears once, as it is at the end (paid), however often touched.
    let ppd_xml = sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml");
    for (xml, meta) in [(&ppd_xml, &listing[0]), (&pay_xml, &listing[1])] {
        ingest_invoice(&conn, batch("b"), Direction::Issued, Some(meta), xml, None)
            .expect("ingest");
    }
    let created = flush_events(&conn, "b");
    let mut kinds: Vec<(&str, &str)> = created
        .iter()
        .map(|(e, u, _)| (e.as_str(), u.as_str()))
        .collect();
    kinds.sort();
    let mut expected = [
        ("invoice.created", ppd),
        ("invoice.created", pay_uuid.as_str()),
    ];
    expected.sort();
    assert_eq!(kinds, expected);
    // The complement is cancelled: its own update, and the paid invoice's balance.
    let cancel = Metadata {
        cancelled: true,
        cancelled_at: Some("2020-02-01T00:00:00".into()),
        ..meta_for(&pay_uuid)
    };
    record_listing(
        &conn,
        batch("c"),
        Direction::Issued,
        &[listing[0].clone(), cancel.clone()],
    )
    .expect("cancel");
    let updated = flush_events(&conn, "c");
    assert_eq!(updated.len(), 2, "{updated:?}");
    let of = |uuid: &str| &updated.iter().find(|(_, u, _)| u == uuid).expect("event").2;
    assert_eq!(of(&pay_uuid)["status"]["to"], "cancelled");
    let paid = of(ppd);
    assert_eq!(paid["paid_amount"]["to"].to_string(), "0.00");
    assert_eq!(paid["due_amount"]["from"].to_string(), "0.00");
    assert_eq!(paid["due_amount"]["to"].to_string(), "17852.75");
    assert!(paid.get("status").is_none(), "{paid}");
    // Seen again unchanged: nothing to say, and no marks are left behind.
    record_listing(
        &conn,
        batch("d"),
        Direction::Issued,
        &[listing[0].clone(), cancel],
    )
    .expect("again");
    assert!(flush_events(&conn, "d").is_empty());
    let marks = testing::count(&conn, "invoice_changes");
    assert_eq!(marks, 0);
}

/// `name` with its stamp's UUID replaced by `uuid` (in whichever case it is written).
fn with_uuid(name: &str, uuid: &str) -> Vec<u8> {
    let xml = String::from_utf8(sample(name)).expect("utf8");
    let old = Cfdi::parse(xml.as_bytes())
        .expect("parses")
        .stamp
        .and_then(|s| s.uuid)
        .expect("stamped");
    let forged = xml.replace(&old, uuid).replace(&old.to_lowercase(), uuid);
    assert_ne!(forged, xml, "{name}: the UUID replaced");
    forged.into_bytes()
}

#[test]
fn the_same_document_is_the_same_content_however_it_is_written() {
    let payroll = sample("cfdi40-nomina-compensacion-tfd.xml");
    let parse = |xml: &[u8]| Cfdi::parse_stamped(xml).expect("parses");
    let first = parse(&payroll);
    let text = String::from_utf8(payroll.clone()).expect("utf8");
    // Written out again: other whitespace between attributes, a trailing newline.
    let rewritten = format!("{}\n", text.replace("\" ", "\"\n  "));
    assert_ne!(rewritten.as_bytes(), &payroll[..]);
    assert!(same_document(&first, &parse(rewritten.as_bytes())));
    // Another document forged under its UUID: not the same.
    let uuid = first
        .stamp
        .as_ref()
        .and_then(|s| s.uuid.clone())
        .expect("uuid");
    let forged = parse(&with_uuid(
        "cfdi32-ingreso-tfd11-special-chars-rfc.xml",
        &uuid,
    ));
    assert_eq!(forged.uuid().ok(), first.uuid().ok());
    assert!(!same_document(&first, &forged));
    // Its own seal and stamp with one amount changed: not the same either.
    let total = format!("Total=\"{}\"", first.total);
    assert!(text.contains(&total));
    let edited = text.replacen(&total, "Total=\"1.00\"", 1);
    assert!(!same_document(&first, &parse(edited.as_bytes())));
}

#[test]
fn a_different_document_under_a_stored_uuid_is_refused_and_nothing_of_the_first_lost() {
    let conn = db();
    let (ppd, complement) = (
        sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml"),
        sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml"),
    );
    ingest_all(&conn, &[ppd, complement.clone()]);
    let paid = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
    let uuid = "5B64ADA3-AA4C-40B4-A2F5-572CED52BE31";
    let id = field(&conn, uuid, "id").expect("the complement");
    let row = || {
        let column = |name| testing::invoice_column_by_id::<String>(&conn, &id, name);
        (column("type"), column("total"), column("updated_at"))
    };
    let before = row();
    let entries = || db::payment_entries::related_uuids(&conn, &id).expect("entries");
    let entries_before = entries();
    assert!(!entries_before.is_empty());

    let forged = with_uuid("cfdi40-ingreso-pue-tfd-ampersand-rfc.xml", uuid);
    let refused = ingest_invoice(&conn, OWNER, Direction::Issued, None, &forged, None);
    match refused {
        Err(IngestError::UuidTaken { uuid: u }) => assert_eq!(u, uuid),
        other => panic!("refused, not {other:?}"),
    }
    assert_eq!(row(), before);
    assert_eq!(entries(), entries_before);
    assert_eq!(
        db::documents::get(&conn, &id, "xml").expect("xml"),
        Some(complement.clone())
    );
    assert_eq!(
        field(&conn, paid, "paid_amount").as_deref(),
        Some("17852.75")
    );
    let n = testing::count(&conn, "invoices");
    assert_eq!(n, 2);

    // The same bytes, and the same document written out again, are still accepted.
    let again = ingest_invoice(&conn, OWNER, Direction::Issued, None, &complement, None);
    assert_eq!(again.expect("the same bytes"), id);
    let rewritten = [&complement[..], b"\n"].concat();
    let again = ingest_invoice(&conn, OWNER, Direction::Issued, None, &rewritten, None);
    assert_eq!(again.expect("written out again"), id);
    assert_eq!(
        db::documents::get(&conn, &id, "xml").expect("xml"),
        Some(rewritten)
    );
    assert_eq!(
        field(&conn, paid, "paid_amount").as_deref(),
        Some("17852.75")
    );
}

fn retention_sample(name: &str) -> Vec<u8> {
    crate::samples::xml_files("retenciones-samples")
        .into_iter()
        .find_map(|(file, bytes)| (file == name).then_some(bytes))
        .expect("sample")
}

#[test]
fn a_retention_listing_keeps_its_status_for_the_xml_and_updates_a_stored_one_once() {
    let conn = db();
    let xml = retention_sample("ret10-intereses-tfd10.xml");
    let doc = prepare_retention(&xml, None, Verifier::offline()).expect("prepares");
    let uuid = "F3A703DE-0F27-498F-BC36-B60BBF0D60F7";
    let status = |conn: &db::Memory| {
        let id = conn
            .tx(|tx| db::retentions::find_listed(tx, ENTITY, uuid))
            .expect("find")
            .expect("stored");
        conn.tx(|tx| db::retentions::status(tx, &id))
            .expect("status")
    };
    let cancelled = Metadata {
        cancelled: true,
        cancelled_at: Some("2015-03-01T10:00:00".into()),
        ..meta_for(uuid)
    };
    // The listing first, saying cancelled: nothing to store yet, its XML still pending.
    let first = Owner {
        batch: "run-1",
        ..OWNER
    };
    let pending = conn
        .tx(|tx| record_retention_listing(tx, first, std::slice::from_ref(&cancelled)))
        .expect("listing");
    assert_eq!(pending, [0]);
    // The XML after it, without its listing entry: stored cancelled, one created event.
    conn.tx(|tx| {
        store_retention(tx, first, Direction::Issued, None, &doc)?;
        Ok(())
    })
    .expect("stores");
    assert_eq!(
        status(&conn),
        ("cancelled".into(), Some("2015-03-01T10:00:00".into()))
    );
    let events = flush_events(&conn, "run-1");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "retention.created");

    // A later run lists it active, then cancelled again: net nothing, no event.
    let second = Owner {
        batch: "run-2",
        ..OWNER
    };
    for m in [meta_for(uuid), cancelled.clone()] {
        let pending = conn
            .tx(|tx| record_retention_listing(tx, second, std::slice::from_ref(&m)))
            .expect("listing");
        assert!(pending.is_empty(), "stored: nothing pending");
    }
    assert!(flush_events(&conn, "run-2").is_empty());

    // Listed active (the cancellation reverted at the SAT): one retention.updated.
    let third = Owner {
        batch: "run-3",
        ..OWNER
    };
    conn.tx(|tx| record_retention_listing(tx, third, &[meta_for(uuid)]))
        .expect("listing");
    assert_eq!(status(&conn), ("active".into(), None));
    let events = flush_events(&conn, "run-3");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "retention.updated");
    assert_eq!(
        events[0].2,
        serde_json::json!({
            "status": {"from": "cancelled", "to": "active"},
            "cancelled_at": {"from": "2015-03-01T10:00:00", "to": null}
        })
    );
}

/// One stamp UUID names one document of an entity, whichever class it is: an invoice
/// and a retention under the same UUID, in either order, store the first and refuse
/// the second (and nothing of it is written).
#[test]
fn an_invoice_and_a_retention_never_share_a_uuid_in_either_order() {
    let retention_xml = retention_sample("ret10-intereses-tfd10.xml");
    let retention = prepare_retention(&retention_xml, None, Verifier::offline()).expect("prepares");
    let uuid = retention.retention.uuid().expect("stamped").to_string();
    let invoice_xml = variant("cfdi40-ingreso-pue-real-tfd.xml", &uuid, "MXN", "1000.00");
    let invoice = prepare(&invoice_xml, None, Verifier::offline()).expect("prepares");
    assert_eq!(invoice.cfdi.uuid().expect("stamped"), uuid);
    let store_invoice = |conn: &db::Memory| {
        conn.tx(|tx| {
            Ok(store_invoice(
                tx,
                OWNER,
                Direction::Issued,
                None,
                &invoice,
                &mut Ahead::none(),
            ))
        })
        .expect("tx")
    };
    let store_ret = |conn: &db::Memory| {
        conn.tx(|tx| {
            Ok(store_retention(
                tx,
                OWNER,
                Direction::Issued,
                None,
                &retention,
            ))
        })
        .expect("tx")
    };
    let taken = |r: Result<String, IngestError>| match r {
        Err(IngestError::UuidTaken { uuid: u }) => u,
        other => panic!("refused as taken, got {other:?}"),
    };

    let conn = db();
    store_invoice(&conn).expect("the invoice first");
    assert_eq!(taken(store_ret(&conn)), uuid);
    assert_eq!(testing::count(&conn, "retentions"), 0);
    assert_eq!(testing::count(&conn, "retention_documents"), 0);
    store_invoice(&conn).expect("the invoice again is itself");

    let conn = db();
    store_ret(&conn).expect("the retention first");
    assert_eq!(taken(store_invoice(&conn)), uuid);
    assert_eq!(testing::count(&conn, "invoices"), 0);
    assert_eq!(testing::count(&conn, "documents"), 0);
    store_ret(&conn).expect("the retention again is itself");
}
