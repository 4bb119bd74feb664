//! The SAT's 69-B list: loaded from a file with the CLI, screened on every invoice's
//! counterparty, as a field and a filter.

use crate::common::app::{eventually, TestApp, DEADLINE};
use crate::common::engine::TestDb;
use crate::common::fake_http::{Response, Server};
use crate::common::invoices::*;
use crate::flows::import::{REAL_40, REAL_40_ISSUER};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tempfile::TempDir;

/// REAL_40's receiver, listed by `published_list`.
const REAL_40_RECEIVER: &str = "COSC8001137NA";

const SAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sat-status-fixtures/69b-listado-completo-sample.satcfdi.csv"
);

/// The sample as the SAT publishes it: Windows-1252 with its accents, and the receiver
/// of `REAL_40` (COSC8001137NA) listed `Definitivo` under a name with `Ñ`.
fn published_list() -> String {
    let text = String::from_utf8(std::fs::read(SAMPLE).expect("sample")).expect("utf-8");
    text.replace("Informaci\u{FFFD}n", "Información")
        .replace("Situaci\u{FFFD}n", "Situación")
        .replace("Art\u{FFFD}culo", "Artículo")
        .replace("AAA292929HHH", "COSC8001137NA")
        .replace("ABC SANTOS", "CONSTRUCCIONES PEÑA")
        .replace(
            "Desvirtuado,500-05-2017-38736",
            "Definitivo,500-05-2017-38736",
        )
}

fn windows_1252(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).unwrap_or(b'?'))
        .collect()
}

#[test]
fn a_published_list_with_accents_flags_counterparties_and_a_broken_one_is_refused() {
    let app = TestApp::spawn();
    let dir = TempDir::new().expect("temp dir");
    let good = dir.path().join("Listado_Completo_69-B.csv");
    std::fs::write(&good, windows_1252(&published_list())).expect("write");
    let out = app.cli(&["list-69b", "load", &good.to_string_lossy()], None);
    let stdout = out.expect_success("list-69b load");
    assert!(
        stdout.starts_with("loaded\tversion 1\t3 taxpayers\tupdated to 2024-03-31"),
        "{stdout}"
    );
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    let invoice = app.get(&format!("/v1/invoices/{id}")).expect(200);
    let flag = &invoice["counterparty_69b"];
    assert_eq!(flag["tax_id"], json!("COSC8001137NA"), "{invoice}");
    assert_eq!(flag["name"], json!("CONSTRUCCIONES PEÑA, S.A. DE C.V."));
    assert_eq!(flag["situation"], json!("definitive"));
    assert_eq!(
        flag["presumed"],
        json!({"sat": "2017-12-01", "dof": "2017-12-26"})
    );
    assert_eq!(flag["list_version"], json!(1));
    let client = app.client();
    assert_eq!(invoices(&client, "counterparty_69b=definitive").len(), 1);
    assert_eq!(invoices(&client, "counterparty_69b=listed").len(), 1);
    assert!(invoices(&client, "counterparty_69b=presumed").is_empty());
    app.get("/v1/invoices?counterparty_69b=maybe")
        .expect_field_error("counterparty_69b");
    // A broken line refuses the file, naming the line; the good list stays.
    let broken = dir.path().join("broken.csv");
    let text = published_list().replace(",02/11/2017,,,,,,,,", ",02/11/2017");
    std::fs::write(&broken, windows_1252(&text)).expect("write");
    let out = app.cli(&["list-69b", "load", &broken.to_string_lossy()], None);
    assert!(!out.status.success(), "refused: {}", out.stdout);
    assert!(out.stderr.contains("line 5"), "{}", out.stderr);
    assert!(
        out.stderr.contains("current list is kept"),
        "{}",
        out.stderr
    );
    let again = app.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(again["counterparty_69b"]["situation"], json!("definitive"));
    let show = app.cli(&["list-69b", "show"], None).expect_success("show");
    assert!(show.starts_with("version 1\t"), "{show}");
    // The same file again changes nothing.
    let out = app.cli(&["list-69b", "load", &good.to_string_lossy()], None);
    assert!(out
        .expect_success("again")
        .starts_with("unchanged\tversion 1"));
}

