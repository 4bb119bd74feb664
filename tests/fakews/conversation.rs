//! The whole conversation, with packages built from the sandbox's documents and read
//! back with the library's `Package`.

use std::collections::{BTreeMap, BTreeSet};

use cfdi_extract::sat::efirma::envelope::{DocumentStatus, RequestType};
use cfdi_extract::sat::efirma::package::Package;
use cfdi_extract::sat::efirma::responses::{RequestState, SatCode};
use cfdi_extract::sat::Metadata;

use crate::common::efirma_files::FIEL_RFC;
use crate::common::fake_sat_ws::{Call, Direction, Op, Settings};
use crate::fakews::support::{day, load_sandbox, window, Session};

/// Every metadata row of the packages, by UUID.
fn metadata_rows(s: &Session, package_ids: &[String]) -> BTreeMap<String, Metadata> {
    let mut rows = BTreeMap::new();
    for id in package_ids {
        let answer = s
            .client
            .download(&s.efirma, &s.token, id)
            .expect("download");
        assert_eq!(answer.status.code, SatCode::Accepted);
        let mut package = Package::open(answer.package.expect("package")).expect("zip");
        let count = package
            .for_each_metadata(|m| {
                rows.insert(m.uuid.clone(), m);
                Ok::<_, cfdi_extract::sat::efirma::package::PackageError>(())
            })
            .expect("rows");
        assert_eq!(count.skipped, 0);
    }
    rows
}

#[test]
fn issued_metadata_then_cfdi_through_every_state_and_package() {
    let fake = crate::fakews::support::start(Settings {
        in_progress_checks: 2,
        cfdi_per_package: 4,
        metadata_per_package: 5,
        ..Settings::default()
    });
    let loaded = load_sandbox(&fake, Direction::Issued, 6, 12);
    // The window is the 7th to the 10th: documents of the 6th, 11th and 12th stay out.
    let expected: Vec<_> = loaded
        .iter()
        .filter(|i| (day(7)..=day(10)).contains(&i.issued_at.date()))
        .collect();
    assert!(
        expected.len() > 5 && expected.len() < loaded.len(),
        "{} of {}",
        expected.len(),
        loaded.len()
    );
    let s = Session::open(&fake);

    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        7,
        10,
    ));
    let (states, finished) = s.finish(&id);
    use RequestState::*;
    assert_eq!(states, [Accepted, InProgress, InProgress, Finished]);
    assert_eq!(
        (finished.state_code, finished.cfdi_count),
        (SatCode::Accepted, expected.len() as u64)
    );
    assert_eq!(finished.package_ids.len(), expected.len().div_ceil(5));
    assert_eq!(finished.package_ids[0], format!("{id}_01"));
    let rows = metadata_rows(&s, &finished.package_ids);
    assert_eq!(rows.len(), expected.len());
    for invoice in &expected {
        let row = &rows[&invoice.uuid];
        assert_eq!(
            (row.issuer_tax_id.as_str(), row.receiver_tax_id.as_str()),
            (FIEL_RFC, invoice.receiver_tax_id.as_str())
        );
        assert_eq!(row.total, Some(invoice.total));
        assert_eq!(
            row.invoice_type.as_deref(),
            Some(invoice.invoice_type.to_string().as_str())
        );
        assert_eq!(
            row.issued_at,
            Some(invoice.issued_at.format("%Y-%m-%dT%H:%M:%S").to_string())
        );
        assert_eq!(
            row.cancelled,
            invoice.cancelled_at.is_some(),
            "{}",
            invoice.uuid
        );
        assert_eq!(
            row.receiver_name.as_deref(),
            Some(invoice.receiver_name.as_str())
        );
        assert!(row.certified_at.is_some());
    }

    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Cfdi,
        DocumentStatus::All,
        7,
        10,
    ));
    let (_, finished) = s.finish(&id);
    assert_eq!(finished.package_ids.len(), expected.len().div_ceil(4));
    let mut xml = BTreeMap::new();
    for package_id in &finished.package_ids {
        let answer = s
            .client
            .download(&s.efirma, &s.token, package_id)
            .expect("download");
        let mut package = Package::open(answer.package.expect("package")).expect("zip");
        for file in package.cfdis() {
            let file = file.expect("cfdi");
            xml.insert(file.name, file.xml);
        }
        assert_eq!(fake.downloads(package_id), 1);
    }
    for invoice in &expected {
        let rendered = cfdi_extract::sandbox::docs::render_xml(
            FIEL_RFC,
            cfdi_extract::sandbox::docs::Direction::Issued,
            invoice,
        )
        .expect("xml");
        assert_eq!(xml.get(&format!("{}.xml", invoice.uuid)), Some(&rendered));
    }
    assert_eq!(xml.len(), expected.len());

    // What the fake observed.
    assert_eq!(fake.count(Op::Authenticate), 1);
    assert_eq!(fake.count(Op::Query), 2);
    assert_eq!(fake.count(Op::Verify), 8);
    let downloads = fake
        .calls()
        .into_iter()
        .filter(|c| c.op == Op::Download)
        .count();
    assert_eq!(
        downloads,
        expected.len().div_ceil(5) + expected.len().div_ceil(4)
    );
    let query = fake
        .calls()
        .into_iter()
        .find(|c| c.op == Op::Query)
        .expect("query");
    let first_id = fake.request_ids()[0].clone();
    assert_eq!(
        query,
        Call {
            op: Op::Query,
            id: Some(first_id),
            http: 200,
            code: Some(5000),
            state: None
        }
    );
}

