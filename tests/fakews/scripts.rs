//! The SAT's behaviours a test can switch on, and the ones always on, each seen by the
//! real client as the typed answer it will have to handle.

use cfdi_extract::sat::efirma::client::ClientError;
use cfdi_extract::sat::efirma::envelope::{DocumentStatus, RequestType};
use cfdi_extract::sat::efirma::responses::{RequestState, SatCode};

use crate::common::fake_sat_ws::{Direction, FakeSatWs, Op, Settings};
use crate::fakews::support::{load_sandbox, window, Session};

fn quick() -> FakeSatWs {
    crate::fakews::support::start(Settings {
        in_progress_checks: 0,
        ..Settings::default()
    })
}

#[test]
fn the_lifetime_limit_refuses_cfdi_queries_but_not_metadata() {
    let fake = quick();
    load_sandbox(&fake, Direction::Issued, 2, 2);
    let s = Session::open(&fake);
    let cfdi = window(
        Direction::Issued,
        RequestType::Cfdi,
        DocumentStatus::All,
        2,
        2,
    );
    let metadata = window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        2,
        2,
    );
    // Always on: the same CFDI query is accepted twice in the service's lifetime.
    for _ in 0..2 {
        let id = s.accepted(&cfdi);
        assert_eq!(s.finish(&id).1.state, RequestState::Finished);
    }
    let third = s.client.query(&s.efirma, &s.token, &cfdi).expect("answer");
    assert_eq!(
        (third.status.code, third.request_id),
        (SatCode::LifetimeLimitReached, None)
    );
    for _ in 0..3 {
        let id = s.accepted(&metadata);
        s.finish(&id);
    }

    // Scripted: exhausted from the start for matching queries.
    let other = quick();
    other.exhaust_lifetime(|q| q.start.is_some_and(|t| t.format("%d").to_string() == "05"));
    let s = Session::open(&other);
    let refused = s
        .client
        .query(
            &s.efirma,
            &s.token,
            &window(
                Direction::Received,
                RequestType::Cfdi,
                DocumentStatus::Active,
                5,
                6,
            ),
        )
        .expect("answer");
    assert_eq!(refused.status.code, SatCode::LifetimeLimitReached);
    s.accepted(&window(
        Direction::Received,
        RequestType::Metadata,
        DocumentStatus::All,
        5,
        6,
    ));
    s.accepted(&window(
        Direction::Received,
        RequestType::Cfdi,
        DocumentStatus::Active,
        6,
        6,
    ));
    let codes: Vec<_> = other
        .calls()
        .iter()
        .filter(|c| c.op == Op::Query)
        .map(|c| c.code)
        .collect();
    assert_eq!(codes, [Some(5002), Some(5000), Some(5000)]);
}

#[test]
fn no_results_end_rejected_with_5004_or_are_refused_at_query_time() {
    let fake = quick();
    let s = Session::open(&fake);
    let empty = window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        1,
        1,
    );
    let id = s.accepted(&empty);
    let (_, answer) = s.finish(&id);
    assert_eq!(
        (answer.state, answer.state_code, answer.cfdi_count),
        (RequestState::Rejected, SatCode::NotFound, 0)
    );
    assert!(answer.package_ids.is_empty());

    fake.configure(|settings| settings.no_results_at_query = true);
    let refused = s.client.query(&s.efirma, &s.token, &empty).expect("answer");
    assert_eq!(
        (refused.status.code, refused.request_id),
        (SatCode::NotFound, None)
    );
}

#[test]
fn a_window_over_the_maximum_ends_with_5003_and_a_split_one_finishes() {
    let fake = quick();
    let loaded = load_sandbox(&fake, Direction::Issued, 1, 4);
    let first_half = loaded
        .iter()
        .filter(|i| i.issued_at.date() <= crate::fakews::support::day(2))
        .count();
    fake.configure(|settings| settings.max_metadata = loaded.len() - 1);
    assert!(
        first_half < loaded.len() - 1,
        "{first_half} of {}",
        loaded.len()
    );
    let s = Session::open(&fake);
    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        1,
        4,
    ));
    let (_, over) = s.finish(&id);
    assert_eq!(
        (over.state, over.state_code),
        (RequestState::Rejected, SatCode::OverMaximum)
    );
    assert!(over.package_ids.is_empty());
    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        1,
        2,
    ));
    let (_, half) = s.finish(&id);
    assert_eq!(
        (half.state, half.cfdi_count),
        (RequestState::Finished, first_half as u64)
    );
}

