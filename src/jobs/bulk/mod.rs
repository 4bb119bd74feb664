//! Extractions through the e.firma channel: the SAT's bulk-download web service, which
//! answers a request minutes to days after it is made. Every request is a row
//! (`db::sat_requests`) written before and after each call, so the conversation survives
//! restarts and `kill -9` without asking the SAT again, and waiting never holds a
//! worker: the job stores when to check next and reschedules itself for then.
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

mod window;

use super::{Context, Outcome};
use crate::db::{
    self,
    efirmas::SealedEfirma,
    entities::Entity,
    extractions::Extraction,
    sat_requests::{Kind, SatPackage, SatRequest, State},
};
use crate::domain::efirma::EfirmaStatus;
use crate::domain::extraction::{FailedReason, Period};
use crate::ingest::{package, Owner};
use crate::sat::bulk::{refuses_certificate, BulkSession};
use crate::sat::webservice::package::Package;
use crate::sat::webservice::responses::{RequestState, SatCode};
use crate::sat::{RunContext, SatError};
use std::time::Duration;
use window::{fmt, local, poll_wait, whole_days, window_query};

/// Before a failed call to the service is tried again: the same doubling waits.
fn wait(ctx: &Context, attempts: u32) -> Duration {
    poll_wait(ctx.config.sat_ws_poll, attempts.saturating_sub(1))
}

/// Consecutive failed attempts to reach the service before the run fails
/// `sat_unavailable` (with doubling waits from `--sat-ws-poll`, a few hours).
const MAX_UNAVAILABLE: u32 = 12;

/// How a run ends (for now): the caller turns it into the extraction's state.
pub enum End {
    Finished,
    Failed(FailedReason),
    /// The SAT refused the e.firma itself: the run fails `invalid_credentials` and the
    /// e.firma turns `invalid` until replaced.
    EfirmaRefused,
    /// Come back later (a wait, a retry after an error, or a stop).
    Later(Outcome),
}

