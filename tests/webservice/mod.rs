//! Integration tests of the SAT web-service client (`cfdi_extract::sat::efirma`)
//! against a local fake service that answers with the recorded messages in
//! `tests/fixtures/sat-ws-fixtures/` and checks what the client sends.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::common::efirma_files::{instant, sat, sat_efirma};
use crate::common::fake_http::{Request, Response, Server};
use cfdi_extract::sat::efirma::client::{Client, ClientError};
use cfdi_extract::sat::efirma::endpoints::{Endpoints, Operation};
use cfdi_extract::sat::efirma::envelope::{self, DocumentStatus, Query, RequestType, WindowQuery};
use cfdi_extract::sat::efirma::package::Package;
use cfdi_extract::sat::efirma::responses::{RequestState, ResponseError, SatCode};
use chrono::NaiveDate;

const TOKEN_PREFIX: &str = "eyJhbGciOiJodHRwOi8vd3d3LnczLm9yZy8yMDAxLzA0L3htbGRzaWctbW9yZSNobWFj";

fn xml(status: u16, path: &str) -> Response {
    Response::new(status, "text/xml; charset=utf-8", sat(path))
}

/// The fake service: routes on the path and `SOAPAction`, answers from the recordings,
/// and keeps every request for the test to inspect.
fn fake_service() -> (Server, Arc<Mutex<Vec<Request>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let server = Server::start(Arc::new(move |request: &Request| {
        log.lock().expect("log").push(request.clone());
        let body = String::from_utf8_lossy(&request.body);
        let operation = request
            .header("soapaction")
            .and_then(Operation::from_soap_action);
        match (request.path(), operation) {
            ("/Autenticacion/Autenticacion.svc", Some(Operation::Authenticate)) => {
                xml(200, "authenticate/response-with-token.xml")
            }
            ("/SolicitaDescargaService.svc", Some(Operation::QueryIssued)) => {
                xml(200, "query/response-issued.xml")
            }
            ("/VerificaSolicitudDescargaService.svc", Some(Operation::Verify))
                if body.contains("IdSolicitud=\"refused\"") =>
            {
                xml(500, "authenticate/response-with-error.xml")
            }
            ("/VerificaSolicitudDescargaService.svc", Some(Operation::Verify))
                if body.contains("IdSolicitud=\"down\"") =>
            {
                Response::new(503, "text/html", "<html>Service Unavailable</html>")
            }
            ("/VerificaSolicitudDescargaService.svc", Some(Operation::Verify)) => {
                xml(200, "verify/response-2-packages.xml")
            }
            ("/downloads/DescargaMasivaService.svc", Some(Operation::Download)) => {
                xml(200, "download/response-with-package.xml")
            }
            _ => Response::new(404, "text/plain", "unknown route"),
        }
    }));
    (server, seen)
}

fn client(server: &Server) -> Client {
    let endpoints = Endpoints::new(&server.url(""), &server.url("/downloads"));
    Client::new(endpoints, Duration::from_secs(10))
}

fn issued_metadata() -> Query {
    let day = NaiveDate::from_ymd_opt(2025, 1, 1).expect("date");
    Query::Window(WindowQuery {
        direction: cfdi_extract::domain::extraction::Direction::Issued,
        request_type: RequestType::Metadata,
        start: day.and_hms_opt(0, 0, 0).expect("start"),
        end: day.and_hms_opt(23, 59, 59).expect("end"),
        status: DocumentStatus::All,
        counterpart: None,
        document_type: None,
        complement: None,
        on_behalf_of: None,
    })
}