#[test]
fn rejected_requests_end_in_state_5() {
    let fake = quick();
    load_sandbox(&fake, Direction::Issued, 2, 2);
    fake.reject(|q| q.is_cfdi());
    let s = Session::open(&fake);
    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Cfdi,
        DocumentStatus::All,
        2,
        2,
    ));
    let (_, rejected) = s.finish(&id);
    assert_eq!(
        (rejected.state, rejected.state_code),
        (RequestState::Rejected, SatCode::InternalError)
    );
    // Ended requests keep answering the same.
    let again = s.client.verify(&s.efirma, &s.token, &id).expect("verify");
    assert_eq!(again, rejected);
    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        2,
        2,
    ));
    assert_eq!(s.finish(&id).1.state, RequestState::Finished);
}

#[test]
fn the_first_request_of_given_parameters_expires_and_asking_again_finishes() {
    let fake = quick();
    load_sandbox(&fake, Direction::Issued, 2, 2);
    fake.expire_first(|q| !q.is_cfdi());
    let s = Session::open(&fake);
    let query = window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        2,
        2,
    );
    let first = s.accepted(&query);
    assert_eq!(s.finish(&first).1.state, RequestState::Expired);
    let second = s.accepted(&query);
    assert_ne!(first, second);
    let (_, finished) = s.finish(&second);
    assert_eq!(finished.state, RequestState::Finished);
    assert!(finished.cfdi_count > 0);
}

#[test]
fn a_lost_answer_leaves_a_live_request_that_a_duplicate_query_names() {
    let fake = quick();
    load_sandbox(&fake, Direction::Issued, 2, 2);
    fake.lose_query_answers(1);
    let s = Session::open(&fake);
    let query = window(
        Direction::Issued,
        RequestType::Cfdi,
        DocumentStatus::All,
        2,
        2,
    );
    let lost = s
        .client
        .query(&s.efirma, &s.token, &query)
        .expect_err("lost");
    assert!(
        matches!(
            lost,
            ClientError::Http {
                step: "query",
                status: 500,
                ..
            }
        ),
        "{lost:?}"
    );
    let live = fake.request_ids();
    assert_eq!(live.len(), 1);
    let duplicate = s.client.query(&s.efirma, &s.token, &query).expect("answer");
    assert_eq!(duplicate.status.code, SatCode::Duplicate);
    assert_eq!(duplicate.request_id.as_ref(), Some(&live[0]));
    assert_eq!(s.finish(&live[0]).1.state, RequestState::Finished);
    // Finished, it is no longer live: the same query is accepted again (second use).
    assert_ne!(s.accepted(&query), live[0]);
    let answers: Vec<_> = fake
        .calls()
        .iter()
        .filter(|c| c.op == Op::Query)
        .map(|c| (c.http, c.code))
        .collect();
    assert_eq!(answers, [(500, None), (200, Some(5005)), (200, Some(5000))]);
}

#[test]
fn unhandled_errors_answer_404_for_the_next_calls_of_an_operation() {
    let fake = quick();
    load_sandbox(&fake, Direction::Issued, 2, 2);
    let s = Session::open(&fake);
    let query = window(
        Direction::Issued,
        RequestType::Cfdi,
        DocumentStatus::All,
        2,
        2,
    );
    fake.fail_next(Op::Query, 1);
    assert_eq!(
        s.client
            .query(&s.efirma, &s.token, &query)
            .expect("answer")
            .status
            .code,
        SatCode::Unhandled
    );
    let id = s.accepted(&query);
    fake.fail_next(Op::Verify, 2);
    for _ in 0..2 {
        let answer = s.client.verify(&s.efirma, &s.token, &id).expect("answer");
        assert_eq!(answer.status.code, SatCode::Unhandled);
    }
    // The failed checks did not move the request on.
    let (states, finished) = s.finish(&id);
    assert_eq!(states, [RequestState::Accepted, RequestState::Finished]);
    fake.fail_next(Op::Download, 1);
    let package = &finished.package_ids[0];
    let failed = s
        .client
        .download(&s.efirma, &s.token, package)
        .expect("answer");
    assert_eq!(
        (failed.status.code, failed.package),
        (SatCode::Unhandled, None)
    );
    assert!(s
        .client
        .download(&s.efirma, &s.token, package)
        .expect("answer")
        .package
        .is_some());
    assert_eq!(fake.downloads(package), 1);
    fake.fail_next(Op::Authenticate, 1);
    assert!(s.client.authenticate(&s.efirma, fake.now()).is_err());
    assert!(s.client.authenticate(&s.efirma, fake.now()).is_ok());
}
