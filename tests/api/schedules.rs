//! Schedules through the binary: CRUD and its errors, runs on a short interval, no
//! overlap, one run after downtime, and the pause on invalid credentials.

use crate::common::app::{eventually, quiet, tax_id, Client, TestApp, DEADLINE, MISSING};
use crate::common::engine::TestDb;
use serde_json::{json, Value};
use std::time::{Duration, Instant};

/// A fast scheduler, and intervals down to a second (test-only settings).
const FAST: &[&str] = &["--schedule-tick", "100ms", "--schedule-min-interval", "1s"];

fn valid_entity(client: &Client, prefix: &str, password: &str) -> String {
    let e = client.create_entity(&tax_id(prefix), password);
    let id = e["id"].as_str().expect("id").to_string();
    let status = if password.starts_with("bad") {
        "invalid"
    } else {
        "valid"
    };
    client.wait_for_credential(&id, status);
    id
}

fn create(client: &Client, body: Value) -> Value {
    client.post_json("/v1/schedules", &body).expect(201)
}

/// The schedule's extractions, newest first.
fn runs_of(client: &Client, schedule: &Value) -> Vec<Value> {
    let path = format!(
        "/v1/extractions?entity_id={}",
        schedule["entity_id"].as_str().expect("entity")
    );
    client
        .list_all(&path, 100)
        .into_iter()
        .filter(|e| e["schedule_id"] == schedule["id"])
        .collect()
}

fn get(client: &Client, schedule: &Value) -> Value {
    let id = schedule["id"].as_str().expect("id");
    client.get(&format!("/v1/schedules/{id}")).expect(200)
}

