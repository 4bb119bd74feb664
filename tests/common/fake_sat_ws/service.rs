//! The fake SAT's state and how it answers each call (see the module above for the rules).

use std::collections::{BTreeMap, HashMap, HashSet};

use cfdi_extract::sat::efirma::endpoints::{Endpoints, Operation};
use chrono::{DateTime, Utc};

use super::answers::{self, Verification};
use super::packages::{self, Doc};
use super::params::read_params;
use super::xmldsig::{self, Signer};
use super::{Call, Direction, DocumentStatus, Filter, Op, QueryParams, RequestType, Settings};
use crate::common::fake_http::{Request as HttpRequest, Response};

#[derive(Default)]
pub struct Scripts {
    pub lifetime: Vec<Filter>,
    pub reject: Vec<Filter>,
    pub expire: Vec<Filter>,
    /// Parameter sets whose first request already expired.
    pub expired_keys: HashSet<String>,
    pub lost_answers: u32,
    pub failures: HashMap<Op, u32>,
    pub refused_rfcs: HashSet<String>,
    pub refuse_all: bool,
}

pub struct SatRequest {
    pub id: String,
    pub params: QueryParams,
    checks: u32,
    reject: bool,
    expire: bool,
    /// The last state, once the request ended.
    outcome: Option<Verification>,
}

pub struct Package {
    rfc: String,
    bytes: Vec<u8>,
    pub downloads: u32,
}

pub struct State {
    pub settings: Settings,
    pub docs: BTreeMap<String, Doc>,
    pub offset: chrono::Duration,
    pub scripts: Scripts,
    pub calls: Vec<Call>,
    pub requests: Vec<SatRequest>,
    pub packages: HashMap<String, Package>,
    /// Token -> (RFC, expiry).
    tokens: HashMap<String, (String, DateTime<Utc>)>,
    /// Accepted CFDI queries per parameter set (the lifetime limit).
    uses: HashMap<String, u32>,
}

/// An answer and what to record of it.
struct Answer {
    http: u16,
    body: String,
    id: Option<String>,
    code: Option<u32>,
    state: Option<u32>,
}

impl Answer {
    fn ok(body: String, id: Option<String>, code: u32) -> Self {
        Answer {
            http: 200,
            body,
            id,
            code: Some(code),
            state: None,
        }
    }

    fn fault() -> Self {
        Answer {
            http: 500,
            body: answers::fault(),
            id: None,
            code: None,
            state: None,
        }
    }
}

pub fn handle(state: &mut State, request: &HttpRequest) -> Response {
    let paths = Endpoints::new("", "");
    let operation = request
        .header("soapaction")
        .and_then(Operation::from_soap_action)
        .filter(|op| request.path().ends_with(op.url(&paths)));
    let Some(operation) = operation.filter(|_| request.method == "POST") else {
        return Response::new(404, "text/plain", "no such service");
    };
    let op = match operation {
        Operation::Authenticate => Op::Authenticate,
        Operation::QueryIssued | Operation::QueryReceived | Operation::QueryUuid => Op::Query,
        Operation::Verify => Op::Verify,
        Operation::Download => Op::Download,
    };
    let answer = match op {
        Op::Authenticate => state.authenticate(request),
        _ => state.signed_call(operation, request),
    };
    state.calls.push(Call {
        op,
        id: answer.id,
        http: answer.http,
        code: answer.code,
        state: answer.state,
    });
    let content_type = if answer.http == 200 || answer.body.starts_with('<') {
        "text/xml; charset=utf-8"
    } else {
        "text/plain"
    };
    Response::new(answer.http, content_type, answer.body)
}

/// The operation element each signed call carries.
fn operation_name(operation: Operation) -> &'static str {
    match operation {
        Operation::QueryIssued => "SolicitaDescargaEmitidos",
        Operation::QueryReceived => "SolicitaDescargaRecibidos",
        Operation::QueryUuid => "SolicitaDescargaFolio",
        Operation::Verify => "VerificaSolicitudDescarga",
        Operation::Download | Operation::Authenticate => "PeticionDescargaMasivaTercerosEntrada",
    }
}

/// A refused signed call, in the operation's answer shape.
fn refused(operation: Operation, code: u32, id: Option<String>) -> Answer {
    let body = match operation {
        Operation::Verify => answers::verify(&Verification {
            code,
            ..Verification::default()
        }),
        Operation::Download => answers::download(code, None),
        other => answers::query(operation_name(other), code, None),
    };
    Answer::ok(body, id, code)
}

fn within(signer: &Signer, now: DateTime<Utc>) -> bool {
    signer.not_before <= now && now <= signer.not_after
}

