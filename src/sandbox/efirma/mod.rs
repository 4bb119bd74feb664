//! The sandbox's e.firma web service (`sat::efirma::Service`): the same documents,
//! cancellations and withheld XML as the sandbox's portal, answered asynchronously and
//! deterministically, with every code of the real service reachable on purpose. The
//! rules (documented in `/docs/sandbox`, "The e.firma web service"):
//! - every call takes `--sim-latency`; any e.firma is accepted (its upload proved it),
//!   except an RFC starting `OFF`: the service is unreachable;
//! - keyed on the calendar year of the window's start: 2019, CFDI queries answer 5002
//!   (metadata ones are exempt); 2018, verification reports the request rejected (state
//!   5); 2017, the first request for a (direction, type, window) expires (state 6), a new
//!   one works; 2016, the first CFDI query for a (direction, window) answers 5005 with
//!   the id of a live request made at that moment, which then completes normally;
//! - more than 500 CFDI or 2,000 metadata rows: state 5 with 5003;
//! - a request is accepted at its first verification, in progress at its second,
//!   finished from the third; no documents: finished with 5004 and no packages;
//! - packages of at most 200 CFDI or 1,000 rows, `<IdSolicitud>_01`, `_02`, ...; each
//!   may be downloaded twice, a third time answers 5008; unknown ids answer 5004.
//!
//! The same rules hold on the retentions' hosts (a session opened for
//! `DocumentClass::Retentions`), over the sandbox's retention documents
//! (`docs::retentions`, their own rules), listed and packaged in the same shapes.
//!
//! State lives in the sandbox's store (`db::sandbox`: `requests`, `downloads`), so it
//! survives restarts like the SAT's.

mod documents;
mod folio;
pub mod packages;
mod stored;

#[cfg(test)]
mod tests;

use std::time::Duration;

use chrono::Datelike;

use self::documents::{Asker, Selection};
use self::packages::{Listed, CFDI_PER_PACKAGE, METADATA_PER_PACKAGE};
use self::stored::{new_request, window_query};
use super::ciec::{docs_direction, simulate_latency, unreachable};
use crate::db::sandbox::requests::{self, Request};
use crate::db::sandbox::{downloads, SandboxStore};
use crate::domain::class::DocumentClass;
use crate::sat::efirma::envelope::{Query, RequestType, WindowQuery};
use crate::sat::efirma::responses::{
    DownloadAnswer, QueryAnswer, RequestState, SatCode, Status, VerifyAnswer,
};
use crate::sat::efirma::{Efirma, Service};
use crate::sat::{RunContext, SatError};

/// Downloads the SAT allows per package.
const MAX_DOWNLOADS: i64 = 2;

/// What a request comes to, decided when it is made (`requests.outcome`).
const READY: &str = "ready";
const REJECTED: &str = "rejected";
const EXPIRED: &str = "expired";
const OVER_MAXIMUM: &str = "over_maximum";

pub struct SandboxService {
    db: SandboxStore,
    latency: Duration,
}

impl SandboxService {
    pub fn new(db: SandboxStore, latency: Duration) -> Self {
        Self { db, latency }
    }
}

impl Service for SandboxService {
    fn connect<'a>(
        &'a self,
        efirma: &'a Efirma,
        run: Option<&RunContext>,
        class: DocumentClass,
    ) -> Result<Box<dyn crate::sat::efirma::Session + 'a>, SatError> {
        Ok(Box::new(self.open(efirma.rfc(), run, class)?))
    }
}

impl SandboxService {
    /// Authentication: the e.firma's upload already proved it, only its RFC matters.
    fn open(
        &self,
        rfc: &str,
        run: Option<&RunContext>,
        class: DocumentClass,
    ) -> Result<Session<'_>, SatError> {
        simulate_latency(self.latency);
        let rfc = rfc.to_ascii_uppercase();
        if unreachable(&rfc) {
            return Err(SatError::Unavailable(
                "sandbox: the web service is unreachable for OFF RFCs".into(),
            ));
        }
        Ok(Session {
            service: self,
            rfc,
            run: run.cloned(),
            class,
        })
    }
}

struct Session<'a> {
    service: &'a SandboxService,
    rfc: String,
    /// None for a credential check, which makes no requests.
    run: Option<RunContext>,
    /// The hosts it was opened on: invoices, or retentions (`documents::Class`).
    class: DocumentClass,
}

fn status(code: SatCode, message: impl Into<String>) -> Status {
    Status {
        code,
        message: message.into(),
    }
}

fn accepted() -> Status {
    status(SatCode::Accepted, "Solicitud Aceptada")
}

fn not_found() -> Status {
    status(SatCode::NotFound, "No se encontró la información")
}