/// `published_list` with REAL_40's receiver at `situation` (as the list writes it).
fn list_with(situation: &str) -> Vec<u8> {
    windows_1252(&published_list().replace(
        "Definitivo,500-05-2017-38736",
        &format!("{situation},500-05-2017-38736"),
    ))
}

/// Loads `bytes` with the CLI; returns its stdout.
fn load(app: &TestApp, bytes: &[u8]) -> String {
    let dir = TempDir::new().expect("temp dir");
    let file = dir.path().join("Listado_Completo_69-B.csv");
    std::fs::write(&file, bytes).expect("write");
    app.cli(&["list-69b", "load", &file.to_string_lossy()], None)
        .expect_success("list-69b load")
}

fn show(app: &TestApp) -> String {
    app.cli(&["list-69b", "show"], None).expect_success("show")
}

/// The `counterparty.69b_changed` events of the feed, oldest first.
fn changed_events(app: &TestApp) -> Vec<Value> {
    let page = app
        .get("/v1/events?event=counterparty.69b_changed&order=oldest")
        .expect(200);
    page["data"].as_array().cloned().unwrap_or_default()
}

#[test]
fn a_scheduled_refresh_loads_keeps_the_good_list_on_a_broken_download_and_announces_changes() {
    let served = Arc::new(Mutex::new(list_with("Presunto")));
    let downloads = Arc::new(AtomicUsize::new(0));
    let (body, asked) = (served.clone(), downloads.clone());
    let fake = Server::start(Arc::new(move |_req| {
        asked.fetch_add(1, Ordering::SeqCst);
        Response::new(200, "text/csv", body.lock().expect("lock").clone())
    }));
    let url = fake.url("/cifras_sat/Documents/Listado_Completo_69-B.csv");
    let app = TestApp::spawn_with(&["--list-69b-url", &url, "--list-69b-every", "1s"]);
    eventually(DEADLINE, "the first download", || {
        show(&app).starts_with("version 1\t").then_some(())
    });
    assert!(show(&app).contains(&url), "the version names its source");
    let entity = id_of(&app.client().create_entity(REAL_40_ISSUER, "sandbox1"));
    let id = import_samples(&app, &entity, "issued", &[REAL_40])[REAL_40].clone();
    let invoice = app.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(invoice["counterparty_69b"]["situation"], json!("presumed"));
    assert_eq!(invoice["counterparty_69b"]["list_version"], json!(1));
    assert!(
        changed_events(&app).is_empty(),
        "no invoice when it was listed"
    );

    // A broken download (line 5 cut short) changes nothing, and says which line.
    *served.lock().expect("lock") =
        windows_1252(&published_list().replace(",02/11/2017,,,,,,,,", ",02/11/2017"));
    let last = eventually(DEADLINE, "the broken download refused", || {
        let out = show(&app);
        out.contains("refused").then_some(out)
    });
    assert!(last.contains("line 5"), "{last}");
    assert!(
        last.starts_with("version 1\t"),
        "the good list is kept: {last}"
    );
    let invoice = app.get(&format!("/v1/invoices/{id}")).expect(200);
    assert_eq!(invoice["counterparty_69b"]["situation"], json!("presumed"));
    assert!(changed_events(&app).is_empty());

    // The next good download moves the receiver to definitive: a new version and one
    // event for the entity that invoiced it.
    // Another organization invoices the same receiver: it hears of its own entity only.
    let other = app.create_user_in_new_org();
    let other_entity = id_of(
        &app.client_as(&other)
            .create_entity(REAL_40_ISSUER, "sandbox1"),
    );
    import_samples(&app, &other_entity, "issued", &[REAL_40]);
    *served.lock().expect("lock") = list_with("Definitivo");
    let invoice = eventually(DEADLINE, "the new list", || {
        let v = app.get(&format!("/v1/invoices/{id}")).expect(200);
        (v["counterparty_69b"]["situation"] == json!("definitive")).then_some(v)
    });
    assert_eq!(invoice["counterparty_69b"]["list_version"], json!(2));
    let events = changed_events(&app);
    assert_eq!(events.len(), 1, "{events:?}");
    let event = &events[0];
    assert_eq!(event["resource"]["type"], json!("Entity"));
    assert_eq!(event["resource"]["id"], json!(entity));
    let object = &event["object"];
    assert_eq!(object["entity"]["id"], json!(entity));
    assert_eq!(object["tax_id"], json!(REAL_40_RECEIVER));
    assert_eq!(object["previous_situation"], json!("presumed"));
    assert_eq!(object["situation"], json!("definitive"));
    assert_eq!(object["entry"]["list_version"], json!(2));
    assert_eq!(object["list"]["version"], json!(2));
    assert_eq!(object["list"]["updated_to"], json!("2024-03-31"));
    assert_eq!(object["invoices"], json!(1));
    let line = &object["totals"][0];
    assert_eq!(
        object["totals"].as_array().map(Vec::len),
        Some(1),
        "{object}"
    );
    assert_eq!(line["direction"], json!("issued"));
    assert_eq!(line["currency"], json!("MXN"));
    assert_eq!(line["count"], json!(1));
    assert_amount(&line["subtotal"], "862.07", "subtotal");
    assert_amount(&line["total"], "1000.00", "total as written");
    let theirs = eventually(DEADLINE, "the other organization's event", || {
        let page = app
            .client_as(&other)
            .get("/v1/events?event=counterparty.69b_changed")
            .expect(200);
        let data = page["data"].as_array().cloned().unwrap_or_default();
        (!data.is_empty()).then_some(data)
    });
    assert_eq!(theirs.len(), 1, "{theirs:?}");
    assert_eq!(theirs[0]["object"]["entity"]["id"], json!(other_entity));
    // The same file again (every second) makes no new version and no event: two more
    // downloads asked means the first of them was loaded (the refresh takes turns).
    let seen = downloads.load(Ordering::SeqCst);
    eventually(DEADLINE, "the same file downloaded again", || {
        (downloads.load(Ordering::SeqCst) >= seen + 2).then_some(())
    });
    assert!(show(&app).starts_with("version 2\t"), "{}", show(&app));
    assert_eq!(changed_events(&app).len(), 1);
}