impl State {
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            docs: BTreeMap::new(),
            offset: chrono::Duration::zero(),
            scripts: Scripts::default(),
            calls: Vec::new(),
            requests: Vec::new(),
            packages: HashMap::new(),
            tokens: HashMap::new(),
            uses: HashMap::new(),
        }
    }

    pub fn now(&self) -> DateTime<Utc> {
        Utc::now() + self.offset
    }

    fn failing(&mut self, op: Op) -> bool {
        match self.scripts.failures.get_mut(&op) {
            Some(left) if *left > 0 => {
                *left -= 1;
                true
            }
            _ => false,
        }
    }

    fn authenticate(&mut self, request: &HttpRequest) -> Answer {
        let Ok(doc) = xmldsig::parse(&request.body) else {
            return Answer::fault();
        };
        let Ok(auth) = xmldsig::check_authentication(&doc) else {
            return Answer::fault();
        };
        let now = self.now();
        let skew = chrono::Duration::minutes(1);
        let current = auth.created - skew <= now && now < auth.expires;
        let refused =
            self.scripts.refuse_all || self.scripts.refused_rfcs.contains(&auth.signer.rfc);
        if !current || refused || !within(&auth.signer, now) || self.failing(Op::Authenticate) {
            return Answer::fault();
        }
        let token = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
        let expires = now + self.settings.token_lifetime;
        self.tokens
            .insert(token.clone(), (auth.signer.rfc, expires));
        Answer {
            http: 200,
            body: answers::token(&token, now, expires),
            id: None,
            code: None,
            state: None,
        }
    }

    /// The security checks of a query, verification or download, then the call itself.
    fn signed_call(&mut self, operation: Operation, request: &HttpRequest) -> Answer {
        let now = self.now();
        let token = request
            .header("authorization")
            .and_then(|h| h.strip_prefix("WRAP access_token=\""))
            .and_then(|h| h.strip_suffix('"'))
            .and_then(|t| self.tokens.get(t))
            .filter(|(_, expires)| now < *expires)
            .map(|(rfc, _)| rfc.clone());
        let Some(token_rfc) = token else {
            return refused(operation, 300, None);
        };
        let Ok(doc) = xmldsig::parse(&request.body) else {
            return refused(operation, 301, None);
        };
        let (signer, element) = match xmldsig::check_enveloped(&doc) {
            Ok((signer, element, _)) => (signer, element),
            Err(refusal) => return refused(operation, refusal.code(), None),
        };
        let Some(solicitud) = element
            .elements()
            .next()
            .filter(|_| element.local() == operation_name(operation))
        else {
            return refused(operation, 301, None);
        };
        if solicitud
            .attr("RfcSolicitante")
            .map(str::to_ascii_uppercase)
            != Some(signer.rfc.clone())
        {
            return refused(operation, 303, None);
        }
        if token_rfc != signer.rfc {
            return refused(operation, 300, None);
        }
        if !within(&signer, now) {
            return refused(operation, 304, None);
        }
        let op = if operation == Operation::Verify {
            Op::Verify
        } else if operation == Operation::Download {
            Op::Download
        } else {
            Op::Query
        };
        if self.failing(op) {
            return refused(operation, 404, None);
        }
        match op {
            Op::Verify => self.verify(
                solicitud.attr("IdSolicitud").unwrap_or_default(),
                &signer.rfc,
            ),
            Op::Download => {
                self.download(solicitud.attr("IdPaquete").unwrap_or_default(), &signer.rfc)
            }
            _ => match read_params(operation, solicitud, &signer.rfc) {
                Ok(params) => self.query(operation, params),
                Err(code) => refused(operation, code, None),
            },
        }
    }

    fn query(&mut self, operation: Operation, params: QueryParams) -> Answer {
        let name = operation_name(operation);
        let cfdi = params.is_cfdi();
        if cfdi && self.scripts.lifetime.iter().any(|f| f(&params)) {
            return refused(operation, 5002, None);
        }
        let live = self
            .requests
            .iter()
            .find(|r| r.outcome.is_none() && r.params.key == params.key);
        if let Some(live) = live {
            let id = live.id.clone();
            return Answer::ok(answers::query(name, 5005, Some(&id)), Some(id), 5005);
        }
        if cfdi && self.uses.get(&params.key).copied().unwrap_or(0) >= 2 {
            return refused(operation, 5002, None);
        }
        if self.settings.no_results_at_query && self.select(&params).is_empty() {
            return refused(operation, 5004, None);
        }
        if cfdi {
            *self.uses.entry(params.key.clone()).or_default() += 1;
        }
        let id = uuid::Uuid::new_v4().to_string();
        let reject = self.scripts.reject.iter().any(|f| f(&params));
        let expire = self.scripts.expire.iter().any(|f| f(&params))
            && self.scripts.expired_keys.insert(params.key.clone());
        self.requests.push(SatRequest {
            id: id.clone(),
            params,
            checks: 0,
            reject,
            expire,
            outcome: None,
        });
        if self.scripts.lost_answers > 0 {
            self.scripts.lost_answers -= 1;
            return Answer {
                http: 500,
                body: "Internal Server Error".into(),
                id: Some(id),
                code: None,
                state: None,
            };
        }
        Answer::ok(answers::query(name, 5000, Some(&id)), Some(id), 5000)
    }

    /// The documents a query selects, by date then UUID.
    fn select(&self, q: &QueryParams) -> Vec<Doc> {
        let mut docs: Vec<Doc> = self
            .docs
            .values()
            .filter(|d| match q.direction {
                Some(Direction::Issued) => {
                    d.issuer == q.rfc && q.counterpart.as_ref().is_none_or(|c| *c == d.receiver)
                }
                Some(Direction::Received) => {
                    d.receiver == q.rfc && q.counterpart.as_ref().is_none_or(|c| *c == d.issuer)
                }
                None => {
                    (d.issuer == q.rfc || d.receiver == q.rfc) && q.uuid.as_ref() == Some(&d.uuid)
                }
            })
            .filter(|d| {
                q.start.is_none_or(|s| s <= d.issued_at) && q.end.is_none_or(|e| d.issued_at <= e)
            })
            .filter(|d| match q.status {
                DocumentStatus::All => true,
                DocumentStatus::Active => d.cancelled_at.is_none(),
                DocumentStatus::Cancelled => d.cancelled_at.is_some(),
            })
            .filter(|d| q.document_type.as_ref().is_none_or(|t| *t == d.kind))
            .cloned()
            .collect();
        docs.sort_by(|a, b| (a.issued_at, &a.uuid).cmp(&(b.issued_at, &b.uuid)));
        docs
    }

    fn verify(&mut self, id: &str, rfc: &str) -> Answer {
        let Some(index) = self
            .requests
            .iter()
            .position(|r| r.id == id && r.params.rfc == rfc)
        else {
            return refused(Operation::Verify, 5004, Some(id.to_string()));
        };
        let in_progress = self.settings.in_progress_checks;
        let request = &mut self.requests[index];
        request.checks += 1;
        let (outcome, checks) = (request.outcome.clone(), request.checks);
        let verification = match (outcome, checks) {
            (Some(outcome), _) => outcome,
            (None, 1) => progress(1),
            (None, n) if n <= 1 + in_progress => progress(2),
            (None, _) => self.finish(index),
        };
        let state = verification.state;
        Answer {
            state,
            ..Answer::ok(answers::verify(&verification), Some(id.to_string()), 5000)
        }
    }

    /// Ends a request: expired, rejected, or its documents selected and packaged.
    fn finish(&mut self, index: usize) -> Verification {
        let request = &self.requests[index];
        let ended = |state, state_code| Verification {
            code: 5000,
            state: Some(state),
            state_code: Some(state_code),
            ..Verification::default()
        };
        let outcome = if request.expire {
            ended(6, 5000)
        } else if request.reject {
            ended(5, 5006)
        } else {
            let docs = self.select(&request.params);
            let metadata = request.params.request_type == RequestType::Metadata;
            let (max, per_package) = if metadata {
                (
                    self.settings.max_metadata,
                    self.settings.metadata_per_package,
                )
            } else {
                (self.settings.max_cfdi, self.settings.cfdi_per_package)
            };
            if docs.len() > max {
                ended(5, 5003)
            } else if docs.is_empty() {
                ended(5, 5004)
            } else {
                let mut ids = Vec::new();
                for (id, bytes) in packages::build(&request.id, &docs, metadata, per_package) {
                    let package = Package {
                        rfc: request.params.rfc.clone(),
                        bytes,
                        downloads: 0,
                    };
                    self.packages.insert(id.clone(), package);
                    ids.push(id);
                }
                Verification {
                    count: docs.len(),
                    packages: ids,
                    ..ended(3, 5000)
                }
            }
        };
        self.requests[index].outcome = Some(outcome.clone());
        outcome
    }

    fn download(&mut self, id: &str, rfc: &str) -> Answer {
        let package = self.packages.get_mut(id).filter(|p| p.rfc == rfc);
        let (code, bytes) = match package {
            None => (5004, None),
            Some(p) if p.downloads >= 2 => (5008, None),
            Some(p) => {
                p.downloads += 1;
                (5000, Some(p.bytes.as_slice()))
            }
        };
        Answer::ok(answers::download(code, bytes), Some(id.to_string()), code)
    }
}

fn progress(state: u32) -> Verification {
    Verification {
        code: 5000,
        state: Some(state),
        state_code: Some(5000),
        ..Verification::default()
    }
}
