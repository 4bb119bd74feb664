//! Invoices: the real CFDI samples imported through the CLI, then read over HTTP; and
//! metadata-only invoices of the sandbox.

use crate::common::app::{as_u64, TestApp};
use crate::common::invoices::*;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

/// One imported sample and the facts EXPECTED.md gives for it.
struct Sample {
    file: &'static str,
    uuid: &'static str,
    issued_at: &'static str,
    kind: &'static str,
    method: Option<&'static str>,
    issuer: &'static str,
    receiver: &'static str,
    total: &'static str,
    version: &'static str,
    /// (paid_amount, due_amount) with every sample of the set imported.
    paid_due: (&'static str, &'static str),
}

#[allow(clippy::too_many_arguments)]
const fn s(
    file: &'static str,
    uuid: &'static str,
    issued_at: &'static str,
    kind: &'static str,
    method: Option<&'static str>,
    parties: (&'static str, &'static str),
    total: &'static str,
    version: &'static str,
    paid_due: (&'static str, &'static str),
) -> Sample {
    Sample {
        file,
        uuid,
        issued_at,
        kind,
        method,
        issuer: parties.0,
        receiver: parties.1,
        total,
        version,
        paid_due,
    }
}

const PPD_UUID: &str = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
const PAYMENT_UUID: &str = "5B64ADA3-AA4C-40B4-A2F5-572CED52BE31";
const PPD_FILE: &str = "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml";
const PAYMENT_FILE: &str = "cfdi40-pago20-tfd-full-payment-of-ppd.xml";

/// Every stamped sample with a UUID of its own (the Pagos 1.0 sample sharing the UUID
/// of `cfdi33-ingreso-pue-tfd-leading-comment.xml` goes to another entity).
const SAMPLES_A: &[Sample] = &[
    s(
        "cfdi32-ingreso-real-legacy-tfd10.xml",
        "80824F3B-323E-407B-8F8E-40D83FE2E69F",
        "2017-03-21T08:17:31",
        "I",
        None,
        ("CTO021007DZ8", "XAXX010101000"),
        "4685.00",
        "3.2",
        ("4685.00", "0"),
    ),
    s(
        "cfdi32-ingreso-tfd11-special-chars-rfc.xml",
        "11111111-2222-3333-4444-000000000001",
        "2015-02-25T13:50:00",
        "I",
        None,
        ("AAA010101AAA", "E&Ñ831019M53"),
        "40600.00",
        "3.2",
        ("40600.00", "0"),
    ),
    s(
        "cfdi33-ingreso-ppd-multiples-tasas-tfd.xml",
        "1FBA4626-947B-49AC-BCD4-A4AF266B3DBF",
        "2017-11-24T15:19:24",
        "I",
        Some("PPD"),
        ("ACO560518KW7", "MEBS780711118"),
        "300.00",
        "3.3",
        ("0", "300.00"),
    ),
    s(
        "cfdi33-ingreso-pue-detallista-tfd.xml",
        "4C7A0582-5151-43B3-BA74-4E710479A1EE",
        "2019-01-22T16:13:19",
        "I",
        Some("PUE"),
        ("LAN8507268IA", "XAXX010101000"),
        "6.9",
        "3.3",
        ("6.9", "0"),
    ),
    s(
        "cfdi33-ingreso-pue-real-implocal-tfd.xml",
        "CEE4BE01-ADFA-4DEB-8421-ADD60F0BEDAC",
        "2018-01-12T08:15:01",
        "I",
        Some("PUE"),
        ("POT9207213D6", "DIM8701081LA"),
        "2010.01",
        "3.3",
        ("2010.01", "0"),
    ),
    s(
        "cfdi33-ingreso-pue-tfd-leading-comment.xml",
        "9FB6ED1A-5F37-4FEF-980A-7F8C83B51894",
        "2021-01-13T14:15:16",
        "I",
        Some("PUE"),
        ("EKU9003173C9", "COSC8001137NA"),
        "2382870",
        "3.3",
        ("2382870", "0"),
    ),
    s(
        "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
        "F08A8B8C-26DB-5385-86AF-2A1D354C5CC3",
        "2024-06-15T15:58:41",
        "I",
        Some("PPD"),
        ("EKU9003173C9", "ICV060329BY0"),
        "1191.95",
        "4.0",
        ("0", "1191.95"),
    ),
    s(
        PPD_FILE,
        PPD_UUID,
        "2020-01-01T22:40:38",
        "I",
        Some("PPD"),
        ("H&E951128469", "KIJ0906199R1"),
        "17852.75",
        "4.0",
        ("17852.75", "0"),
    ),
    s(
        "cfdi40-ingreso-pue-descuento-tfd.xml",
        "6F35D3B5-3651-5370-BC2C-14CDBE384CD7",
        "2025-02-19T08:32:29",
        "I",
        Some("PUE"),
        ("EKU9003173C9", "MCI7306249Y1"),
        "3327.01",
        "4.0",
        ("3327.01", "0"),
    ),
    s(
        "cfdi40-ingreso-pue-real-tfd.xml",
        "C2832671-DA6D-11EF-A83D-00155D012007",
        "2025-01-24T10:10:41",
        "I",
        Some("PUE"),
        ("ISD950921HE5", "COSC8001137NA"),
        "1000.00",
        "4.0",
        ("1000.00", "0"),
    ),
    s(
        "cfdi40-ingreso-pue-tfd-ampersand-rfc.xml",
        "6E546729-960A-4505-8E81-2D2952145BD9",
        "2020-01-01T22:40:38",
        "I",
        Some("PUE"),
        ("H&E951128469", "KIJ0906199R1"),
        "17852.75",
        "4.0",
        ("17852.75", "0"),
    ),
    s(
        "cfdi40-nomina-compensacion-tfd.xml",
        "22222222-2222-2222-2222-222222222222",
        "2026-01-21T16:42:35",
        "N",
        Some("PUE"),
        ("AAA010101AAA", "XAXX010101000"),
        "12574.40",
        "4.0",
        ("0", "0"),
    ),
    s(
        "cfdi40-nomina-tfd-zero-uuid.xml",
        "00000000-0000-0000-0000-000000000000",
        "2026-04-28T13:24:40",
        "N",
        None,
        ("AAA010101AAA", "XAXX010101000"),
        "4445.00",
        "4.0",
        ("0", "0"),
    ),
    s(
        PAYMENT_FILE,
        PAYMENT_UUID,
        "2020-01-01T22:40:38",
        "P",
        None,
        ("H&E951128469", "KIJ0906199R1"),
        "0",
        "4.0",
        ("0", "0"),
    ),
];

