//! The e.firma channel's run: the SAT's web service answers a request minutes to days
//! after it is made. Every request is a row (`db::sat_requests`) written before and after
//! each call, so the conversation survives restarts and `kill -9` without asking the SAT
//! again, and waiting never holds a worker: the run answers when to check next.
//!
//! The run: one metadata request for the period (the SAT's listing with each document's
//! status, which gives `invoices_found` and cancellations early), then one CFDI request
//! per finished metadata window that had documents (received CFDI only active: the SAT
//! serves cancelled received ones as metadata only). The SAT's answers:
//! - 5005 duplicate: adopt the live request (the id the SAT names, or ours with the same
//!   parameters); with neither, wait for the live one to end and ask again.
//! - 5003 over the maximum: split the window in two and ask for each half.
//! - 5004 no results: done, with nothing.
//! - 5002 lifetime limit: fail `sat_request_limit`; rejected: fail `sat_request_rejected`.
//! - expired (state 6): ask again, once; a package is never downloaded a third time
//!   (one that cannot be had any more makes the request be asked again, once).

use super::package::Package;
use super::responses::{RequestState, SatCode};
use super::service::{refuses_certificate, Service, Session};
use super::store;
use super::vault;
use super::window::{fmt, local, poll_wait, request_query, whole_days};
use crate::crypto::Cipher;
use crate::db::Db;
use crate::db::{
    self,
    sat_requests::{Kind, SatPackage, SatRequest, State},
};
use crate::db::{entities::Entity, Conn};
use crate::domain::class::DocumentClass;
use crate::domain::extraction::{FailedReason, Period};
use crate::sat::{Channel, Due, Readiness, Run, SatError, Secret, Sink, Step, Verdict};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;

/// The e.firma channel over a `Service`: the SAT's web service, or the sandbox's.
pub struct EfirmaChannel {
    service: Arc<dyn Service>,
    /// Where the SAT's request ids and the packages' progress are kept.
    db: Db,
    /// `--sat-ws-poll`: the first wait between two checks of a request.
    poll: Duration,
}

impl EfirmaChannel {
    pub fn new(service: Arc<dyn Service>, db: Db, poll: Duration) -> Self {
        EfirmaChannel { service, db, poll }
    }
}

impl Channel for EfirmaChannel {
    fn name(&self) -> &'static str {
        "efirma"
    }

    /// The web service serves invoices and, on hosts of their own, CFDI de Retenciones.
    fn offers(&self, _: DocumentClass) -> bool {
        true
    }

    /// An invoice by UUID is the SAT's request by folio (`SolicitaDescargaFolio`).
    fn fetches_by_uuid(&self) -> bool {
        true
    }

    fn readiness(&self, entity: &Entity) -> Readiness {
        vault::readiness(entity)
    }

    fn open(
        &self,
        conn: &Conn,
        cipher: &Cipher,
        entity: &Entity,
    ) -> anyhow::Result<Option<Secret>> {
        vault::open(conn, cipher, entity)
    }

    fn due(&self, conn: &Conn, cipher: &Cipher, entity: &Entity) -> anyhow::Result<Due> {
        vault::due(conn, cipher, entity)
    }

    /// One authentication with the web service.
    fn validate(&self, secret: &Secret) -> Result<(), SatError> {
        let efirma = vault::efirma(secret)?;
        self.service
            .connect(&efirma, None, DocumentClass::Invoices)
            .map(|_| ())
    }

    fn record(
        &self,
        tx: &Conn,
        entity_id: &str,
        secret: &Secret,
        verdict: Verdict,
    ) -> anyhow::Result<bool> {
        vault::record(tx, entity_id, secret, verdict)
    }

    /// The request the run waits on at the SAT (the next to be checked).
    fn waiting(&self, conn: &Conn, extraction_id: &str) -> anyhow::Result<Option<Value>> {
        db::sat_requests::waiting_view(conn, extraction_id)
    }

    fn advance(&self, run: &Run, sink: &dyn Sink) -> anyhow::Result<Step> {
        let efirma = vault::efirma(run.secret)?;
        let connect = Box::new(|| self.service.connect(&efirma, Some(&run.context), run.class));
        advance(self, run, sink, connect)
    }
}