#[test]
fn crud_with_field_errors_and_other_organizations_ids_answering_404() {
    let app = TestApp::spawn();
    let client = app.client();
    let entity = valid_entity(&client, "SCH", "12345678");
    let path = "/v1/schedules";
    app.anonymous().get(path).expect_unauthorized(MISSING);
    app.anonymous()
        .post_json(path, &json!({}))
        .expect_unauthorized(MISSING);

    let bad = [
        (json!({"every": "6h"}), "entity_id"),
        (json!({"entity_id": "nope", "every": "6h"}), "entity_id"),
        (json!({"entity_id": entity}), "every"),
        (json!({"entity_id": entity, "every": "30m"}), "every"),
        (
            json!({"entity_id": entity, "every": "6h", "daily_at": "07:00"}),
            "every",
        ),
        (
            json!({"entity_id": entity, "daily_at": "25:00"}),
            "daily_at",
        ),
        (
            json!({"entity_id": entity, "every": "6h", "directions": ["both"]}),
            "directions",
        ),
        (
            json!({"entity_id": entity, "every": "6h", "lookback_days": 0}),
            "lookback_days",
        ),
        // A month has no fixed length: refused, naming the calendar form.
        (json!({"entity_id": entity, "every": "1M"}), "every"),
        (json!({"entity_id": entity, "every": "1month"}), "every"),
        (json!({"entity_id": entity, "every": "1 mes"}), "every"),
        (
            json!({"entity_id": entity, "every": "6h", "monthly": {"day": 1}}),
            "every",
        ),
        (
            json!({"entity_id": entity, "monthly": {"day": 32}}),
            "monthly.day",
        ),
        (
            json!({"entity_id": entity, "monthly": {"day": 1, "at": "6am"}}),
            "monthly.at",
        ),
        (
            json!({"entity_id": entity, "monthly": {"day": 1, "months_before": 12}}),
            "monthly.months_before",
        ),
        (
            json!({"entity_id": entity, "monthly": {"day": 1}, "lookback_days": 30}),
            "lookback_days",
        ),
        (
            json!({"entity_id": entity, "every": "6h", "document_classes": ["payroll"]}),
            "document_classes",
        ),
        // Retentions need the e.firma, which this entity lacks.
        (
            json!({"entity_id": entity, "every": "6h", "document_classes": ["retentions"]}),
            "document_classes",
        ),
    ];
    for (body, field) in bad {
        client.post_json(path, &body).expect_field_error(field);
    }
    let month = client
        .post_json(path, &json!({"entity_id": entity, "every": "1M"}))
        .expect_field_error("every");
    assert!(month[0].contains("monthly"), "{month:?}");
    client.post_raw(path, b"{not json").expect_error(422);

    let s = create(
        &client,
        json!({"entity_id": entity, "daily_at": "07:00", "directions": ["received"]}),
    );
    assert_eq!(s["status"], "active", "{s}");
    assert_eq!(s["directions"], json!(["received"]), "{s}");
    assert_eq!(s["every"], Value::Null, "{s}");
    assert_eq!(s["daily_at"], "07:00", "{s}");
    assert_eq!(s["time_zone"], "America/Mexico_City", "{s}");
    assert_eq!(s["lookback_days"], 7, "{s}");
    assert_eq!(s["paused_reason"], Value::Null, "{s}");
    assert_eq!(s["last_run_at"], Value::Null, "{s}");
    let next = s["next_run_at"].as_str().expect("next_run_at");
    assert!(
        next.ends_with(":00:00.000000Z"),
        "07:00 Mexico City is 13:00 UTC: {s}"
    );
    assert!(next.contains("T13:"), "07:00 Mexico City is 13:00 UTC: {s}");
    // Another schedule of the entity may run at other times, not start the same run at
    // the same slot.
    client
        .post_json(
            path,
            &json!({"entity_id": entity, "daily_at": "07:00", "directions": ["issued", "received"]}),
        )
        .expect_field_error("entity_id");
    let monthly = create(
        &client,
        json!({"entity_id": entity, "monthly": {"day": 31, "at": "23:30", "months_before": 2}}),
    );
    assert_eq!(
        monthly["monthly"],
        json!({"day": 31, "at": "23:30", "months_before": 2}),
        "{monthly}"
    );
    assert_eq!(
        (
            &monthly["every"],
            &monthly["daily_at"],
            &monthly["lookback_days"]
        ),
        (&Value::Null, &Value::Null, &Value::Null),
        "{monthly}"
    );
    // Interval and daily schedules keep their documented shape.
    assert!(
        s.get("monthly").is_none() && s.get("document_classes").is_none(),
        "{s}"
    );
    let monthly_path = format!("{path}/{}", monthly["id"].as_str().expect("id"));
    let daily = client
        .patch_json(&monthly_path, &json!({"daily_at": "08:00"}))
        .expect(200);
    assert_eq!(
        (
            &daily["daily_at"],
            &daily["lookback_days"],
            daily.get("monthly")
        ),
        (&json!("08:00"), &json!(7), None),
        "{daily}"
    );
    client.delete(&monthly_path).expect(204);

    let id = s["id"].as_str().expect("id");
    let one = format!("{path}/{id}");
    assert_eq!(client.get(&one).expect(200), s);
    let listed = client.get(path).expect(200);
    assert_eq!(listed["data"], json!([s]), "{listed}");
    assert_eq!(listed["next_cursor"], Value::Null, "{listed}");

    let paused = client
        .patch_json(&one, &json!({"status": "paused"}))
        .expect(200);
    assert_eq!(
        (paused["status"].as_str(), paused["paused_reason"].as_str()),
        (Some("paused"), Some("paused_by_user"))
    );
    let changed = client
        .patch_json(
            &one,
            &json!({"status": "active", "every": "2h", "lookback_days": 30}),
        )
        .expect(200);
    assert_eq!(changed["status"], "active", "{changed}");
    assert_eq!(changed["paused_reason"], Value::Null, "{changed}");
    assert_eq!(
        (changed["every"].as_str(), &changed["daily_at"]),
        (Some("2h"), &Value::Null)
    );
    assert_eq!(changed["lookback_days"], 30, "{changed}");
    client
        .patch_json(&one, &json!({"every": "1m"}))
        .expect_field_error("every");
    client
        .patch_json(&one, &json!({"entity_id": entity}))
        .expect_field_error("entity_id");
    client
        .patch_json(&one, &json!({"status": "off"}))
        .expect_field_error("status");

    // Another organization sees nothing, and cannot use this entity.
    let other = app.client_as(&app.create_user_in_new_org());
    other.get(&one).expect_not_found();
    other
        .patch_json(&one, &json!({"status": "paused"}))
        .expect_not_found();
    other.delete(&one).expect_not_found();
    assert_eq!(other.get(path).expect(200)["data"], json!([]));
    let foreign = other
        .post_json(path, &json!({"entity_id": entity, "every": "6h"}))
        .expect_error(404);
    assert_eq!(
        foreign["errors"]["entity_id"],
        json!(["not found"]),
        "{foreign}"
    );
    for bad_id in ["nope", "0196b0a0-0000-7000-8000-000000000001"] {
        client.get(&format!("{path}/{bad_id}")).expect_not_found();
        client
            .delete(&format!("{path}/{bad_id}"))
            .expect_not_found();
    }

    client.delete(&one).expect(204);
    client.get(&one).expect_not_found();
}