impl crate::sat::efirma::Session for Session<'_> {
    fn query(&mut self, query: &Query) -> Result<QueryAnswer, SatError> {
        simulate_latency(self.service.latency);
        let run = self.run.as_ref().ok_or_else(|| {
            SatError::Internal(anyhow::anyhow!(
                "sandbox: a query needs the extraction it belongs to"
            ))
        })?;
        match query {
            Query::Window(window) => self.query_window(run, window),
            Query::Uuid(uuid) => self.query_uuid(run, uuid),
        }
    }

    fn verify(&mut self, request_id: &str) -> Result<VerifyAnswer, SatError> {
        simulate_latency(self.service.latency);
        let rfc = &self.rfc;
        let Some(row) = self
            .service
            .db
            .tx(|tx| requests::verify(tx, rfc, request_id.trim()))?
        else {
            return Ok(VerifyAnswer {
                status: not_found(),
                // What the SOAP reader makes of an answer without these attributes.
                state: RequestState::Other(0),
                state_code: SatCode::Other(0),
                cfdi_count: 0,
                package_ids: Vec::new(),
            });
        };
        Ok(verification(&row))
    }

    fn download(&mut self, package_id: &str) -> Result<DownloadAnswer, SatError> {
        simulate_latency(self.service.latency);
        let none = |status| {
            Ok(DownloadAnswer {
                status,
                package: None,
            })
        };
        let package_id = package_id.trim();
        let Some((request_id, index)) = parse_package_id(package_id) else {
            return none(not_found());
        };
        let Some(row) = self
            .service
            .db
            .tx(|tx| requests::get(tx, &self.rfc, request_id))?
        else {
            return none(not_found());
        };
        if index == 0 || index > package_count(&row) {
            return none(not_found());
        }
        let query = window_query(&row)?;
        let asker = Asker {
            rfc: &row.rfc,
            entity_id: &row.entity_id,
            extraction_id: &row.extraction_id,
        };
        let grew = || -> SatError {
            anyhow::anyhow!("sandbox: request {request_id} grew over the maximum").into()
        };
        let allowed = self
            .service
            .db
            .tx(|tx| downloads::take(tx, package_id, &row.id, MAX_DOWNLOADS))?;
        if !allowed {
            return none(status(
                SatCode::DownloadsExhausted,
                "Máximo de descargas permitidas",
            ));
        }
        let size = per_package(&row.request_type);
        let name = package_id.to_uppercase();
        let package = match self.class {
            DocumentClass::Invoices => {
                let db = &self.service.db;
                let Selection::Documents(docs) = documents::select(db, &asker, &query)? else {
                    return Err(grew());
                };
                let chunk: &[Listed] = docs.chunks(size).nth(index - 1).unwrap_or_default();
                match query.request_type {
                    RequestType::Cfdi => {
                        let invoices: Vec<_> = chunk.iter().map(|l| l.invoice.clone()).collect();
                        let dir = docs_direction(query.direction);
                        packages::cfdi_package(&row.rfc, dir, &invoices)?
                    }
                    RequestType::Metadata => packages::metadata_package(&name, chunk)?,
                }
            }
            DocumentClass::Retentions => {
                let db = &self.service.db;
                let Selection::Documents(docs) = documents::select_retentions(db, &asker, &query)?
                else {
                    return Err(grew());
                };
                let chunk = docs.chunks(size).nth(index - 1).unwrap_or_default();
                match query.request_type {
                    RequestType::Cfdi => packages::retention_package(chunk)?,
                    RequestType::Metadata => packages::retention_metadata_package(&name, chunk)?,
                }
            }
        };
        Ok(DownloadAnswer {
            status: accepted(),
            package: Some(package),
        })
    }
}

