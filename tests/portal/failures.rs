//! Outages and unrecognised pages are `Unavailable`, never a hang or a panic.

use crate::common::fake_sat_portal::{FakePortal, Fault, Setup};
use crate::portal::listing::session;
use crate::portal::support::*;
use cfdi_extract::domain::extraction::{Direction, Period};
use cfdi_extract::sat::ciec::Authority;
use cfdi_extract::sat::ciec::{Portal, PortalConfig};
use cfdi_extract::sat::SatError;
use std::time::{Duration, Instant};

fn validate_with(fault: Fault, timeout: Duration) -> (SatError, Duration) {
    let mut setup = Setup::new(RFC, CIEC);
    setup.fault = fault;
    let fake = FakePortal::start(setup);
    let dir = tempfile::tempdir().expect("tmp");
    let config = PortalConfig {
        timeout,
        ..config(&fake, command_captcha(&solver_script(dir.path(), 0, 0)))
    };
    let started = Instant::now();
    let err = Portal::new(config)
        .validate(&credential(RFC, CIEC))
        .expect_err("fails");
    (err, started.elapsed())
}

#[test]
fn a_maintenance_page_instead_of_the_login_form_is_unavailable() {
    let (err, _) = validate_with(Fault::LoginMaintenance, Duration::from_secs(5));
    assert!(
        matches!(&err, SatError::Unavailable(d) if d.contains("no login form")),
        "{err:?}"
    );
}

#[test]
fn a_server_error_is_unavailable() {
    let (err, _) = validate_with(Fault::LoginDown, Duration::from_secs(5));
    assert!(
        matches!(&err, SatError::Unavailable(d) if d.contains("HTTP 503")),
        "{err:?}"
    );
}

#[test]
fn a_portal_that_never_answers_times_out_as_unavailable() {
    let (err, took) = validate_with(Fault::LoginHangs, Duration::from_millis(300));
    assert!(
        matches!(&err, SatError::Unavailable(d) if d.contains("no answer within")),
        "{err:?}"
    );
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn an_unreachable_portal_is_unavailable() {
    // A port nobody listens on: bind, note it, and close it again.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    let config = PortalConfig {
        login_url: format!("http://127.0.0.1:{port}/login")
            .parse()
            .expect("url"),
        portal_url: format!("http://127.0.0.1:{port}/").parse().expect("url"),
        timeout: Duration::from_secs(2),
        captcha: cfdi_extract::sat::ciec::CaptchaConfig::Command(
            cfdi_extract::sat::ciec::CommandResolver::new("true", vec![]),
        ),
        ..PortalConfig::default()
    };
    let err = Portal::new(config)
        .validate(&credential(RFC, CIEC))
        .expect_err("down");
    assert!(matches!(err, SatError::Unavailable(_)), "{err:?}");
}

#[test]
fn a_search_answer_without_a_results_table_is_unavailable() {
    let mut setup = Setup::new(RFC, CIEC);
    setup.fault = Fault::SearchWithoutTable;
    let fake = FakePortal::start(setup);
    let dir = tempfile::tempdir().expect("tmp");
    let err = session(&fake, dir.path())
        .list(
            Direction::Received,
            Period {
                from: day(2024, 1, 1),
                to: day(2024, 1, 1),
            },
        )
        .expect_err("no table");
    assert!(
        matches!(&err, SatError::Unavailable(d) if d.contains("no results table")),
        "{err:?}"
    );
}
