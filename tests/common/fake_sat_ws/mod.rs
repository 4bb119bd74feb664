//! A fake of the SAT's bulk-download web service ("Descarga Masiva") on 127.0.0.1, for
//! tests that drive the real SOAP client (directly, or through the binary's
//! `--sat-ws-url`).
//!
//! Like the SAT it is stateful and checks every request: the authentication's signed
//! timestamp (with the certificate it carries, and that it is current), then on every
//! other call the `WRAP` token it issued (5 minutes), the enveloped signature (with the
//! certificate in `KeyInfo`) and that `RfcSolicitante` is the certificate's RFC.
//! Refusals: a SOAP fault for authentication; `CodEstatus` 300 (token), 301 (XML),
//! 302 (seal), 303 (RFC), 304 (certificate dates), 305 (certificate) otherwise.
//!
//! Behaviour: documents come from the test (`add_cfdi`, `add_retention` for a fake of
//! the retentions' hosts, `cancel`). A query gets a
//! request id and 5000; each verification moves the request Accepted (1), then
//! In progress (2) for `Settings::in_progress_checks` checks, then Finished (3) with its
//! packages, selected then (issuer or receiver is the requester, `Fecha` within the
//! window, `EstadoComprobante`, `TipoComprobante`, counterpart), or Rejected (5) with
//! 5004 when none match / 5003 when more than the maximum do. Always on, like the SAT's:
//! a live request (state 1 or 2) with the same parameters answers 5005 with its id; the
//! same CFDI query is accepted at most twice (then 5002); a package is served at most
//! twice (then 5008, no package). Scripted behaviours are the methods under "Scripts".

use std::sync::{Arc, Mutex, MutexGuard};

use crate::common::fake_http;

use cfdi_extract::sat::efirma::endpoints::Endpoints;
use chrono::{DateTime, NaiveDateTime, Utc};

pub use cfdi_extract::domain::extraction::Direction;
pub use cfdi_extract::sat::efirma::envelope::{DocumentStatus, RequestType};
pub use params::QueryParams;

mod answers;
pub mod packages;
mod params;
mod service;
pub mod xmldsig;

/// The four kinds of call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Authenticate,
    Query,
    Verify,
    Download,
}

/// One call the fake received, and how it answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Call {
    pub op: Op,
    /// The request id (a query's answer, a verification) or the package id (download).
    pub id: Option<String>,
    /// The HTTP status.
    pub http: u16,
    /// `CodEstatus`; None for authentication and for answers without one (faults, 500).
    pub code: Option<u32>,
    /// `EstadoSolicitud`, on verifications that report one.
    pub state: Option<u32>,
}

/// Tunables (defaults are the SAT's documented sizes).
#[derive(Debug, Clone)]
pub struct Settings {
    /// Verifications answering In progress (2) between Accepted (1) and the end.
    pub in_progress_checks: u32,
    pub cfdi_per_package: usize,
    pub metadata_per_package: usize,
    /// Over these, a request ends Rejected (5) with 5003.
    pub max_cfdi: usize,
    pub max_metadata: usize,
    /// A query that selects nothing answers 5004 at once instead of being accepted (and
    /// ending Rejected with 5004 on verification).
    pub no_results_at_query: bool,
    pub token_lifetime: chrono::Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            in_progress_checks: 1,
            cfdi_per_package: 200,
            metadata_per_package: 1_000,
            max_cfdi: 200_000,
            max_metadata: 1_000_000,
            no_results_at_query: false,
            token_lifetime: chrono::Duration::minutes(5),
        }
    }
}

type Filter = Box<dyn Fn(&QueryParams) -> bool + Send>;

/// A running fake; stops when dropped.
pub struct FakeSatWs {
    server: fake_http::Server,
    state: Arc<Mutex<service::State>>,
}

impl FakeSatWs {
    pub fn start() -> Self {
        Self::start_with(Settings::default())
    }

    pub fn start_with(settings: Settings) -> Self {
        let state = Arc::new(Mutex::new(service::State::new(settings)));
        let shared = state.clone();
        let server = fake_http::Server::start(Arc::new(move |request: &fake_http::Request| {
            let mut state = shared.lock().unwrap_or_else(|e| e.into_inner());
            service::handle(&mut state, request)
        }));
        Self { server, state }
    }

