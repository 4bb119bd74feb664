//! The `org` and `user` subcommands, on fresh directories and next to a running server.

use crate::common::app::{cli_on, command, email, run_cli, run_command, TestApp};
use tempfile::TempDir;

/// Asserts a failed command with a one-line message on stderr.
#[track_caller]
fn assert_fails_with_one_line(out: &crate::common::app::CliOutput, what: &str) {
    assert!(
        !out.status.success(),
        "{what} should fail\nstdout: {}\nstderr: {}",
        out.stdout,
        out.stderr
    );
    let lines: Vec<&str> = out.stderr.trim().lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: one line on stderr, got {:?}",
        out.stderr
    );
    assert!(!lines[0].trim().is_empty(), "{what}: empty message");
}

fn create_org(dir: &std::path::Path, name: &str) -> String {
    let id = cli_on(dir, &["org", "create", name], None).expect_success("org create");
    assert!(
        uuid::Uuid::parse_str(&id).is_ok(),
        "org create prints the id, printed {id:?}"
    );
    id
}

fn create_user(
    dir: &std::path::Path,
    org: &str,
    email: &str,
    password: &str,
) -> crate::common::app::CliOutput {
    cli_on(
        dir,
        &[
            "user",
            "create",
            "--org",
            org,
            "--email",
            email,
            "--password-stdin",
        ],
        Some(password),
    )
}

#[test]
fn org_create_prints_an_id_that_org_list_shows() {
    let dir = TempDir::new().expect("tmp");
    let id = create_org(dir.path(), "Acme SA de CV");
    let other = create_org(dir.path(), "Otra SA");
    assert_ne!(id, other);
    let list = cli_on(dir.path(), &["org", "list"], None).expect_success("org list");
    let line = list
        .lines()
        .find(|l| l.contains(&id))
        .unwrap_or_else(|| panic!("org list should show {id}: {list}"));
    assert!(line.contains("Acme SA de CV"), "{line}");
    assert!(list.contains(&other), "{list}");
}

#[test]
fn org_create_works_when_data_dir_does_not_exist_yet() {
    let dir = TempDir::new().expect("tmp");
    let fresh = dir.path().join("nested").join("data");
    assert!(!fresh.exists());
    let id = create_org(&fresh, "Fresh");
    assert!(fresh.exists(), "the data dir is created");
    let list = cli_on(&fresh, &["org", "list"], None).expect_success("org list");
    assert!(list.contains(&id), "{list}");
    // `user list` on an empty (but initialised) directory prints nothing and succeeds.
    let users = cli_on(&fresh, &["user", "list"], None).expect_success("user list");
    assert!(users.is_empty(), "{users}");
}

#[test]
fn cli_accepts_data_dir_before_the_subcommand_and_from_env() {
    let dir = TempDir::new().expect("tmp");
    let d = dir.path().to_string_lossy().to_string();
    let id = run_cli(&["--data-dir", &d, "org", "create", "Before"], None)
        .expect_success("--data-dir before");
    let out = run_command(
        command()
            .env("CFDI_EXTRACT_DATA_DIR", &d)
            .args(["org", "list"]),
        None,
    )
    .expect_success("org list with env");
    assert!(out.contains(&id), "{out}");
}

#[test]
fn user_create_succeeds_and_user_list_shows_it() {
    let dir = TempDir::new().expect("tmp");
    let org = create_org(dir.path(), "Acme");
    let e = email("list");
    let uid = create_user(dir.path(), &org, &e, "secret-pw\n").expect_success("user create");
    assert!(
        uuid::Uuid::parse_str(&uid).is_ok(),
        "user create prints the id: {uid:?}"
    );
    // By org name as well as by id.
    let e2 = email("byname");
    create_user(dir.path(), "Acme", &e2, "secret-pw").expect_success("user create by org name");

    let all = cli_on(dir.path(), &["user", "list"], None).expect_success("user list");
    assert!(all.contains(&e) && all.contains(&e2), "{all}");
    let of_org = cli_on(dir.path(), &["user", "list", "--org", &org], None)
        .expect_success("user list --org");
    assert!(of_org.contains(&e), "{of_org}");
    let other = create_org(dir.path(), "Other");
    let of_other = cli_on(dir.path(), &["user", "list", "--org", &other], None)
        .expect_success("user list --org other");
    assert!(!of_other.contains(&e), "{of_other}");
}

#[test]
fn user_create_fails_when_org_is_unknown() {
    let dir = TempDir::new().expect("tmp");
    create_org(dir.path(), "Acme");
    let out = create_user(dir.path(), "No Such Org", &email("x"), "secret-pw");
    assert_fails_with_one_line(&out, "user create with an unknown org");
    let out = create_user(
        dir.path(),
        "0190b5a4-0000-7000-8000-000000000000",
        &email("x"),
        "secret-pw",
    );
    assert_fails_with_one_line(&out, "user create with an unknown org id");
}

#[test]
fn user_create_fails_when_email_exists_in_another_case() {
    let dir = TempDir::new().expect("tmp");
    let org = create_org(dir.path(), "Acme");
    let other = create_org(dir.path(), "Other");
    let e = email("dup");
    create_user(dir.path(), &org, &e, "secret-pw").expect_success("first user");
    let out = create_user(dir.path(), &org, &e.to_uppercase(), "secret-pw");
    assert_fails_with_one_line(&out, "duplicate email, other case");
    // Unique across the service, not per organization.
    let out = create_user(dir.path(), &other, &e, "secret-pw");
    assert_fails_with_one_line(&out, "duplicate email in another org");
}

#[test]
fn user_create_fails_when_password_is_empty() {
    let dir = TempDir::new().expect("tmp");
    let org = create_org(dir.path(), "Acme");
    for input in ["", "\n"] {
        let e = email("empty");
        let out = create_user(dir.path(), &org, &e, input);
        assert_fails_with_one_line(&out, &format!("empty password {input:?}"));
        let list = cli_on(dir.path(), &["user", "list"], None).expect_success("user list");
        assert!(!list.contains(&e), "no user is created: {list}");
    }
}

#[test]
fn user_set_password_fails_when_email_is_unknown() {
    let dir = TempDir::new().expect("tmp");
    create_org(dir.path(), "Acme");
    let out = cli_on(
        dir.path(),
        &[
            "user",
            "set-password",
            "--email",
            "ghost@example.com",
            "--password-stdin",
        ],
        Some("whatever\n"),
    );
    assert_fails_with_one_line(&out, "set-password for an unknown email");
}

#[test]
fn cli_works_on_the_data_dir_when_server_is_running() {
    let app = TestApp::spawn();
    app.get("/v1/entities").expect(200);
    let org = app
        .cli(&["org", "create", "Created While Serving"], None)
        .expect_success("org create while serving");
    let list = app.cli(&["org", "list"], None).expect_success("org list");
    assert!(list.contains(&org), "{list}");
    let e = email("live");
    app.cli(
        &[
            "user",
            "create",
            "--org",
            &org,
            "--email",
            &e,
            "--password-stdin",
        ],
        Some("live-password\n"),
    )
    .expect_success("user create while serving");
    let users = app.cli(&["user", "list"], None).expect_success("user list");
    assert!(
        users.contains(&e) && users.contains(&app.creds.email),
        "{users}"
    );
    // The server sees the new user at once.
    app.request(
        "GET",
        "/v1/entities",
        Some((&e, "live-password")),
        None,
        &[],
    )
    .expect(200);
}
