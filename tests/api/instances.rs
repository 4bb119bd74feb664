//! Several instances on one PostgreSQL database (issue 27): the work is shared with
//! nothing done twice, a killed instance's work is taken over after its lease, and an
//! unreachable database is a clear error at start.

use crate::common::app::{as_u64, cli_on, run_cli, tax_id, TestApp, DEADLINE};
use crate::common::engine::postgres_only;
use crate::common::receiver::Receiver;
use std::collections::{HashMap, HashSet};

/// Lines of `app`'s log saying a job of `kind` finished, by job id.
fn jobs_done(app: &TestApp, kind: &str) -> Vec<String> {
    app.stderr_lines()
        .into_iter()
        .filter(|l| l.contains(&format!(" {kind} ")) && l.contains(": done"))
        .filter_map(|l| {
            let after = l.split("job ").nth(1)?;
            Some(after.split_whitespace().next()?.to_string())
        })
        .collect()
}

#[test]
fn two_instances_share_one_database_and_no_job_or_delivery_runs_twice() {
    postgres_only!("two instances share a PostgreSQL database");
    let receiver = Receiver::start();
    let args = ["--sim-latency", "200ms"];
    let a = TestApp::spawn_with(&args);
    let mut b = a.beside(&args);
    b.start();
    let hook = a
        .client()
        .create_webhook(&receiver.url(), Some(&["entity.update"]));
    let hook_id = hook["id"].as_str().expect("id").to_string();
    // Half the entities through each instance: each queues a validation whose end
    // queues a delivery, and either instance may run either.
    let entities: Vec<String> = (0..12)
        .map(|i| {
            let app = if i % 2 == 0 { &a } else { &b };
            let e = app.client().create_entity(&tax_id("TWO"), "12345678");
            e["id"].as_str().expect("id").to_string()
        })
        .collect();
    for id in &entities {
        b.client().wait_for_credential(id, "valid");
    }
    let received = receiver.wait_for(entities.len(), DEADLINE);
    let ids: Vec<_> = received
        .iter()
        .map(|r| r.header("webhook-id").unwrap_or_default().to_string())
        .collect();
    let distinct: HashSet<_> = ids.iter().collect();
    assert_eq!(
        distinct.len(),
        ids.len(),
        "an event delivered twice: {ids:?}"
    );
    let resources: HashSet<String> = received
        .iter()
        .map(|r| {
            r.json()["resource"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(resources, entities.iter().cloned().collect());
    // Every validation ran once, on one instance or the other (its log line may follow
    // the commit that made the credential valid by a moment).
    let runs = crate::common::app::eventually(DEADLINE, "a log line per validation", || {
        let mut runs: HashMap<String, usize> = HashMap::new();
        let done = [&a, &b].map(|app| jobs_done(app, "validate_credential"));
        for id in done.iter().flatten() {
            *runs.entry(id.clone()).or_default() += 1;
        }
        (runs.len() >= entities.len()).then_some(runs)
    });
    assert_eq!(runs.len(), entities.len(), "{runs:?}");
    assert!(runs.values().all(|n| *n == 1), "a job ran twice: {runs:?}");
    // One delivery per event, as both instances list it.
    let deliveries = b.client().deliveries(&hook_id);
    assert_eq!(deliveries.len(), entities.len());
    assert!(deliveries
        .iter()
        .all(|d| d["status"] == "succeeded" && as_u64(&d["attempts"]) == 1));
}

#[test]
fn a_killed_instances_validation_is_finished_by_another_after_its_lease() {
    postgres_only!("a second instance takes over on a shared PostgreSQL database");
    // Each SAT call takes 3 s: the validation is mid-call when the instance dies.
    let args = ["--sim-latency", "3s", "--job-lease", "2s"];
    let mut a = TestApp::spawn_with(&args);
    let e = a.client().create_entity(&tax_id("KIL"), "12345678");
    let id = e["id"].as_str().expect("id").to_string();
    std::thread::sleep(std::time::Duration::from_millis(500));
    a.kill();
    let mut b = a.beside(&args);
    b.start();
    let entity = b.client().wait_for_credential(&id, "valid");
    assert_eq!(entity["credential_status"], "valid");
    assert_eq!(
        jobs_done(&b, "validate_credential").len(),
        1,
        "{:?}",
        b.stderr_lines()
    );
}

#[test]
fn a_killed_instances_delivery_is_made_by_another_after_its_lease() {
    postgres_only!("a second instance takes over on a shared PostgreSQL database");
    let mut receiver = Receiver::down();
    let args = ["--job-lease", "2s", "--webhook-retry-schedule", "0s,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms"];
    let mut a = TestApp::spawn_with(&args);
    let hook = a
        .client()
        .create_webhook(&receiver.url(), Some(&["entity.update"]));
    let hook_id = hook["id"].as_str().expect("id").to_string();
    a.client().create_entity(&tax_id("FAN"), "12345678");
    crate::common::app::eventually(DEADLINE, "a failed delivery attempt", || {
        a.client()
            .deliveries(&hook_id)
            .into_iter()
            .find(|d| as_u64(&d["attempts"]) >= 1)
    });
    a.kill();
    let mut b = a.beside(&args);
    b.start();
    receiver.resume();
    let done = crate::common::app::eventually(DEADLINE, "the delivery to succeed", || {
        b.client()
            .deliveries(&hook_id)
            .into_iter()
            .find(|d| d["status"] == "succeeded")
    });
    assert!(as_u64(&done["attempts"]) >= 2, "{done}");
    assert_eq!(b.client().deliveries(&hook_id).len(), 1);
}

#[test]
fn an_unreachable_database_at_start_is_a_clear_error() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let data_dir = dir.path().to_string_lossy().to_string();
    for args in [vec!["serve", "--port", "0"], vec!["org", "create", "Acme"]] {
        let mut full = vec![
            "--data-dir",
            &data_dir,
            "--database-url",
            "postgres://cfdi@127.0.0.1:1/none",
        ];
        full.extend(args);
        let out = run_cli(&full, None);
        assert!(!out.status.success(), "{full:?} succeeded");
        assert!(
            out.stderr
                .contains("cannot connect to the PostgreSQL database of --database-url")
                && out.stderr.contains("refused"),
            "{full:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

#[test]
fn check_reads_a_postgresql_database_and_backup_names_its_tools() {
    postgres_only!("check and backup against the PostgreSQL engine");
    let app = TestApp::spawn();
    app.client().create_entity(&tax_id("CHK"), "12345678");
    let dir = app.data_dir();
    let ok = cli_on(dir, &["check"], None);
    let out = ok.expect_success("check");
    assert!(out.contains("schema version 17: current"), "{out}");
    assert!(out.contains("decrypts all 1 sealed credentials"), "{out}");
    let other_key = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";
    let wrong = cli_on(dir, &["check", "--encryption-key", other_key], None);
    assert!(!wrong.status.success(), "{}", wrong.stdout);
    let to = dir.join("never.db");
    let backup = cli_on(dir, &["backup", "--to", &to.to_string_lossy()], None);
    assert!(!backup.status.success());
    assert!(
        backup.stderr.contains("pg_dump") && backup.stderr.contains("pg_restore"),
        "{}",
        backup.stderr
    );
    assert!(!to.exists(), "nothing written");
}
