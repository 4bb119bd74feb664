//! Prometheus metrics. Counters and histograms live in memory from the process's start
//! (requests, webhook delivery attempts); queue, extraction and size figures are read
//! from the database at each scrape. Served by `scrape` on `--metrics-address`, a
//! listener of its own (`server`), never on the API's port.

use crate::db::stats::Counts;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use std::path::Path;

/// Request latency buckets (seconds): 1 ms to 10 s.
const REQUEST_BUCKETS: [f64; 12] = [
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 10.0,
];
/// Delivery attempt buckets (seconds): a receiver answers in ms, a timeout is 15 s.
const DELIVERY_BUCKETS: [f64; 10] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0, 15.0];

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    pub method: String,
    /// The matched route's template (`/v1/entities/<id>`), never the raw path, so the
    /// label's values are bounded; `unmatched` when no route matched.
    pub route: String,
    pub status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct DeliveryLabels {
    /// The delivery's status after the attempt: `succeeded`, `pending` (a retry is
    /// scheduled) or `failed` (no attempts left).
    result: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct SatCallLabels {
    /// `web_service` (the e.firma channel), `portal` (the CIEC channel) or `status`.
    service: String,
    /// The web service's operation, the portal page's host and path, or `consulta`.
    call: String,
}

/// Calls to the SAT since the process started. Process-wide, since the SAT's clients
/// are built long before and far from the app's state; `Metrics` registers it.
static SAT_CALLS: std::sync::LazyLock<Family<SatCallLabels, Counter>> =
    std::sync::LazyLock::new(Family::default);

/// Counts one call to the SAT (made, whatever its answer), so an operator can see how
/// politely the service treats it (`cfdi_extract_sat_calls_total`).
pub fn sat_call(service: &str, call: &str) {
    SAT_CALLS
        .get_or_create(&SatCallLabels {
            service: service.to_string(),
            call: call.to_string(),
        })
        .inc();
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct JobLabels {
    kind: String,
    status: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ExtractionLabels {
    status: String,
    failed_reason: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct FileLabels {
    file: String,
}

fn request_histogram() -> Histogram {
    Histogram::new(REQUEST_BUCKETS)
}

fn delivery_histogram() -> Histogram {
    Histogram::new(DELIVERY_BUCKETS)
}

pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Histogram, fn() -> Histogram>,
    deliveries: Family<DeliveryLabels, Counter>,
    delivery_seconds: Family<DeliveryLabels, Histogram, fn() -> Histogram>,
    jobs: Family<JobLabels, Gauge>,
    extractions: Family<ExtractionLabels, Gauge>,
    database_bytes: Family<FileLabels, Gauge>,
    resident_bytes: Gauge,
    /// One scrape at a time: each clears and refills the database-read families.
    scraping: std::sync::Mutex<()>,
}

/// What a scrape reads from the database.
pub struct DbFigures {
    pub jobs: Counts,
    pub extractions: Counts,
    pub database_bytes: i64,
}

impl Default for Metrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("cfdi_extract");
        let requests = Family::new_with_constructor(request_histogram as fn() -> Histogram);
        let deliveries = Family::default();
        let delivery_seconds =
            Family::new_with_constructor(delivery_histogram as fn() -> Histogram);
        let jobs = Family::default();
        let extractions = Family::default();
        let database_bytes = Family::default();
        let resident_bytes = Gauge::default();
        registry.register(
            "http_request_duration_seconds",
            "API requests by method, route template and status, and their latency",
            requests.clone(),
        );
        registry.register(
            "webhook_delivery_attempts",
            "Webhook delivery attempts by the delivery's status after them",
            deliveries.clone(),
        );
        registry.register(
            "webhook_delivery_duration_seconds",
            "Time of one webhook delivery attempt (request and response)",
            delivery_seconds.clone(),
        );
        registry.register(
            "sat_calls",
            "Calls made to the SAT by service (web_service, portal, status) and call",
            SAT_CALLS.clone(),
        );
        registry.register(
            "jobs",
            "Background jobs in the queue by kind and status",
            jobs.clone(),
        );
        registry.register(
            "extractions",
            "Extractions by status and failed reason",
            extractions.clone(),
        );
        registry.register(
            "database_size_bytes",
            "The database's size: SQLite's pages (main) and the write-ahead log file (wal)",
            database_bytes.clone(),
        );
        registry.register(
            "process_resident_memory_bytes",
            "Resident memory of the server process",
            resident_bytes.clone(),
        );
        Metrics {
            registry,
            requests,
            deliveries,
            delivery_seconds,
            jobs,
            extractions,
            database_bytes,
            resident_bytes,
            scraping: std::sync::Mutex::new(()),
        }
    }
}

impl Metrics {
    pub fn observe_request(&self, labels: &RequestLabels, seconds: f64) {
        self.requests.get_or_create(labels).observe(seconds);
    }

    /// One delivery attempt: the delivery's status after it, and how long it took.
    pub fn observe_delivery(&self, result: &str, seconds: f64) {
        let labels = DeliveryLabels {
            result: result.to_string(),
        };
        self.deliveries.get_or_create(&labels).inc();
        self.delivery_seconds
            .get_or_create(&labels)
            .observe(seconds);
    }

    /// The text exposition, with the database's figures and the process's memory now.
    pub fn render(&self, figures: &DbFigures, data_dir: &Path) -> anyhow::Result<String> {
        let _one = self.scraping.lock().unwrap_or_else(|p| p.into_inner());
        fill(&self.jobs, baseline_jobs(), &figures.jobs, |v| JobLabels {
            kind: v[0].clone(),
            status: v[1].clone(),
        });
        fill(
            &self.extractions,
            baseline_extractions(),
            &figures.extractions,
            |v| ExtractionLabels {
                status: v[0].clone(),
                failed_reason: v[1].clone(),
            },
        );
        let wal = std::fs::metadata(wal_path(data_dir)).map_or(0, |m| m.len());
        for (file, bytes) in [("main", figures.database_bytes), ("wal", wal as i64)] {
            let labels = FileLabels { file: file.into() };
            self.database_bytes.get_or_create(&labels).set(bytes);
        }
        if let Some(rss) = resident_bytes() {
            self.resident_bytes.set(rss);
        }
        let mut out = String::new();
        prometheus_client::encoding::text::encode(&mut out, &self.registry)?;
        Ok(out)
    }
}

/// Series always present (at 0 when there is nothing), so a sum over them is 0 rather
/// than empty: every job kind and status, and every extraction status without a reason.
const JOB_KINDS: [&str; 3] = ["validate_credential", "run_extraction", "deliver_webhook"];
const JOB_STATUSES: [&str; 2] = ["queued", "running"];
const EXTRACTION_STATUSES: [&str; 4] = ["pending", "running", "finished", "failed"];

fn baseline_jobs() -> Vec<Vec<String>> {
    JOB_KINDS
        .iter()
        .flat_map(|k| {
            JOB_STATUSES
                .iter()
                .map(move |s| vec![k.to_string(), s.to_string()])
        })
        .collect()
}

fn baseline_extractions() -> Vec<Vec<String>> {
    EXTRACTION_STATUSES
        .iter()
        .map(|s| vec![s.to_string(), String::new()])
        .collect()
}

/// Replaces a family's series with `baseline` at 0 and then `counts` (series that went
/// away disappear).
fn fill<L: EncodeLabelSet + Clone + std::hash::Hash + Eq + std::fmt::Debug>(
    family: &Family<L, Gauge>,
    baseline: Vec<Vec<String>>,
    counts: &Counts,
    labels: impl Fn(&[String]) -> L,
) {
    family.clear();
    for values in baseline {
        family.get_or_create(&labels(&values)).set(0);
    }
    for (values, count) in counts {
        family.get_or_create(&labels(values)).set(*count);
    }
}

fn wal_path(data_dir: &Path) -> std::path::PathBuf {
    let mut name = crate::config::db_path(data_dir).into_os_string();
    name.push("-wal");
    name.into()
}

/// Resident set size from `/proc/self/status` (`VmRSS: N kB`); None off Linux.
fn resident_bytes() -> Option<i64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    parse_vm_rss(&status)
}

