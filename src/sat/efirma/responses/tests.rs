use super::*;
use crate::sat::efirma::credential::tests::fixture;

fn recorded(path: &str) -> String {
    String::from_utf8(fixture(path)).expect("utf-8")
}

fn at(text: &str) -> Option<DateTime<Utc>> {
    Some(
        DateTime::parse_from_rfc3339(text)
            .expect("time")
            .with_timezone(&Utc),
    )
}

#[test]
fn the_token_and_its_validity_are_read() {
    let token = authenticate(&recorded("authenticate/response-with-token.xml")).expect("token");
    assert!(token.value.starts_with("eyJhbGciOiJodHRwOi8vd3d3LnczLm9yZy8yMDAxLzA0L3htbGRzaWctbW9yZSNobWFjLXNoYTI1NiIsInR5cCI6IkpXVCJ9."));
    assert!(token
        .value
        .ends_with("%26wrap_subject%3d3330303031303030303030333030303233363835"));
    assert_eq!(token.created, at("2019-08-01T03:38:20.044Z"));
    assert_eq!(token.expires, at("2019-08-01T03:43:20.044Z"));
    assert!(
        !format!("{token:?}").contains("eyJ"),
        "the token stays out of logs"
    );
}

#[test]
fn a_refused_authentication_is_a_fault() {
    let err = authenticate(&recorded("authenticate/response-with-error.xml")).expect_err("fault");
    assert_eq!(
        err,
        ResponseError::Fault {
            code: "a:InvalidSecurity".into(),
            message: "An error occurred when verifying security for the message.".into(),
        }
    );
}

#[test]
fn every_recorded_query_answer_gives_its_request_id() {
    for path in [
        "query/response-issued.xml",
        "query/response-received.xml",
        "query/response-item.xml",
    ] {
        let answer = query(&recorded(path)).expect(path);
        assert_eq!(
            answer,
            QueryAnswer {
                status: Status {
                    code: SatCode::Accepted,
                    message: "Solicitud Aceptada".into()
                },
                request_id: Some("d49af78d-1c80-4221-a48d-345ace91626b".into()),
            },
            "{path}"
        );
        assert!(answer.status.accepted());
    }
}

#[test]
fn a_refused_query_has_its_code_and_no_request_id() {
    let xml = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body>
        <SolicitaDescargaRecibidosResponse xmlns="http://DescargaMasivaTerceros.sat.gob.mx">
        <SolicitaDescargaRecibidosResult IdSolicitud="" CodEstatus="5002" Mensaje="Se han agotado las solicitudes de por vida"/>
        </SolicitaDescargaRecibidosResponse></s:Body></s:Envelope>"#;
    let answer = query(xml).expect("answer");
    assert_eq!(answer.status.code, SatCode::LifetimeLimitReached);
    assert_eq!(answer.request_id, None);
    assert!(!answer.status.accepted());
}

#[test]
fn a_finished_verification_lists_its_packages() {
    let answer = verify(&recorded("verify/response-2-packages.xml")).expect("answer");
    assert_eq!(answer.status.code, SatCode::Accepted);
    assert_eq!(answer.state, RequestState::Finished);
    assert_eq!(answer.state_code, SatCode::Accepted);
    assert_eq!(answer.cfdi_count, 12345);
    assert_eq!(
        answer.package_ids,
        vec![
            "4e80345d-917f-40bb-a98f-4a73939343c5_01",
            "4e80345d-917f-40bb-a98f-4a73939343c5_02"
        ]
    );
}

#[test]
fn a_verification_without_results_is_rejected_with_5004() {
    let answer = verify(&recorded("verify/response-0-packages.xml")).expect("answer");
    assert_eq!(answer.state, RequestState::Rejected);
    assert_eq!(answer.state_code, SatCode::NotFound);
    assert_eq!(answer.cfdi_count, 0);
    assert!(answer.package_ids.is_empty());
}

#[test]
fn a_downloaded_package_is_decoded() {
    let answer = download(&recorded("download/response-with-package.xml")).expect("answer");
    assert_eq!(answer.status.code, SatCode::Accepted);
    assert_eq!(answer.status.message, "Solicitud Aceptada");
    let package = answer.package.as_deref().expect("package");
    assert!(package.starts_with(b"PK\x03\x04"), "a ZIP");
    assert!(format!("{answer:?}").contains("package_bytes"));
    let empty = download(&recorded("download/response-with-package-template.xml")).expect("answer");
    assert_eq!(empty.package, None);
    assert_eq!(empty.status.code, SatCode::Accepted);
}

#[test]
fn broken_answers_are_errors_not_panics() {
    assert!(matches!(query("not xml"), Err(ResponseError::Malformed(_))));
    assert!(matches!(verify("<a/>"), Err(ResponseError::Malformed(_))));
    let no_code = r#"<VerificaSolicitudDescargaResult xmlns="http://DescargaMasivaTerceros.sat.gob.mx" EstadoSolicitud="x"/>"#;
    assert!(matches!(verify(no_code), Err(ResponseError::Malformed(_))));
    let bad_package = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:h="http://DescargaMasivaTerceros.sat.gob.mx"><s:Header><h:respuesta CodEstatus="5000" Mensaje="ok"/></s:Header><s:Body><h:Paquete>***</h:Paquete></s:Body></s:Envelope>"#;
    assert!(matches!(
        download(bad_package),
        Err(ResponseError::Malformed(_))
    ));
}

#[test]
fn codes_round_trip() {
    for code in [
        300, 301, 302, 303, 304, 305, 404, 5000, 5001, 5002, 5003, 5004, 5005, 5006, 1234,
    ] {
        assert_eq!(SatCode::from_code(code).code(), code);
    }
    assert_eq!(SatCode::from_code(5005), SatCode::Duplicate);
    assert_eq!(RequestState::from_code(6), RequestState::Expired);
    assert_eq!(RequestState::from_code(9), RequestState::Other(9));
}