/// Consecutive failed attempts to reach the service before the run fails
/// `sat_unavailable` (with doubling waits from `--sat-ws-poll`, a few hours).
const MAX_UNAVAILABLE: u32 = 12;

/// Runs (or resumes) an extraction through the web service as far as it can go now.
pub fn advance<'a>(
    channel: &'a EfirmaChannel,
    run: &'a Run<'a>,
    sink: &'a dyn Sink,
    connect: Connect<'a>,
) -> anyhow::Result<Step> {
    let extraction_id = &run.context.extraction_id;
    let mut conversation = Conversation {
        channel,
        run,
        sink,
        session: None,
        connect,
    };
    match conversation.advance(run.period) {
        Ok(step) => Ok(step),
        Err(Stop::Sat(SatError::InvalidCredentials)) => Ok(Step::CredentialRefused),
        Err(Stop::Sat(SatError::Unavailable(detail))) if run.attempts >= MAX_UNAVAILABLE => {
            log::warn!("extraction {extraction_id}: web service unavailable, giving up: {detail}");
            Ok(Step::Failed(FailedReason::SatUnavailable))
        }
        Err(Stop::Sat(SatError::Unavailable(detail))) => {
            log::warn!("extraction {extraction_id}: web service unavailable: {detail}");
            // Before a failed call to the service is tried again: the same doubling waits.
            Ok(Step::Retry {
                after: poll_wait(channel.poll, run.attempts.saturating_sub(1)),
                error: detail,
            })
        }
        Err(Stop::Sat(SatError::Internal(e))) | Err(Stop::Internal(e)) => Err(e),
        Err(Stop::Fail(reason, why)) => {
            log::warn!("extraction {extraction_id}: {why}");
            Ok(Step::Failed(reason))
        }
    }
}

/// Why `advance` stopped early.
enum Stop {
    Sat(SatError),
    Fail(FailedReason, String),
    Internal(anyhow::Error),
}

impl From<SatError> for Stop {
    fn from(e: SatError) -> Self {
        Stop::Sat(e)
    }
}

impl From<anyhow::Error> for Stop {
    fn from(e: anyhow::Error) -> Self {
        Stop::Internal(e)
    }
}

pub type Connect<'a> = Box<dyn Fn() -> Result<Box<dyn Session + 'a>, SatError> + 'a>;

struct Conversation<'a> {
    channel: &'a EfirmaChannel,
    run: &'a Run<'a>,
    sink: &'a dyn Sink,
    /// Authenticated on first use: a pass that only finds requests not yet due asks
    /// the SAT nothing.
    session: Option<Box<dyn Session + 'a>>,
    connect: Connect<'a>,
}

impl<'a> Conversation<'a> {
    fn session(&mut self) -> Result<&mut (dyn Session + 'a), SatError> {
        if self.session.is_none() {
            self.session = Some((self.connect)()?);
        }
        match self.session.as_deref_mut() {
            Some(s) => Ok(s),
            None => Err(SatError::Unavailable("no session".into())),
        }
    }