#[test]
fn a_short_interval_runs_finished_extractions_one_slot_at_a_time() {
    // Slow runs (each SAT call 1.5 s) against a 1 s interval: slots come due while a
    // run is still open, and must be skipped rather than queued behind it.
    let mut args = FAST.to_vec();
    args.extend(["--sim-latency", "1500ms"]);
    let app = TestApp::spawn_with(&args);
    let client = app.client();
    let entity = valid_entity(&client, "RUN", "12345678");
    let s = create(
        &client,
        json!({"entity_id": entity, "every": "1s", "directions": ["issued"], "lookback_days": 3}),
    );
    assert_eq!(s["every"], "1s", "{s}");

    let (mut saw_open, start) = (false, Instant::now());
    let finished = eventually(
        Duration::from_secs(60),
        "two finished scheduled runs",
        || {
            let runs = runs_of(&client, &s);
            let open = runs
                .iter()
                .filter(|r| matches!(r["status"].as_str(), Some("pending" | "running")))
                .count();
            assert!(
                open <= 1,
                "overlapping scheduled runs after {:?}: {runs:?}",
                start.elapsed()
            );
            saw_open |= open == 1;
            let done: Vec<Value> = runs
                .into_iter()
                .filter(|r| r["status"] == "finished")
                .collect();
            (done.len() >= 2).then_some(done)
        },
    );
    assert!(
        saw_open,
        "no run was ever seen open; the overlap check proved nothing"
    );
    let run = &finished[0];
    assert_eq!(run["options"]["download_type"], "issued", "{run}");
    let (from, to) = (
        &run["options"]["period"]["from"],
        &run["options"]["period"]["to"],
    );
    let to = chrono::NaiveDate::parse_from_str(to.as_str().expect("to"), "%Y-%m-%d").expect("date");
    let from =
        chrono::NaiveDate::parse_from_str(from.as_str().expect("from"), "%Y-%m-%d").expect("date");
    assert_eq!((to - from).num_days(), 3, "{run}");
    assert!(get(&client, &s)["last_run_at"].is_string());

    // An extraction started by hand keeps the contract's shape: no schedule_id.
    let manual = client
        .post_json("/v1/extractions", &json!({"entity_id": entity,
            "options": {"period": {"from": "2026-01-01", "to": "2026-01-02"}, "download_type": "received"}}))
        .expect(201);
    assert!(manual.get("schedule_id").is_none(), "{manual}");
}

