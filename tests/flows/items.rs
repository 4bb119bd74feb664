//! An invoice's concepts: the invoice object carries the first 1,000, and
//! `/v1/invoices/{id}/items` pages through all of them.

use crate::common::app::TestApp;
use crate::common::invoices::*;
use crate::flows::import::{edited_sample, REAL_40, REAL_40_ISSUER};
use serde_json::Value;
use tempfile::TempDir;

const CARRIED: usize = 1000;

/// The real 4.0 sample with `n` concepts, the k-th described `ITEM k`.
fn many_items(dir: &TempDir, n: usize) -> std::path::PathBuf {
    let text = String::from_utf8(sample_bytes(REAL_40)).expect("utf8");
    let start = text.find("<cfdi:Concepto ").expect("Concepto");
    let end = text.find("</cfdi:Concepto>").expect("end") + "</cfdi:Concepto>".len();
    let concept = &text[start..end];
    let described = "Descripcion=\"COMISION RECARGA IDMX\"";
    assert!(concept.contains(described));
    let all: String = (0..n)
        .map(|k| concept.replace(described, &format!("Descripcion=\"ITEM {k}\"")))
        .collect();
    let conceptos = &text[start..text.find("</cfdi:Conceptos>").expect("Conceptos end")];
    edited_sample(dir, "many.xml", REAL_40, &[(conceptos, &all)])
}

fn descriptions(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .map(|i| i["description"].as_str().expect("description").to_string())
        .collect()
}

fn expected(range: std::ops::Range<usize>) -> Vec<String> {
    range.map(|k| format!("ITEM {k}")).collect()
}

#[test]
fn a_5000_item_invoice_carries_1000_and_its_items_page_through_all_in_order() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let dir = TempDir::new().expect("tmp");
    let id = import(&app, &entity, "issued", &[many_items(&dir, 5000)])[0]
        .1
        .clone();

    let invoice = client.get(&format!("/v1/invoices/{id}")).expect(200);
    let carried = invoice["items"].as_array().expect("items");
    assert_eq!(descriptions(carried), expected(0..CARRIED));
    assert_eq!(invoice["items_count"], 5000, "{}", invoice["items_count"]);
    assert_eq!(invoice["items_truncated"], true);
    let json = client
        .get(&format!("/v1/invoices/{id}/cfdi?format=json"))
        .expect(200);
    assert_eq!(json["items"].as_array().map(Vec::len), Some(CARRIED));
    let listed = invoices(&client, "");
    assert_eq!(listed[0]["items_count"], 5000);
    assert!(
        listed[0].get("items").is_none(),
        "the list carries no items"
    );

    // Pages of 333 cross the stored pages of 1,000 at odd places.
    let path = format!("/v1/invoices/{id}/items");
    let mut all = vec![];
    let mut cursor: Option<String> = None;
    for _ in 0..20 {
        let url = match &cursor {
            Some(c) => format!("{path}?limit=333&cursor={c}"),
            None => format!("{path}?limit=333"),
        };
        let page = client.get(&url).expect(200);
        let data = page["data"].as_array().expect("data").clone();
        all.extend(data.iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => {
                assert_eq!(data.len(), 333, "{url}");
                cursor = Some(c.to_string());
            }
            None => break,
        }
    }
    assert_eq!(descriptions(&all), expected(0..5000));
    let mut last = all[4999].clone();
    last["description"] = all[0]["description"].clone();
    assert_eq!(last, all[0], "every item keeps the sample's other fields");
    assert_eq!(client.list_all(&path, 500).len(), 5000);
    let first = client.get(&format!("{path}?limit=2")).expect(200);
    assert_eq!(first["data"][1], carried[1]);
    assert_eq!(first["data"][1]["amount"].to_string(), "8.620690");

    client
        .get(&format!("{path}?limit=0"))
        .expect_field_error("limit");
    client
        .get(&format!("{path}?cursor=zz"))
        .expect_field_error("cursor");
    let other = app.client_as(&app.create_user_in_new_org());
    other.get(&path).expect_not_found();
    other.get(&format!("/v1/invoices/{id}")).expect_not_found();
    client
        .get("/v1/invoices/0190b5a4-0000-7000-8000-000000000000/items")
        .expect_not_found();
}

#[test]
fn a_normal_invoice_carries_every_item_and_says_so() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = id_of(&client.create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[REAL_40])
        .remove(REAL_40)
        .expect("imported");
    let invoice = client.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(invoice["items_count"], 2);
    assert_eq!(invoice["items_truncated"], false);
    let items = client.get(&format!("/v1/invoices/{id}/items")).expect(200);
    assert_eq!(items["data"], invoice["items"]);
    assert!(items["next_cursor"].is_null());
}