    /// Moves every due request forward until all are done or none is due.
    fn advance(&mut self, period: Period) -> Result<Step, Stop> {
        let db = &self.channel.db;
        let extraction_id = &self.run.context.extraction_id;
        if db::sat_requests::of_extraction(&db.conn()?, extraction_id)?.is_empty() {
            let window = whole_days(period);
            let first = self.first_requests((&window.0, &window.1));
            db.tx(|tx| first.iter().try_for_each(|q| db::sat_requests::save(tx, q)))?;
        }
        loop {
            if self.sink.stopping() {
                return Ok(Step::Retry {
                    after: Duration::ZERO,
                    error: "service stopping".into(),
                });
            }
            let requests = db::sat_requests::of_extraction(&db.conn()?, extraction_id)?;
            let now = crate::time::now();
            let due = requests.iter().find(|q| {
                !q.state.is_final()
                    && (q.state == State::Downloading
                        || q.next_check_at
                            .as_deref()
                            .is_none_or(|at| at <= now.as_str()))
            });
            if let Some(q) = due {
                let mut q = q.clone();
                match q.state {
                    State::New => self.submit(&mut q)?,
                    State::Submitted => self.verify(&mut q)?,
                    State::Downloading => self.download(&mut q)?,
                    State::Done | State::Split => {}
                }
                continue;
            }
            if requests.iter().all(|q| q.state.is_final()) {
                if self.ask_for_documents(&requests)? {
                    continue;
                }
                return Ok(Step::Done);
            }
            let next = requests
                .iter()
                .filter(|q| !q.state.is_final())
                .filter_map(|q| q.next_check_at.as_deref().and_then(crate::time::parse))
                .min();
            let after = next
                .and_then(|at| (at - chrono::Utc::now()).to_std().ok())
                .unwrap_or(Duration::ZERO);
            return Ok(Step::Wait(after));
        }
    }

    fn request(&self, kind: Kind, window: (&str, &str)) -> SatRequest {
        let run = &self.run.context;
        SatRequest::new(
            &run.extraction_id,
            &run.entity_id,
            kind,
            self.run.direction,
            window,
        )
    }

    /// A run's first requests: the period's metadata, or one CFDI request by folio per
    /// UUID (the SAT's folio request has no window: the period's is kept for the view).
    fn first_requests(&self, window: (&str, &str)) -> Vec<SatRequest> {
        if self.run.uuids.is_empty() {
            return vec![self.request(Kind::Metadata, window)];
        }
        self.run
            .uuids
            .iter()
            .map(|uuid| SatRequest {
                folio: Some(uuid.clone()),
                ..self.request(Kind::Cfdi, window)
            })
            .collect()
    }

