//! The harness the feature modules share: the app (`app`), the engine the suite runs on
//! and each test's database (`engine`), the webhook receiver, e.firma files, the
//! invoices' helpers, a fake HTTP server and the fakes of the SAT's two channels built
//! on it.

pub mod app;
pub mod efirma_files;
pub mod engine;
pub mod fake_http;
pub mod fake_sat_certificates;
pub mod fake_sat_portal;
pub mod fake_sat_status;
pub mod fake_sat_ws;
pub mod invoices;
pub mod pg_proxy;
pub mod receiver;

pub(crate) use engine::sqlite_only;
