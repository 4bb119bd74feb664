//! Logging in: captcha, credential POST, SSO redirect, WS-Fed auto-post, RFC check.

use crate::common::fake_sat_portal::{FakePortal, Fault, Setup};
use crate::portal::support::*;
use cfdi_extract::sat::ciec::Authority;
use cfdi_extract::sat::ciec::{CaptchaConfig, Portal, NO_RESOLVER};
use cfdi_extract::sat::{RunContext, SatError};

fn run() -> RunContext {
    RunContext {
        entity_id: "entity".into(),
        extraction_id: "extraction".into(),
        period: None,
    }
}

#[test]
fn validation_logs_in_through_captcha_sso_and_the_wsfed_auto_post() {
    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let dir = tempfile::tempdir().expect("tmp");
    let portal = Portal::new(config(
        &fake,
        command_captcha(&solver_script(dir.path(), 0, 0)),
    ));
    portal.validate(&credential(RFC, CIEC)).expect("validates");
    fake.seen(|s| {
        assert_eq!(
            (
                s.captchas_served,
                s.login_posts,
                s.logins_accepted,
                s.sign_ins
            ),
            (1, 1, 1, 1)
        );
        assert!(s.refusals.is_empty(), "{:?}", s.refusals);
        assert!(
            s.user_agents.iter().all(|ua| ua.contains("Firefox")),
            "{:?}",
            s.user_agents
        );
    });
    // The RFC is sent upper-cased whatever the entity stored.
    portal
        .validate(&credential(&RFC.to_lowercase(), CIEC))
        .expect("validates a lower-case RFC");
}

#[test]
fn each_login_is_its_own_cookie_jar() {
    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let dir = tempfile::tempdir().expect("tmp");
    let portal = Portal::new(config(
        &fake,
        command_captcha(&solver_script(dir.path(), 0, 0)),
    ));
    let _first = portal
        .login(&credential(RFC, CIEC), &run())
        .expect("logs in");
    let _second = portal
        .login(&credential(RFC, CIEC), &run())
        .expect("logs in");
    // A shared jar would have shown the second login page to the first IdP session and
    // skipped the sign-in; separate jars sign in twice from scratch.
    fake.seen(|s| {
        assert_eq!(
            (s.captchas_served, s.logins_accepted, s.sign_ins),
            (2, 2, 2)
        )
    });
}

#[test]
fn a_refused_login_is_invalid_credentials_after_the_login_tries() {
    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let dir = tempfile::tempdir().expect("tmp");
    let portal = Portal::new(config(
        &fake,
        command_captcha(&solver_script(dir.path(), 0, 0)),
    ));
    let err = portal
        .validate(&credential(RFC, "wrongpw1"))
        .expect_err("refused");
    assert!(matches!(err, SatError::InvalidCredentials), "{err:?}");
    fake.seen(|s| assert_eq!((s.login_posts, s.logins_accepted), (3, 0)));
    assert_eq!(solver_calls(dir.path()), 3, "a fresh captcha for every try");
    assert!(matches!(
        portal.login(&credential(RFC, "wrongpw1"), &run()).err(),
        Some(SatError::InvalidCredentials)
    ));
}

#[test]
fn a_wrong_captcha_answer_is_retried_with_a_new_captcha() {
    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let dir = tempfile::tempdir().expect("tmp");
    let portal = Portal::new(config(
        &fake,
        command_captcha(&solver_script(dir.path(), 0, 1)),
    ));
    portal
        .validate(&credential(RFC, CIEC))
        .expect("second answer is right");
    fake.seen(|s| assert_eq!((s.login_posts, s.logins_accepted), (2, 1)));
    assert_eq!(solver_calls(dir.path()), 2);
}

#[test]
fn a_failing_resolver_gets_a_new_captcha_and_gives_up_after_the_captcha_tries() {
    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let dir = tempfile::tempdir().expect("tmp");
    let portal = Portal::new(config(
        &fake,
        command_captcha(&solver_script(dir.path(), 1, 0)),
    ));
    portal
        .validate(&credential(RFC, CIEC))
        .expect("second captcha solved");
    fake.seen(|s| assert_eq!((s.captchas_served, s.login_posts), (2, 1)));

    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let dir = tempfile::tempdir().expect("tmp");
    let portal = Portal::new(config(
        &fake,
        command_captcha(&solver_script(dir.path(), 99, 0)),
    ));
    let err = portal
        .validate(&credential(RFC, CIEC))
        .expect_err("never solved");
    assert!(
        matches!(&err, SatError::Unavailable(d) if d.contains("captcha")),
        "{err:?}"
    );
    fake.seen(|s| assert_eq!((s.captchas_served, s.login_posts), (3, 0)));
}

#[test]
fn without_a_resolver_nothing_is_sent_and_the_api_stays_honest() {
    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let portal = Portal::new(config(&fake, CaptchaConfig::None));
    let err = portal
        .validate(&credential(RFC, CIEC))
        .expect_err("no resolver");
    assert!(
        matches!(&err, SatError::Unavailable(d) if d == NO_RESOLVER),
        "{err:?}"
    );
    assert!(matches!(
        portal.login(&credential(RFC, CIEC), &run()).err(),
        Some(SatError::Unavailable(_))
    ));
    fake.seen(|s| assert_eq!(s.captchas_served, 0));
}

#[test]
fn a_portal_home_without_the_rfc_is_unavailable() {
    let mut setup = Setup::new(RFC, CIEC);
    setup.fault = Fault::NoRfcOnHome;
    let fake = FakePortal::start(setup);
    let dir = tempfile::tempdir().expect("tmp");
    let portal = Portal::new(config(
        &fake,
        command_captcha(&solver_script(dir.path(), 0, 0)),
    ));
    let err = portal
        .validate(&credential(RFC, CIEC))
        .expect_err("not signed in");
    assert!(
        matches!(&err, SatError::Unavailable(d) if d.contains("RFC Autenticado")),
        "{err:?}"
    );
}
