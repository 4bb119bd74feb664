//! Each simulated code of the web service, on purpose.

use super::*;

fn verify_once(session: &mut dyn WsSession, id: &str) -> VerifyAnswer {
    session.verify(id).expect("verify")
}

#[test]
fn windows_of_2019_refuse_cfdi_queries_for_life_but_not_metadata() {
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    let cfdi = window(
        Direction::Issued,
        RequestType::Cfdi,
        "2019-06-01T00:00:00",
        "2019-06-01T23:59:59",
    );
    for _ in 0..2 {
        let answer = session.query(&Query::Window(cfdi.clone())).expect("query");
        assert_eq!(answer.status.code, SatCode::LifetimeLimitReached);
        assert_eq!(answer.request_id, None);
    }
    let metadata = WindowQuery {
        request_type: RequestType::Metadata,
        ..cfdi
    };
    let id = request_id(
        &session
            .query(&Query::Window(metadata.clone()))
            .expect("query"),
    );
    let done = verify_until_finished(&mut session, &id);
    assert_eq!(done.package_ids.len(), 1);
}

#[test]
fn windows_of_2018_are_rejected_at_verification() {
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    let query = window(
        Direction::Received,
        RequestType::Metadata,
        "2018-03-01T00:00:00",
        "2018-03-01T23:59:59",
    );
    let id = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
    for _ in 0..4 {
        let answer = verify_once(&mut session, &id);
        assert_eq!(answer.state, RequestState::Rejected, "{answer:?}");
        assert_eq!(answer.status.code, SatCode::Accepted);
        assert!(answer.status.message.contains("rechazada"));
        assert_ne!(answer.state_code, SatCode::OverMaximum);
        assert!(answer.package_ids.is_empty());
    }
}

#[test]
fn in_2017_the_first_request_for_a_window_expires_and_the_next_one_works() {
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    let metadata = window(
        Direction::Issued,
        RequestType::Metadata,
        "2017-08-01T00:00:00",
        "2017-08-02T23:59:59",
    );
    let cfdi = WindowQuery {
        request_type: RequestType::Cfdi,
        ..metadata.clone()
    };
    for query in [&metadata, &cfdi] {
        let first = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
        for _ in 0..3 {
            assert_eq!(
                verify_once(&mut session, &first).state,
                RequestState::Expired
            );
        }
        let again = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
        assert_ne!(again, first);
        let done = verify_until_finished(&mut session, &again);
        assert!(done.cfdi_count > 0);
        download(&mut session, &done.package_ids[0]);
    }
    // Another window is a first request again.
    let other = WindowQuery {
        end: at("2017-08-03T23:59:59"),
        ..metadata
    };
    let id = request_id(&session.query(&Query::Window(other.clone())).expect("query"));
    assert_eq!(verify_once(&mut session, &id).state, RequestState::Expired);
}

#[test]
fn in_2016_the_first_cfdi_query_is_a_duplicate_of_a_live_request_that_completes() {
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    let cfdi = window(
        Direction::Issued,
        RequestType::Cfdi,
        "2016-04-04T00:00:00",
        "2016-04-05T23:59:59",
    );
    let duplicate = session.query(&Query::Window(cfdi.clone())).expect("query");
    assert_eq!(duplicate.status.code, SatCode::Duplicate);
    let live = duplicate.request_id.expect("the live request's id");
    let done = verify_until_finished(&mut session, &live);
    let files = cfdi_files(&mut session, &done.package_ids);
    assert_eq!(files.len() as u64, done.cfdi_count);
    assert!(!files.is_empty());
    let again = request_id(&session.query(&Query::Window(cfdi.clone())).expect("query"));
    assert_ne!(again, live);
    // Metadata queries are never duplicates.
    let metadata = WindowQuery {
        request_type: RequestType::Metadata,
        start: at("2016-05-01T00:00:00"),
        end: at("2016-05-01T23:59:59"),
        ..cfdi
    };
    request_id(
        &session
            .query(&Query::Window(metadata.clone()))
            .expect("query"),
    );
}

