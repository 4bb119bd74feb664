//! `/metrics` through the binary: on `--metrics-address` only, in the OpenMetrics text
//! format, with request, job, extraction, delivery, size and memory figures that move.

use crate::common::app::{agent, eventually, request, TestApp, DEADLINE};
use crate::common::invoices::{extract, id_of, month, valid_entity};
use crate::common::receiver::Receiver;

/// The metrics base URL the server printed.
pub(crate) fn metrics_url(app: &TestApp) -> String {
    eventually(DEADLINE, "the `metrics on` line", || {
        app.stdout_lines().iter().find_map(|l| {
            l.trim()
                .strip_prefix("metrics on ")
                .map(|u| u.trim_end_matches("/metrics").to_string())
        })
    })
}

pub(crate) fn scrape(base: &str) -> String {
    let r = request(&agent(), base, "GET", "/metrics", None, None, &[]);
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(
        r.content_type().starts_with("application/openmetrics-text"),
        "{}",
        r.content_type()
    );
    let text = r.text();
    assert!(text.ends_with("# EOF\n"), "{text}");
    text
}

/// The value of the series written exactly `series` (`name{labels}`), if present.
pub(crate) fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().unwrap_or_else(|e| panic!("{series}: {v:?}: {e}")))
}

fn count(text: &str, method: &str, route: &str, status: u16) -> f64 {
    let series = format!(
        r#"cfdi_extract_http_request_duration_seconds_count{{method="{method}",route="{route}",status="{status}"}}"#
    );
    value(text, &series).unwrap_or(0.0)
}

#[test]
fn metrics_are_served_on_their_own_address_and_move_with_the_work() {
    let app = TestApp::spawn_with(&["--metrics-address", "127.0.0.1:0"]);
    let base = metrics_url(&app);
    assert_ne!(base, app.base_url, "a listener of its own");
    app.anonymous().get("/metrics").expect_not_found();
    let before = scrape(&base);
    assert_eq!(count(&before, "POST", "/v1/extractions", 201), 0.0);

    let client = app.client();
    let rx = Receiver::start();
    client.create_webhook(&rx.url(), None);
    let entity = valid_entity(&client, "EKU9003173C9", "sandbox1");
    let (from, to) = month(2026, 1);
    extract(&client, &id_of(&entity), from, to, "issued");
    let missing = "/v1/entities/0193a5b9-2c40-7e18-9f6a-4d2b8c1e7a35";
    client.get(missing).expect_not_found();
    client.get(missing).expect_not_found();
    app.anonymous().get("/no/such/path").expect_not_found();

    let after = eventually(DEADLINE, "a succeeded delivery attempt", || {
        let text = scrape(&base);
        let delivered = r#"cfdi_extract_webhook_delivery_attempts_total{result="succeeded"}"#;
        (value(&text, delivered).unwrap_or(0.0) >= 1.0).then_some(text)
    });
    assert_eq!(
        count(&after, "POST", "/v1/extractions", 201),
        1.0,
        "{after}"
    );
    assert_eq!(
        count(&after, "GET", "/v1/entities/<id>", 404),
        2.0,
        "{after}"
    );
    // `/metrics` on the API port above, and the unknown path.
    assert_eq!(count(&after, "GET", "unmatched", 404), 2.0, "{after}");
    assert!(
        !after.contains("0193a5b9") && !after.contains("/no/such/path"),
        "raw paths never become labels"
    );
    assert!(after.contains(
        r#"cfdi_extract_http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/v1/extractions",status="201"} 1"#
    ), "{after}");
    assert_eq!(
        value(
            &after,
            r#"cfdi_extract_extractions{status="finished",failed_reason=""}"#
        ),
        Some(1.0),
        "{after}"
    );
    assert!(
        value(
            &after,
            r#"cfdi_extract_jobs{kind="run_extraction",status="running"}"#
        )
        .is_some(),
        "{after}"
    );
    assert!(after
        .contains("cfdi_extract_webhook_delivery_duration_seconds_count{result=\"succeeded\"}"));
    let db_main = value(&after, r#"cfdi_extract_database_size_bytes{file="main"}"#);
    assert!(db_main.is_some_and(|b| b > 0.0), "{after}");
    let rss = value(&after, "cfdi_extract_process_resident_memory_bytes");
    assert!(rss.is_some_and(|b| b > 1e6), "{after}");
}

#[test]
fn without_the_setting_there_is_no_metrics_listener() {
    let app = TestApp::spawn();
    app.anonymous().get("/metrics").expect_not_found();
    assert!(
        !app.stdout_lines().iter().any(|l| l.contains("metrics on")),
        "{:?}",
        app.stdout_lines()
    );
}