/// Imported into entity B as `received`: a Pagos 1.0 complement whose UUID is also the
/// UUID of an invoice of entity A.
const SAMPLE_B: &str = "cfdi33-pago10-tfd-usd-docto-mxn-payment.xml";
const SAMPLE_B_UUID: &str = "9FB6ED1A-5F37-4FEF-980A-7F8C83B51894";
const SAMPLE_B_RECEIVER: &str = "COSC8001137NA";

struct Fixture {
    app: TestApp,
    /// The entity of the samples issued by EKU9003173C9.
    entity_a: String,
    /// Issuer RFC -> entity, for every sample of SAMPLES_A (entity A among them).
    issuers: BTreeMap<String, String>,
    entity_b: String,
    /// file name -> invoice id, of the SAMPLES_A.
    ids: BTreeMap<String, String>,
    id_b: String,
}

impl Fixture {
    fn id(&self, file: &str) -> &str {
        self.ids
            .get(file)
            .unwrap_or_else(|| panic!("{file} was not imported"))
    }

    /// The entity a sample was imported into: its issuer's.
    fn entity_of(&self, sample: &Sample) -> &str {
        &self.issuers[sample.issuer]
    }
}

const ISSUER_A: &str = "EKU9003173C9";

/// A server with one entity per issuer of SAMPLES_A (each sample imported as issued
/// by its issuer; entity A is EKU9003173C9's) and entity B (one sample, received).
fn fixture() -> Fixture {
    let app = TestApp::spawn();
    let client = app.client();
    let entity_a = id_of(&client.create_entity(ISSUER_A, "sandbox1"));
    let entity_b = id_of(&client.create_entity(SAMPLE_B_RECEIVER, "sandbox1"));
    let mut issuers = BTreeMap::from([(ISSUER_A.to_string(), entity_a.clone())]);
    let names: Vec<&str> = SAMPLES_A.iter().map(|s| s.file).collect();
    let ids = import_by_issuer(&app, &mut issuers, &names);
    let id_b = import_samples(&app, &entity_b, "received", &[SAMPLE_B])
        .remove(SAMPLE_B)
        .expect("imported");
    Fixture {
        app,
        entity_a,
        issuers,
        entity_b,
        ids,
        id_b,
    }
}

fn uuid_set(list: &[Value]) -> BTreeSet<String> {
    list.iter()
        .map(|i| i["uuid"].as_str().expect("uuid").to_string())
        .collect()
}

fn expected_set<'a>(samples: impl Iterator<Item = &'a Sample>) -> BTreeSet<String> {
    samples.map(|s| s.uuid.to_string()).collect()
}