#[test]
fn a_window_over_the_maximum_is_rejected_with_5003() {
    let f = fixture(BIG);
    let mut session = f.session(BIG);
    // About 500 invoices a day: two days are over 500 CFDI.
    let cfdi = window(
        Direction::Issued,
        RequestType::Cfdi,
        "2025-07-01T00:00:00",
        "2025-07-02T23:59:59",
    );
    let id = request_id(&session.query(&Query::Window(cfdi.clone())).expect("query"));
    let answer = verify_once(&mut session, &id);
    assert_eq!(answer.state, RequestState::Rejected);
    assert_eq!(answer.state_code, SatCode::OverMaximum);
    assert!(answer.package_ids.is_empty());
    assert_eq!(
        session
            .download(&format!("{id}_01"))
            .expect("download")
            .status
            .code,
        SatCode::NotFound
    );
    // Five days are over 2,000 metadata rows.
    let metadata = WindowQuery {
        request_type: RequestType::Metadata,
        end: at("2025-07-05T23:59:59"),
        ..cfdi
    };
    let id = request_id(
        &session
            .query(&Query::Window(metadata.clone()))
            .expect("query"),
    );
    assert_eq!(
        verify_once(&mut session, &id).state_code,
        SatCode::OverMaximum
    );

    // With the test e.firma (about 7 a day), three months of CFDI, as /docs/sandbox says.
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    let quarter = window(
        Direction::Issued,
        RequestType::Cfdi,
        "2025-01-01T00:00:00",
        "2025-03-31T23:59:59",
    );
    let id = request_id(
        &session
            .query(&Query::Window(quarter.clone()))
            .expect("query"),
    );
    let answer = verify_once(&mut session, &id);
    assert_eq!(answer.state_code, SatCode::OverMaximum);
}

#[test]
fn packages_split_at_200_cfdi_and_1000_rows() {
    let f = fixture(BIG);
    let mut session = f.session(BIG);
    // Business hours start at 08:00: half a day holds about 250 invoices.
    let cfdi = window(
        Direction::Issued,
        RequestType::Cfdi,
        "2025-07-01T00:00:00",
        "2025-07-01T13:59:59",
    );
    let id = request_id(&session.query(&Query::Window(cfdi.clone())).expect("query"));
    let done = verify_until_finished(&mut session, &id);
    assert!(
        (201..=400).contains(&done.cfdi_count),
        "{}",
        done.cfdi_count
    );
    assert_eq!(
        done.package_ids,
        vec![format!("{id}_01"), format!("{id}_02")]
    );
    let first = cfdi_files(&mut session, &done.package_ids[..1]);
    assert_eq!(first.len(), 200);
    let all = cfdi_files(&mut session, &done.package_ids);
    assert_eq!(all.len() as u64, done.cfdi_count);

    let metadata = WindowQuery {
        request_type: RequestType::Metadata,
        // With their payment complements, two days hold about 1,400 rows.
        end: at("2025-07-02T23:59:59"),
        ..cfdi
    };
    let id = request_id(
        &session
            .query(&Query::Window(metadata.clone()))
            .expect("query"),
    );
    let done = verify_until_finished(&mut session, &id);
    assert_eq!(done.package_ids.len(), 2, "{}", done.cfdi_count);
    let rows = metadata_rows(&mut session, &done.package_ids[..1]);
    assert_eq!(rows.len(), 1_000);
    let rows = metadata_rows(&mut session, &done.package_ids);
    assert_eq!(rows.len() as u64, done.cfdi_count);
}

#[test]
fn a_window_without_documents_finishes_with_5004_and_no_packages() {
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    // Before business hours: nothing is issued.
    let night = window(
        Direction::Issued,
        RequestType::Metadata,
        "2025-03-03T00:00:00",
        "2025-03-03T07:00:00",
    );
    let other_party = WindowQuery {
        start: at("2025-03-03T00:00:00"),
        end: at("2025-03-09T23:59:59"),
        counterpart: Some("XAXX010101000".into()),
        ..night.clone()
    };
    for query in [night, other_party] {
        let id = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
        let first = verify_once(&mut session, &id);
        assert_eq!(first.state, RequestState::Accepted);
        assert_eq!(
            verify_once(&mut session, &id).state,
            RequestState::InProgress
        );
        let done = verify_once(&mut session, &id);
        assert_eq!(done.state, RequestState::Finished);
        assert_eq!(done.state_code, SatCode::NotFound);
        assert_eq!(done.cfdi_count, 0);
        assert!(done.package_ids.is_empty());
        let answer = session.download(&format!("{id}_01")).expect("download");
        assert_eq!(answer.status.code, SatCode::NotFound);
    }
}

