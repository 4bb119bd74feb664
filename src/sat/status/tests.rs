use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::Duration;

use super::answer::{self, Answer, Code};
use super::envelope;
use super::expression;
use super::{Client, StatusError, StatusService, Subject};
use crate::cfdi::Cfdi;
use crate::domain::sat_status::{Cancellable, CancellationStatus as C, Efos, State};
use crate::sat::efirma::responses::ResponseError;

fn subject(expression: &str) -> Subject<'_> {
    Subject {
        expression,
        issued_at: "2026-01-01T00:00:00",
    }
}

fn shared(path: &str) -> String {
    let path = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn fixture(name: &str) -> String {
    shared(&format!("sat-status-fixtures/{name}"))
}

fn sample(name: &str) -> Cfdi {
    Cfdi::parse(shared(&format!("cfdi-samples/{name}")).as_bytes()).expect("sample parses")
}

fn found(
    state: State,
    cancellable: Cancellable,
    cancellation_status: Option<C>,
    efos: Efos,
) -> Answer {
    Answer {
        code: Code::Found,
        state,
        cancellable: Some(cancellable),
        cancellation_status,
        efos,
    }
}

#[test]
fn a_4_0_expression_is_the_verification_url() {
    assert_eq!(
        expression::of(&sample("cfdi40-ingreso-pue-real-tfd.xml")).expect("stamped"),
        "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx\
         ?id=C2832671-DA6D-11EF-A83D-00155D012007&re=ISD950921HE5&rr=COSC8001137NA\
         &tt=1000.0&fe=hNjeNw=="
    );
}

#[test]
fn a_3_3_expression_has_the_same_form() {
    assert_eq!(
        expression::of(&sample("cfdi33-ingreso-ppd-multiples-tasas-tfd.xml")).expect("stamped"),
        "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx\
         ?id=1FBA4626-947B-49AC-BCD4-A4AF266B3DBF&re=ACO560518KW7&rr=MEBS780711118\
         &tt=300.0&fe=PbyW/g=="
    );
}

/// The 3.2 CFDI the libraries' live tests check (FACTS.md §2), in the 3.2 form.
#[test]
fn a_3_2_expression_is_the_legacy_query_with_a_padded_total_and_no_seal() {
    assert_eq!(
        expression::of(&sample("cfdi32-ingreso-real-legacy-tfd10.xml")).expect("stamped"),
        "?re=CTO021007DZ8&rr=XAXX010101000&tt=0000004685.000000\
         &id=80824F3B-323E-407B-8F8E-40D83FE2E69F"
    );
}

#[test]
fn an_ampersand_in_an_rfc_is_xml_escaped_inside_the_expression() {
    let name = "cfdi40-ingreso-pue-tfd-ampersand-rfc.xml";
    let xml = shared(&format!("cfdi-samples/{name}"));
    let text = expression::of_xml(xml.as_bytes(), &sample(name)).expect("stamped");
    assert_eq!(
        text,
        "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx\
         ?id=6e546729-960a-4505-8e81-2d2952145bd9&re=H&amp;E951128469&rr=KIJ0906199R1\
         &tt=17852.75&fe=MNGSxg=="
    );
    let fields = expression::fields(&text).expect("fields");
    assert_eq!(fields.re, "H&amp;E951128469");
    assert_eq!(fields.id, "6e546729-960a-4505-8e81-2d2952145bd9");
    assert_eq!(fields.fe.as_deref(), Some("MNGSxg=="));
}

#[test]
fn unstamped_documents_have_no_expression() {
    assert!(expression::of(&sample("cfdi40-egreso-nota-credito-unstamped.xml")).is_none());
}

#[test]
fn expressions_of_either_form_give_their_fields() {
    let legacy = expression::fields("?re=AAA010101AAA&rr=XAXX010101000&tt=0000000001.000000&id=X")
        .expect("3.2 fields");
    assert_eq!((legacy.re.as_str(), legacy.fe), ("AAA010101AAA", None));
    assert!(expression::fields("?re=A&rr=B&tt=1.0").is_none(), "no id");
    assert!(expression::fields("no query").is_none());
}

#[test]
fn the_request_is_a_soap_envelope_with_the_escaped_expression() {
    let text = "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx?id=X&re=Ñ&amp;A010101AAA&rr=B&tt=1.0&fe=abc";
    let body = envelope::request(text);
    assert!(body.contains("<c:expresionImpresa>https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx?id=X&amp;re=Ñ&amp;amp;A010101AAA&amp;rr=B&amp;tt=1.0&amp;fe=abc</c:expresionImpresa>"), "{body}");
    assert!(body.contains(r#"<c:Consulta xmlns:c="http://tempuri.org/">"#));
    assert_eq!(envelope::expression_of(&body).as_deref(), Some(text));
    assert_eq!(
        envelope::SOAP_ACTION,
        "http://tempuri.org/IConsultaCFDIService/Consulta"
    );
}

#[test]
fn recorded_requests_of_both_libraries_are_read() {
    assert_eq!(
        envelope::expression_of(&fixture("consulta-request-cdata.satcfdi-extracted.xml"))
            .as_deref(),
        Some("?re=RFC_EMISOR&rr=RFC_RECEPTOR&tt=123456.00&id=6114cfd0-87d2-45b8-99b1-7c19475c9cda")
    );
    assert_eq!(
        envelope::expression_of(&fixture("consulta-request-foobar.phpcfdi.xml")).as_deref(),
        Some("?a=foo&b=bar")
    );
    assert_eq!(
        envelope::expression_of(&fixture("consulta-request-template.satcfdi.xml")).as_deref(),
        Some("")
    );
}

#[test]
fn every_recorded_and_documented_answer_is_read() {
    let cases = [
        (
            "consulta-response-vigente-no-cancelable-efos200.satcfdi-extracted.xml",
            found(State::Active, Cancellable::No, None, Efos::NotListed),
        ),
        (
            "consulta-response-vigente-cancelable-con-aceptacion-solicitud-rechazada-no-efos-field.phpcfdi.xml",
            found(State::Active, Cancellable::WithAcceptance, Some(C::Rejected), Efos::Unknown),
        ),
        (
            "synthetic/consulta-response-cancelado-con-aceptacion-efos200.synthetic.xml",
            found(State::Cancelled, Cancellable::No, Some(C::CancelledWithAcceptance), Efos::NotListed),
        ),
        (
            "synthetic/consulta-response-cancelado-plazo-vencido-efos200.synthetic.xml",
            found(State::Cancelled, Cancellable::No, Some(C::DeadlinePassed), Efos::NotListed),
        ),
        (
            "synthetic/consulta-response-cancelado-sin-aceptacion-efos201.synthetic.xml",
            found(State::Cancelled, Cancellable::No, Some(C::CancelledWithoutAcceptance), Efos::NotListed),
        ),
        (
            "synthetic/consulta-response-cancelado-sin-estatus-cancelacion-efos200.synthetic.xml",
            found(State::Cancelled, Cancellable::No, None, Efos::NotListed),
        ),
        (
            "synthetic/consulta-response-vigente-cancelable-con-aceptacion-en-proceso-efos200.synthetic.xml",
            found(State::Active, Cancellable::WithAcceptance, Some(C::InProcess), Efos::NotListed),
        ),
        (
            "synthetic/consulta-response-vigente-cancelable-con-aceptacion-sin-solicitud-efos200.synthetic.xml",
            found(State::Active, Cancellable::WithAcceptance, None, Efos::NotListed),
        ),
        (
            "synthetic/consulta-response-vigente-cancelable-sin-aceptacion-efos200.synthetic.xml",
            found(State::Active, Cancellable::WithoutAcceptance, None, Efos::NotListed),
        ),
        (
            "synthetic/consulta-response-vigente-no-cancelable-emisor-efos100.synthetic.xml",
            found(State::Active, Cancellable::No, None, Efos::Listed),
        ),
    ];
    for (file, expected) in cases {
        assert_eq!(
            answer::parse(&fixture(file)).expect(file),
            expected,
            "{file}"
        );
    }
}

#[test]
fn not_found_answers_ignore_their_other_fields() {
    let not_found = |code| Answer {
        code,
        state: State::NotFound,
        cancellable: None,
        cancellation_status: None,
        efos: Efos::Unknown,
    };
    assert_eq!(
        answer::parse(&fixture(
            "synthetic/consulta-response-no-encontrado-601-expresion-no-valida.synthetic.xml"
        ))
        .expect("601"),
        not_found(Code::InvalidExpression)
    );
    assert_eq!(
        answer::parse(&fixture(
            "synthetic/consulta-response-no-encontrado-602.synthetic.xml"
        ))
        .expect("602"),
        not_found(Code::NotFound)
    );
    // sw-sdk-dotnet #47: a 601 with the other fields filled in.
    let filled =
        fixture("synthetic/consulta-response-no-encontrado-601-expresion-no-valida.synthetic.xml")
            .replace(
                "<a:EsCancelable>No cancelable</a:EsCancelable>",
                "<a:EsCancelable>Cancelable con aceptación</a:EsCancelable>",
            )
            .replace(
                "<a:EstatusCancelacion/>",
                "<a:EstatusCancelacion>Cancelado con aceptación</a:EstatusCancelacion>",
            );
    assert_eq!(
        answer::parse(&filled).expect("601"),
        not_found(Code::InvalidExpression)
    );
}

#[test]
fn answers_that_lost_their_accents_still_read() {
    let text = fixture(
        "synthetic/consulta-response-vigente-cancelable-sin-aceptacion-efos200.synthetic.xml",
    )
    .replace("aceptación", "aceptaci\u{FFFD}n");
    assert_eq!(
        answer::parse(&text).expect("read").cancellable,
        Some(Cancellable::WithoutAcceptance)
    );
}

#[test]
fn faults_and_foreign_answers_are_errors() {
    let fault = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode xmlns:a="http://schemas.microsoft.com/net/2005/12/windowscommunicationfoundation/dispatcher">a:InternalServiceFault</faultcode><faultstring xml:lang="es-MX">Invalid object name 'BitacoraServicioQR20150918'.</faultstring></s:Fault></s:Body></s:Envelope>"#;
    assert_eq!(
        answer::parse(fault),
        Err(ResponseError::Fault {
            code: "a:InternalServiceFault".into(),
            message: "Invalid object name 'BitacoraServicioQR20150918'.".into(),
        })
    );
    assert!(matches!(
        answer::parse("<html>Service Unavailable</html>"),
        Err(ResponseError::Malformed(_))
    ));
    assert!(matches!(
        answer::parse("not xml"),
        Err(ResponseError::Malformed(_))
    ));
    let odd = fixture("consulta-response-vigente-no-cancelable-efos200.satcfdi-extracted.xml")
        .replace(">Vigente<", ">Suspendido<");
    assert!(
        matches!(answer::parse(&odd), Err(ResponseError::Malformed(m)) if m.contains("Suspendido"))
    );
}

#[test]
fn written_answers_read_back_as_themselves() {
    let mut answers = vec![Answer {
        code: Code::InvalidExpression,
        state: State::NotFound,
        cancellable: None,
        cancellation_status: None,
        efos: Efos::Unknown,
    }];
    for cancellable in Cancellable::ALL {
        for status in [None].into_iter().chain(C::ALL.iter().map(|c| Some(*c))) {
            for efos in Efos::ALL {
                answers.push(found(State::Active, *cancellable, status, *efos));
            }
        }
    }
    for a in answers {
        assert_eq!(answer::parse(&answer::write(&a)).expect("parses"), a);
    }
}

/// A one-shot HTTP server answering `status` with `body` after `delay`; returns its URL
/// and the request it received.
fn serve_once(
    status: &'static str,
    body: String,
    delay: Duration,
) -> (String, std::thread::JoinHandle<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!(
        "http://{}/ConsultaCFDIService.svc",
        listener.local_addr().expect("addr")
    );
    let handle = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().expect("accept");
        let mut request = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).expect("read");
            request.extend_from_slice(&buf[..n]);
            let text = String::from_utf8_lossy(&request);
            if let Some((head, rest)) = text.split_once("\r\n\r\n") {
                let length = head
                    .lines()
                    .find_map(|l| {
                        l.to_ascii_lowercase()
                            .strip_prefix("content-length:")
                            .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                    })
                    .unwrap_or(0);
                if rest.len() >= length {
                    break;
                }
            }
            if n == 0 {
                break;
            }
        }
        std::thread::sleep(delay);
        let response = format!(
            "HTTP/1.1 {status}\r\nContent-Type: text/xml; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        let _ = stream.write_all(response.as_bytes());
        String::from_utf8_lossy(&request).into_owned()
    });
    (url, handle)
}