#[test]
fn list_is_newest_first_and_pages_of_two_cover_every_invoice_once() {
    let f = fixture();
    let client = f.app.client();

    let first = client.get("/v1/invoices").expect(200);
    let obj = first.as_object().expect("an object envelope");
    assert!(
        obj.contains_key("data") && obj.contains_key("next_cursor"),
        "{first}"
    );
    assert_eq!(first["data"].as_array().map(Vec::len), Some(15), "{first}");
    assert!(first["next_cursor"].is_null(), "{first}");

    let mut seen: Vec<Value> = vec![];
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let path = match &cursor {
            Some(c) => format!("/v1/invoices?limit=2&cursor={c}"),
            None => "/v1/invoices?limit=2".to_string(),
        };
        let page = client.get(&path).expect(200);
        let data = page["data"].as_array().expect("data").clone();
        seen.extend(data.iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(data.len(), 2, "a page before the last is full: {page}");
                cursor = Some(c.to_string());
            }
            None => {
                assert!(page["next_cursor"].is_null(), "{page}");
                assert!(!data.is_empty() && data.len() <= 2, "{page}");
                break;
            }
        }
    }
    assert_eq!(seen.len(), 15, "15 invoices over 8 pages");
    let ids: BTreeSet<&str> = seen.iter().filter_map(|i| i["id"].as_str()).collect();
    assert_eq!(ids.len(), 15, "no invoice twice");
    let mut expected_ids: BTreeSet<&str> = f.ids.values().map(String::as_str).collect();
    expected_ids.insert(&f.id_b);
    assert_eq!(ids, expected_ids, "none missing");

    // Newest issued_at first, then id (descending).
    let keys: Vec<(String, String)> = seen
        .iter()
        .map(|i| {
            (
                i["issued_at"].as_str().expect("issued_at").to_string(),
                i["id"].as_str().expect("id").to_string(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort_by(|a, b| b.cmp(a));
    assert_eq!(keys, sorted, "ordered by issued_at desc, then id");
    assert_eq!(keys[0].0, "2026-04-28T13:24:40");
    // Three samples share 2020-01-01T22:40:38: they come in id order within it.
    let tied = keys.iter().filter(|k| k.0 == "2020-01-01T22:40:38").count();
    assert_eq!(tied, 3);
    // The same walk through the harness, page size 3.
    assert_eq!(client.list_all("/v1/invoices", 3).len(), 15);
}

#[test]
fn list_filters_by_each_parameter() {
    let f = fixture();
    let client = f.app.client();
    let all_a = expected_set(SAMPLES_A.iter().filter(|s| s.issuer == ISSUER_A));
    let q = |query: &str| uuid_set(&invoices(&client, query));

    assert_eq!(q(&format!("entity_id={}", f.entity_a)), all_a);
    assert_eq!(
        q(&format!("entity_id={}", f.entity_b)),
        BTreeSet::from([SAMPLE_B_UUID.to_string()])
    );
    let by_b = invoices(&client, &format!("entity_id={}", f.entity_b));
    assert_eq!(by_b.len(), 1);
    assert_eq!(by_b[0]["id"], f.id_b.as_str());
    assert_eq!(by_b[0]["type"], "P");
    assert_eq!(by_b[0]["direction"], "received");

    assert_eq!(q("direction=issued"), expected_set(SAMPLES_A.iter()));
    assert_eq!(invoices(&client, "direction=received").len(), 1);
    assert_eq!(
        invoices(&client, "direction=received")[0]["id"],
        f.id_b.as_str()
    );

    for kind in ["I", "E", "T", "N", "P"] {
        let mut expected = expected_set(SAMPLES_A.iter().filter(|s| s.kind == kind));
        if kind == "P" {
            expected.insert(SAMPLE_B_UUID.to_string());
        }
        assert_eq!(q(&format!("type={kind}")), expected, "type={kind}");
        let listed = invoices(&client, &format!("type={kind}"));
        assert!(listed.iter().all(|i| i["type"] == kind), "type={kind}");
    }

    assert_eq!(invoices(&client, "status=active").len(), 15);
    assert!(invoices(&client, "status=cancelled").is_empty());

    for method in ["PUE", "PPD"] {
        let expected = expected_set(SAMPLES_A.iter().filter(|s| s.method == Some(method)));
        assert_eq!(
            q(&format!("payment_method={method}")),
            expected,
            "payment_method={method}"
        );
    }

    // Tax ids: exact, case-insensitive, `&` URL-encoded.
    let eku = expected_set(SAMPLES_A.iter().filter(|s| s.issuer == "EKU9003173C9"));
    assert_eq!(eku.len(), 3);
    assert_eq!(q("issuer_tax_id=EKU9003173C9"), eku);
    assert_eq!(q("issuer_tax_id=eku9003173c9"), eku);
    let he = expected_set(SAMPLES_A.iter().filter(|s| s.issuer == "H&E951128469"));
    assert_eq!(he.len(), 3);
    assert_eq!(q("issuer_tax_id=H%26E951128469"), he);
    assert!(q("issuer_tax_id=EKU9003173C").is_empty(), "no prefix match");
    let generic = expected_set(SAMPLES_A.iter().filter(|s| s.receiver == "XAXX010101000"));
    assert_eq!(generic.len(), 4);
    assert_eq!(q("receiver_tax_id=XAXX010101000"), generic);
    assert_eq!(
        q("receiver_tax_id=COSC8001137NA"),
        expected_set(SAMPLES_A.iter().filter(|s| s.receiver == "COSC8001137NA"))
            .union(&BTreeSet::from([SAMPLE_B_UUID.to_string()]))
            .cloned()
            .collect::<BTreeSet<_>>()
    );

    // uuid: lower-case input matches; the same UUID in two entities gives both.
    let pue = "C2832671-DA6D-11EF-A83D-00155D012007";
    let listed = invoices(&client, &format!("uuid={}", pue.to_lowercase()));
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["uuid"], pue);
    assert_eq!(
        listed[0]["id"],
        f.id("cfdi40-ingreso-pue-real-tfd.xml"),
        "uuid filter"
    );
    assert_eq!(
        invoices(&client, &format!("uuid={}", SAMPLE_B_UUID.to_lowercase())).len(),
        2
    );
    assert_eq!(
        invoices(
            &client,
            &format!("uuid={SAMPLE_B_UUID}&entity_id={}", f.entity_b)
        )
        .len(),
        1
    );
    assert!(invoices(&client, "uuid=00000000-0000-0000-0000-00000000000F").is_empty());

    // issued_from / issued_to: dates, inclusive at both ends.
    let in_range = |from: &str, to: &str| {
        expected_set(
            SAMPLES_A
                .iter()
                .filter(|s| &s.issued_at[..10] >= from && &s.issued_at[..10] <= to),
        )
    };
    let day = q("issued_from=2020-01-01&issued_to=2020-01-01");
    assert_eq!(day.len(), 3, "the three samples of 2020-01-01: {day:?}");
    assert_eq!(day, in_range("2020-01-01", "2020-01-01"));
    assert_eq!(
        q("issued_from=2025-01-24"),
        in_range("2025-01-24", "9999-12-31")
    );
    assert_eq!(
        q("issued_from=2025-01-25"),
        in_range("2025-01-25", "9999-12-31")
    );
    let until = in_range("0000-01-01", "2019-01-22");
    assert!(until.contains("4C7A0582-5151-43B3-BA74-4E710479A1EE"));
    assert_eq!(q("issued_to=2019-01-22"), until);
    assert_eq!(
        q("issued_to=2019-01-21"),
        in_range("0000-01-01", "2019-01-21")
    );
    // RFC 3339 timestamps are accepted, their date part used.
    assert_eq!(
        q("issued_from=2020-01-01T23:59:59Z&issued_to=2020-01-01T00:00:00Z"),
        day
    );
    assert_eq!(
        q("issued_from=2017-01-01&issued_to=2019-12-31"),
        in_range("2017-01-01", "2019-12-31")
            .union(&BTreeSet::from([SAMPLE_B_UUID.to_string()]))
            .cloned()
            .collect()
    );

    // outstanding=true: due_amount > 0 (the two PPD invoices without complements).
    let outstanding = invoices(&client, "outstanding=true");
    assert_eq!(
        uuid_set(&outstanding),
        BTreeSet::from([
            "1FBA4626-947B-49AC-BCD4-A4AF266B3DBF".to_string(),
            "F08A8B8C-26DB-5385-86AF-2A1D354C5CC3".to_string()
        ])
    );
    assert!(outstanding
        .iter()
        .all(|i| dec(&i["due_amount"]) > rust_decimal::Decimal::ZERO));
    assert_eq!(
        uuid_set(&invoices(&client, "payment_method=PPD&outstanding=true")),
        uuid_set(&outstanding)
    );

    // Filters combine.
    assert_eq!(
        q(&format!(
            "entity_id={}&type=I&payment_method=PUE&issuer_tax_id=EKU9003173C9&issued_from=2025-01-01",
            f.entity_a
        )),
        BTreeSet::from(["6F35D3B5-3651-5370-BC2C-14CDBE384CD7".to_string()])
    );
}

#[test]
fn list_answers_422_on_the_parameter_name_when_a_filter_value_is_malformed() {
    let f = fixture();
    let client = f.app.client();
    for (query, field) in [
        ("issued_from=2026-02-30", "issued_from"),
        ("issued_from=yesterday", "issued_from"),
        ("issued_to=2026-13-01", "issued_to"),
        ("type=X", "type"),
        ("type=i", "type"),
        ("direction=x", "direction"),
        ("status=void", "status"),
        ("payment_method=PUX", "payment_method"),
        ("entity_id=not-uuid", "entity_id"),
        ("outstanding=maybe", "outstanding"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
        ("limit=ten", "limit"),
        ("cursor=garbage", "cursor"),
    ] {
        let resp = client.get(&format!("/v1/invoices?{query}"));
        assert_eq!(resp.status, 422, "{query}: {}", resp.text());
        resp.expect_field_error(field);
    }
    // Several at once: one error per parameter.
    let body = client
        .get("/v1/invoices?type=X&direction=x&limit=0")
        .expect_error(422);
    for field in ["type", "direction", "limit"] {
        assert!(body["errors"][field].is_array(), "{field}: {body}");
    }
    // Unknown parameters are ignored; limit 500 is allowed.
    assert_eq!(
        client.get("/v1/invoices?color=blue&limit=500").expect(200)["data"]
            .as_array()
            .map(Vec::len),
        Some(15)
    );
}

#[test]
fn list_is_empty_when_filtered_by_an_entity_of_another_organization() {
    let f = fixture();
    let other = f.app.create_user_in_new_org();
    let client_b = f.app.client_as(&other);
    let list = client_b
        .get(&format!("/v1/invoices?entity_id={}", f.entity_a))
        .expect(200);
    assert_eq!(list["data"], serde_json::json!([]), "{list}");
    assert!(list["next_cursor"].is_null());
    assert_eq!(
        client_b.get("/v1/invoices").expect(200)["data"],
        serde_json::json!([])
    );
    assert_eq!(
        client_b
            .get(&format!("/v1/invoices?uuid={PPD_UUID}"))
            .expect(200)["data"],
        serde_json::json!([])
    );
}

const INVOICE_FIELDS: &[&str] = &[
    "id",
    "entity_id",
    "uuid",
    "direction",
    "type",
    "version",
    "series",
    "folio",
    "issued_at",
    "certified_at",
    "issuer",
    "receiver",
    "currency",
    "exchange_rate",
    "subtotal",
    "discount",
    "taxes_transferred",
    "taxes_withheld",
    "total",
    "payment_method",
    "payment_form",
    "status",
    "cancelled_at",
    "has_pdf",
    "paid_amount",
    "due_amount",
    "last_payment_date",
    "fully_paid_at",
    "payment_conflicts",
    "created_at",
    "updated_at",
];

#[track_caller]
fn assert_invoice_shape(inv: &Value) {
    let obj = inv.as_object().expect("an invoice object");
    for field in INVOICE_FIELDS {
        assert!(obj.contains_key(*field), "invoice lacks {field:?}: {inv}");
    }
    for (party, fields) in [
        ("issuer", ["tax_id", "name", "tax_regime"]),
        ("receiver", ["tax_id", "name", "cfdi_use"]),
    ] {
        let p = inv[party].as_object().expect("party object");
        for field in fields {
            assert!(p.contains_key(field), "{party} lacks {field}: {inv}");
        }
    }
    for money in [
        "subtotal",
        "total",
        "paid_amount",
        "due_amount",
        "discount",
        "exchange_rate",
        "taxes_transferred",
        "taxes_withheld",
    ] {
        assert!(
            inv[money].is_number() || inv[money].is_null(),
            "{money} is a number: {inv}"
        );
    }
    assert!(inv["has_pdf"].is_boolean() && inv["payment_conflicts"].is_boolean());
    assert_timestamp(&inv["created_at"], "created_at");
    assert_timestamp(&inv["updated_at"], "updated_at");
    assert!(
        matches!(inv["status"].as_str(), Some("active" | "cancelled")),
        "{inv}"
    );
}

#[test]
fn get_returns_every_documented_field_and_the_facts_of_each_sample() {
    let f = fixture();
    let client = f.app.client();
    for sample in SAMPLES_A {
        let id = f.id(sample.file);
        let inv = client.get(&format!("/v1/invoices/{id}")).expect(200);
        assert_invoice_shape(&inv);
        let what = sample.file;
        assert_eq!(inv["id"], id, "{what}");
        assert_eq!(inv["entity_id"], f.entity_of(sample), "{what}");
        assert_eq!(inv["uuid"], sample.uuid, "{what}: upper-case UUID");
        assert_eq!(inv["direction"], "issued", "{what}");
        assert_eq!(inv["type"], sample.kind, "{what}");
        assert_eq!(inv["version"], sample.version, "{what}");
        assert_eq!(inv["issued_at"], sample.issued_at, "{what}");
        assert_eq!(inv["issuer"]["tax_id"], sample.issuer, "{what}");
        assert_eq!(inv["receiver"]["tax_id"], sample.receiver, "{what}");
        assert_eq!(
            inv["payment_method"].as_str(),
            sample.method,
            "{what}: payment_method"
        );
        assert_eq!(inv["total"].to_string(), sample.total, "{what}: total");
        assert_amount(
            &inv["paid_amount"],
            sample.paid_due.0,
            &format!("{what}: paid"),
        );
        assert_amount(
            &inv["due_amount"],
            sample.paid_due.1,
            &format!("{what}: due"),
        );
        assert_eq!(inv["status"], "active", "{what}");
        assert!(inv["cancelled_at"].is_null(), "{what}");
        assert_eq!(inv["has_pdf"], false, "{what}: imported without PDF");
        assert!(inv["items"].is_array(), "{what}: items: {inv}");
        // The list shows the same invoice.
        let listed = client
            .get(&format!(
                "/v1/invoices?uuid={}&entity_id={}",
                sample.uuid,
                f.entity_of(sample)
            ))
            .expect(200);
        let listed = &listed["data"][0];
        for field in INVOICE_FIELDS {
            if *field != "updated_at" {
                assert_eq!(listed[*field], inv[*field], "{what}: list vs get {field}");
            }
        }
    }

    // cfdi40-ingreso-pue-real-tfd, field by field.
    let inv = client
        .get(&format!(
            "/v1/invoices/{}",
            f.id("cfdi40-ingreso-pue-real-tfd.xml")
        ))
        .expect(200);
    assert_eq!(inv["total"].to_string(), "1000.00");
    assert_eq!(inv["subtotal"].to_string(), "862.07");
    assert_eq!(inv["taxes_transferred"].to_string(), "137.93");
    assert!(inv["taxes_withheld"].is_null() || dec(&inv["taxes_withheld"]).is_zero());
    assert!(inv["discount"].is_null(), "no Descuento: {inv}");
    assert_eq!(inv["paid_amount"].to_string(), "1000.00", "paid = total");
    assert_amount(&inv["due_amount"], "0", "due");
    assert_eq!(inv["issuer"]["tax_id"], "ISD950921HE5");
    assert_eq!(inv["issuer"]["name"], "PASE, SERVICIOS ELECTRONICOS");
    assert_eq!(inv["receiver"]["tax_id"], "COSC8001137NA");
    assert_eq!(inv["receiver"]["name"], "CARLOS CORTES SOTO");
    assert_eq!(inv["version"], "4.0");
    assert_eq!(inv["series"], "O");
    assert_eq!(inv["folio"], "52375239");
    assert_eq!(inv["certified_at"], "2025-01-24T10:10:42");
    assert_eq!(inv["currency"], "MXN");
    assert_eq!(inv["payment_method"], "PUE");
    assert_eq!(inv["payment_form"], "04");
    assert!(inv["fully_paid_at"].is_null() && inv["last_payment_date"].is_null());
    assert_eq!(inv["payment_conflicts"], false);
    let items = inv["items"].as_array().expect("items");
    assert_eq!(items.len(), 2, "{inv}");
    for item in items {
        for field in [
            "product_code",
            "description",
            "quantity",
            "unit",
            "unit_price",
            "discount",
            "amount",
        ] {
            assert!(
                item.as_object().is_some_and(|o| o.contains_key(field)),
                "item lacks {field}: {item}"
            );
        }
    }
    assert_eq!(items[1]["description"], "RECARGA IDMX");

    // A discount and one decimal.
    let inv = client
        .get(&format!(
            "/v1/invoices/{}",
            f.id("cfdi40-ingreso-pue-descuento-tfd.xml")
        ))
        .expect(200);
    assert_eq!(inv["subtotal"].to_string(), "3824.15");
    assert_eq!(inv["discount"].to_string(), "956.04");
    assert_eq!(inv["taxes_transferred"].to_string(), "458.90");
    assert_eq!(inv["total"].to_string(), "3327.01");
    assert!(inv["series"].is_null() && inv["folio"].is_null(), "{inv}");
    let inv = client
        .get(&format!(
            "/v1/invoices/{}",
            f.id("cfdi33-ingreso-pue-detallista-tfd.xml")
        ))
        .expect(200);
    assert_eq!(inv["total"].to_string(), "6.9");
    assert_eq!(inv["paid_amount"].to_string(), "6.9");
    assert!(inv["issuer"]["name"].is_null(), "no Emisor Nombre: {inv}");
    // CFDI 3.2: no PUE/PPD, paid in full.
    let inv = client
        .get(&format!(
            "/v1/invoices/{}",
            f.id("cfdi32-ingreso-real-legacy-tfd10.xml")
        ))
        .expect(200);
    assert_eq!(inv["version"], "3.2");
    assert_eq!(inv["type"], "I");
    assert!(inv["payment_method"].is_null(), "{inv}");
    assert_eq!(inv["paid_amount"].to_string(), "4685.00");
    assert_eq!(inv["subtotal"].to_string(), "4038.79");
    // The implocal hotel invoice.
    let inv = client
        .get(&format!(
            "/v1/invoices/{}",
            f.id("cfdi33-ingreso-pue-real-implocal-tfd.xml")
        ))
        .expect(200);
    assert_eq!(inv["subtotal"].to_string(), "1709.12");
    assert_eq!(inv["total"].to_string(), "2010.01");
    assert_eq!(inv["certified_at"], "2018-01-12T08:17:54");
    assert_eq!(inv["issuer"]["name"], "PROMOTORA OTIR SA DE CV");
}

#[test]
fn get_of_a_payment_complement_has_payments_with_related_documents() {
    let f = fixture();
    let client = f.app.client();
    let inv = client
        .get(&format!("/v1/invoices/{}", f.id(PAYMENT_FILE)))
        .expect(200);
    assert_invoice_shape(&inv);
    assert_eq!(inv["type"], "P");
    assert_eq!(inv["uuid"], PAYMENT_UUID);
    assert_amount(&inv["paid_amount"], "0", "P pays nothing itself");
    assert_amount(&inv["due_amount"], "0", "P owes nothing");
    assert!(inv["items"].is_array());
    let payments = inv["payments"].as_array().expect("payments on a P");
    assert_eq!(payments.len(), 1, "{inv}");
    let p = &payments[0];
    for field in [
        "paid_at",
        "payment_form",
        "currency",
        "exchange_rate",
        "amount",
        "related_documents",
    ] {
        assert!(
            p.as_object().is_some_and(|o| o.contains_key(field)),
            "payment lacks {field}: {p}"
        );
    }
    assert_eq!(p["paid_at"], "2020-01-02T22:40:38");
    assert_eq!(p["payment_form"], "03");
    assert_eq!(p["currency"], "MXN");
    let docs = p["related_documents"]
        .as_array()
        .expect("related_documents");
    assert_eq!(docs.len(), 1);
    let d = &docs[0];
    for field in [
        "uuid",
        "installment",
        "previous_balance",
        "amount_paid",
        "outstanding_balance",
        "currency",
        "equivalence",
    ] {
        assert!(
            d.as_object().is_some_and(|o| o.contains_key(field)),
            "related document lacks {field}: {d}"
        );
    }
    assert_eq!(d["uuid"], PPD_UUID, "upper-cased IdDocumento");
    assert_eq!(as_u64(&d["installment"]), 1);
    assert_eq!(d["currency"], "MXN");

    // An invoice (not P) has no payments.
    let inv = client
        .get(&format!("/v1/invoices/{}", f.id(PPD_FILE)))
        .expect(200);
    assert!(
        inv.get("payments").is_none() || inv["payments"].is_null(),
        "only P invoices list payments: {inv}"
    );
}

/// API.md: "Amounts are JSON numbers" also inside `items` and `payments`.
#[test]
fn amounts_inside_items_and_payments_are_json_numbers() {
    let f = fixture();
    let client = f.app.client();
    let mut problems: Vec<String> = vec![];
    let mut check = |where_: &str, obj: &Value, fields: &[&str]| {
        for field in fields {
            let v = &obj[*field];
            if !(v.is_number() || v.is_null()) {
                problems.push(format!("{where_}.{field} = {v}"));
            }
        }
    };
    let inv = client
        .get(&format!(
            "/v1/invoices/{}",
            f.id("cfdi40-ingreso-pue-real-tfd.xml")
        ))
        .expect(200);
    for item in inv["items"].as_array().expect("items") {
        check("items[]", item, &["unit_price", "amount", "discount"]);
    }
    let inv = client
        .get(&format!("/v1/invoices/{}", f.id(PAYMENT_FILE)))
        .expect(200);
    let p = &inv["payments"][0];
    check("payments[]", p, &["amount", "exchange_rate"]);
    let d = &p["related_documents"][0];
    check(
        "payments[].related_documents[]",
        d,
        &[
            "previous_balance",
            "amount_paid",
            "outstanding_balance",
            "equivalence",
        ],
    );
    assert!(
        problems.is_empty(),
        "amounts must be JSON numbers (API.md Conventions), got strings: {problems:#?}"
    );
    assert_eq!(p["amount"].to_string(), "17852.75");
    assert_eq!(d["amount_paid"].to_string(), "17852.75");
    assert_eq!(d["outstanding_balance"].to_string(), "0.00");
}

#[track_caller]
fn assert_scenario_1(client: &crate::common::app::Client, ppd_id: &str, payment_id: &str) {
    let inv = client.get(&format!("/v1/invoices/{ppd_id}")).expect(200);
    assert_eq!(inv["uuid"], PPD_UUID);
    assert_eq!(inv["total"].to_string(), "17852.75");
    assert_eq!(inv["paid_amount"].to_string(), "17852.75", "{inv}");
    assert_eq!(inv["due_amount"].to_string(), "0.00", "{inv}");
    assert_eq!(inv["fully_paid_at"], "2020-01-02T22:40:38", "{inv}");
    assert_eq!(inv["last_payment_date"], "2020-01-02T22:40:38", "{inv}");
    assert_eq!(inv["payment_conflicts"], false);

    let list = client
        .get(&format!("/v1/invoices/{ppd_id}/payments"))
        .expect(200);
    assert!(list["next_cursor"].is_null(), "{list}");
    let entries = list["data"].as_array().expect("data");
    assert_eq!(entries.len(), 1, "{list}");
    let e = &entries[0];
    assert_eq!(e["payment_invoice_id"], payment_id);
    assert_eq!(e["payment_uuid"], PAYMENT_UUID);
    assert_eq!(e["paid_at"], "2020-01-02T22:40:38");
    assert_eq!(as_u64(&e["installment"]), 1);
    assert_eq!(e["previous_balance"].to_string(), "17852.75");
    assert_eq!(e["amount_paid"].to_string(), "17852.75");
    assert_eq!(e["outstanding_balance"].to_string(), "0.00");
    assert_eq!(e["currency"], "MXN");
    assert!(e.as_object().is_some_and(|o| o.contains_key("equivalence")));
    assert_eq!(e["cancelled"], false);

    // The complement itself is paid nothing and owes nothing, and pays no one of its own.
    let p = client
        .get(&format!("/v1/invoices/{payment_id}"))
        .expect(200);
    assert_eq!(p["type"], "P");
    assert_amount(&p["due_amount"], "0", "P due");
    let own = client
        .get(&format!("/v1/invoices/{payment_id}/payments"))
        .expect(200);
    assert_eq!(own["data"], serde_json::json!([]), "{own}");
}

#[test]
fn ppd_invoice_is_paid_in_full_whether_its_complement_is_imported_before_or_after_it() {
    let app = TestApp::spawn();
    let client = app.client();
    // Invoice first, then the complement (two separate imports).
    let first = id_of(&client.create_entity("H&E951128469", "sandbox1"));
    let ppd = import_samples(&app, &first, "issued", &[PPD_FILE]).remove(PPD_FILE);
    let ppd = ppd.expect("imported");
    let before = client.get(&format!("/v1/invoices/{ppd}")).expect(200);
    assert_amount(&before["paid_amount"], "0", "no complement yet");
    assert_eq!(before["due_amount"].to_string(), "17852.75");
    assert!(before["fully_paid_at"].is_null());
    let outstanding = invoices(&client, &format!("entity_id={first}&outstanding=true"));
    assert_eq!(outstanding.len(), 1);
    let payment = import_samples(&app, &first, "issued", &[PAYMENT_FILE])
        .remove(PAYMENT_FILE)
        .expect("imported");
    assert_scenario_1(&client, &ppd, &payment);
    assert!(invoices(&client, &format!("entity_id={first}&outstanding=true")).is_empty());

    // Complement first (its invoice absent: stored as it is), then the invoice, at
    // the receiver of both.
    let second = id_of(&client.create_entity("KIJ0906199R1", "sandbox1"));
    let payment = import_samples(&app, &second, "received", &[PAYMENT_FILE])
        .remove(PAYMENT_FILE)
        .expect("imported");
    assert_eq!(invoices(&client, &format!("entity_id={second}")).len(), 1);
    let ppd = import_samples(&app, &second, "received", &[PPD_FILE])
        .remove(PPD_FILE)
        .expect("imported");
    assert_scenario_1(&client, &ppd, &payment);

    // Importing both again changes nothing (no duplicate, same ids, same amounts).
    let again = import_samples(&app, &second, "received", &[PAYMENT_FILE, PPD_FILE]);
    assert_eq!(again.get(PPD_FILE), Some(&ppd));
    assert_eq!(again.get(PAYMENT_FILE), Some(&payment));
    assert_eq!(invoices(&client, &format!("entity_id={second}")).len(), 2);
    assert_scenario_1(&client, &ppd, &payment);
}

#[test]
fn ppd_invoice_without_complement_owes_its_total() {
    let app = TestApp::spawn();
    let client = app.client();
    let ids = import_by_issuer(
        &app,
        &mut BTreeMap::new(),
        &[
            "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
            "cfdi33-ingreso-ppd-multiples-tasas-tfd.xml",
        ],
    );
    let inv = client
        .get(&format!(
            "/v1/invoices/{}",
            ids["cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"]
        ))
        .expect(200);
    assert_eq!(inv["payment_method"], "PPD");
    assert_eq!(inv["total"].to_string(), "1191.95");
    assert_amount(&inv["paid_amount"], "0", "paid");
    assert_eq!(inv["due_amount"].to_string(), "1191.95");
    assert_eq!(inv["subtotal"].to_string(), "1250.30");
    assert!(inv["fully_paid_at"].is_null() && inv["last_payment_date"].is_null());
    let payments = client
        .get(&format!(
            "/v1/invoices/{}/payments",
            ids["cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml"]
        ))
        .expect(200);
    assert_eq!(payments["data"], serde_json::json!([]));
    let inv = client
        .get(&format!(
            "/v1/invoices/{}",
            ids["cfdi33-ingreso-ppd-multiples-tasas-tfd.xml"]
        ))
        .expect(200);
    assert_amount(&inv["paid_amount"], "0", "paid");
    assert_eq!(inv["due_amount"].to_string(), "300.00");
}

#[test]
fn another_organization_gets_404_on_the_invoice_its_document_and_its_payments() {
    let f = fixture();
    let other = f.app.create_user_in_new_org();
    let client_b = f.app.client_as(&other);
    let owner = f.app.client();
    let id = f.id(PPD_FILE);
    for path in [
        format!("/v1/invoices/{id}"),
        format!("/v1/invoices/{id}/cfdi"),
        format!("/v1/invoices/{id}/cfdi?format=xml"),
        format!("/v1/invoices/{id}/cfdi?format=pdf"),
        format!("/v1/invoices/{id}/payments"),
    ] {
        client_b.get(&path).expect_not_found();
        assert_ne!(owner.get(&path).status, 401, "{path}");
    }
    owner.get(&format!("/v1/invoices/{id}")).expect(200);
    owner
        .get(&format!("/v1/invoices/{id}/payments"))
        .expect(200);
    // Not a UUID, or a UUID of nothing: 404 for the owner too.
    for bad in ["not-a-uuid", "123", "00000000-0000-0000-0000-000000000000"] {
        owner.get(&format!("/v1/invoices/{bad}")).expect_not_found();
        owner
            .get(&format!("/v1/invoices/{bad}/cfdi"))
            .expect_not_found();
        owner
            .get(&format!("/v1/invoices/{bad}/payments"))
            .expect_not_found();
    }
    // Without credentials: 401 before anything else.
    f.app
        .anonymous()
        .get(&format!("/v1/invoices/{id}"))
        .expect_unauthorized(crate::common::app::MISSING);
}

#[test]
fn metadata_only_invoice_is_invisible_until_a_later_extraction_gets_its_xml() {
    let app = TestApp::spawn();
    let client = app.client();
    let tax_id = "EKU9003173C9";
    let entity = id_of(&valid_entity(&client, tax_id, "sandbox1"));
    let (from, to) = month(2025, 3);
    let expected = sandbox(tax_id, "issued", from, to);
    let held: Vec<_> = expected.iter().filter(|i| i.xml_withheld_first).collect();
    assert!(!held.is_empty(), "the month has withheld XML");

    let first = extract(&client, &entity, from, to, "issued");
    assert_eq!(found(&first) as usize, expected.len());
    assert_eq!(processed(&first) as usize, expected.len() - held.len());
    let listed = invoices_by_uuid(&client, &entity);
    assert_eq!(listed.len(), expected.len() - held.len());
    for inv in &held {
        assert!(
            !listed.contains_key(&inv.uuid),
            "{} is metadata-only: not listed",
            inv.uuid
        );
        assert!(invoice_by_uuid(&client, &inv.uuid).is_none());
        assert!(invoice_by_uuid(&client, &inv.uuid.to_lowercase()).is_none());
    }
    // Not counted by any filter either.
    let kinds: usize = ["I", "E", "T", "N", "P"]
        .iter()
        .map(|k| invoices(&client, &format!("entity_id={entity}&type={k}")).len())
        .sum();
    assert_eq!(kinds, expected.len() - held.len());

    let second = extract(&client, &entity, from, to, "issued");
    assert_eq!(found(&second) as usize, expected.len());
    let listed = invoices_by_uuid(&client, &entity);
    assert_eq!(listed.len(), expected.len());
    for inv in &held {
        let shown = invoice_by_uuid(&client, &inv.uuid)
            .unwrap_or_else(|| panic!("{} is listed after the second run", inv.uuid));
        let id = id_of(&shown);
        let read = client.get(&format!("/v1/invoices/{id}")).expect(200);
        assert_eq!(read["uuid"], inv.uuid.as_str());
        assert_eq!(
            read["type"].as_str(),
            Some(inv.invoice_type.to_string().as_str())
        );
        assert_eq!(dec(&read["total"]), inv.total);
        let xml = client.request(
            "GET",
            &format!("/v1/invoices/{id}/cfdi"),
            None,
            &[("Accept", "application/xml")],
        );
        assert_eq!(xml.status, 200);
        assert!(xml.body.starts_with(b"<?xml") || xml.body.starts_with(b"<"));
    }
}

#[test]
fn deleting_an_entity_removes_its_invoices_and_extractions() {
    let app = TestApp::spawn();
    let client = app.client();
    let keep = id_of(&client.create_entity("KIJ0906199R1", "sandbox1"));
    let kept = import_samples(&app, &keep, "received", &[PPD_FILE]);
    let entity = id_of(&valid_entity(&client, "H&E951128469", "sandbox1"));
    let day = date("2026-01-05");
    let extraction = extract(&client, &entity, day, day, "issued");
    let ids = import_samples(&app, &entity, "issued", &[PPD_FILE, PAYMENT_FILE]);
    let listed = invoices(&client, &format!("entity_id={entity}"));
    assert!(listed.len() > 2, "{listed:?}");

    client.delete(&format!("/v1/entities/{entity}")).expect(204);
    assert!(invoices(&client, &format!("entity_id={entity}")).is_empty());
    for inv in &listed {
        let id = id_of(inv);
        client.get(&format!("/v1/invoices/{id}")).expect_not_found();
        client
            .get(&format!("/v1/invoices/{id}/cfdi?format=xml"))
            .expect_not_found();
    }
    client
        .get(&format!("/v1/invoices/{}/payments", ids[PPD_FILE]))
        .expect_not_found();
    client
        .get(&format!("/v1/extractions/{}", id_of(&extraction)))
        .expect_not_found();
    assert_eq!(
        client
            .get(&format!("/v1/extractions?entity_id={entity}"))
            .expect(200)["data"],
        serde_json::json!([])
    );
    // The other entity's invoice is untouched: still owing its total (the deleted
    // entity's complement never counted for it).
    let other = client
        .get(&format!("/v1/invoices/{}", kept[PPD_FILE]))
        .expect(200);
    assert_eq!(other["due_amount"].to_string(), "17852.75");
    assert_eq!(invoices(&client, "").len(), 1);
}
