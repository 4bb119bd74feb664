//! The SAT's status of each invoice (`sat_status`), through the binary against a fake
//! ConsultaCFDIService answering with the recorded and documented SOAP answers.

use crate::common::app::{eventually, TestApp, DEADLINE};
use crate::common::engine::TestDb;
use crate::common::fake_sat_status::*;
use crate::common::invoices::*;
use crate::flows::import::{edited_sample, REAL_40, REAL_40_ISSUER, REAL_40_UUID};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};
use tempfile::TempDir;

/// A server asking `fake`, fast, with the given extra flags.
fn app_with(fake: &FakeStatus, extra: &[&str]) -> TestApp {
    let url = fake.url();
    let mut args = vec!["--sat-status-url", url.as_str(), "--sat-status-rate", "50"];
    args.extend_from_slice(extra);
    TestApp::spawn_with(&args)
}

fn uuid_of(sample: &str) -> String {
    cfdi_extract::cfdi::Cfdi::parse(&sample_bytes(sample))
        .expect("sample")
        .uuid()
        .expect("stamped")
        .to_ascii_uppercase()
}

/// The invoice's `sat_status` once `done` holds for it.
fn wait_status(app: &TestApp, id: &str, what: &str, done: impl Fn(&Value) -> bool) -> Value {
    eventually(DEADLINE, what, || {
        let invoice = app.get(&format!("/v1/invoices/{id}")).expect(200);
        done(&invoice["sat_status"]).then_some(invoice)
    })
}

fn sat_updates(app: &TestApp, id: &str) -> Vec<Value> {
    app.client()
        .list_all(
            &format!("/v1/events?event=invoice.updated&resource_id={id}&order=oldest"),
            50,
        )
        .into_iter()
        .filter(|e| e["changes"].get("sat_status").is_some())
        .collect()
}

