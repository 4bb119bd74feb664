//! Backups through the binary: `backup` while the server writes, `restore` into a new
//! directory, a server there with the same data and working credentials; `check`, the
//! refusals, and scheduled backups with retention.

use crate::common::app::{cli_on, eventually, tax_id, Client, TestApp, DEADLINE};
use crate::common::invoices::{
    create_extraction, extract, id_of, invoices_by_uuid, month, valid_entity, wait_extraction_done,
};
use crate::common::receiver::Receiver;
use crate::common::sqlite_only;
use serde_json::Value;
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tempfile::TempDir;

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

fn ids(items: &[Value]) -> BTreeSet<String> {
    items.iter().map(id_of).collect()
}

fn path_str(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

/// Creates entities over HTTP until stopped; the ids created.
/// Creates entities until `stop`, counting them in `count` as they are answered.
fn entity_writer(
    client: Client,
    stop: Arc<AtomicBool>,
    count: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<Vec<String>> {
    std::thread::spawn(move || {
        let mut created = Vec::new();
        while !stop.load(Ordering::SeqCst) {
            created.push(id_of(&client.create_entity(&tax_id("LOD"), "12345678")));
            count.fetch_add(1, Ordering::SeqCst);
        }
        created
    })
}

/// Waits until the writer has created `more` entities beyond `seen`.
fn written(count: &AtomicUsize, seen: usize, more: usize) -> usize {
    eventually(DEADLINE, "the writer's entities", || {
        let n = count.load(Ordering::SeqCst);
        (n >= seen + more).then_some(n)
    })
}

#[test]
fn a_backup_taken_under_load_restores_into_a_new_directory_and_serves_the_same_data() {
    sqlite_only!("backup and restore of the SQLite file");
    let app = TestApp::spawn();
    let client = app.client();
    let rx = Receiver::start();
    let hook = client.create_webhook(&rx.url(), None);
    let entity = valid_entity(&client, "EKU9003173C9", "sandbox1");
    let (from, to) = month(2026, 1);
    extract(&client, &id_of(&entity), from, to, "issued");
    let other = valid_entity(&client, &tax_id("EXT"), "sandbox1");
    let before = ids(&client.list_all("/v1/entities", 500));

    // Writes and an extraction run while the backup is taken.
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let writer = entity_writer(app.client(), stop.clone(), count.clone());
    let running = create_extraction(&client, &id_of(&other), from, to, "received");
    let seen = written(&count, 0, 3);
    let backups = TempDir::new().expect("tmp");
    let file = backups.path().join("nightly.db");
    let out = app
        .cli(&["backup", "--to", path_str(&file), "--with-key"], None)
        .expect_success("backup");
    assert!(out.contains("backup written to"), "{out}");
    written(&count, seen, 3);
    stop.store(true, Ordering::SeqCst);
    let during = writer.join().expect("writer");
    assert!(
        !during.is_empty(),
        "no entity was created during the backup"
    );
    let after = ids(&client.list_all("/v1/entities", 500));
    assert_eq!(mode(&file), 0o600);
    let key_file = backups.path().join("nightly.db.key");
    assert_eq!(mode(&key_file), 0o600);
    assert!(
        !backups.path().join("nightly.db-wal").exists(),
        "the backup is one file"
    );

    let target = TempDir::new().expect("tmp");
    cli_on(target.path(), &["restore", "--from", path_str(&file)], None).expect_success("restore");
    assert_eq!(mode(&target.path().join("secret.key")), 0o600);
    assert_eq!(mode(&target.path().join("cfdi-extract.db")), 0o600);
    let checked = cli_on(target.path(), &["check"], None).expect_success("check");
    assert!(checked.contains("decrypts all"), "{checked}");

    // A server on the restored copy: same data, credentials still open.
    let restored = TestApp::start_in(target, app.creds.clone(), &[]);
    let rclient = restored.client();
    let restored_entities = ids(&rclient.list_all("/v1/entities", 500));
    assert!(
        restored_entities.is_superset(&before),
        "entities from before the backup are all there"
    );
    assert!(
        restored_entities.is_subset(&after),
        "nothing invented: {restored_entities:?}"
    );
    let invoices = invoices_by_uuid(&client, &id_of(&entity));
    assert_eq!(invoices_by_uuid(&rclient, &id_of(&entity)), invoices);
    // The stored (compressed) documents come back byte for byte from the copy.
    for invoice in invoices.values().take(20) {
        for format in ["xml", "pdf"] {
            let path = format!("/v1/invoices/{}/cfdi?format={format}", id_of(invoice));
            let (want, got) = (client.get(&path), rclient.get(&path));
            // Without the SAT's PDF, the spec's 404 on both sides.
            let status = if format == "pdf" && invoice["has_pdf"] == false {
                404
            } else {
                200
            };
            assert_eq!((want.status, got.status), (status, status), "{path}");
            assert!(
                want.body == got.body,
                "{path}: the same bytes after restore"
            );
        }
    }
    let hook_path = format!("/v1/webhooks/{}", id_of(&hook));
    assert_eq!(
        rclient.get(&hook_path).expect(200),
        client.get(&hook_path).expect(200)
    );
    assert_eq!(
        rclient.get(&hook_path).expect(200)["token"],
        hook["token"],
        "the sealed webhook token opens"
    );
    // The extraction that was running resumes; a new one logs in with the stored CIEC.
    let resumed = wait_extraction_done(&rclient, &id_of(&running));
    assert_eq!(resumed["status"], "finished", "{resumed}");
    let (from2, to2) = month(2026, 2);
    extract(&rclient, &id_of(&entity), from2, to2, "issued");
}

#[test]
fn restore_and_check_refuse_what_would_not_serve() {
    sqlite_only!("backup and restore of the SQLite file");
    let mut app = TestApp::spawn();
    let client = app.client();
    client.create_entity(&tax_id("CHK"), "12345678");
    let tmp = TempDir::new().expect("tmp");
    let file = tmp.path().join("b.db");
    app.cli(&["backup", "--to", path_str(&file)], None)
        .expect_success("backup");
    assert!(!tmp.path().join("b.db.key").exists());
    let again = app.cli(&["backup", "--to", path_str(&file)], None);
    assert!(
        !again.status.success() && again.stderr.contains("never overwrites"),
        "{again:?}"
    );

    // A running server holds the directory: no restore, no second server.
    let busy = app.cli(&["restore", "--from", path_str(&file), "--force"], None);
    assert!(
        !busy.status.success() && busy.stderr.contains("stop it first"),
        "{busy:?}"
    );
    let second = app.cli(&["serve", "--port", "0"], None);
    assert!(
        !second.status.success() && second.stderr.contains("stop it first"),
        "{second:?}"
    );

    app.kill();
    let dir = app.data_dir().to_path_buf();
    let exists = cli_on(&dir, &["restore", "--from", path_str(&file)], None);
    assert!(
        !exists.status.success() && exists.stderr.contains("--force"),
        "{exists:?}"
    );
    cli_on(
        &dir,
        &["restore", "--from", path_str(&file), "--force"],
        None,
    )
    .expect_success("restore --force");
    cli_on(&dir, &["check"], None).expect_success("check");

    let other_key = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";
    let wrong = cli_on(&dir, &["check", "--encryption-key", other_key], None);
    assert!(!wrong.status.success(), "{wrong:?}");
    assert!(
        wrong.stdout.contains("problem: the encryption key"),
        "{wrong:?}"
    );
    std::fs::remove_file(dir.join("secret.key")).expect("rm key");
    let missing = cli_on(&dir, &["check"], None);
    assert!(
        !missing.status.success() && missing.stdout.contains("is missing"),
        "{missing:?}"
    );

    let not_db = tmp.path().join("junk.db");
    std::fs::write(&not_db, "not a database").expect("write");
    let fresh = tmp.path().join("fresh");
    let junk = cli_on(&fresh, &["restore", "--from", path_str(&not_db)], None);
    assert!(
        !junk.status.success() && junk.stderr.contains("cannot be restored"),
        "{junk:?}"
    );
    let empty = cli_on(&fresh, &["check"], None);
    assert!(
        !empty.status.success() && empty.stdout.contains("no database"),
        "{empty:?}"
    );
}

#[test]
fn scheduled_backups_run_beside_the_server_and_keep_the_newest() {
    sqlite_only!("backup and restore of the SQLite file");
    let backups = TempDir::new().expect("tmp");
    let dir = backups.path().join("nested");
    let mut app = TestApp::spawn_with(&[
        "--backup-every",
        "200ms",
        "--backup-dir",
        path_str(&dir),
        "--backup-keep",
        "2",
        "--backup-with-key",
    ]);
    let entity = app.client().create_entity(&tax_id("SCH"), "12345678");
    let listed = |d: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(d)
            .map(|r| {
                r.map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    // Each run adds one and prunes to two: three names seen means rotation.
    let mut seen = BTreeSet::new();
    crate::common::app::eventually(Duration::from_secs(20), "three scheduled backups", || {
        seen.extend(listed(&dir).into_iter().filter(|n| n.ends_with(".db")));
        (seen.len() >= 3).then_some(())
    });
    app.sigterm();
    app.wait_exit(Duration::from_secs(20))
        .expect("server stopped");
    let names = listed(&dir);
    let dbs: Vec<&String> = names.iter().filter(|n| n.ends_with(".db")).collect();
    assert_eq!(dbs.len(), 2, "{names:?}");
    assert_eq!(names.len(), 4, "each with its key: {names:?}");
    assert_eq!(mode(&dir), 0o700);
    for name in &names {
        assert_eq!(mode(&dir.join(name)), 0o600, "{name}");
    }
    let newest = dir.join(dbs[1]);
    let target = backups.path().join("restored");
    cli_on(&target, &["restore", "--from", path_str(&newest)], None).expect_success("restore");
    cli_on(&target, &["check"], None).expect_success("check");
    let conn = rusqlite::Connection::open(target.join("cfdi-extract.db")).expect("db");
    let found: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM entities WHERE id = ?1",
            [id_of(&entity)],
            |r| r.get(0),
        )
        .expect("query");
    assert_eq!(found, 1);
}

/// The file names in `dir` that start with `prefix`.
fn named(dir: &Path, prefix: &str) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn restore_refuses_a_backup_whose_key_does_not_open_it_and_keeps_a_replaced_key() {
    sqlite_only!("backup and restore of the SQLite file");
    // Directory A: its own key and a sealed credential; the copy B is what we restore.
    let mut a = TestApp::spawn();
    a.client().create_entity(&tax_id("KEY"), "12345678");
    let mut b = TestApp::spawn();
    b.client().create_entity(&tax_id("BBB"), "12345678");
    let tmp = TempDir::new().expect("tmp");
    let file = tmp.path().join("b.db");
    b.cli(&["backup", "--to", path_str(&file), "--with-key"], None)
        .expect_success("backup --with-key");
    a.kill();
    b.kill();
    let dir = a.data_dir().to_path_buf();
    let a_key = std::fs::read(dir.join("secret.key")).expect("A's key");
    let a_db = std::fs::read(dir.join("cfdi-extract.db")).expect("A's database");
    let b_key = std::fs::read(tmp.path().join("b.db.key")).expect("B's key");
    assert_ne!(a_key, b_key);

    // B's backup beside A's key: that key opens none of B's credentials. Refused even
    // with --force, and nothing changes: neither the database nor the key.
    std::fs::write(tmp.path().join("b.db.key"), &a_key).expect("mismatch the key");
    let refused = cli_on(
        &dir,
        &["restore", "--from", path_str(&file), "--force"],
        None,
    );
    assert!(!refused.status.success(), "{refused:?}");
    assert!(
        refused.stderr.contains("is not its key")
            && refused.stderr.contains("decrypts 0 of the backup's 1"),
        "{refused:?}"
    );
    assert_eq!(std::fs::read(dir.join("secret.key")).expect("key"), a_key);
    assert_eq!(
        std::fs::read(dir.join("cfdi-extract.db")).expect("db"),
        a_db
    );
    assert!(named(&dir, "secret.key.").is_empty());
    cli_on(&dir, &["check"], None).expect_success("A still checks");

    // With its own key, B's backup replaces A's data and key; A's key is kept.
    std::fs::write(tmp.path().join("b.db.key"), &b_key).expect("B's key back");
    let restored = cli_on(
        &dir,
        &["restore", "--from", path_str(&file), "--force"],
        None,
    );
    let out = restored.expect_success("restore --force");
    assert_eq!(std::fs::read(dir.join("secret.key")).expect("key"), b_key);
    let kept = named(&dir, "secret.key.replaced-");
    assert_eq!(kept.len(), 1, "{kept:?} {out}");
    assert_eq!(std::fs::read(&kept[0]).expect("kept key"), a_key);
    assert_eq!(mode(&kept[0]), 0o600);
    assert!(
        restored.stderr.contains(path_str(&kept[0])),
        "the operator is told where: {restored:?}"
    );
    let checked = cli_on(&dir, &["check"], None).expect_success("check after restore");
    assert!(checked.contains("decrypts all 1 sealed"), "{checked}");
}
