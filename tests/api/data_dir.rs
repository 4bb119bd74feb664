//! What the data directory holds stays private: file modes, the encryption key, logs.

use crate::common::app::{command, eventually, tax_id, TestApp, DEADLINE};
use crate::common::engine::{engine, Engine, OnTestDatabase};
use crate::common::receiver::Receiver;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Stdio;

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[test]
fn data_directory_is_0700_and_every_file_in_it_0600() {
    let parent = tempfile::tempdir().expect("tmp");
    let dir = parent.path().join("fresh");
    let app_dir = tempfile::TempDir::new_in(parent.path()).expect("tmp");
    // A directory the service creates itself, and one a CLI command created first.
    let out = crate::common::app::cli_on(&dir, &["org", "list"], None);
    out.expect_success("org list");
    assert_eq!(mode(&dir), 0o700);

    let creds = crate::common::app::provision(app_dir.path(), "Modes");
    let app = TestApp::start_in(app_dir, creds, &[]);
    let e = app.client().create_entity(&tax_id("MOD"), "12345678");
    app.client()
        .wait_for_credential(e["id"].as_str().expect("id"), "valid");
    assert_eq!(mode(app.data_dir()), 0o700);
    // On PostgreSQL the service's database is not a file here; the rest is.
    let database: &[&str] = match engine() {
        Engine::Sqlite => &[
            "cfdi-extract.db",
            "cfdi-extract.db-wal",
            "cfdi-extract.db-shm",
        ],
        Engine::Postgres => &[],
    };
    for name in database.iter().chain(&["secret.key", "sandbox.db"]) {
        assert_eq!(mode(&app.data_dir().join(name)), 0o600, "{name}");
    }
}

#[test]
fn serve_refuses_to_start_when_the_key_beside_sealed_credentials_is_missing() {
    let mut app = TestApp::spawn();
    app.client().create_entity(&tax_id("KEY"), "12345678");
    app.kill();
    let key = app.data_dir().join("secret.key");
    std::fs::remove_file(&key).expect("remove the key");

    let dir = app.data_dir().to_string_lossy().to_string();
    let mut child = command()
        .args(["serve", "--data-dir", &dir, "--port", "0"])
        .on_test_database()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let status = eventually(DEADLINE, "serve to refuse to start without its key", || {
        child.try_wait().expect("wait")
    });
    let out = child.wait_with_output().expect("output");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!status.success());
    assert!(
        stderr.contains("secret.key is missing") && stderr.contains("restore"),
        "{stderr}"
    );
    assert!(!key.exists(), "no new key was written");
}

#[test]
fn no_secret_reaches_the_log_at_trace_level() {
    let receiver = Receiver::start();
    let dir = tempfile::TempDir::new().expect("tmp");
    let creds = crate::common::app::provision(dir.path(), "Trace");
    let mut app = TestApp::start_in(dir, creds, &[]);
    app.kill();
    app.env = vec![("RUST_LOG".into(), "trace,ureq_proto::client=trace".into())];
    app.start();
    let hook = app.client().create_webhook(&receiver.url(), None);
    let token = hook["token"].as_str().expect("token").to_string();
    let e = app.client().create_entity(&tax_id("TRC"), "s3cr3tPw");
    receiver.wait_for_body("the entity.update", DEADLINE, |b| {
        b["resource"]["id"] == e["id"]
    });
    let output = app.output();
    // RUST_LOG took effect: the default filter silences rocket entirely.
    assert!(
        output.contains("rocket::launch"),
        "trace logging is on:\n{output}"
    );
    let secret_part = token.trim_start_matches("whsec_");
    // HTTP clients dump requests 16 bytes a line: look for any 10-character piece.
    for secret in [secret_part, "s3cr3tPw", app.creds.password.as_str()] {
        let chars: Vec<char> = secret.chars().collect();
        for piece in chars.windows(chars.len().min(10)) {
            let piece: String = piece.iter().collect();
            assert!(
                !output.contains(&piece),
                "{piece:?} of {secret:?} in the log:\n{output}"
            );
        }
    }
}