    fn state(&self) -> MutexGuard<'_, service::State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The base URL for every service (`--sat-ws-url`): `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        self.server.url("")
    }

    pub fn endpoints(&self) -> Endpoints {
        Endpoints::new(&self.url(), &self.url())
    }

    pub fn configure(&self, change: impl FnOnce(&mut Settings)) {
        change(&mut self.state().settings);
    }

    // -- Documents ------------------------------------------------------------------

    /// Adds a stamped CFDI (panics on one the fake cannot index); returns its UUID.
    pub fn add_cfdi(&self, xml: &[u8]) -> String {
        let doc = packages::Doc::from_xml(xml).expect("a stamped CFDI");
        let uuid = doc.uuid.clone();
        self.state().docs.insert(uuid.clone(), doc);
        uuid
    }

    /// Adds a stamped CFDI de Retenciones (for a fake of the retentions' hosts); returns
    /// its UUID.
    pub fn add_retention(&self, xml: &[u8]) -> String {
        let doc = packages::Doc::from_retention_xml(xml).expect("a stamped retention");
        let uuid = doc.uuid.clone();
        self.state().docs.insert(uuid.clone(), doc);
        uuid
    }

    /// Marks a document cancelled at `at` (local time).
    pub fn cancel(&self, uuid: &str, at: NaiveDateTime) {
        let mut state = self.state();
        let doc = state
            .docs
            .get_mut(&uuid.to_ascii_uppercase())
            .expect("a known UUID");
        doc.cancelled_at = Some(at);
    }

    // -- Clock: real time plus an offset tests can move -----------------------------

    pub fn now(&self) -> DateTime<Utc> {
        self.state().now()
    }

    /// Sets the clock to `at` (it then runs on from there). The certificate's validity is
    /// checked against this clock: tests pin it inside the test e.firma's dates.
    pub fn set_now(&self, at: DateTime<Utc>) {
        self.state().offset = at - Utc::now();
    }

    pub fn advance(&self, by: chrono::Duration) {
        self.state().offset += by;
    }

    // -- Scripts ----------------------------------------------------------------------

    /// Matching CFDI queries answer 5002 (lifetime requests used up); metadata is exempt.
    pub fn exhaust_lifetime(&self, filter: impl Fn(&QueryParams) -> bool + Send + 'static) {
        self.state().scripts.lifetime.push(Box::new(filter));
    }

    /// Matching requests end Rejected (5, `CodigoEstadoSolicitud` 5006).
    pub fn reject(&self, filter: impl Fn(&QueryParams) -> bool + Send + 'static) {
        self.state().scripts.reject.push(Box::new(filter));
    }

    /// The first request of each parameter set that matches ends Expired (6); asking again
    /// with the same parameters then proceeds normally.
    pub fn expire_first(&self, filter: impl Fn(&QueryParams) -> bool + Send + 'static) {
        self.state().scripts.expire.push(Box::new(filter));
    }

    /// The next `n` accepted queries are recorded (live) but answered with HTTP 500, as if
    /// the answer was lost; asking again answers 5005 with the live request's id.
    pub fn lose_query_answers(&self, n: u32) {
        self.state().scripts.lost_answers += n;
    }

    /// The next `k` calls of `op` (that pass the security checks) answer 404 (an
    /// unhandled error at the SAT); for authentication, a fault.
    pub fn fail_next(&self, op: Op, k: u32) {
        *self.state().scripts.failures.entry(op).or_default() += k;
    }

    /// Authentication with this RFC's certificate is refused (fault).
    pub fn refuse_authentication_for(&self, rfc: &str) {
        self.state()
            .scripts
            .refused_rfcs
            .insert(rfc.to_ascii_uppercase());
    }

    pub fn refuse_all_authentication(&self) {
        self.state().scripts.refuse_all = true;
    }

    // -- Observations -----------------------------------------------------------------

    pub fn calls(&self) -> Vec<Call> {
        self.state().calls.clone()
    }

    pub fn count(&self, op: Op) -> usize {
        self.state().calls.iter().filter(|c| c.op == op).count()
    }

    /// The ids of the requests accepted so far, in order (lost answers included).
    pub fn request_ids(&self) -> Vec<String> {
        self.state().requests.iter().map(|r| r.id.clone()).collect()
    }

    /// The UUIDs asked by folio (`SolicitaDescargaFolio`), in the order asked.
    pub fn asked_uuids(&self) -> Vec<String> {
        let state = self.state();
        state
            .requests
            .iter()
            .filter_map(|r| r.params.uuid.clone())
            .collect()
    }

    /// How many times a package was served (refused attempts not counted).
    pub fn downloads(&self, package_id: &str) -> u32 {
        self.state()
            .packages
            .get(package_id)
            .map_or(0, |p| p.downloads)
    }
}
