//! The fake checks every request like the SAT: signatures with the certificate each one
//! carries, current timestamps, its own unexpired tokens, and the requester's RFC.

use cfdi_extract::sat::efirma::client::ClientError;
use cfdi_extract::sat::efirma::endpoints::Operation;
use cfdi_extract::sat::efirma::envelope::{self, DocumentStatus, RequestType};
use cfdi_extract::sat::efirma::responses::{self, ResponseError, SatCode, Token};

use crate::common::efirma_files::{sat, sat_efirma, FIEL_RFC};
use crate::common::fake_sat_ws::xmldsig::{self, Refusal};
use crate::common::fake_sat_ws::{Direction, Op, Settings};
use crate::fakews::support::{post, sign_by_hand, window, Session};

const SIGNED_RECORDINGS: [&str; 5] = [
    "query/request-issued.xml",
    "query/request-received.xml",
    "query/request-item.xml",
    "verify/request.xml",
    "download/request.xml",
];

#[test]
fn the_checker_accepts_the_recorded_requests_and_refuses_them_altered() {
    let auth = xmldsig::parse(&sat("authenticate/request.xml")).expect("xml");
    let checked =
        xmldsig::check_authentication(&auth).expect("the recorded authentication verifies");
    assert_eq!(checked.signer.rfc, FIEL_RFC);
    assert_eq!(checked.created.to_rfc3339(), "2019-08-01T03:38:19+00:00");
    assert_eq!((checked.expires - checked.created).num_minutes(), 5);
    for path in SIGNED_RECORDINGS {
        let doc = xmldsig::parse(&sat(path)).expect("xml");
        let (signer, operation, _) =
            xmldsig::check_enveloped(&doc).unwrap_or_else(|e| panic!("{path}: {e:?}"));
        assert_eq!(signer.rfc, FIEL_RFC, "{path}");
        assert_eq!(
            signer.serial,
            "292233162870206001759766198462772978647764840757"
        );
        assert!(operation.local().starts_with(['S', 'V', 'P']), "{path}");
    }

    let altered = |path: &str, from: &str, to: &str| {
        let text = String::from_utf8(sat(path)).expect("utf-8");
        assert!(text.contains(from), "{path} holds {from}");
        xmldsig::parse(text.replacen(from, to, 1).as_bytes()).expect("xml")
    };
    let moved = altered("authenticate/request.xml", "03:43:19", "03:48:19");
    assert!(matches!(
        xmldsig::check_authentication(&moved),
        Err(Refusal::Seal(_))
    ));
    let other_id = altered(
        "verify/request.xml",
        "IdSolicitud=\"3f30",
        "IdSolicitud=\"4f30",
    );
    assert!(matches!(
        xmldsig::check_enveloped(&other_id),
        Err(Refusal::Seal(_))
    ));
    let forged = altered(
        "download/request.xml",
        "<SignatureValue>BQDd",
        "<SignatureValue>BQDe",
    );
    assert!(matches!(
        xmldsig::check_enveloped(&forged),
        Err(Refusal::Seal(_))
    ));
    let broken_cert = altered(
        "download/request.xml",
        "<X509Certificate>MIIG",
        "<X509Certificate>MIIH",
    );
    assert!(matches!(
        xmldsig::check_enveloped(&broken_cert),
        Err(Refusal::Certificate(_))
    ));
}

fn verify_code(body: &str) -> SatCode {
    responses::verify(body)
        .expect("a verify answer")
        .status
        .code
}

#[test]
fn a_tampered_signature_or_body_is_refused_with_302() {
    let fake = crate::fakews::support::start(Settings::default());
    let s = Session::open(&fake);
    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        1,
        2,
    ));
    let url = fake.endpoints().verify;
    let action = Operation::Verify.soap_action();
    let genuine = envelope::verify(&s.efirma, &id).expect("envelope").body;
    let (status, body) = post(&url, action, Some(&s.token), &genuine);
    assert_eq!((status, verify_code(&body)), (200, SatCode::Accepted));

    let start = genuine.find("<SignatureValue>").expect("value") + "<SignatureValue>".len();
    let mut flipped = genuine.clone().into_bytes();
    flipped[start + 10] = if flipped[start + 10] == b'A' {
        b'B'
    } else {
        b'A'
    };
    let flipped = String::from_utf8(flipped).expect("utf-8");
    let other = genuine.replace(&id, "00000000-0000-4000-8000-000000000000");
    for tampered in [flipped, other] {
        let (status, body) = post(&url, action, Some(&s.token), &tampered);
        assert_eq!((status, verify_code(&body)), (200, SatCode::MalformedSeal));
    }
    let (_, body) = post(&url, action, Some(&s.token), "<not xml");
    assert_eq!(verify_code(&body), SatCode::MalformedXml);

    // A tampered authentication gets the recorded fault.
    let auth = envelope::authenticate(&s.efirma, fake.now(), "uuid-x-1")
        .expect("auth")
        .body;
    let late = auth.replacen("<u:Expires>", "<u:Expires>1", 1);
    let (status, body) = post(
        &fake.endpoints().authenticate,
        Operation::Authenticate.soap_action(),
        None,
        &late,
    );
    assert_eq!(status, 500);
    assert!(
        matches!(responses::fault(&body), Some(ResponseError::Fault { code, .. }) if code == "a:InvalidSecurity")
    );
    assert_eq!(
        fake.calls().last().map(|c| (c.op, c.http)),
        Some((Op::Authenticate, 500))
    );
}