impl Session<'_> {
    /// A request by UUID: the window request that selects it (`folio`), or 5004 when
    /// the sandbox has no such invoice for the taxpayer (or on the retentions' hosts).
    fn query_uuid(&self, run: &RunContext, uuid: &str) -> Result<QueryAnswer, SatError> {
        let located = match (self.class, run.period) {
            (DocumentClass::Invoices, Some(period)) => folio::locate(&self.rfc, period, uuid),
            _ => None,
        };
        match located {
            Some(window) => self.query_window(run, &window),
            None => Ok(QueryAnswer {
                status: not_found(),
                request_id: None,
            }),
        }
    }

    fn query_window(&self, run: &RunContext, query: &WindowQuery) -> Result<QueryAnswer, SatError> {
        let refused = |status| {
            Ok(QueryAnswer {
                status,
                request_id: None,
            })
        };
        if query.end < query.start {
            return refused(status(
                SatCode::MalformedXml,
                "XML Mal Formado: FechaFinal es anterior a FechaInicial",
            ));
        }
        let year = query.start.year();
        let cfdi = query.request_type == RequestType::Cfdi;
        if year == 2019 && cfdi {
            return refused(status(
                SatCode::LifetimeLimitReached,
                "Se han agotado las solicitudes de por vida (sandbox: CFDI de ventanas de 2019)",
            ));
        }
        let asker = Asker {
            rfc: &self.rfc,
            entity_id: &run.entity_id,
            extraction_id: &run.extraction_id,
        };
        let selected = self.count(&asker, query)?;
        let mut row = new_request(&asker, query);
        let (outcome, documents) = match selected {
            Some(count) => (READY, count),
            None => (OVER_MAXIMUM, documents::maximum(query.request_type) + 1),
        };
        row.documents = documents as i64;
        let first = self.service.db.tx(|tx| {
            let first = !requests::exists_for_window(
                tx,
                &row.rfc,
                &row.direction,
                &row.request_type,
                &row.window_start,
                &row.window_end,
            )?;
            row.outcome = match year {
                2018 => REJECTED,
                2017 if first => EXPIRED,
                _ => outcome,
            }
            .to_string();
            requests::insert(tx, &row)?;
            Ok(first)
        })?;
        let answer = if year == 2016 && cfdi && first {
            status(
                SatCode::Duplicate,
                "Solicitud duplicada: ya existe una solicitud en proceso con los mismos parámetros",
            )
        } else {
            accepted()
        };
        Ok(QueryAnswer {
            status: answer,
            request_id: Some(row.id),
        })
    }

    /// How many documents of the session's class `query` selects; None over the maximum.
    fn count(&self, asker: &Asker, query: &WindowQuery) -> anyhow::Result<Option<usize>> {
        let db = &self.service.db;
        Ok(match self.class {
            DocumentClass::Invoices => match documents::select(db, asker, query)? {
                Selection::Documents(docs) => Some(docs.len()),
                Selection::OverMaximum => None,
            },
            DocumentClass::Retentions => match documents::select_retentions(db, asker, query)? {
                Selection::Documents(docs) => Some(docs.len()),
                Selection::OverMaximum => None,
            },
        })
    }
}

/// The answer to a verification, given the request as it is after being counted.
fn verification(row: &Request) -> VerifyAnswer {
    let answer = |status, state, state_code, cfdi_count, package_ids| VerifyAnswer {
        status,
        state,
        state_code,
        cfdi_count,
        package_ids,
    };
    match row.outcome.as_str() {
        REJECTED => answer(
            status(
                SatCode::Accepted,
                "Solicitud rechazada (sandbox: las ventanas que empiezan en 2018 se rechazan)",
            ),
            RequestState::Rejected,
            SatCode::Accepted,
            0,
            Vec::new(),
        ),
        EXPIRED => answer(
            status(
                SatCode::Accepted,
                "Solicitud vencida (sandbox: la primera solicitud de una ventana de 2017 vence)",
            ),
            RequestState::Expired,
            SatCode::Accepted,
            0,
            Vec::new(),
        ),
        OVER_MAXIMUM => answer(
            accepted(),
            RequestState::Rejected,
            SatCode::OverMaximum,
            0,
            Vec::new(),
        ),
        _ => match row.verifications {
            ..=1 => answer(
                accepted(),
                RequestState::Accepted,
                SatCode::Accepted,
                0,
                Vec::new(),
            ),
            2 => answer(
                accepted(),
                RequestState::InProgress,
                SatCode::Accepted,
                0,
                Vec::new(),
            ),
            _ if row.documents == 0 => answer(
                accepted(),
                RequestState::Finished,
                SatCode::NotFound,
                0,
                Vec::new(),
            ),
            _ => answer(
                accepted(),
                RequestState::Finished,
                SatCode::Accepted,
                row.documents as u64,
                (1..=package_count(row))
                    .map(|n| format_package_id(&row.id, n))
                    .collect(),
            ),
        },
    }
}

/// Documents per package for a stored `request_type`.
fn per_package(request_type: &str) -> usize {
    if request_type == RequestType::Cfdi.as_sat() {
        CFDI_PER_PACKAGE
    } else {
        METADATA_PER_PACKAGE
    }
}

/// How many packages a finished request has (0 until then, and for any other outcome).
fn package_count(row: &Request) -> usize {
    let finished = row.outcome == READY && row.verifications >= 3;
    if finished {
        (row.documents.max(0) as usize).div_ceil(per_package(&row.request_type))
    } else {
        0
    }
}

fn format_package_id(request_id: &str, n: usize) -> String {
    format!("{request_id}_{n:02}")
}

/// `<IdSolicitud>_NN` back into its parts (only the form the sandbox hands out).
fn parse_package_id(package_id: &str) -> Option<(&str, usize)> {
    let (request_id, n) = package_id.rsplit_once('_')?;
    let n: usize = n.parse().ok()?;
    (format_package_id(request_id, n) == package_id).then_some((request_id, n))
}
