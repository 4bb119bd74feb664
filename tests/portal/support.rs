//! Shared pieces of the portal tests: captcha solver scripts, configurations pointing at
//! the fake portal, credentials and invoices.

use crate::common::fake_sat_portal::pages::{self, RowSpec};
use crate::common::fake_sat_portal::{FakeInvoice, FakePortal};
use crate::common::invoices::sample_bytes;
use cfdi_extract::sat::ciec::Credential;
use cfdi_extract::sat::ciec::{CaptchaConfig, CommandResolver, PortalConfig};
use chrono::{NaiveDate, NaiveDateTime};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub const RFC: &str = "KIJ0906199R1";
pub const CIEC: &str = "ciec1234";

pub fn credential(rfc: &str, password: &str) -> Credential {
    Credential {
        tax_id: rfc.into(),
        password: password.into(),
    }
}

/// A solver script: reads the fake captcha image (`captcha:ANSWER`) from stdin and prints
/// the answer, after `fail_first` crashing calls and `wrong_first` wrong answers.
pub fn solver_script(dir: &Path, fail_first: u32, wrong_first: u32) -> PathBuf {
    let path = dir.join("solve-captcha.sh");
    let counter = dir.join("calls");
    let script = format!(
        r#"#!/bin/sh
n=$(cat '{counter}' 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" > '{counter}'
image=$(cat)
echo "solver: warming up"
if [ "$n" -le {fail_first} ]; then exit 1; fi
if [ "$n" -le {wrong} ]; then echo WRONG1; exit 0; fi
printf '%s\n' "$image" | sed -n 's/^captcha://p'
"#,
        counter = counter.display(),
        wrong = fail_first + wrong_first,
    );
    std::fs::write(&path, script).expect("write solver");
    let mut perms = std::fs::metadata(&path).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&path, perms).expect("chmod");
    path
}

pub fn solver_calls(dir: &Path) -> u32 {
    std::fs::read_to_string(dir.join("calls"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

pub fn command_captcha(script: &Path) -> CaptchaConfig {
    let mut resolver = CommandResolver::new(script.display().to_string(), vec![]);
    resolver.timeout = Duration::from_secs(10);
    CaptchaConfig::Command(resolver)
}

/// Logs go to the test output when `RUST_LOG` asks (e.g. `RUST_LOG=debug`).
pub fn init_logs() {
    let _ = env_logger::builder().is_test(true).try_init();
}

pub fn config(fake: &FakePortal, captcha: CaptchaConfig) -> PortalConfig {
    init_logs();
    PortalConfig {
        login_url: fake.login_url().parse().expect("login url"),
        portal_url: fake.portal_url().parse().expect("portal url"),
        timeout: Duration::from_secs(5),
        captcha,
        ..PortalConfig::default()
    }
}

pub fn day(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).expect("date")
}

fn attr<'a>(xml: &'a str, name: &str) -> &'a str {
    maybe_attr(xml, name).unwrap_or_else(|| panic!("no {name} attribute"))
}

fn maybe_attr<'a>(xml: &'a str, name: &str) -> Option<&'a str> {
    let start = format!(" {name}=\"");
    let from = xml.find(&start)? + start.len();
    let len = xml[from..].find('"')?;
    Some(&xml[from..from + len])
}

/// An invoice served from a CFDI sample: its row says what the XML says.
pub fn sample_invoice(file: &str, with_pdf: bool) -> FakeInvoice {
    let xml = sample_bytes(file);
    let text = String::from_utf8_lossy(&xml).to_string();
    let uuid = attr(&text, "UUID").to_ascii_uppercase();
    let issued =
        NaiveDateTime::parse_from_str(attr(&text, "Fecha"), "%Y-%m-%dT%H:%M:%S").expect("Fecha");
    let emisor = pages::between(&text, "<cfdi:Emisor", ">");
    let receptor = pages::between(&text, "<cfdi:Receptor", ">");
    let kind = attr(&text, "TipoDeComprobante");
    FakeInvoice {
        row: RowSpec {
            issuer: attr(emisor, "Rfc").replace("&amp;", "&"),
            issuer_name: maybe_attr(emisor, "Nombre")
                .unwrap_or("")
                .replace("&amp;", "&"),
            receiver: attr(receptor, "Rfc").to_string(),
            receiver_name: maybe_attr(receptor, "Nombre").unwrap_or("").to_string(),
            issued_at: issued.format("%Y-%m-%dT%H:%M:%S").to_string(),
            total: format!("${}", attr(&text, "Total")),
            effect: match kind {
                "I" => "Ingreso",
                "E" => "Egreso",
                "P" => "Pago",
                "N" => "Nómina",
                _ => "Traslado",
            }
            .into(),
            state: "Vigente".into(),
            // Real tokens are base64 with `+`, `/` and `=`: they must reach us untouched.
            xml_token: Some(format!("x+{}/A==", uuid)),
            pdf_token: with_pdf.then(|| format!("p+{}/B==", uuid)),
            uuid,
        },
        issued,
        xml: Some(xml),
        pdf: with_pdf.then(|| b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n".to_vec()),
    }
}

/// `count` metadata-only invoices on `day`, `spacing` seconds apart from midnight.
pub fn synthetic_invoices(day: NaiveDate, count: u32, spacing: u32) -> Vec<FakeInvoice> {
    (0..count)
        .map(|i| {
            let issued = day.and_hms_opt(0, 0, 0).expect("midnight")
                + chrono::Duration::seconds(i64::from(i * spacing));
            FakeInvoice {
                row: RowSpec {
                    uuid: format!("AAAAAAAA-0000-4000-8000-{i:012}"),
                    issuer: "AAA010101AAA".into(),
                    issuer_name: "PROVEEDOR SA DE CV".into(),
                    receiver: RFC.into(),
                    receiver_name: "CLIENTE".into(),
                    issued_at: issued.format("%Y-%m-%dT%H:%M:%S").to_string(),
                    total: format!("${},{:03}.50", 1 + i / 1000, i % 1000),
                    effect: "Ingreso".into(),
                    state: if i % 7 == 0 { "Cancelado" } else { "Vigente" }.into(),
                    xml_token: None,
                    pdf_token: None,
                },
                issued,
                xml: None,
                pdf: None,
            }
        })
        .collect()
}