#[test]
fn a_request_for_another_rfc_is_refused_with_303() {
    let fake = crate::fakews::support::start(Settings::default());
    let s = Session::open(&fake);
    let id = s.accepted(&window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        1,
        2,
    ));
    let envelope = |rfc: &str| {
        format!(
            concat!(
                r#"<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:des="http://DescargaMasivaTerceros.sat.gob.mx" xmlns:xd="http://www.w3.org/2000/09/xmldsig#">"#,
                r#"<s:Header/><s:Body><des:VerificaSolicitudDescarga><des:solicitud IdSolicitud="{}" RfcSolicitante="{}">{{SIGNATURE}}</des:solicitud></des:VerificaSolicitudDescarga></s:Body></s:Envelope>"#,
            ),
            id, rfc
        )
    };
    let url = fake.endpoints().verify;
    let action = Operation::Verify.soap_action();
    // Signed by hand, independently of the library: accepted for the e.firma's RFC.
    let (_, body) = post(
        &url,
        action,
        Some(&s.token),
        &sign_by_hand(&envelope(FIEL_RFC)),
    );
    assert_eq!(verify_code(&body), SatCode::Accepted);
    let (_, body) = post(
        &url,
        action,
        Some(&s.token),
        &sign_by_hand(&envelope("AAA010101AAA")),
    );
    assert_eq!(verify_code(&body), SatCode::SealRfcMismatch);
}

#[test]
fn unknown_missing_and_expired_tokens_are_refused_with_300() {
    let fake = crate::fakews::support::start(Settings::default());
    let s = Session::open(&fake);
    let query = window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        1,
        2,
    );
    let unknown = Token {
        value: "not-a-token".into(),
        created: None,
        expires: None,
    };
    let answer = s.client.query(&s.efirma, &unknown, &query).expect("answer");
    assert_eq!(answer.status.code, SatCode::InvalidUser);
    let signed = envelope::query(&s.efirma, &query).expect("envelope");
    let (_, body) = post(
        &fake.endpoints().query,
        signed.operation.soap_action(),
        None,
        &signed.body,
    );
    assert_eq!(
        responses::query(&body).expect("answer").status.code,
        SatCode::InvalidUser
    );

    assert!(s
        .client
        .query(&s.efirma, &s.token, &query)
        .expect("answer")
        .status
        .accepted());
    fake.advance(chrono::Duration::minutes(5));
    let answer = s
        .client
        .download(&s.efirma, &s.token, "any_01")
        .expect("answer");
    assert_eq!(
        (answer.status.code, answer.package),
        (SatCode::InvalidUser, None)
    );
    // A new token works again.
    let fresh = s.client.authenticate(&s.efirma, fake.now()).expect("token");
    assert_ne!(fresh.value, s.token.value);
    let answer = s
        .client
        .verify(&s.efirma, &fresh, "unknown-id")
        .expect("answer");
    assert_eq!(answer.status.code, SatCode::NotFound);
}

fn refused_authentication(result: Result<Token, ClientError>) -> bool {
    matches!(
        result,
        Err(ClientError::Answer { step: "authenticate", source: ResponseError::Fault { ref code, .. } }) if code == "a:InvalidSecurity"
    )
}

#[test]
fn stale_timestamps_and_refused_rfcs_cannot_authenticate() {
    let fake = crate::fakews::support::start(Settings::default());
    let s = Session::open(&fake);
    let token = fake.calls()[0].clone();
    assert_eq!((token.op, token.http), (Op::Authenticate, 200));
    let stale = fake.now() - chrono::Duration::minutes(6);
    assert!(refused_authentication(
        s.client.authenticate(&s.efirma, stale)
    ));
    let early = fake.now() + chrono::Duration::minutes(3);
    assert!(refused_authentication(
        s.client.authenticate(&s.efirma, early)
    ));

    fake.refuse_authentication_for("AAA010101AAA");
    assert!(s.client.authenticate(&s.efirma, fake.now()).is_ok());
    fake.refuse_authentication_for(FIEL_RFC);
    assert!(refused_authentication(
        s.client.authenticate(&s.efirma, fake.now())
    ));

    let other = crate::fakews::support::start(Settings::default());
    other.refuse_all_authentication();
    let client = cfdi_extract::sat::efirma::client::Client::new(
        other.endpoints(),
        std::time::Duration::from_secs(5),
    );
    assert!(refused_authentication(
        client.authenticate(&sat_efirma(), other.now())
    ));
    assert_eq!(other.count(Op::Authenticate), 1);
}

#[test]
fn an_expired_certificate_is_refused_304_and_cannot_authenticate() {
    let fake = crate::fakews::support::start(Settings {
        token_lifetime: chrono::Duration::minutes(30),
        ..Settings::default()
    });
    // The test certificate ends 2027-05-17T04:37:14Z.
    let end = chrono::DateTime::parse_from_rfc3339("2027-05-17T04:37:14Z")
        .expect("time")
        .with_timezone(&chrono::Utc);
    fake.set_now(end - chrono::Duration::minutes(5));
    let s = Session::open(&fake);
    let query = window(
        Direction::Issued,
        RequestType::Metadata,
        DocumentStatus::All,
        1,
        2,
    );
    assert!(s
        .client
        .query(&s.efirma, &s.token, &query)
        .expect("answer")
        .status
        .accepted());
    fake.advance(chrono::Duration::minutes(10));
    let answer = s.client.query(&s.efirma, &s.token, &query).expect("answer");
    assert_eq!(answer.status.code, SatCode::CertificateRevokedOrExpired);
    assert!(refused_authentication(
        s.client.authenticate(&s.efirma, fake.now())
    ));
}