/// A broken line is named by the physical line an editor shows, in a file with CRLF
/// ends (as the SAT writes it) and a quoted field spanning two lines, both by the CLI
/// and by the scheduled refresh.
#[test]
fn a_broken_line_is_named_by_its_physical_line_in_the_cli_and_the_refresh() {
    // Row 1's name spans lines 4 and 5, so row 2, cut short, is line 6.
    let text = published_list()
        .replace("AAA Y ACTIVOS, S.A.", "AAA Y ACTIVOS,\nS.A.")
        .replace(",02/11/2017,,,,,,,,", ",02/11/2017")
        .replace('\n', "\r\n");
    let broken = windows_1252(&text);
    let served = broken.clone();
    let fake = Server::start(Arc::new(move |_req| {
        Response::new(200, "text/csv", served.clone())
    }));
    let url = fake.url("/cifras_sat/Documents/Listado_Completo_69-B.csv");
    let app = TestApp::spawn_with(&["--list-69b-url", &url, "--list-69b-every", "1h"]);
    let last = eventually(DEADLINE, "the broken download refused", || {
        let out = show(&app);
        out.contains("refused").then_some(out)
    });
    assert!(last.contains("line 6: 12 columns, not 20"), "{last}");
    let dir = TempDir::new().expect("temp dir");
    let file = dir.path().join("Listado_Completo_69-B.csv");
    std::fs::write(&file, &broken).expect("write");
    let out = app.cli(&["list-69b", "load", &file.to_string_lossy()], None);
    assert!(!out.status.success(), "refused: {}", out.stdout);
    assert!(
        out.stderr.contains("line 6: 12 columns, not 20"),
        "{}",
        out.stderr
    );
}

