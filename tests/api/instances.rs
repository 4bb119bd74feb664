//! Several instances on one PostgreSQL database (issue 27): the work is shared with
//! nothing done twice, a killed instance's work is taken over after its lease, and an
//! unreachable database is a clear error at start.

use crate::common::app::{as_u64, cli_on, run_cli, tax_id, TestApp, DEADLINE};
use crate::common::engine::{self, postgres_only};
use crate::common::receiver::{Receiver, Recorded};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

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

/// Two instances on one database with `args`, and a webhook of `event` (made through
/// the first) to a local receiver; the webhook's id.
fn two_instances_with_a_webhook(
    args: &[&str],
    event: &str,
) -> (TestApp, TestApp, Receiver, String) {
    let receiver = Receiver::start();
    let a = TestApp::spawn_with(args);
    let mut b = a.beside(args);
    b.start();
    let hook = a.client().create_webhook(&receiver.url(), Some(&[event]));
    let hook_id = hook["id"].as_str().expect("id").to_string();
    (a, b, receiver, hook_id)
}

/// The webhook's deliveries once none is pending: a delivery's outcome commits a moment
/// after its receiver has the request.
fn settled_deliveries(app: &TestApp, hook_id: &str) -> Vec<serde_json::Value> {
    let path = format!("/v1/webhooks/{hook_id}/deliveries");
    crate::common::app::eventually(DEADLINE, "every delivery's outcome", || {
        let deliveries = app.client().list_all(&path, 500);
        deliveries
            .iter()
            .all(|d| d["status"] != "pending")
            .then_some(deliveries)
    })
}

