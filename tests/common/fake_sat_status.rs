//! A fake of the SAT's CFDI status service (ConsultaCFDIService) answering with the
//! recorded and documented SOAP answers of `tests/fixtures/sat-status-fixtures`: each UUID has
//! a script of replies (the last one repeats), any other UUID gets the 601 answer. It
//! checks the `SOAPAction` and records each request's expression and time.

use crate::common::fake_http::{Request, Response, Server};
use cfdi_extract::sat::status::{envelope, expression};
use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const FIXTURES: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/sat-status-fixtures/"
);

/// Short names of the fixture answers.
pub const ACTIVE_NOT_CANCELLABLE: &str =
    "consulta-response-vigente-no-cancelable-efos200.satcfdi-extracted.xml";
pub const ACTIVE_REJECTED_NO_EFOS: &str =
    "consulta-response-vigente-cancelable-con-aceptacion-solicitud-rechazada-no-efos-field.phpcfdi.xml";
pub const CANCELLED_WITH_ACCEPTANCE: &str =
    "synthetic/consulta-response-cancelado-con-aceptacion-efos200.synthetic.xml";
pub const CANCELLED_DEADLINE_PASSED: &str =
    "synthetic/consulta-response-cancelado-plazo-vencido-efos200.synthetic.xml";
pub const CANCELLED_WITHOUT_ACCEPTANCE: &str =
    "synthetic/consulta-response-cancelado-sin-aceptacion-efos201.synthetic.xml";
pub const CANCELLED_NO_STATUS: &str =
    "synthetic/consulta-response-cancelado-sin-estatus-cancelacion-efos200.synthetic.xml";
pub const NOT_FOUND_601: &str =
    "synthetic/consulta-response-no-encontrado-601-expresion-no-valida.synthetic.xml";
pub const NOT_FOUND_602: &str = "synthetic/consulta-response-no-encontrado-602.synthetic.xml";
pub const ACTIVE_IN_PROCESS: &str =
    "synthetic/consulta-response-vigente-cancelable-con-aceptacion-en-proceso-efos200.synthetic.xml";
pub const ACTIVE_WITH_ACCEPTANCE: &str =
    "synthetic/consulta-response-vigente-cancelable-con-aceptacion-sin-solicitud-efos200.synthetic.xml";
pub const ACTIVE_WITHOUT_ACCEPTANCE: &str =
    "synthetic/consulta-response-vigente-cancelable-sin-aceptacion-efos200.synthetic.xml";
pub const ACTIVE_EFOS_LISTED: &str =
    "synthetic/consulta-response-vigente-no-cancelable-emisor-efos100.synthetic.xml";

/// A SOAP fault as WCF writes it (the SAT's database error of LinuxCabal/admin-cfdi #72).
pub const FAULT: &str = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode xmlns:a="http://schemas.microsoft.com/net/2005/12/windowscommunicationfoundation/dispatcher">a:InternalServiceFault</faultcode><faultstring xml:lang="es-MX">Invalid object name 'BitacoraServicioQR20150918'.</faultstring></s:Fault></s:Body></s:Envelope>"#;

pub fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIXTURES}{name}"))
        .unwrap_or_else(|e| panic!("fixture {name}: {e}"))
}

/// One reply of the fake.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A fixture answer (HTTP 200).
    Answer(&'static str),
    /// A SOAP fault (HTTP 500).
    Fault,
    /// An HTTP status with an HTML page.
    Http(u16),
    /// A reply after a delay.
    Late(Duration, Box<Reply>),
}

impl Reply {
    fn response(&self) -> Response {
        match self {
            Reply::Answer(name) => Response::new(200, "text/xml; charset=utf-8", fixture(name)),
            Reply::Fault => Response::new(500, "text/xml; charset=utf-8", FAULT),
            Reply::Http(status) => {
                Response::new(*status, "text/html", "<html>Service Unavailable</html>")
            }
            Reply::Late(delay, reply) => {
                let mut r = reply.response();
                r.delay = *delay;
                r
            }
        }
    }
}

/// A request the fake received.
#[derive(Debug, Clone)]
pub struct Seen {
    pub at: Instant,
    pub uuid: String,
    pub expression: String,
}

#[derive(Default)]
struct Inner {
    scripts: HashMap<String, VecDeque<Reply>>,
    seen: Vec<Seen>,
}

pub struct FakeStatus {
    server: Server,
    inner: Arc<Mutex<Inner>>,
}

impl FakeStatus {
    pub fn start() -> FakeStatus {
        let inner: Arc<Mutex<Inner>> = Arc::default();
        let state = inner.clone();
        let server = Server::start(Arc::new(move |req: &Request| answer(&state, req)));
        FakeStatus { server, inner }
    }

    /// The service's URL (`--sat-status-url`).
    pub fn url(&self) -> String {
        self.server.url("/ConsultaCFDIService.svc")
    }

    /// The replies for a UUID, in order; the last one repeats.
    pub fn script(&self, uuid: &str, replies: Vec<Reply>) {
        let mut inner = self.inner.lock().expect("fake lock");
        inner
            .scripts
            .insert(uuid.to_ascii_uppercase(), replies.into_iter().collect());
    }

    /// Every request so far, oldest first.
    pub fn seen(&self) -> Vec<Seen> {
        self.inner.lock().expect("fake lock").seen.clone()
    }

    pub fn seen_for(&self, uuid: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.uuid.eq_ignore_ascii_case(uuid))
            .collect()
    }
}

fn answer(inner: &Mutex<Inner>, req: &Request) -> Response {
    if req.method != "POST"
        || req.header("soapaction").map(|a| a.trim_matches('"')) != Some(envelope::SOAP_ACTION)
    {
        return Response::new(400, "text/plain", "not a Consulta call");
    }
    let body = String::from_utf8_lossy(&req.body);
    let Some(text) = envelope::expression_of(&body) else {
        return Response::new(400, "text/plain", "no expresionImpresa");
    };
    let uuid = expression::fields(&text)
        .map(|f| f.id.to_ascii_uppercase())
        .unwrap_or_default();
    let mut inner = inner.lock().expect("fake lock");
    inner.seen.push(Seen {
        at: Instant::now(),
        uuid: uuid.clone(),
        expression: text,
    });
    let reply = match inner.scripts.get_mut(&uuid) {
        Some(script) if script.len() > 1 => script.pop_front(),
        Some(script) => script.front().cloned(),
        None => None,
    };
    drop(inner);
    reply.unwrap_or(Reply::Answer(NOT_FOUND_601)).response()
}