/// A stop during a slow download (a server trickling the list) abandons it: the server
/// exits well within the systemd unit's `TimeoutStopSec=30` (/docs/operations#stop-time),
/// and the list in the database is the previous one, whole.
#[test]
fn a_stop_abandons_a_slow_download_and_keeps_the_list_whole() {
    let requests = Arc::new(AtomicUsize::new(0));
    let counted = requests.clone();
    let fake = Server::start(Arc::new(move |_req| {
        match counted.fetch_add(1, Ordering::SeqCst) {
            0 => Response::new(200, "text/csv", list_with("Presunto")),
            // Then a new list, a byte every 50 ms: minutes for the whole file.
            _ => Response::new(200, "text/csv", list_with("Definitivo"))
                .trickled(Duration::from_millis(50)),
        }
    }));
    let url = fake.url("/cifras_sat/Documents/Listado_Completo_69-B.csv");
    let mut app = TestApp::spawn_with(&["--list-69b-url", &url, "--list-69b-every", "1s"]);
    eventually(DEADLINE, "the first download", || {
        show(&app).starts_with("version 1\t").then_some(())
    });
    eventually(DEADLINE, "the slow download under way", || {
        (requests.load(Ordering::SeqCst) >= 2).then_some(())
    });
    app.sigterm();
    let status = app
        .wait_exit(Duration::from_secs(20))
        .expect("the server exits within 20 s of SIGTERM, whatever the download does");
    assert!(status.success(), "a graceful stop: {status:?}");
    let shown = show(&app);
    assert!(
        shown.starts_with("version 1\t") && shown.contains("\t3 taxpayers\t"),
        "{shown}"
    );
    let mut db = TestDb::open(app.data_dir());
    let entries = db.rows("SELECT rfc, situation FROM efos_entries ORDER BY rfc", &[]);
    assert_eq!(entries.len(), 3, "the previous list, whole: {entries:?}");
    let receiver = db.value(
        "SELECT situation FROM efos_entries WHERE rfc = ?1",
        &[REAL_40_RECEIVER],
    );
    assert_eq!(receiver.text().as_deref(), Some("presumed"));
}

/// A list of `rows` taxpayers as the SAT publishes it (CRLF, the legend, the title, the
/// header), short rows; `shift` moves one taxpayer in a thousand to another situation.
fn big_list(rows: usize, shift: usize) -> Vec<u8> {
    const SITUATIONS: [&str; 4] = [
        "Definitivo",
        "Presunto",
        "Desvirtuado",
        "Sentencia Favorable",
    ];
    let mut text = String::from(
        "Información actualizada al 31 de marzo de 2024\r\nListado completo (Artículo 69-B del CFF)\r\n\
         No,RFC,Nombre del Contribuyente,Situación del contribuyente,,,,,,,,,,,,,,,,\r\n",
    );
    for i in 0..rows {
        let situation = SITUATIONS[(i + if i % 1000 == 0 { shift } else { 0 }) % 4];
        text.push_str(&format!(
            "{},AAA{i:06}HH1,E{i} SA,{situation},,01/06/2018,,,,,,,,,,,,,,\r\n",
            i + 1
        ));
    }
    windows_1252(&text)
}

/// The server's peak RSS so far, in MiB (Linux's `VmHWM`).
fn peak_rss_mib(app: &TestApp) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", app.pid())).expect("status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM");
    kib / 1024
}