#[test]
fn a_package_downloads_twice_then_answers_5008() {
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    let query = window(
        Direction::Issued,
        RequestType::Cfdi,
        "2025-03-03T00:00:00",
        "2025-03-04T23:59:59",
    );
    let id = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
    let done = verify_until_finished(&mut session, &id);
    let package = &done.package_ids[0];
    let first = download(&mut session, package);
    assert_eq!(
        download(&mut session, package),
        first,
        "the same bytes again"
    );
    let third = session.download(package).expect("download");
    assert_eq!(third.status.code, SatCode::DownloadsExhausted);
    assert_eq!(third.status.message, "Máximo de descargas permitidas");
    assert_eq!(third.package, None);
}

#[test]
fn unknown_and_foreign_ids_answer_5004() {
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    let unknown = verify_once(&mut session, "6f1c3a8e-0000-4000-8000-000000000000");
    assert_eq!(unknown.status.code, SatCode::NotFound);
    assert!(unknown.package_ids.is_empty());
    for id in ["nope", "nope_01", "6f1c3a8e-0000-4000-8000-000000000000_01"] {
        let answer = session.download(id).expect("download");
        assert_eq!(answer.status.code, SatCode::NotFound, "{id}");
        assert_eq!(answer.package, None);
    }
    let query = window(
        Direction::Issued,
        RequestType::Metadata,
        "2025-03-03T00:00:00",
        "2025-03-03T23:59:59",
    );
    let id = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
    // Not finished yet: no package by that name.
    assert_eq!(
        session
            .download(&format!("{id}_01"))
            .expect("download")
            .status
            .code,
        SatCode::NotFound
    );
    verify_until_finished(&mut session, &id);
    for name in [format!("{id}_02"), format!("{id}_00"), format!("{id}_1")] {
        let answer = session.download(&name).expect("download");
        assert_eq!(answer.status.code, SatCode::NotFound, "{name}");
    }
    // Another RFC cannot see this RFC's request.
    let mut other = f.session("AAA010101AAA");
    assert_eq!(verify_once(&mut other, &id).status.code, SatCode::NotFound);
    let answer = other.download(&format!("{id}_01")).expect("download");
    assert_eq!(answer.status.code, SatCode::NotFound);
    download(&mut session, &format!("{id}_01"));
}

#[test]
fn off_rfcs_are_unreachable_and_queries_need_a_run() {
    let f = fixture(EKU);
    assert!(matches!(
        f.service
            .open("OFF900101AAA", Some(&f.run), DocumentClass::Invoices),
        Err(SatError::Unavailable(_))
    ));
    assert!(matches!(
        f.service
            .open("off900101aaa", None, DocumentClass::Invoices),
        Err(SatError::Unavailable(_))
    ));
    // A credential check connects without a run, and makes no requests.
    let efirma = test_efirma();
    let mut check = f
        .service
        .connect(&efirma, None, DocumentClass::Invoices)
        .expect("connects");
    let query = window(
        Direction::Issued,
        RequestType::Metadata,
        "2025-03-03T00:00:00",
        "2025-03-03T23:59:59",
    );
    assert!(matches!(
        check.query(&Query::Window(query.clone())),
        Err(SatError::Internal(_))
    ));
    let backwards = WindowQuery {
        end: at("2025-03-02T00:00:00"),
        ..query
    };
    let answer = f
        .session(EKU)
        .query(&Query::Window(backwards.clone()))
        .expect("query");
    assert_eq!(answer.status.code, SatCode::MalformedXml);
    assert_eq!(answer.request_id, None);
}

#[test]
fn requests_and_downloads_survive_a_restart() {
    let mut f = fixture(EKU);
    let query = window(
        Direction::Issued,
        RequestType::Cfdi,
        "2025-03-03T00:00:00",
        "2025-03-04T23:59:59",
    );
    let id = {
        let mut session = f.session(EKU);
        let id = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
        assert_eq!(verify_once(&mut session, &id).state, RequestState::Accepted);
        id
    };
    f.reopen();
    let (package, bytes) = {
        let mut session = f.session(EKU);
        assert_eq!(
            verify_once(&mut session, &id).state,
            RequestState::InProgress
        );
        let done = verify_once(&mut session, &id);
        assert_eq!(done.state, RequestState::Finished);
        let package = done.package_ids[0].clone();
        let bytes = download(&mut session, &package);
        (package, bytes)
    };
    f.reopen();
    let mut session = f.session(EKU);
    let done = verify_once(&mut session, &id);
    assert_eq!(done.state, RequestState::Finished);
    assert_eq!(done.package_ids, vec![package.clone()]);
    assert_eq!(download(&mut session, &package), bytes);
    f.reopen();
    let mut session = f.session(EKU);
    assert_eq!(
        session.download(&package).expect("download").status.code,
        SatCode::DownloadsExhausted
    );
}