#[test]
fn after_downtime_a_schedule_runs_once_not_once_per_missed_slot() {
    let mut app = TestApp::spawn_with(FAST);
    let client = app.client();
    let entity = valid_entity(&client, "DWN", "12345678");
    let s = create(
        &client,
        json!({"entity_id": entity, "every": "1h", "directions": ["issued"]}),
    );
    eventually(DEADLINE, "the first run to finish", || {
        let runs = runs_of(&client, &s);
        (runs.len() == 1 && runs[0]["status"] == "finished").then_some(())
    });
    app.kill();
    // Downtime of a few days: the slot due a while ago stands for ~70 missed ones.
    TestDb::open(app.data_dir()).execute(
        "UPDATE schedules SET next_run_at = '2020-01-01T00:00:00.000000Z'",
        &[],
    );
    app.start();
    let client = app.client();
    eventually(DEADLINE, "one run after the restart", || {
        (runs_of(&client, &s).len() == 2).then_some(())
    });
    // Ten more ticks: the missed slots do not each run.
    let runs = quiet(Duration::from_secs(1), "the schedule's runs", || {
        runs_of(&client, &s).len()
    });
    assert_eq!(runs, 2, "missed slots each ran");
    let after = get(&client, &s);
    let next = chrono::DateTime::parse_from_rfc3339(after["next_run_at"].as_str().expect("next"))
        .expect("time");
    let wait = next.with_timezone(&chrono::Utc) - chrono::Utc::now();
    assert!(
        wait > chrono::Duration::minutes(55),
        "the next slot is an hour after the catch-up run: {after}"
    );
}

#[test]
fn invalid_credentials_pause_the_schedule_until_they_are_valid_again() {
    let app = TestApp::spawn_with(FAST);
    let client = app.client();
    let entity = valid_entity(&client, "BAD", "badpass1");
    let s = create(&client, json!({"entity_id": entity, "every": "1s"}));
    let paused = eventually(DEADLINE, "the schedule to pause", || {
        let now = get(&client, &s);
        (now["status"] == "paused").then_some(now)
    });
    assert_eq!(paused["paused_reason"], "invalid_credentials", "{paused}");
    assert!(
        runs_of(&client, &s).is_empty(),
        "a run started with invalid credentials"
    );

    // Resuming by hand while the CIEC is still invalid: paused again at the next tick.
    let id = s["id"].as_str().expect("id");
    client
        .patch_json(&format!("/v1/schedules/{id}"), &json!({"status": "active"}))
        .expect(200);
    eventually(DEADLINE, "the schedule to pause again", || {
        (get(&client, &s)["paused_reason"] == "invalid_credentials").then_some(())
    });
    assert!(runs_of(&client, &s).is_empty());

    // A CIEC the SAT accepts resumes it on its own, and runs follow.
    client
        .patch_json(
            &format!("/v1/entities/{entity}"),
            &json!({"ciec_password": "12345678"}),
        )
        .expect(200);
    client.wait_for_credential(&entity, "valid");
    eventually(DEADLINE, "a scheduled run after the new CIEC", || {
        let now = get(&client, &s);
        (now["status"] == "active" && !runs_of(&client, &s).is_empty()).then_some(())
    });
}

/// The schedules' clock of a test (`--schedule-clock`, through its environment variable
/// so a restart can move it): it starts at `at` and runs on at real speed.
const CLOCK: &str = "CFDI_EXTRACT_SCHEDULE_CLOCK";

fn set_clock(app: &mut TestApp, at: &str) {
    app.env.retain(|(k, _)| k != CLOCK);
    app.env.push((CLOCK.to_string(), at.to_string()));
}

/// A monthly schedule (the 1st at 06:00 Mexico City, both directions) made with the
/// clock on `2026-08-20`; the app is stopped afterwards. With retentions, through an
/// entity with an e.firma (they need it); else through a CIEC alone.
fn monthly_schedule(app: &mut TestApp, retentions: bool) -> Value {
    app.kill();
    set_clock(app, "2026-08-20T00:00:00Z");
    app.start();
    let client = app.client();
    let (entity, classes) = if retentions {
        let entity = crate::flows::efirma_ws::efirma_entity(&client, "valid");
        (entity, json!(["invoices", "retentions"]))
    } else {
        (
            valid_entity(&client, "MON", "12345678"),
            json!(["invoices"]),
        )
    };
    let s = create(
        &client,
        json!({"entity_id": entity, "monthly": {"day": 1, "at": "06:00"},
            "document_classes": classes}),
    );
    assert_eq!(s["next_run_at"], "2026-09-01T12:00:00.000000Z", "{s}");
    assert_eq!(
        s["monthly"],
        json!({"day": 1, "at": "06:00", "months_before": 0}),
        "{s}"
    );
    if retentions {
        assert_eq!(s["document_classes"], json!(["invoices", "retentions"]));
    } else {
        assert!(
            s.get("document_classes").is_none(),
            "the default is not shown: {s}"
        );
    }
    app.kill();
    s
}