#[test]
fn every_state_and_cancellation_state_reaches_the_invoice_and_its_events() {
    // (sample, answer, state, cancellable, cancellation_status, efos)
    let cases: [(&str, &'static str, &str, Value, Value, &str); 9] = [
        (
            "cfdi33-ingreso-ppd-multiples-tasas-tfd.xml",
            ACTIVE_NOT_CANCELLABLE,
            "active",
            json!("not_cancellable"),
            Value::Null,
            "not_listed",
        ),
        (
            "cfdi40-ingreso-pue-descuento-tfd.xml",
            ACTIVE_REJECTED_NO_EFOS,
            "active",
            json!("with_acceptance"),
            json!("rejected"),
            "unknown",
        ),
        (
            "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
            ACTIVE_IN_PROCESS,
            "active",
            json!("with_acceptance"),
            json!("in_process"),
            "not_listed",
        ),
        (
            "cfdi33-ingreso-pue-detallista-tfd.xml",
            ACTIVE_WITHOUT_ACCEPTANCE,
            "active",
            json!("without_acceptance"),
            Value::Null,
            "not_listed",
        ),
        (
            "cfdi40-nomina-compensacion-tfd.xml",
            ACTIVE_EFOS_LISTED,
            "active",
            json!("not_cancellable"),
            Value::Null,
            "listed",
        ),
        (
            REAL_40,
            CANCELLED_WITH_ACCEPTANCE,
            "cancelled",
            json!("not_cancellable"),
            json!("cancelled_with_acceptance"),
            "not_listed",
        ),
        (
            "cfdi40-ingreso-pue-tfd-ampersand-rfc.xml",
            CANCELLED_DEADLINE_PASSED,
            "cancelled",
            json!("not_cancellable"),
            json!("deadline_passed"),
            "not_listed",
        ),
        (
            "cfdi32-ingreso-real-legacy-tfd10.xml",
            CANCELLED_WITHOUT_ACCEPTANCE,
            "cancelled",
            json!("not_cancellable"),
            json!("cancelled_without_acceptance"),
            "not_listed",
        ),
        (
            "cfdi33-ingreso-pue-real-implocal-tfd.xml",
            CANCELLED_NO_STATUS,
            "cancelled",
            json!("not_cancellable"),
            Value::Null,
            "not_listed",
        ),
    ];
    let fake = FakeStatus::start();
    for (sample, answer, ..) in &cases {
        fake.script(&uuid_of(sample), vec![Reply::Answer(answer)]);
    }
    let app = app_with(&fake, &[]);
    let mut entities = BTreeMap::new();
    let names: Vec<&str> = cases.iter().map(|c| c.0).collect();
    let ids = import_by_issuer(&app, &mut entities, &names);
    for (sample, _, state, cancellable, cancellation, efos) in &cases {
        let id = &ids[*sample];
        let invoice = wait_status(&app, id, sample, |s| !s.is_null());
        let s = &invoice["sat_status"];
        assert_eq!(s["state"], json!(state), "{sample}: {s}");
        assert_eq!(&s["cancellable"], cancellable, "{sample}: {s}");
        assert_eq!(&s["cancellation_status"], cancellation, "{sample}: {s}");
        assert_eq!(s["efos"], json!(efos), "{sample}: {s}");
        assert_timestamp(&s["checked_at"], "checked_at");
        // Cancelled through the extraction's cancellation code: status and balances.
        let status = if *state == "cancelled" {
            "cancelled"
        } else {
            "active"
        };
        assert_eq!(invoice["status"], json!(status), "{sample}");
        if *state == "cancelled" {
            assert_amount(&invoice["due_amount"], "0", sample);
            assert!(s["next_check_at"].is_null(), "cancelled is final: {s}");
        } else if *cancellation == json!("in_process") {
            // Followed until it ends, however old the invoice (the samples are past
            // their cancellation period, so the others have no planned check).
            assert_timestamp(&s["next_check_at"], "next_check_at");
        }
        let updates = sat_updates(&app, id);
        assert_eq!(
            updates.len(),
            1,
            "{sample}: one invoice.updated: {updates:?}"
        );
        let changes = &updates[0]["changes"];
        assert!(changes["sat_status"]["from"].is_null(), "{changes}");
        assert_eq!(changes["sat_status"]["to"]["state"], json!(state));
        assert_eq!(
            changes.get("status").is_some(),
            *state == "cancelled",
            "{sample}: {changes}"
        );
    }
    // The request carries the documented printed expression of each version.
    let legacy = fake.seen_for(&uuid_of("cfdi32-ingreso-real-legacy-tfd10.xml"));
    assert_eq!(
        legacy[0].expression,
        "?re=CTO021007DZ8&rr=XAXX010101000&tt=0000004685.000000&id=80824F3B-323E-407B-8F8E-40D83FE2E69F"
    );
    let ampersand = fake.seen_for(&uuid_of("cfdi40-ingreso-pue-tfd-ampersand-rfc.xml"));
    assert!(
        ampersand[0]
            .expression
            .contains("&re=H&amp;E951128469&rr=KIJ0906199R1&tt=17852.75&fe="),
        "{}",
        ampersand[0].expression
    );
    // Filters.
    let cancelled = invoices(&app.client(), "sat_state=cancelled");
    assert_eq!(cancelled.len(), 4);
    app.get("/v1/invoices?sat_state=gone")
        .expect_field_error("sat_state");
}

#[test]
fn a_change_later_and_a_check_on_demand_reach_the_invoice() {
    let fake = FakeStatus::start();
    fake.script(
        REAL_40_UUID,
        vec![
            Reply::Answer(ACTIVE_WITH_ACCEPTANCE),
            Reply::Answer(ACTIVE_IN_PROCESS),
            Reply::Answer(CANCELLED_WITH_ACCEPTANCE),
        ],
    );
    let app = app_with(&fake, &[]);
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    wait_status(&app, &id, "first answer", |s| s["state"] == "active");
    // The next planned check is a week away: ask now.
    let asked = app
        .post_json(&format!("/v1/invoices/{id}/status-check"), &json!({}))
        .expect(202);
    assert_eq!(asked["id"], json!(id));
    wait_status(&app, &id, "in process", |s| {
        s["cancellation_status"] == "in_process"
    });
    app.post_json(&format!("/v1/invoices/{id}/status-check"), &json!({}))
        .expect(202);
    let invoice = wait_status(&app, &id, "cancelled", |s| s["state"] == "cancelled");
    assert_eq!(invoice["status"], json!("cancelled"));
    let updates = sat_updates(&app, &id);
    let states: Vec<Value> = updates
        .iter()
        .map(|u| u["changes"]["sat_status"]["to"]["cancellation_status"].clone())
        .collect();
    assert_eq!(
        states,
        [
            Value::Null,
            json!("in_process"),
            json!("cancelled_with_acceptance")
        ]
    );
    assert_eq!(
        updates[2]["changes"]["status"],
        json!({"from": "active", "to": "cancelled"})
    );
    // Another organization's invoice, or an unknown one, is a 404.
    let other = app.create_user_in_new_org();
    app.client_as(&other)
        .post_json(&format!("/v1/invoices/{id}/status-check"), &json!({}))
        .expect_not_found();
}

#[test]
fn checks_on_demand_need_checks_on() {
    let app = TestApp::spawn();
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    let invoice = app.get(&format!("/v1/invoices/{id}")).expect(200);
    assert!(invoice["sat_status"].is_null(), "never checked: {invoice}");
    let body = app
        .post_json(&format!("/v1/invoices/{id}/status-check"), &json!({}))
        .expect_error(503);
    // The contract's single-message error (ErrorMessage), saying which setting is off.
    let keys: Vec<&String> = body.as_object().expect("an object").keys().collect();
    assert_eq!(keys, ["message"], "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("a message")
            .contains("--sat-status-rate"),
        "{body}"
    );
}

#[test]
fn a_fault_an_http_error_a_timeout_and_a_slow_service_back_off_and_resume() {
    let fake = FakeStatus::start();
    fake.script(
        REAL_40_UUID,
        vec![
            Reply::Fault,
            Reply::Http(503),
            Reply::Late(
                Duration::from_secs(3),
                Box::new(Reply::Answer(ACTIVE_WITH_ACCEPTANCE)),
            ),
            Reply::Late(
                Duration::from_millis(600),
                Box::new(Reply::Answer(ACTIVE_WITH_ACCEPTANCE)),
            ),
        ],
    );
    let app = app_with(&fake, &["--sat-timeout", "1500ms"]);
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    let invoice = eventually(Duration::from_secs(40), "the slow answer", || {
        let invoice = app.get(&format!("/v1/invoices/{id}")).expect(200);
        (invoice["sat_status"]["state"] == "active").then_some(invoice)
    });
    assert_eq!(invoice["status"], json!("active"));
    let seen = fake.seen_for(REAL_40_UUID);
    assert_eq!(seen.len(), 4, "fault, 503, timeout, slow answer");
    // Each failure paused the checks longer: 1 s, 2 s, 4 s.
    for (i, pause) in [1.0, 2.0, 4.0].iter().enumerate() {
        let gap = seen[i + 1].at.duration_since(seen[i].at).as_secs_f64();
        assert!(gap >= pause * 0.9, "pause {i}: {gap}s < {pause}s");
    }
    assert!(
        app.output().contains("the service answers again"),
        "the log says it resumed"
    );
}

#[test]
fn a_601_is_not_found_and_a_forged_document_ends_not_registered() {
    let fake = FakeStatus::start();
    // 602 first, then the 601 a wrong total gives (the SAT's two "not found" codes).
    fake.script(
        REAL_40_UUID,
        vec![Reply::Answer(NOT_FOUND_602), Reply::Answer(NOT_FOUND_601)],
    );
    let app = app_with(&fake, &["--sat-status-not-registered-after", "2s"]);
    let dir = TempDir::new().expect("temp dir");
    // A total the SAT never stamped: it answers 601 (FACTS.md §4).
    let forged = edited_sample(
        &dir,
        "forged.xml",
        REAL_40,
        &[("Total=\"1000.00\"", "Total=\"9000.00\"")],
    );
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import(&app, &entity, "issued", &[forged])[0].1.clone();
    let first = wait_status(&app, &id, "a first answer", |s| !s.is_null());
    assert_eq!(
        first["sat_status"]["state"],
        json!("not_found"),
        "not forged on day one"
    );
    assert_eq!(first["sat_status"]["efos"], json!("unknown"));
    assert!(first["sat_status"]["cancellable"].is_null());
    let invoice = wait_status(&app, &id, "not registered", |s| {
        s["state"] == "not_registered"
    });
    assert_eq!(
        invoice["status"],
        json!("active"),
        "not registered is not cancelled"
    );
    let seen = fake.seen_for(REAL_40_UUID);
    assert!(
        seen.len() >= 2,
        "asked again before concluding: {}",
        seen.len()
    );
    assert!(
        seen[0].expression.contains("&tt=9000.0&"),
        "{}",
        seen[0].expression
    );
    let updates = sat_updates(&app, &id);
    let states: Vec<Value> = updates
        .iter()
        .map(|u| u["changes"]["sat_status"]["to"]["state"].clone())
        .collect();
    assert_eq!(states, [json!("not_found"), json!("not_registered")]);
    assert_eq!(invoices(&app.client(), "sat_state=not_registered").len(), 1);
}

#[test]
fn the_rate_limit_holds_under_a_burst_of_imports() {
    let fake = FakeStatus::start();
    let url = fake.url();
    let app = TestApp::spawn_with(&["--sat-status-url", &url, "--sat-status-rate", "5"]);
    let dir = TempDir::new().expect("temp dir");
    let files: Vec<_> = (0..12)
        .map(|i| {
            let uuid = format!("C2832671-DA6D-11EF-A83D-0000000000{i:02}");
            fake.script(&uuid, vec![Reply::Answer(ACTIVE_WITH_ACCEPTANCE)]);
            edited_sample(&dir, &format!("{i}.xml"), REAL_40, &[(REAL_40_UUID, &uuid)])
        })
        .collect();
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let started = Instant::now();
    import(&app, &entity, "issued", &files);
    eventually(Duration::from_secs(30), "every invoice checked", || {
        (invoices(&app.client(), "sat_state=active").len() == 12).then_some(())
    });
    let seen = fake.seen();
    assert_eq!(seen.len(), 12, "one check each");
    // 5 a second at most: any k + 1 consecutive checks span k / 5 seconds (less the
    // arrival jitter of a loaded machine: the limit holds on the requests' starts).
    for i in 0..seen.len() {
        for j in i + 1..seen.len() {
            let span = seen[j].at.duration_since(seen[i].at).as_secs_f64();
            let least = (j - i) as f64 * 0.2 - 0.15;
            assert!(span >= least, "checks {i}..{j}: {span}s < {least}s");
        }
    }
    assert!(started.elapsed() >= Duration::from_millis(11 * 180));
}

#[test]
fn a_restart_mid_check_and_mid_outage_loses_nothing() {
    let fake = FakeStatus::start();
    fake.script(
        REAL_40_UUID,
        vec![
            Reply::Late(
                Duration::from_secs(5),
                Box::new(Reply::Answer(ACTIVE_IN_PROCESS)),
            ),
            Reply::Fault,
            Reply::Fault,
            Reply::Fault,
            Reply::Answer(CANCELLED_WITH_ACCEPTANCE),
        ],
    );
    let mut app = app_with(&fake, &[]);
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    eventually(DEADLINE, "the slow check starts", || {
        (!fake.seen_for(REAL_40_UUID).is_empty()).then_some(())
    });
    // Killed mid-check: the answer never lands, the check is due again at start.
    app.kill();
    app.start();
    // The third fault's pause committed (its log line is written before the commit).
    eventually(Duration::from_secs(20), "three faults recorded", || {
        let mut conn = TestDb::try_open(app.data_dir()).ok()?;
        let outage = conn
            .try_rows(
                "SELECT value FROM settings WHERE name = 'sat_status_outage'",
                &[],
            )
            .ok()?
            .into_iter()
            .next()?[0]
            .text()?;
        outage.starts_with("3 ").then_some(())
    });
    // Killed mid-outage: the pause (4 s after the third fault) is kept.
    app.kill();
    let third_fault = fake.seen_for(REAL_40_UUID)[3].at;
    app.start();
    let invoice = eventually(Duration::from_secs(20), "cancelled", || {
        let invoice = app.get(&format!("/v1/invoices/{id}")).expect(200);
        (invoice["sat_status"]["state"] == "cancelled").then_some(invoice)
    });
    assert_eq!(invoice["status"], json!("cancelled"));
    let seen = fake.seen_for(REAL_40_UUID);
    assert_eq!(
        seen.len(),
        5,
        "no check lost, none repeated past the answer"
    );
    let resumed = seen[4].at.duration_since(third_fault).as_secs_f64();
    assert!(resumed >= 3.5, "the restart kept backing off: {resumed}s");
}

/// On-demand checks take turns between organizations: one asking for many holds
/// another's single check behind at most the check under way and the next, not behind
/// all of its own (`/docs/sat-status#on-demand`). Counted in checks, not time.
#[test]
fn checks_on_demand_take_turns_between_organizations() {
    const MANY: usize = 60;
    let fake = FakeStatus::start();
    let url = fake.url();
    let app = TestApp::spawn_with(&["--sat-status-url", &url, "--sat-status-rate", "10"]);
    let dir = TempDir::new().expect("temp dir");
    let uuid = |i: usize| format!("C2832671-DA6D-11EF-A83D-0000000001{i:02}");
    let files: Vec<_> = (0..=MANY)
        .map(|i| {
            fake.script(&uuid(i), vec![Reply::Answer(ACTIVE_WITH_ACCEPTANCE)]);
            edited_sample(
                &dir,
                &format!("{i}.xml"),
                REAL_40,
                &[(REAL_40_UUID, &uuid(i))],
            )
        })
        .collect();
    let (theirs, ours) = files.split_at(MANY);
    let a = app.client();
    let a_entity = id_of(&a.create_entity(REAL_40_ISSUER, "sandbox1"));
    let a_ids: Vec<String> = import(&app, &a_entity, "issued", theirs)
        .into_iter()
        .map(|(_, id)| id)
        .collect();
    let b = app.client_as(&app.create_user_in_new_org());
    let b_entity = id_of(&b.create_entity(REAL_40_ISSUER, "sandbox1"));
    let b_id = import(&app, &b_entity, "issued", ours)[0].1.clone();
    // The first (planned) checks answered: the next are a week away.
    eventually(
        Duration::from_secs(60),
        "every first check recorded",
        || {
            (invoices(&a, "sat_state=active").len() == MANY
                && invoices(&b, "sat_state=active").len() == 1)
                .then_some(())
        },
    );
    for id in &a_ids {
        a.post_json(&format!("/v1/invoices/{id}/status-check"), &json!({}))
            .expect(202);
    }
    b.post_json(&format!("/v1/invoices/{b_id}/status-check"), &json!({}))
        .expect(202);
    let asked = fake.seen().len();
    let b_uuid = uuid(MANY);
    eventually(Duration::from_secs(30), "B's check on demand", || {
        (fake.seen_for(&b_uuid).len() == 2).then_some(())
    });
    let seen = fake.seen();
    let before_b = seen[asked..]
        .iter()
        .take_while(|s| !s.uuid.eq_ignore_ascii_case(&b_uuid))
        .count();
    assert!(
        before_b <= 2,
        "{before_b} of A's checks went before B's ({} were left to make)",
        2 * (MANY + 1) - asked
    );
    // A's are all made, once each.
    eventually(Duration::from_secs(30), "A's checks on demand", || {
        (fake.seen().len() == 2 * (MANY + 1)).then_some(())
    });
}
