//! `cfdi-extract healthcheck`: the container health check, through the binary.

use crate::common::app::{command, run_command, TestApp};

#[test]
fn healthcheck_exits_0_while_the_server_answers_and_1_when_it_does_not() {
    let mut app = TestApp::spawn();
    let port = app.port.to_string();
    let ok = run_command(
        command().args(["healthcheck", "--port", &port, "--address", "0.0.0.0"]),
        None,
    );
    assert!(ok.status.success(), "{ok:?}");
    assert!(ok.stdout.contains("/up: ok"), "{ok:?}");
    // The port comes from the environment too, as in the container image.
    let by_env = run_command(
        command().arg("healthcheck").env("CFDI_EXTRACT_PORT", &port),
        None,
    );
    assert!(by_env.status.success(), "{by_env:?}");

    app.kill();
    let down = run_command(
        command().args(["healthcheck", "--port", &port, "--timeout", "2s"]),
        None,
    );
    assert_eq!(down.status.code(), Some(1), "{down:?}");
    assert!(
        down.stderr.contains(&format!("127.0.0.1:{port}/up")),
        "{down:?}"
    );
}