#[test]
fn the_whole_conversation_runs_against_the_fake_service() {
    let (server, seen) = fake_service();
    let client = client(&server);
    let efirma = sat_efirma();

    let token = client.authenticate(&efirma, instant()).expect("token");
    assert!(token.value.starts_with(TOKEN_PREFIX));
    let query = issued_metadata();
    let answer = client.query(&efirma, &token, &query).expect("query");
    let request_id = answer.request_id.expect("request id");
    let verified = client.verify(&efirma, &token, &request_id).expect("verify");
    assert_eq!(verified.state, RequestState::Finished);
    let package_id = &verified.package_ids[0];
    let downloaded = client
        .download(&efirma, &token, package_id)
        .expect("download");
    let mut package = Package::open(downloaded.package.expect("package")).expect("zip");
    assert!(package.cfdis().count() > 0);

    let requests = seen.lock().expect("log").clone();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        assert_eq!(request.method, "POST");
        assert_eq!(
            request.header("content-type"),
            Some("text/xml; charset=utf-8")
        );
    }
    // Authentication carries no token; its signed timestamp is the given clock.
    assert_eq!(requests[0].header("authorization"), None);
    let auth = String::from_utf8_lossy(&requests[0].body).into_owned();
    assert!(auth.contains("<u:Created>2025-03-04T05:06:07.000Z</u:Created><u:Expires>2025-03-04T05:11:07.000Z</u:Expires>"));
    assert!(auth.contains("<o:BinarySecurityToken u:Id=\"uuid-"));
    // Every later call carries the token and exactly the envelope the builders make.
    let wrap = format!("WRAP access_token=\"{}\"", token.value);
    let expected = [
        envelope::query(&efirma, &query).expect("query"),
        envelope::verify(&efirma, &request_id).expect("verify"),
        envelope::download(&efirma, package_id).expect("download"),
    ];
    for (request, built) in requests[1..].iter().zip(expected) {
        assert_eq!(request.header("authorization"), Some(wrap.as_str()));
        assert_eq!(
            request.header("soapaction"),
            Some(built.operation.soap_action())
        );
        assert_eq!(String::from_utf8_lossy(&request.body), built.body);
    }
}

#[test]
fn a_soap_fault_is_reported_as_the_services_answer() {
    let (server, _) = fake_service();
    let client = client(&server);
    let efirma = sat_efirma();
    let token = client.authenticate(&efirma, instant()).expect("token");
    let err = client
        .verify(&efirma, &token, "refused")
        .expect_err("fault");
    match err {
        ClientError::Answer {
            step: "verify",
            source: ResponseError::Fault { code, .. },
        } => assert_eq!(code, "a:InvalidSecurity"),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn an_error_page_and_an_unreachable_service_are_told_apart() {
    let (server, _) = fake_service();
    let client_ = client(&server);
    let efirma = sat_efirma();
    let token = client_.authenticate(&efirma, instant()).expect("token");
    let err = client_.verify(&efirma, &token, "down").expect_err("503");
    assert!(
        matches!(
            err,
            ClientError::Http {
                status: 503,
                step: "verify",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(
        !err.to_string().contains(&token.value),
        "the token stays out of errors"
    );

    // A port nobody listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let base = format!("http://{}", closed.local_addr().expect("addr"));
    drop(closed);
    let unreachable = Client::new(Endpoints::new(&base, &base), Duration::from_secs(5));
    let err = unreachable
        .authenticate(&efirma, instant())
        .expect_err("unreachable");
    assert!(
        matches!(
            err,
            ClientError::Transport {
                step: "authenticate",
                ..
            }
        ),
        "{err:?}"
    );
}

#[test]
fn a_refused_query_code_reaches_the_caller() {
    let answer = Response::new(
        200,
        "text/xml",
        r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><SolicitaDescargaEmitidosResponse xmlns="http://DescargaMasivaTerceros.sat.gob.mx"><SolicitaDescargaEmitidosResult CodEstatus="5005" Mensaje="Solicitud duplicada"/></SolicitaDescargaEmitidosResponse></s:Body></s:Envelope>"#,
    );
    let server = Server::start(Arc::new(move |_: &Request| answer.clone()));
    let client = client(&server);
    let token = cfdi_extract::sat::efirma::responses::authenticate(
        &String::from_utf8(sat("authenticate/response-with-token.xml")).expect("utf-8"),
    )
    .expect("token");
    let result = client
        .query(&sat_efirma(), &token, &issued_metadata())
        .expect("answer");
    assert_eq!(result.status.code, SatCode::Duplicate);
    assert_eq!(result.request_id, None);
}