/// Once `count` runs of the schedule exist and all ended, their (period, direction,
/// class) each, sorted.
fn ended_runs(client: &Client, s: &Value, count: usize) -> Vec<(String, String, String)> {
    // A month through the simulated web service takes a few of its waits per run.
    let deadline = Duration::from_secs(180);
    let runs = eventually(deadline, &format!("{count} ended scheduled runs"), || {
        let runs = runs_of(client, s);
        let ended = runs
            .iter()
            .all(|r| matches!(r["status"].as_str(), Some("finished" | "failed")));
        (runs.len() >= count && ended).then_some(runs)
    });
    let mut seen: Vec<(String, String, String)> = runs
        .iter()
        .map(|r| {
            assert_eq!(r["status"], "finished", "{r}");
            let o = &r["options"];
            (
                format!("{}..{}", o["period"]["from"], o["period"]["to"]).replace('"', ""),
                o["download_type"].as_str().expect("direction").to_string(),
                o["document_class"]
                    .as_str()
                    .unwrap_or("invoices")
                    .to_string(),
            )
        })
        .collect();
    seen.sort();
    seen
}

/// The runs of one slot over `period`: each direction of each class.
fn slot_runs(period: &str, classes: &[&str]) -> Vec<(String, String, String)> {
    let mut runs = vec![];
    for direction in ["issued", "received"] {
        for class in classes {
            runs.push((period.to_string(), direction.to_string(), class.to_string()));
        }
    }
    runs
}

#[test]
fn a_monthly_schedule_extracts_the_previous_month_both_ways_and_classes_once_a_month() {
    let mut args = FAST.to_vec();
    args.extend(["--sat-ws-poll", "50ms"]);
    let mut app = TestApp::spawn_with(&args);
    let s = monthly_schedule(&mut app, true);

    // A second before the slot of September 1st: August, each direction of each class.
    set_clock(&mut app, "2026-09-01T11:59:59Z");
    app.start();
    let client = app.client();
    let both = ["invoices", "retentions"];
    let august = slot_runs("2026-08-01..2026-08-31", &both);
    assert_eq!(ended_runs(&client, &s, 4), august);
    let after = get(&client, &s);
    assert_eq!(
        after["next_run_at"], "2026-10-01T12:00:00.000000Z",
        "{after}"
    );
    assert!(after["last_run_at"].is_string(), "{after}");

    // Started again before the same slot: it ran, so it does not run again.
    app.restart();
    let client = app.client();
    let count = quiet(Duration::from_secs(1), "the schedule's runs", || {
        runs_of(&client, &s).len()
    });
    assert_eq!(count, 4, "the slot ran twice across a restart");

    // October's slot extracts September (30 days).
    app.kill();
    set_clock(&mut app, "2026-10-01T11:59:59Z");
    app.start();
    let mut expected = august;
    expected.extend(slot_runs("2026-09-01..2026-09-30", &both));
    expected.sort();
    assert_eq!(ended_runs(&app.client(), &s, 8), expected);
}

#[test]
fn two_instances_run_a_monthly_slot_once() {
    crate::common::engine::postgres_only!("two instances share a PostgreSQL database");
    // Through the CIEC: the sandbox's simulated e.firma web service keeps its requests
    // in each instance's data directory (sandbox.db), so one cannot check another's.
    let mut a = TestApp::spawn_with(FAST);
    let s = monthly_schedule(&mut a, false);
    let mut b = a.beside(FAST);
    for app in [&mut a, &mut b] {
        set_clock(app, "2026-09-01T11:59:59Z");
        app.start();
    }
    let august = slot_runs("2026-08-01..2026-08-31", &["invoices"]);
    assert_eq!(ended_runs(&b.client(), &s, 2), august);
    let count = quiet(Duration::from_secs(1), "the schedule's runs", || {
        runs_of(&a.client(), &s).len()
    });
    assert_eq!(count, 2, "both instances ran the slot");
}