#[test]
fn received_cfdi_are_only_the_active_ones_and_cancellations_show_in_metadata() {
    let fake = crate::fakews::support::start(Settings::default());
    let loaded = load_sandbox(&fake, Direction::Received, 1, 20);
    let cancelled: BTreeSet<_> = loaded
        .iter()
        .filter(|i| i.cancelled_at.is_some())
        .map(|i| i.uuid.clone())
        .collect();
    assert!(
        !cancelled.is_empty(),
        "the sandbox cancels some documents in 20 days"
    );
    let s = Session::open(&fake);

    // Received XML can only be asked as active.
    let all = s
        .client
        .query(
            &s.efirma,
            &s.token,
            &window(
                Direction::Received,
                RequestType::Cfdi,
                DocumentStatus::All,
                1,
                20,
            ),
        )
        .expect("answer");
    assert_eq!(
        (all.status.code, all.request_id),
        (SatCode::MalformedXml, None)
    );

    let id = s.accepted(&window(
        Direction::Received,
        RequestType::Cfdi,
        DocumentStatus::Active,
        1,
        20,
    ));
    let (_, finished) = s.finish(&id);
    assert_eq!(finished.cfdi_count as usize, loaded.len() - cancelled.len());
    let mut names = BTreeSet::new();
    for package_id in &finished.package_ids {
        let answer = s
            .client
            .download(&s.efirma, &s.token, package_id)
            .expect("download");
        let mut package = Package::open(answer.package.expect("package")).expect("zip");
        names.extend(package.cfdis().map(|f| f.expect("cfdi").name));
    }
    assert!(cancelled
        .iter()
        .all(|uuid| !names.contains(&format!("{uuid}.xml"))));

    let id = s.accepted(&window(
        Direction::Received,
        RequestType::Metadata,
        DocumentStatus::Cancelled,
        1,
        20,
    ));
    let (_, finished) = s.finish(&id);
    let rows = metadata_rows(&s, &finished.package_ids);
    assert_eq!(rows.keys().cloned().collect::<BTreeSet<_>>(), cancelled);
    for invoice in loaded.iter().filter(|i| i.cancelled_at.is_some()) {
        let row = &rows[&invoice.uuid];
        assert!(row.cancelled);
        assert_eq!(row.receiver_tax_id, FIEL_RFC);
        assert_eq!(
            row.cancelled_at,
            invoice
                .cancelled_at
                .map(|t| t.format("%Y-%m-%dT%H:%M:%S").to_string())
        );
    }
}

#[test]
fn a_package_is_served_twice_and_refused_the_third_time() {
    let fake = crate::fakews::support::start(Settings {
        in_progress_checks: 0,
        ..Settings::default()
    });
    load_sandbox(&fake, Direction::Issued, 3, 3);
    let s = Session::open(&fake);
    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Cfdi,
        DocumentStatus::All,
        3,
        3,
    ));
    let (states, finished) = s.finish(&id);
    assert_eq!(states, [RequestState::Accepted, RequestState::Finished]);
    let package_id = &finished.package_ids[0];
    let first = s
        .client
        .download(&s.efirma, &s.token, package_id)
        .expect("first");
    let second = s
        .client
        .download(&s.efirma, &s.token, package_id)
        .expect("second");
    assert_eq!(first, second);
    assert!(first.package.is_some());
    let third = s
        .client
        .download(&s.efirma, &s.token, package_id)
        .expect("third");
    assert_eq!(
        (third.status.code, third.package),
        (SatCode::DownloadsExhausted, None)
    );
    assert_eq!(fake.downloads(package_id), 2);
    let codes: Vec<_> = fake
        .calls()
        .iter()
        .filter(|c| c.op == Op::Download)
        .map(|c| c.code)
        .collect();
    assert_eq!(codes, [Some(5000), Some(5000), Some(5008)]);
    // Unknown packages are not found.
    let unknown = s
        .client
        .download(&s.efirma, &s.token, &format!("{id}_99"))
        .expect("answer");
    assert_eq!(
        (unknown.status.code, unknown.package),
        (SatCode::NotFound, None)
    );
}

#[test]
fn a_query_by_uuid_packages_that_one_cfdi_of_the_requester() {
    let fake = crate::fakews::support::start(Settings::default());
    let loaded = load_sandbox(&fake, Direction::Received, 3, 3);
    let s = Session::open(&fake);
    let wanted = &loaded[0];
    let query = cfdi_extract::sat::efirma::envelope::Query::Uuid(wanted.uuid.to_lowercase());
    let id = s.accepted(&query);
    let (_, finished) = s.finish(&id);
    assert_eq!(finished.cfdi_count, 1);
    let answer = s
        .client
        .download(&s.efirma, &s.token, &finished.package_ids[0])
        .expect("download");
    let mut package = Package::open(answer.package.expect("package")).expect("zip");
    let names: Vec<_> = package.cfdis().map(|f| f.expect("cfdi").name).collect();
    assert_eq!(names, [format!("{}.xml", wanted.uuid)]);
    // A UUID the requester neither issued nor received selects nothing.
    let id = s.accepted(&cfdi_extract::sat::efirma::envelope::Query::Uuid(
        "00000000-0000-4000-8000-000000000000".into(),
    ));
    assert_eq!(s.finish(&id).1.state_code, SatCode::NotFound);
}