/// A long list is read and stored a row at a time: the server's refresh of 100,000
/// taxpayers, then of a copy changing 1 in 1,000, peaks at about 50 MiB (a debug build),
/// where holding the list in memory took 99 (half a KiB a row). Memory, not time.
#[test]
fn a_long_list_loads_in_bounded_memory() {
    const ROWS: usize = 100_000;
    let served = Arc::new(Mutex::new(big_list(ROWS, 0)));
    let body = served.clone();
    let fake = Server::start(Arc::new(move |_req| {
        Response::new(200, "text/csv", body.lock().expect("lock").clone())
    }));
    let url = fake.url("/cifras_sat/Documents/Listado_Completo_69-B.csv");
    let app = TestApp::spawn_with(&["--list-69b-url", &url, "--list-69b-every", "1s"]);
    // Read from the database: the CLI's start would wait for the load's write turn.
    let mut db = TestDb::open(app.data_dir());
    let mut version = |n: i64| {
        eventually(Duration::from_secs(300), &format!("version {n}"), || {
            let v = db.try_rows("SELECT max(id) FROM efos_lists", &[]).ok()?;
            (v.first()?.first()?.int() == Some(n)).then_some(())
        })
    };
    version(1);
    *served.lock().expect("lock") = big_list(ROWS, 1);
    version(2);
    let peak = peak_rss_mib(&app);
    assert!(peak < 75, "peak RSS {peak} MiB for {ROWS} taxpayers");
    let shown = show(&app);
    assert!(
        shown.starts_with("version 2\t") && shown.contains(&format!("\t{ROWS} taxpayers\t")),
        "{shown}"
    );
    let moved = db.value(
        "SELECT situation FROM efos_entries WHERE rfc = ?1",
        &["AAA001000HH1"],
    );
    assert_eq!(moved.text().as_deref(), Some("presumed"), "row 1001 moved");
}