fn parse_vm_rss(status: &str) -> Option<i64> {
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_counts_that_replace_the_previous_scrape() {
        let m = Metrics::default();
        m.observe_request(
            &RequestLabels {
                method: "GET".into(),
                route: "/v1/entities/<id>".into(),
                status: 200,
            },
            0.003,
        );
        m.observe_delivery("succeeded", 0.02);
        let tmp = tempfile::tempdir().expect("tmp");
        let figures = |n| DbFigures {
            jobs: vec![(vec!["run_extraction".into(), "queued".into()], n)],
            extractions: vec![],
            database_bytes: 4096,
        };
        let text = m.render(&figures(3), tmp.path()).expect("render");
        assert!(text.contains(
            r#"cfdi_extract_http_request_duration_seconds_count{method="GET",route="/v1/entities/<id>",status="200"} 1"#
        ), "{text}");
        assert!(
            text.contains(r#"cfdi_extract_webhook_delivery_attempts_total{result="succeeded"} 1"#),
            "{text}"
        );
        assert!(
            text.contains(r#"cfdi_extract_jobs{kind="run_extraction",status="queued"} 3"#),
            "{text}"
        );
        assert!(
            text.contains(r#"cfdi_extract_database_size_bytes{file="main"} 4096"#),
            "{text}"
        );
        assert!(
            text.contains(r#"cfdi_extract_extractions{status="failed",failed_reason=""} 0"#),
            "{text}"
        );
        let empty = DbFigures {
            jobs: vec![],
            ..figures(0)
        };
        let text = m.render(&empty, tmp.path()).expect("render");
        assert!(
            text.contains(r#"cfdi_extract_jobs{kind="run_extraction",status="queued"} 0"#),
            "a drained queue reads 0: {text}"
        );
    }

    #[test]
    fn reads_the_resident_set_size() {
        assert_eq!(parse_vm_rss("Name:\tx\nVmRSS:\t  2048 kB\n"), Some(2 << 20));
        assert_eq!(parse_vm_rss("Name:\tx\n"), None);
    }
}
