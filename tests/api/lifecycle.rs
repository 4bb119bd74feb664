//! Starting and stopping `serve`.

use crate::common::app::{cli_on, Creds, TestApp};
use crate::common::engine::OnTestDatabase;
use std::time::Duration;
use tempfile::TempDir;

const DEMO_EMAIL: &str = "demo@example.com";
const DEMO_PASSWORD: &str = "demo-password";

fn demo_creds() -> Creds {
    Creds {
        org_id: String::new(),
        email: DEMO_EMAIL.into(),
        password: DEMO_PASSWORD.into(),
    }
}

#[test]
fn serve_exits_successfully_within_10s_when_sent_sigterm() {
    let mut app = TestApp::spawn();
    app.get("/v1/entities").expect(200);
    app.sigterm();
    let status = app.wait_exit(Duration::from_secs(10));
    let status =
        status.unwrap_or_else(|| panic!("still running 10 s after SIGTERM\n{}", app.output()));
    assert!(status.success(), "exit status {status:?}\n{}", app.output());
}

#[test]
fn serve_exits_successfully_when_sent_sigterm_while_a_delivery_hangs() {
    // A delivery attempt is in flight (the receiver never answers) when SIGTERM comes.
    let receiver = crate::common::receiver::Receiver::start();
    receiver.set_default(crate::common::receiver::Reply::Hang(Duration::from_secs(
        30,
    )));
    let mut app = TestApp::spawn_with(&["--webhook-timeout", "3s"]);
    app.client().create_webhook(&receiver.url(), None);
    app.client()
        .create_entity(&crate::common::app::tax_id("SIG"), "12345678");
    receiver.wait_for(1, crate::common::app::DEADLINE);
    app.sigterm();
    let status = app
        .wait_exit(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("still running 10 s after SIGTERM\n{}", app.output()));
    assert!(status.success(), "exit status {status:?}\n{}", app.output());
}

#[test]
fn serve_prints_the_real_port_when_port_is_zero() {
    let app = TestApp::spawn();
    assert_ne!(app.port, 0);
    let line = app
        .stdout_lines()
        .into_iter()
        .find(|l| l.starts_with("listening on http://"))
        .expect("listening line");
    assert_eq!(
        line.trim(),
        format!("listening on http://127.0.0.1:{}", app.port)
    );
    app.anonymous().get("/up").expect(200);
}

#[test]
fn serve_fails_with_non_zero_exit_when_port_is_taken() {
    let app = TestApp::spawn();
    let dir = TempDir::new().expect("tmp");
    let mut child = crate::common::app::command()
        .args(["serve", "--data-dir"])
        .arg(dir.path())
        .args(["--address", "127.0.0.1", "--port", &app.port.to_string()])
        .on_test_database()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let status = crate::common::app::eventually(
        Duration::from_secs(15),
        "the second server to exit",
        || child.try_wait().expect("try_wait"),
    );
    assert!(!status.success(), "binding a taken port must fail");
    app.anonymous().get("/up").expect(200);
}

#[test]
fn serve_dev_prints_demo_credentials_that_work_when_data_dir_is_fresh() {
    let dir = TempDir::new().expect("tmp");
    let app = TestApp::start_in(dir, demo_creds(), &["--dev"]);
    let stdout = app.stdout_lines().join("\n");
    assert!(
        stdout.contains(DEMO_EMAIL) && stdout.contains(DEMO_PASSWORD),
        "--dev prints the demo credentials: {stdout}"
    );
    app.get("/v1/entities").expect(200);
    app.client()
        .create_entity(&crate::common::app::tax_id("DEV"), "12345678");
}

#[test]
fn serve_dev_does_not_create_another_user_when_started_again() {
    let dir = TempDir::new().expect("tmp");
    let mut app = TestApp::start_in(dir, demo_creds(), &["--dev"]);
    app.get("/v1/entities").expect(200);
    app.restart();
    app.get("/v1/entities").expect(200);
    let users = app.cli(&["user", "list"], None).expect_success("user list");
    assert_eq!(users.lines().count(), 1, "one user: {users}");
    let orgs = app.cli(&["org", "list"], None).expect_success("org list");
    assert_eq!(orgs.lines().count(), 1, "one org: {orgs}");
}

#[test]
fn serve_dev_creates_no_demo_user_when_a_user_exists() {
    let dir = TempDir::new().expect("tmp");
    let creds = crate::common::app::provision(dir.path(), "Existing");
    let app = TestApp::start_in(dir, creds, &["--dev"]);
    app.get("/v1/entities").expect(200);
    app.request(
        "GET",
        "/v1/entities",
        Some((DEMO_EMAIL, DEMO_PASSWORD)),
        None,
        &[],
    )
    .expect_unauthorized(crate::common::app::INVALID);
    let users = cli_on(app.data_dir(), &["user", "list"], None).expect_success("user list");
    assert_eq!(users.lines().count(), 1, "{users}");
}

#[test]
fn serve_exits_successfully_within_10s_when_sent_sigint() {
    let mut app = TestApp::spawn();
    app.get("/v1/entities").expect(200);
    app.signal("INT");
    let status = app
        .wait_exit(Duration::from_secs(10))
        .unwrap_or_else(|| panic!("still running 10 s after SIGINT\n{}", app.output()));
    assert!(status.success(), "exit status {status:?}\n{}", app.output());
}