#[test]
fn entities_are_screened_with_their_flagged_counterparties_and_the_summary_warns() {
    let app = TestApp::spawn();
    // REAL_40's issuer listed too, definitive.
    let text = published_list()
        .replace("AAA191919HHH", REAL_40_ISSUER)
        .replace(
            "Desvirtuado,500-05-2016-38728",
            "Definitivo,500-05-2016-38728",
        );
    let out = load(&app, &windows_1252(&text));
    assert!(out.starts_with("loaded\tversion 1"), "{out}");
    let client = app.client();
    let issuer = client.create_entity(REAL_40_ISSUER, "sandbox1");
    assert_eq!(
        issuer["list_69b"]["situation"],
        json!("definitive"),
        "{issuer}"
    );
    assert_eq!(issuer["list_69b"]["list_version"], json!(1));
    let issuer = id_of(&issuer);
    let unlisted = client.create_entity(&crate::common::app::tax_id("UNL"), "sandbox1");
    assert!(unlisted.get("list_69b").is_none(), "{unlisted}");
    let entity = app.get(&format!("/v1/entities/{issuer}")).expect(200);
    assert_eq!(entity["list_69b"]["tax_id"], json!(REAL_40_ISSUER));

    // The issuer's flagged counterparty: REAL_40's receiver, with the invoice's sums.
    import_samples(&app, &issuer, "issued", &[REAL_40]);
    let listed = app
        .get(&format!("/v1/entities/{issuer}/counterparties-69b"))
        .expect(200);
    let data = listed["data"].as_array().expect("data");
    assert_eq!(data.len(), 1, "{listed}");
    assert_eq!(data[0]["tax_id"], json!(REAL_40_RECEIVER));
    assert_eq!(data[0]["name"], json!("CONSTRUCCIONES PEÑA, S.A. DE C.V."));
    assert_eq!(data[0]["situation"], json!("definitive"));
    assert_eq!(data[0]["invoices"], json!(1));
    assert_eq!(data[0]["cancelled_invoices"], json!(0));
    assert_amount(&data[0]["totals"][0]["subtotal"], "862.07", "subtotal");
    assert_amount(&data[0]["totals"][0]["total"], "1000.00", "total");
    assert_eq!(data[0]["totals"][0]["direction"], json!("issued"));
    let none = app
        .get(&format!(
            "/v1/entities/{issuer}/counterparties-69b?situation=presumed"
        ))
        .expect(200);
    assert_eq!(none["data"], json!([]));
    app.get(&format!(
        "/v1/entities/{issuer}/counterparties-69b?situation=maybe"
    ))
    .expect_field_error("situation");
    let other = app.create_user_in_new_org();
    app.client_as(&other)
        .get(&format!("/v1/entities/{issuer}/counterparties-69b"))
        .expect_not_found();

    // The receiver's summary of received invoices warns of the definitive issuer.
    let receiver = id_of(&client.create_entity(REAL_40_RECEIVER, "sandbox1"));
    import_samples(&app, &receiver, "received", &[REAL_40]);
    let summary = app
        .get(&format!(
            "/v1/entities/{receiver}/summary?from=2025-01-01&to=2025-01-31&direction=received"
        ))
        .expect(200);
    let warning = summary["definitive_69b_issuers"]
        .as_array()
        .expect("section");
    assert_eq!(warning.len(), 1, "{summary}");
    assert_eq!(warning[0]["tax_id"], json!(REAL_40_ISSUER));
    assert_eq!(warning[0]["count"], json!(1));
    assert_eq!(warning[0]["currency"], json!("MXN"));
    assert_amount(&warning[0]["total"], "1000.00", "total");
    assert_eq!(
        warning[0]["definitive_dof"],
        Value::Null,
        "the sample has no stage dates"
    );
    // The XLSX has it as a section of its own.
    let xlsx = app.get(&format!(
        "/v1/entities/{receiver}/summary?from=2025-01-01&to=2025-01-31&direction=received&format=xlsx"
    ));
    assert_eq!(xlsx.status, 200);
    let rows = crate::flows::summary::sheet_rows(&xlsx.body, "Resumen");
    let title = rows
        .iter()
        .position(|r| {
            r.first()
                .is_some_and(|c| c.starts_with("Recibidos de emisores definitivos"))
        })
        .expect("the section");
    assert_eq!(rows[title + 2][0], REAL_40_ISSUER, "{:?}", rows[title + 2]);
    assert_eq!(rows[title + 2][5..], ["MXN", "1", "862.07", "1000"]);
    // Outside the period, or in the issued direction: no warning.
    let february = app
        .get(&format!(
            "/v1/entities/{receiver}/summary?from=2025-02-01&to=2025-02-28&direction=received"
        ))
        .expect(200);
    assert_eq!(february["definitive_69b_issuers"], json!([]));
    let issued = app
        .get(&format!(
            "/v1/entities/{issuer}/summary?from=2025-01-01&to=2025-01-31&direction=issued"
        ))
        .expect(200);
    assert_eq!(issued["definitive_69b_issuers"], json!([]));
}

#[test]
fn the_sandbox_loads_its_built_in_list_offline() {
    let app = TestApp::spawn_with(&["--list-69b-every", "1h"]);
    let shown = eventually(DEADLINE, "the built-in list", || {
        let out = show(&app);
        out.starts_with("version 1\t").then_some(out)
    });
    assert!(
        shown.contains("5 taxpayers") && shown.contains("sandbox"),
        "{shown}"
    );
    assert!(shown.contains("updated to 2025-06-30"), "{shown}");
    let efos = app.client().create_entity("EFO130101AB1", "sandbox1");
    assert_eq!(efos["list_69b"]["situation"], json!("definitive"), "{efos}");
    assert_eq!(
        efos["list_69b"]["definitive"],
        json!({"sat": "2024-09-02", "dof": "2024-09-24"})
    );
}