/// Runs (or resumes) an extraction through the web service as far as it can go now.
pub fn run(
    ctx: &Context,
    ext: &Extraction,
    entity: &Entity,
    sealed: &SealedEfirma,
    attempts: u32,
) -> anyhow::Result<End> {
    let period = ext
        .period()
        .ok_or_else(|| anyhow::anyhow!("extraction {} has no valid period", ext.id))?;
    if entity
        .efirma
        .as_ref()
        .is_none_or(|e| e.current_status() == EfirmaStatus::Expired)
    {
        log::warn!(
            "extraction {}: the e.firma expired or was removed during the run",
            ext.id
        );
        return Ok(End::Failed(FailedReason::InvalidCredentials));
    }
    let fiel = super::credential::open(ctx, sealed, &entity.tax_id)?;
    let run = RunContext {
        entity_id: entity.id.clone(),
        extraction_id: ext.id.clone(),
    };
    let mut conversation = Conversation {
        ctx,
        ext,
        owner: Owner {
            org_id: &entity.org_id,
            entity_id: &entity.id,
            batch: &ext.id,
        },
        session: None,
        connect: Box::new(|| ctx.bulk.connect(&fiel, Some(&run))),
    };
    match conversation.advance(period) {
        Ok(end) => Ok(end),
        Err(Stop::Sat(SatError::InvalidCredentials)) => Ok(End::EfirmaRefused),
        Err(Stop::Sat(SatError::Unavailable(detail))) if attempts >= MAX_UNAVAILABLE => {
            log::warn!(
                "extraction {}: web service unavailable, giving up: {detail}",
                ext.id
            );
            Ok(End::Failed(FailedReason::SatUnavailable))
        }
        Err(Stop::Sat(SatError::Unavailable(detail))) => {
            log::warn!("extraction {}: web service unavailable: {detail}", ext.id);
            Ok(End::Later(Outcome::Retry {
                after: wait(ctx, attempts),
                error: detail,
            }))
        }
        Err(Stop::Sat(SatError::Internal(e))) | Err(Stop::Internal(e)) => Err(e),
        Err(Stop::Fail(reason, why)) => {
            log::warn!("extraction {}: {why}", ext.id);
            Ok(End::Failed(reason))
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

type Connect<'a> = Box<dyn Fn() -> Result<Box<dyn BulkSession + 'a>, SatError> + 'a>;

struct Conversation<'a> {
    ctx: &'a Context,
    ext: &'a Extraction,
    owner: Owner<'a>,
    /// Authenticated on first use: a pass that only finds requests not yet due asks
    /// the SAT nothing.
    session: Option<Box<dyn BulkSession + 'a>>,
    connect: Connect<'a>,
}

impl<'a> Conversation<'a> {
    fn session(&mut self) -> Result<&mut (dyn BulkSession + 'a), SatError> {
        if self.session.is_none() {
            self.session = Some((self.connect)()?);
        }
        match self.session.as_deref_mut() {
            Some(s) => Ok(s),
            None => Err(SatError::Unavailable("no session".into())),
        }
    }

    /// Moves every due request forward until all are done or none is due.
    fn advance(&mut self, period: Period) -> Result<End, Stop> {
        let db = &self.ctx.db;
        if db::sat_requests::of_extraction(&*db.conn()?, &self.ext.id)?.is_empty() {
            let window = whole_days(period);
            let first = self.request(Kind::Metadata, (&window.0, &window.1));
            db.tx(|tx| db::sat_requests::save(tx, &first))?;
        }
        loop {
            if self.ctx.stopping() {
                return Ok(End::Later(Outcome::Retry {
                    after: Duration::ZERO,
                    error: "service stopping".into(),
                }));
            }
            let requests = db::sat_requests::of_extraction(&*db.conn()?, &self.ext.id)?;
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
                return Ok(End::Finished);
            }
            let next = requests
                .iter()
                .filter(|q| !q.state.is_final())
                .filter_map(|q| q.next_check_at.as_deref().and_then(crate::time::parse))
                .min();
            let after = next
                .and_then(|at| (at - chrono::Utc::now()).to_std().ok())
                .unwrap_or(Duration::ZERO);
            return Ok(End::Later(Outcome::Wait { after }));
        }
    }

    fn request(&self, kind: Kind, window: (&str, &str)) -> SatRequest {
        SatRequest::new(
            &self.ext.id,
            self.owner.entity_id,
            kind,
            self.ext.direction,
            window,
        )
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
        self.ctx.db.tx(|tx| {
            for q in &asks {
                db::sat_requests::save(tx, q)?;
            }
            Ok(())
        })?;
        Ok(true)
    }

    fn submit(&mut self, q: &mut SatRequest) -> Result<(), Stop> {
        let query = window_query(q)?;
        let answer = self.session()?.query(&query)?;
        let code = answer.status.code;
        note(q, code.code(), &answer.status.message);
        match code {
            SatCode::Accepted | SatCode::Duplicate => {
                let adopted = match answer.request_id {
                    Some(id) => Some(id),
                    None if code == SatCode::Duplicate => {
                        db::sat_requests::live_twin(&*self.ctx.db.conn()?, q)?
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
                self.ctx.db.tx(|tx| {
                    db::sat_requests::add_packages(tx, &q.id, &packages)?;
                    db::sat_requests::save(tx, q)
                })?;
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
        let packages = db::sat_requests::packages(&*self.ctx.db.conn()?, &q.id)?;
        for p in packages.iter().filter(|p| !p.done) {
            if self.ctx.stopping() {
                return Ok(());
            }
            if p.downloads >= 2 {
                return self.again(q, "a package was already downloaded twice");
            }
            self.ctx
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
        if !self.ctx.stopping() {
            q.state = State::Done;
            self.save(q)?;
        }
        Ok(())
    }

    /// Stores a package; each batch commits with the request's resume point and the
    /// extraction's counts.
    fn store(&self, q: &SatRequest, p: &SatPackage, bytes: Vec<u8>) -> Result<(), Stop> {
        let mut package = Package::open(bytes)
            .map_err(|e| Stop::Internal(anyhow::anyhow!("package {}: {e}", p.package_id)))?;
        let extraction_id = &self.ext.id;
        let mut progress = |tx: &rusqlite::Connection, at: package::Progress| {
            let (found, processed) = match q.kind {
                Kind::Metadata => (at.batch as i64, 0),
                Kind::Cfdi => (0, at.stored as i64),
            };
            super::extraction::add_counts(tx, extraction_id, found, processed)?;
            for (uuid, reason) in &at.conflicts {
                db::extractions::record_conflict(tx, extraction_id, uuid, reason)?;
            }
            db::sat_requests::package_progress(tx, &q.id, &p.package_id, at.handled, at.done)
        };
        let store = match q.kind {
            Kind::Metadata => package::store_listing,
            Kind::Cfdi => package::store_cfdis,
        };
        let (db, owner, direction) = (&self.ctx.db, self.owner, self.ext.direction);
        store(
            db,
            owner,
            direction,
            &mut package,
            p.items_done,
            &mut progress,
        )
        .map_err(Stop::Internal)
    }

    /// Over the SAT's maximum: two requests for the window's halves replace this one.
    fn split(&mut self, q: &mut SatRequest) -> Result<(), Stop> {
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
        self.ctx.db.tx(|tx| {
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
        log::info!("extraction {}: {why}: asking again", self.ext.id);
        q.remade += 1;
        q.state = State::New;
        q.sat_request_id = None;
        q.checks = 0;
        q.next_check_at = None;
        self.ctx.db.tx(|tx| {
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
        crate::time::after(poll_wait(self.ctx.config.sat_ws_poll, checks))
    }

    fn save(&self, q: &SatRequest) -> Result<(), Stop> {
        self.ctx.db.tx(|tx| db::sat_requests::save(tx, q))?;
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
