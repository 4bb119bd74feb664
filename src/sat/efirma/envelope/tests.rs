use super::*;
use crate::sat::efirma::credential::tests::{fixture, test_efirma};
use chrono::NaiveDate;

/// The recorded files are pretty-printed: their wire form has no whitespace between
/// elements. Empty elements are written either way in them (`<a/>`, `<a></a>`), so
/// both sides are compared with explicit end tags.
fn wire_form(xml: &str) -> String {
    let mut compact = String::with_capacity(xml.len());
    let mut rest = xml.trim();
    while let Some(end) = rest.find('>') {
        compact.push_str(&rest[..=end]);
        rest = &rest[end + 1..];
        let next = rest.find('<').unwrap_or(rest.len());
        if rest[..next].trim().is_empty() {
            rest = &rest[next..];
        }
    }
    compact.push_str(rest);
    expand_empty_elements(&compact)
}

fn expand_empty_elements(xml: &str) -> String {
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(start) = rest.find('<') {
        out.push_str(&rest[..start]);
        let tag_end = rest[start..].find('>').expect("closed tag") + start;
        let tag = &rest[start..=tag_end];
        if let Some(open) = tag.strip_suffix("/>") {
            let name_end = open[1..]
                .find(|c: char| c.is_whitespace())
                .map_or(open.len(), |i| i + 1);
            out.push_str(open);
            out.push_str(&format!("></{}>", &open[1..name_end]));
        } else {
            out.push_str(tag);
        }
        rest = &rest[tag_end + 1..];
    }
    out.push_str(rest);
    out
}

fn recorded(path: &str) -> String {
    wire_form(&String::from_utf8(fixture(path)).expect("utf-8"))
}

fn assert_same(built: &SoapRequest, path: &str) {
    let expected = recorded(path);
    let actual = wire_form(&built.body);
    assert!(expected.contains("<SignatureValue>") && expected.contains("</s:Envelope>"));
    if actual != expected {
        let at = actual
            .bytes()
            .zip(expected.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(actual.len().min(expected.len()));
        let from = at.saturating_sub(80);
        panic!(
            "{path} differs at byte {at}:\n built:    {}\n recorded: {}",
            &actual[from..(at + 80).min(actual.len())],
            &expected[from..(at + 80).min(expected.len())]
        );
    }
    roxmltree::Document::parse(&built.body).expect("well-formed");
}

fn minute(h: u32, m: u32) -> NaiveDateTime {
    NaiveDate::from_ymd_opt(2019, 1, 1)
        .and_then(|d| d.and_hms_opt(h, m, 0))
        .expect("time")
}

fn window(direction: Direction, request_type: RequestType, status: DocumentStatus) -> WindowQuery {
    WindowQuery {
        direction,
        request_type,
        start: minute(0, 0),
        end: minute(0, 4),
        status,
        counterpart: None,
        document_type: None,
        complement: None,
        on_behalf_of: None,
    }
}

#[test]
fn the_recorded_authentication_is_reproduced() {
    let created = DateTime::parse_from_rfc3339("2019-08-01T03:38:19Z")
        .expect("time")
        .with_timezone(&Utc);
    let built = authenticate(
        &test_efirma(),
        created,
        "uuid-cf6c80fb-00ae-44c0-af56-54ec65decbaa-1",
    )
    .expect("signed");
    assert_eq!(built.operation, Operation::Authenticate);
    assert_same(&built, "authenticate/request.xml");
}

#[test]
fn the_recorded_issued_metadata_query_is_reproduced() {
    let q = window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
    );
    let built = query(&test_efirma(), &Query::Window(q)).expect("signed");
    assert_eq!(built.operation, Operation::QueryIssued);
    assert_same(&built, "query/request-issued.xml");
}

#[test]
fn the_recorded_received_cfdi_query_with_every_filter_is_reproduced() {
    let q = WindowQuery {
        counterpart: Some("AAA010101AAA".into()),
        document_type: Some("N".into()),
        complement: Some("nomina12".into()),
        on_behalf_of: Some("XXX01010199A".into()),
        ..window(
            Direction::Received,
            RequestType::Cfdi,
            DocumentStatus::Active,
        )
    };
    let built = query(&test_efirma(), &Query::Window(q)).expect("signed");
    assert_eq!(built.operation, Operation::QueryReceived);
    assert_same(&built, "query/request-received.xml");
}

#[test]
fn the_recorded_query_by_uuid_is_reproduced() {
    let q = Query::Uuid("96623061-61fe-49de-b298-c7156476aa8b".into());
    let built = query(&test_efirma(), &q).expect("signed");
    assert_eq!(built.operation, Operation::QueryUuid);
    assert_same(&built, "query/request-item.xml");
}

#[test]
fn the_recorded_verification_is_reproduced() {
    let built = verify(&test_efirma(), "3f30a4e1-af73-4085-8991-e4d97eef16bd").expect("signed");
    assert_eq!(built.operation, Operation::Verify);
    assert_same(&built, "verify/request.xml");
}

#[test]
fn the_recorded_download_is_reproduced() {
    let built =
        download(&test_efirma(), "4e80345d-917f-40bb-a98f-4a73939343c5_01").expect("signed");
    assert_eq!(built.operation, Operation::Download);
    assert_same(&built, "download/request.xml");
}

#[test]
fn an_issued_query_names_its_receiver_and_escapes_rfcs() {
    let q = WindowQuery {
        counterpart: Some("A&B010101AAA".into()),
        ..window(Direction::Issued, RequestType::Cfdi, DocumentStatus::Active)
    };
    let built = query(&test_efirma(), &Query::Window(q)).expect("signed");
    assert!(built
        .body
        .contains("<des:RfcReceptores><des:RfcReceptor>A&amp;B010101AAA</des:RfcReceptor></des:RfcReceptores><Signature"));
    let doc = roxmltree::Document::parse(&built.body).expect("well-formed");
    let receiver = doc
        .descendants()
        .find(|n| n.has_tag_name((SAT_NS, "RfcReceptor")))
        .and_then(|n| n.text());
    assert_eq!(receiver, Some("A&B010101AAA"));
    let solicitud = doc
        .descendants()
        .find(|n| n.has_tag_name((SAT_NS, "solicitud")))
        .expect("solicitud");
    assert_eq!(solicitud.attribute("EstadoComprobante"), Some("Vigente"));
    assert_eq!(solicitud.attribute("RfcEmisor"), Some("EKU9003173C9"));
    assert_eq!(solicitud.attribute("RfcReceptor"), None);
}