#[test]
fn the_client_posts_the_envelope_with_its_action_and_reads_the_answer() {
    let body = fixture("consulta-response-vigente-no-cancelable-efos200.satcfdi-extracted.xml");
    let (url, server) = serve_once("200 OK", body, Duration::ZERO);
    let answer = Client::new(&url, Duration::from_secs(5))
        .check(&subject("?re=A&rr=B&tt=0000000001.000000&id=X"))
        .expect("answer");
    assert_eq!(answer.state, State::Active);
    let request = server.join().expect("server");
    assert!(
        request.starts_with("POST /ConsultaCFDIService.svc"),
        "{request}"
    );
    let lower = request.to_ascii_lowercase();
    assert!(
        lower.contains("soapaction: http://tempuri.org/iconsultacfdiservice/consulta"),
        "{request}"
    );
    assert!(
        request.contains("?re=A&amp;rr=B&amp;tt=0000000001.000000&amp;id=X"),
        "{request}"
    );
}

#[test]
fn the_client_reports_faults_http_errors_and_timeouts() {
    let fault = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><s:Fault><faultcode>s:Server</faultcode><faultstring>down</faultstring></s:Fault></s:Body></s:Envelope>"#;
    let (url, _s) = serve_once("500 Internal Server Error", fault.into(), Duration::ZERO);
    let err = Client::new(&url, Duration::from_secs(5))
        .check(&subject("?x"))
        .expect_err("fault");
    assert!(
        matches!(err, StatusError::Answer(ResponseError::Fault { ref message, .. }) if message == "down"),
        "{err}"
    );

    let (url, _s) = serve_once(
        "503 Service Unavailable",
        "<html>busy</html>".into(),
        Duration::ZERO,
    );
    let err = Client::new(&url, Duration::from_secs(5))
        .check(&subject("?x"))
        .expect_err("503");
    assert!(
        matches!(err, StatusError::Http { status: 503, .. }),
        "{err}"
    );

    let (url, _s) = serve_once("200 OK", "late".into(), Duration::from_secs(2));
    let err = Client::new(&url, Duration::from_millis(200))
        .check(&subject("?x"))
        .expect_err("timeout");
    assert!(matches!(err, StatusError::Transport { .. }), "{err}");
}