    /// Once the metadata is in: one CFDI request per metadata window that had
    /// documents. False when there is nothing more to ask.
    fn ask_for_documents(&mut self, requests: &[SatRequest]) -> Result<bool, Stop> {
        if requests.iter().any(|q| q.kind == Kind::Cfdi) {
            return Ok(false);
        }
        let asks: Vec<SatRequest> = requests
            .iter()
            .filter(|q| q.kind == Kind::Metadata && q.state == State::Done)
            .filter(|q| q.cfdi_count != Some(0))
            .map(|q| self.request(Kind::Cfdi, (&q.window_start, &q.window_end)))
            .collect();
        if asks.is_empty() {
            return Ok(false);
        }
        self.channel.db.tx(|tx| {
            for q in &asks {
                db::sat_requests::save(tx, q)?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    fn submit(&mut self, q: &mut SatRequest) -> Result<(), Stop> {
        let query = request_query(q)?;
        let answer = self.session()?.query(&query)?;
        let code = answer.status.code;
        note(q, code.code(), &answer.status.message);
        match code {
            SatCode::Accepted | SatCode::Duplicate => {
                let adopted = match answer.request_id {
                    Some(id) => Some(id),
                    None if code == SatCode::Duplicate => {
                        db::sat_requests::live_twin(&self.channel.db.conn()?, q)?
                    }
                    None => None,
                };
                match adopted {
                    Some(id) => {
                        q.sat_request_id = Some(id);
                        q.state = State::Submitted;
                        q.checks = 0;
                        q.next_check_at = Some(self.next_check(0));
                    }
                    // A live twin we do not know (its answer was lost): it ends within
                    // the SAT's 72 hours, then this one can be asked.
                    None => self.later(q),
                }
            }
            SatCode::NotFound => {
                q.state = State::Done;
                q.cfdi_count = Some(0);
            }
            SatCode::LifetimeLimitReached => {
                return Err(self.fail(
                    FailedReason::SatRequestLimit,
                    format!(
                        "the SAT's lifetime limit for this request: {}",
                        answer.status.message
                    ),
                ))
            }
            c if refuses_certificate(c) => return Err(Stop::Sat(SatError::InvalidCredentials)),
            SatCode::Unhandled | SatCode::InternalError => self.later(q),
            _ => {
                return Err(self.fail(
                    FailedReason::SatRequestRejected,
                    format!(
                        "the SAT refused the request ({}): {}",
                        code.code(),
                        answer.status.message
                    ),
                ))
            }
        }
        self.save(q)
    }

    fn verify(&mut self, q: &mut SatRequest) -> Result<(), Stop> {
        let id = q.sat_request_id.clone().unwrap_or_default();
        let answer = self.session()?.verify(&id)?;
        q.checks += 1;
        let status = answer.status.code;
        note(q, status.code(), &answer.status.message);
        match status {
            SatCode::Accepted => {}
            c if refuses_certificate(c) => return Err(Stop::Sat(SatError::InvalidCredentials)),
            // The SAT no longer knows it: as good as expired.
            SatCode::NotFound => return self.again(q, "the SAT no longer knows the request"),
            SatCode::Unhandled | SatCode::InternalError => {
                self.later(q);
                return self.save(q);
            }
            other => {
                return Err(self.fail(
                    FailedReason::SatRequestRejected,
                    format!(
                        "verification refused ({}): {}",
                        other.code(),
                        answer.status.message
                    ),
                ))
            }
        }
        q.sat_state = Some(state_code(answer.state));
        match answer.state_code {
            SatCode::OverMaximum => return self.split(q),
            // Nothing in the window (the SAT reports it finished or rejected with 5004).
            SatCode::NotFound if answer.package_ids.is_empty() => {
                q.state = State::Done;
                q.cfdi_count = Some(0);
                q.next_check_at = None;
                return self.save(q);
            }
            _ => {}
        }
        match answer.state {
            RequestState::Finished => {
                q.cfdi_count = Some(answer.cfdi_count as i64);
                if answer.package_ids.is_empty() {
                    q.state = State::Done;
                    return self.save(q);
                }
                q.state = State::Downloading;
                q.next_check_at = None;
                let packages = answer.package_ids;
                let mut resume = |tx: &db::Conn| {
                    db::sat_requests::add_packages(tx, &q.id, &packages)?;
                    db::sat_requests::save(tx, q)
                };
                match q.folio {
                    // No listing counted it found: the SAT's count does.
                    Some(_) => self.sink.found(answer.cfdi_count, &mut resume)?,
                    None => self.channel.db.tx(|tx| resume(tx))?,
                }
                Ok(())
            }
            RequestState::Expired => self.again(q, "the request expired at the SAT"),
            RequestState::Rejected | RequestState::Error => Err(self.fail(
                FailedReason::SatRequestRejected,
                format!(
                    "the SAT rejected the request ({}): {}",
                    answer.state_code.code(),
                    answer.status.message
                ),
            )),
            RequestState::Accepted | RequestState::InProgress | RequestState::Other(_) => {
                q.next_check_at = Some(self.next_check(q.checks));
                self.save(q)
            }
        }
    }

    /// Downloads and stores the packages not yet stored; the request is done after.
    fn download(&mut self, q: &mut SatRequest) -> Result<(), Stop> {
        let packages = db::sat_requests::packages(&self.channel.db.conn()?, &q.id)?;
        for p in packages.iter().filter(|p| !p.done) {
            if self.sink.stopping() {
                return Ok(());
            }
            if p.downloads >= 2 {
                return self.again(q, "a package was already downloaded twice");
            }
            self.channel
                .db
                .tx(|tx| db::sat_requests::count_download(tx, &q.id, &p.package_id))?;
            let answer = self.session()?.download(&p.package_id)?;
            let bytes = match (answer.status.code, answer.package) {
                (SatCode::Accepted, Some(bytes)) => bytes,
                (SatCode::Unhandled | SatCode::InternalError, _) => {
                    return Err(Stop::Sat(SatError::Unavailable(format!(
                        "download {}: {}",
                        answer.status.code.code(),
                        answer.status.message
                    ))))
                }
                (code, _) => {
                    note(q, code.code(), &answer.status.message);
                    return self.again(q, "a package could not be downloaded");
                }
            };
            self.store(q, p, bytes)?;
        }
        if !self.sink.stopping() {
            q.state = State::Done;
            self.save(q)?;
        }
        Ok(())
    }

    /// Stores a package; each batch commits with the request's resume point.
    fn store(&self, q: &SatRequest, p: &SatPackage, bytes: Vec<u8>) -> Result<(), Stop> {
        let mut package = Package::open(bytes)
            .map_err(|e| Stop::Internal(anyhow::anyhow!("package {}: {e}", p.package_id)))?;
        let mut progress = |tx: &db::Conn, handled: u64, done: bool| {
            db::sat_requests::package_progress(tx, &q.id, &p.package_id, handled, done)
        };
        let (sink, skip) = (self.sink, p.items_done);
        match q.kind {
            Kind::Metadata => store::store_listing(sink, &mut package, skip, &mut progress),
            Kind::Cfdi => {
                store::store_cfdis(sink, self.run.class, &mut package, skip, &mut progress)
            }
        }
        .map_err(Stop::Internal)
    }

    /// Over the SAT's maximum: two requests for the window's halves replace this one.
    fn split(&mut self, q: &mut SatRequest) -> Result<(), Stop> {
        if q.folio.is_some() {
            return Err(self.fail(
                FailedReason::SatRequestRejected,
                "over the SAT's maximum for a request of one UUID".into(),
            ));
        }
        let (start, end) = (local(&q.window_start)?, local(&q.window_end)?);
        let half = (end - start) / 2;
        if half < chrono::Duration::seconds(1) {
            return Err(self.fail(
                FailedReason::SatRequestRejected,
                "over the SAT's maximum even for a one-second window".into(),
            ));
        }
        let middle = start + half;
        let first = self.request(q.kind, (&fmt(start), &fmt(middle)));
        let second_start = fmt(middle + chrono::Duration::seconds(1));
        let second = self.request(q.kind, (&second_start, &q.window_end));
        q.state = State::Split;
        q.next_check_at = None;
        self.channel.db.tx(|tx| {
            db::sat_requests::save(tx, q)?;
            db::sat_requests::save(tx, &first)?;
            db::sat_requests::save(tx, &second)
        })?;
        Ok(())
    }

    /// Asks for the same window again (after an expiry or a lost package), once.
    fn again(&mut self, q: &mut SatRequest, why: &str) -> Result<(), Stop> {
        if q.remade >= 1 {
            return Err(self.fail(
                FailedReason::SatRequestRejected,
                format!("{why}, and it was already asked again once"),
            ));
        }
        log::info!(
            "extraction {}: {why}: asking again",
            self.run.context.extraction_id
        );
        q.remade += 1;
        q.state = State::New;
        q.sat_request_id = None;
        q.checks = 0;
        q.next_check_at = None;
        self.channel.db.tx(|tx| {
            db::sat_requests::drop_packages(tx, &q.id)?;
            db::sat_requests::save(tx, q)
        })?;
        Ok(())
    }

    /// A transient refusal: try again after the next wait.
    fn later(&self, q: &mut SatRequest) {
        q.next_check_at = Some(self.next_check(q.checks));
        q.checks += 1;
    }

    fn next_check(&self, checks: u32) -> String {
        crate::time::after(poll_wait(self.channel.poll, checks))
    }

    fn save(&self, q: &SatRequest) -> Result<(), Stop> {
        self.channel.db.tx(|tx| db::sat_requests::save(tx, q))?;
        Ok(())
    }

    fn fail(&self, reason: FailedReason, why: String) -> Stop {
        Stop::Fail(reason, why)
    }
}

/// The SAT's last word on a request, kept for the extraction's view and the log.
fn note(q: &mut SatRequest, code: u32, message: &str) {
    q.last_code = Some(code);
    q.last_message = Some(message.to_string());
}

fn state_code(s: RequestState) -> u32 {
    match s {
        RequestState::Accepted => 1,
        RequestState::InProgress => 2,
        RequestState::Finished => 3,
        RequestState::Error => 4,
        RequestState::Rejected => 5,
        RequestState::Expired => 6,
        RequestState::Other(n) => n,
    }
}