/// The ids of the resources the received events name.
fn resource_ids(received: &[Recorded]) -> HashSet<String> {
    received
        .iter()
        .map(|r| {
            r.json()["resource"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect()
}

#[test]
fn two_instances_share_one_database_and_no_job_or_delivery_runs_twice() {
    postgres_only!("two instances share a PostgreSQL database");
    let (a, b, receiver, hook_id) =
        two_instances_with_a_webhook(&["--sim-latency", "200ms"], "entity.update");
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
    let resources = resource_ids(&received);
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
    // One delivery per event, as both instances list it, each succeeded at its first
    // attempt.
    let deliveries = settled_deliveries(&b, &hook_id);
    assert_eq!(deliveries.len(), entities.len());
    assert!(
        deliveries
            .iter()
            .all(|d| d["status"] == "succeeded" && as_u64(&d["attempts"]) == 1),
        "{deliveries:?}"
    );
}

#[test]
fn two_instances_run_extractions_and_fan_outs_at_once_with_nothing_twice() {
    postgres_only!("two instances share a PostgreSQL database");
    use crate::common::invoices::{
        create_extraction, date, id_of, invoices_by_uuid, sandbox, valid_entity,
        wait_extraction_done, withheld,
    };
    let (a, b, receiver, hook_id) =
        two_instances_with_a_webhook(&["--sim-latency", "20ms"], "invoice.created");
    // An extraction queued through each instance, both running while the other's
    // invoice.created events fan out; either instance may run any of the jobs.
    let runs = [
        (&a, "BIG900101AAA", "2026-03-02", "2026-03-02"),
        (&b, "EKU9003173C9", "2026-01-01", "2026-01-31"),
    ];
    let started: Vec<(String, String, u64)> = runs
        .iter()
        .map(|(app, tax_id, from, to)| {
            let (from, to) = (date(from), date(to));
            let expected = sandbox(tax_id, "issued", from, to);
            let visible = (expected.len() - withheld(&expected)) as u64;
            let client = app.client();
            let entity_id = id_of(&valid_entity(&client, tax_id, "sandbox1"));
            let run = create_extraction(&client, &entity_id, from, to, "issued");
            (entity_id, id_of(&run), visible)
        })
        .collect();
    let mut announced_total = 0;
    let mut invoice_ids = HashSet::new();
    for (entity_id, run, visible) in &started {
        let done = wait_extraction_done(&b.client(), run);
        assert_eq!(done["status"], "finished", "{done}");
        let listed = invoices_by_uuid(&a.client(), entity_id);
        assert_eq!(listed.len() as u64, *visible, "every invoice once");
        invoice_ids.extend(listed.values().map(id_of));
        announced_total += visible;
    }
    receiver.wait_for(announced_total as usize, DEADLINE * 4);
    // A quiet moment for a second delivery of any event to arrive, were there one.
    let delivered = crate::common::app::quiet(Duration::from_millis(500), "deliveries", || {
        receiver.count()
    });
    assert_eq!(
        delivered as u64, announced_total,
        "no event delivered twice"
    );
    let announced = resource_ids(&receiver.requests());
    assert_eq!(announced, invoice_ids, "one invoice.created per invoice");
    let deliveries = settled_deliveries(&b, &hook_id);
    assert_eq!(deliveries.len() as u64, announced_total);
    assert!(
        deliveries
            .iter()
            .all(|d| d["status"] == "succeeded" && as_u64(&d["attempts"]) == 1),
        "{deliveries:?}"
    );
    // Each extraction's job ran to its end once, on one instance or the other.
    let ends = crate::common::app::eventually(DEADLINE, "both extractions' log lines", || {
        let ends: Vec<String> = [&a, &b]
            .iter()
            .flat_map(|app| jobs_done(app, "run_extraction"))
            .collect();
        (ends.len() >= 2).then_some(ends)
    });
    let distinct: HashSet<_> = ends.iter().collect();
    assert_eq!((ends.len(), distinct.len()), (2, 2), "{ends:?}");
}

#[test]
fn a_killed_instances_validation_is_finished_by_another_after_its_lease() {
    postgres_only!("a second instance takes over on a shared PostgreSQL database");
    // Each SAT call takes 3 s: the validation is mid-call when the instance dies.
    let args = [
        "--sim-latency",
        "3s",
        "--job-lease",
        "2s",
        "--metrics-address",
        "127.0.0.1:0",
    ];
    let mut a = TestApp::spawn_with(&args);
    let metrics = crate::flows::metrics::metrics_url(&a);
    let e = a.client().create_entity(&tax_id("KIL"), "12345678");
    let id = e["id"].as_str().expect("id").to_string();
    // Killed once its validation is running (mid-call: each call takes 3 s).
    let running = r#"cfdi_extract_jobs{kind="validate_credential",status="running"}"#;
    crate::common::app::eventually(DEADLINE, "the validation running", || {
        let text = crate::flows::metrics::scrape(&metrics);
        (crate::flows::metrics::value(&text, running) == Some(1.0)).then_some(())
    });
    a.kill();
    let mut b = a.beside(&args);
    b.start();
    let entity = b.client().wait_for_credential(&id, "valid");
    assert_eq!(entity["credential_status"], "valid");
    // Its log line may follow the commit that made the credential valid by a moment.
    let done = crate::common::app::eventually(DEADLINE, "the validation's log line", || {
        let done = jobs_done(&b, "validate_credential");
        (!done.is_empty()).then_some(done)
    });
    assert_eq!(done.len(), 1, "{:?}", b.stderr_lines());
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

/// What one client's load on one instance was answered.
#[derive(Default, Debug)]
struct Load {
    /// Entities answered 201.
    created: Vec<String>,
    /// Requests answered 503 saying they did nothing (the client moved on).
    unavailable: usize,
    /// Requests answered 503 saying their outcome is unknown (retried with their key).
    unknown: usize,
}

#[test]
#[ignore = "restarts its PostgreSQL server: .ci/run runs it alone, on a server of its own"]
fn postgresql_restart_under_load_loses_nothing_and_both_instances_recover() {
    postgres_only!("a restart of the shared PostgreSQL database");
    let (a, b, receiver, hook_id) = two_instances_with_a_webhook(
        &["--sim-latency", "200ms", "--job-lease", "2s"],
        "entity.update",
    );
    // One client per instance creates entities without pause; each queues a
    // validation, whose end queues a delivery. Each creation carries its own
    // Idempotency-Key: a 503 whose outcome is unknown is retried with it, one that
    // says it did nothing is taken at its word (a new entity, a new key), so an
    // entity left behind by such a 503 shows below.
    let stop = Arc::new(AtomicBool::new(false));
    let created = Arc::new(AtomicUsize::new(0));
    let loads: Vec<_> = [a.client(), b.client()]
        .into_iter()
        .map(|client| {
            let (stop, created) = (stop.clone(), created.clone());
            std::thread::spawn(move || {
                let mut load = Load::default();
                let mut next = None;
                while !stop.load(Ordering::SeqCst) {
                    let (key, body) = next.take().unwrap_or_else(|| {
                        let body = serde_json::json!({
                            "tax_id": tax_id("RST"), "name": "Restart", "ciec_password": "12345678"
                        });
                        (uuid::Uuid::new_v4().to_string(), body)
                    });
                    let bytes = serde_json::to_vec(&body).expect("json");
                    let headers = [
                        ("Content-Type", "application/json"),
                        ("Idempotency-Key", key.as_str()),
                    ];
                    let resp = client.request("POST", "/v1/entities", Some(&bytes), &headers);
                    match resp.status {
                        201 => {
                            let id = resp.json()["id"].as_str().expect("id").to_string();
                            load.created.push(id);
                            created.fetch_add(1, Ordering::SeqCst);
                        }
                        503 if resp.text().contains("unknown") => {
                            load.unknown += 1;
                            next = Some((key, body));
                            crate::common::app::retry_pause();
                        }
                        503 => {
                            load.unavailable += 1;
                            crate::common::app::retry_pause();
                        }
                        other => panic!("creating an entity: {other} {}", resp.text()),
                    }
                }
                load
            })
        })
        .collect();
    let wait_created = |n: usize, what: &str| {
        crate::common::app::eventually(Duration::from_secs(60), what, || {
            (created.load(Ordering::SeqCst) >= n).then_some(())
        })
    };
    wait_created(6, "entities created before the restart");
    crate::common::engine::restart_server();
    let before = created.load(Ordering::SeqCst);
    wait_created(before + 6, "entities created after the restart");
    stop.store(true, Ordering::SeqCst);
    let loads: Vec<Load> = loads
        .into_iter()
        .map(|l| l.join().expect("load thread"))
        .collect();
    let unavailable: Vec<(usize, usize)> =
        loads.iter().map(|l| (l.unavailable, l.unknown)).collect();
    eprintln!("answered 503 (did nothing, outcome unknown) during the restart, by instance: {unavailable:?}");
    for app in [&a, &b] {
        for l in app.stderr_lines() {
            if l.contains("WARN") || l.contains("ERROR") {
                eprintln!("LOG {l}");
            }
        }
    }
    for app in [&a, &b] {
        crate::common::app::eventually(DEADLINE, "/up to answer 200", || {
            (app.anonymous().get("/up").status == 200).then_some(())
        });
    }
    // Every entity answered 201 exists, and nothing else: a 503 that said it did
    // nothing left nothing behind.
    let created: HashSet<String> = loads.iter().flat_map(|l| l.created.clone()).collect();
    let listed: HashSet<String> = b
        .client()
        .list_all("/v1/entities", 100)
        .iter()
        .map(|e| e["id"].as_str().expect("id").to_string())
        .collect();
    assert_eq!(listed, created);
    // Every validation finished (a job whose instance lost the database mid-run is
    // requeued after its lease), and each entity's outcome was delivered.
    for id in &created {
        a.client().wait_for_credential(id, "valid");
    }
    let received = receiver.wait_for(created.len(), DEADLINE);
    let resources = resource_ids(&received);
    assert_eq!(resources, created);
    let deliveries = settled_deliveries(&b, &hook_id);
    assert_eq!(deliveries.len(), created.len(), "one delivery per event");
    assert!(
        deliveries.iter().all(|d| d["status"] == "succeeded"),
        "{deliveries:?}"
    );
}

#[test]
fn an_unreachable_database_at_start_is_a_clear_error() {
    let dir = tempfile::TempDir::new().expect("temp dir");
    let data_dir = dir.path().to_string_lossy().to_string();
    both_refuse_to_start(&data_dir, "postgres://cfdi@127.0.0.1:1/none", "refused");
}

/// `serve` and a subcommand on `url` both exit non-zero with one clear error naming
/// `cause`: no panic, and never the URL (it may carry a password).
fn both_refuse_to_start(data_dir: &str, url: &str, cause: &str) {
    for args in [vec!["serve", "--port", "0"], vec!["org", "create", "Acme"]] {
        let mut full = vec!["--data-dir", data_dir, "--database-url", url];
        full.extend(args);
        let out = run_cli(&full, None);
        assert!(!out.status.success(), "{full:?} succeeded");
        assert!(
            out.stderr
                .contains("cannot connect to the PostgreSQL database of --database-url")
                && out.stderr.contains(cause),
            "{full:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
        assert!(!out.stderr.contains(url), "{}", out.stderr);
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
    let current = format!(
        "schema version {}: current",
        cfdi_extract::db::migrate::VERSION
    );
    assert!(out.contains(&current), "{out}");
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

// ---------------------------------------------------------------------------------------
// TLS to the database (`sslmode`, `sslrootcert`: src/db/postgres/tls.rs)

/// The test server's CA, or why the test is skipped.
macro_rules! tls_server_ca {
    () => {
        match crate::common::engine::server_ca() {
            Some(ca) => ca,
            None => {
                eprintln!(
                    "skipped: no {} (the test server offers no TLS)",
                    crate::common::engine::TEST_POSTGRES_CA
                );
                return;
            }
        }
    };
}

/// `dir`'s database URL with TLS parameters.
fn tls_url(dir: &std::path::Path, parameters: &[(&str, &str)]) -> String {
    let mut url = engine::database_url(dir).expect("a PostgreSQL database");
    for (key, value) in parameters {
        url = engine::with_parameter(&url, key, value);
    }
    url
}

#[test]
fn verify_full_against_the_servers_ca_serves_and_every_connection_is_encrypted() {
    postgres_only!("TLS to the PostgreSQL server");
    let ca = tls_server_ca!();
    let mut app = TestApp::spawn();
    let url = tls_url(
        app.data_dir(),
        &[("sslmode", "verify-full"), ("sslrootcert", &ca)],
    );
    app.kill();
    app.env.push((engine::DATABASE_URL.to_string(), url));
    app.start();
    let entity = app.client().create_entity(&tax_id("TLS"), "12345678");
    let id = entity["id"].as_str().expect("id");
    let read = app.get(&format!("/v1/entities/{id}")).expect(200);
    assert_eq!(read["id"], entity["id"]);
    assert_eq!(read["tax_id"], entity["tax_id"]);
    // The pool's connections and the wake listener's, as the server sees them.
    let name = engine::database_name(app.data_dir());
    let mut db = engine::TestDb::open(app.data_dir());
    let sessions = crate::common::app::eventually(DEADLINE, "two sessions of the server", || {
        let rows = db.rows(
            "SELECT s.ssl::text, coalesce(s.version, '') FROM pg_stat_ssl s \
             JOIN pg_stat_activity a ON a.pid = s.pid \
             WHERE a.datname = ?1 AND a.application_name = 'cfdi-extract'",
            &[&name],
        );
        (rows.len() >= 2).then_some(rows)
    });
    for row in &sessions {
        assert_eq!(row[0].text().as_deref(), Some("true"), "{sessions:?}");
        assert!(
            row[1].text().is_some_and(|v| v.starts_with("TLSv1.")),
            "{sessions:?}"
        );
    }
}

#[test]
fn verify_full_against_another_ca_is_a_clear_error_at_start() {
    postgres_only!("TLS to the PostgreSQL server");
    let _ = tls_server_ca!();
    let dir = tempfile::TempDir::new().expect("temp dir");
    let other = dir.path().join("other-ca.pem");
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args(["ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"])
        .args(["-subj", "/CN=not the test server's CA", "-keyout"])
        .arg(dir.path().join("other-ca.key"))
        .arg("-out")
        .arg(&other)
        .output()
        .expect("run openssl (the test server's certificates were made with it)");
    assert!(made.status.success(), "{made:?}");
    let data_dir = dir.path().join("data");
    let data = data_dir.to_string_lossy().to_string();
    let url = tls_url(
        &data_dir,
        &[
            ("sslmode", "verify-full"),
            ("sslrootcert", &other.to_string_lossy()),
        ],
    );
    both_refuse_to_start(&data, &url, "invalid peer certificate");
}

#[test]
fn sslmode_require_connects_without_a_ca() {
    postgres_only!("TLS to the PostgreSQL server");
    let _ = tls_server_ca!();
    let dir = tempfile::TempDir::new().expect("temp dir");
    let url = tls_url(dir.path(), &[("sslmode", "require")]);
    let data = dir.path().to_string_lossy().to_string();
    let out = run_cli(
        &[
            "--data-dir",
            &data,
            "--database-url",
            &url,
            "org",
            "create",
            "Acme",
        ],
        None,
    );
    let org = out.expect_success("org create over sslmode=require");
    assert!(uuid::Uuid::parse_str(&org).is_ok(), "{org}");
}

#[test]
fn an_unknown_sslmode_or_an_unreadable_sslrootcert_is_a_clear_error() {
    // Refused before connecting: no server needed, on either engine.
    let dir = tempfile::TempDir::new().expect("temp dir");
    let data = dir.path().to_string_lossy().to_string();
    let password = "s3cret-pw";
    let server = format!("postgres://cfdi:{password}@127.0.0.1:1/none");
    for (url, says) in [
        (
            format!("{server}?sslmode=bogus"),
            "unknown sslmode \"bogus\" (one of: disable, allow, prefer, require, verify-ca, \
             verify-full)",
        ),
        (
            format!("{server}?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem"),
            "cannot connect to the PostgreSQL database of --database-url: cannot read the \
             sslrootcert file /nonexistent/ca.pem",
        ),
    ] {
        let out = run_cli(
            &[
                "--data-dir",
                &data,
                "--database-url",
                &url,
                "serve",
                "--port",
                "0",
            ],
            None,
        );
        assert!(!out.status.success(), "{url} accepted");
        assert!(out.stderr.contains(says), "{url}: {}", out.stderr);
        assert!(!out.stderr.contains(password), "{}", out.stderr);
        assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    }
}

#[test]
fn one_organizations_held_lock_stops_its_own_writes_and_no_other_organizations() {
    postgres_only!("organizations' writes side by side on PostgreSQL");
    use crate::common::engine::TestDb;
    use crate::common::invoices::{
        create_extraction, date, id_of, invoices_by_uuid, sandbox, valid_entity,
        wait_extraction_done, withheld,
    };
    let args = ["--sim-latency", "20ms"];
    let a = TestApp::spawn_with(&args);
    let mut b = a.beside(&args);
    b.start();
    // Two organizations, one served by each instance, each with its webhook.
    let first = a.client();
    let second = b.client_as(&a.create_user_in_new_org());
    let (r1, r2) = (Receiver::start(), Receiver::start());
    first.create_webhook(&r1.url(), Some(&["invoice.created"]));
    second.create_webhook(&r2.url(), Some(&["invoice.created"]));
    let tax_id = "EKU9003173C9";
    let (from, to) = (date("2026-02-02"), date("2026-02-06"));
    let expected = sandbox(tax_id, "issued", from, to);
    let visible = expected.len() - withheld(&expected);
    let e1 = id_of(&valid_entity(&first, tax_id, "sandbox1"));
    let e2 = id_of(&valid_entity(&second, tax_id, "sandbox1"));
    // The first organization's turn is held from outside, as one of its long
    // transactions would hold it.
    let mut holder = TestDb::open(a.data_dir());
    holder.batch("BEGIN");
    holder.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended(?1, 0))",
        &[&format!("org:{}", a.creds.org_id)],
    );
    let run1 = id_of(&create_extraction(&first, &e1, from, to, "issued"));
    let run2 = id_of(&create_extraction(&second, &e2, from, to, "issued"));
    // The second organization's extraction and fan-out go through meanwhile...
    let done = wait_extraction_done(&second, &run2);
    assert_eq!(done["status"], "finished", "{done}");
    assert_eq!(invoices_by_uuid(&second, &e2).len(), visible);
    r2.wait_for(visible, DEADLINE);
    // ...while the first's waits on its own turn: its run cannot even say it started.
    let waiting = first.get(&format!("/v1/extractions/{run1}")).expect(200);
    assert_eq!(waiting["status"], "pending", "{waiting}");
    assert_eq!(r1.count(), 0, "no event of the first organization yet");
    holder.batch("COMMIT");
    let done = wait_extraction_done(&first, &run1);
    assert_eq!(done["status"], "finished", "{done}");
    r1.wait_for(visible, DEADLINE);
    assert_eq!(invoices_by_uuid(&first, &e1).len(), visible);
}
