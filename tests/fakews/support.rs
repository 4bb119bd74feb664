//! The test e.firma, a client pointed at the fake, sandbox documents loaded into it, and
//! a signer of hand-made requests (for what the library would never send).

use std::time::Duration;

use base64::Engine;
use cfdi_extract::sandbox::docs::{self as sandbox_docs, SandboxInvoice};
use cfdi_extract::sat::efirma::client::Client;
use cfdi_extract::sat::efirma::envelope::{DocumentStatus, Query, RequestType, WindowQuery};
use cfdi_extract::sat::efirma::responses::{RequestState, Token, VerifyAnswer};
use cfdi_extract::sat::efirma::Efirma;
use chrono::NaiveDate;
use rsa::pkcs8::DecodePrivateKey;
use sha1::{Digest, Sha1};

use crate::common::efirma_files::{instant, sat, sat_efirma, FIEL_RFC};
use crate::common::fake_sat_ws::{xmldsig, Direction, FakeSatWs, Settings};

/// A fake whose clock runs from `instant()`, so the tests outlive the certificate.
pub fn start(settings: Settings) -> FakeSatWs {
    let fake = FakeSatWs::start_with(settings);
    fake.set_now(instant());
    fake
}

pub struct Session {
    pub client: Client,
    pub efirma: Efirma,
    pub token: Token,
}

impl Session {
    /// Authenticated against `fake` at the fake's clock.
    pub fn open(fake: &FakeSatWs) -> Session {
        let client = Client::new(fake.endpoints(), Duration::from_secs(10));
        let efirma = sat_efirma();
        let token = client.authenticate(&efirma, fake.now()).expect("token");
        Session {
            client,
            efirma,
            token,
        }
    }

    /// Verifies until the request leaves Accepted / In progress (at most 10 checks).
    pub fn finish(&self, request_id: &str) -> (Vec<RequestState>, VerifyAnswer) {
        let mut states = Vec::new();
        for _ in 0..10 {
            let answer = self
                .client
                .verify(&self.efirma, &self.token, request_id)
                .expect("verify");
            states.push(answer.state);
            if !matches!(
                answer.state,
                RequestState::Accepted | RequestState::InProgress
            ) {
                return (states, answer);
            }
        }
        panic!("request {request_id} never ended: {states:?}");
    }

    /// Queries, expecting acceptance; returns the request id.
    pub fn accepted(&self, query: &Query) -> String {
        let answer = self
            .client
            .query(&self.efirma, &self.token, query)
            .expect("query");
        assert!(answer.status.accepted(), "{answer:?}");
        answer.request_id.expect("request id")
    }
}

pub fn day(d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(2025, 1, d).expect("day")
}

/// Issued or received, CFDI or metadata, whole days `from..=to` of January 2025.
pub fn window(
    direction: Direction,
    kind: RequestType,
    status: DocumentStatus,
    from: u32,
    to: u32,
) -> Query {
    Query::Window(WindowQuery {
        direction,
        request_type: kind,
        start: day(from).and_hms_opt(0, 0, 0).expect("start"),
        end: day(to).and_hms_opt(23, 59, 59).expect("end"),
        status,
        counterpart: None,
        document_type: None,
        complement: None,
        on_behalf_of: None,
    })
}

/// The sandbox's documents of `RFC` for January `from..=to`, given to the fake (with
/// their cancellations); returns them.
pub fn load_sandbox(
    fake: &FakeSatWs,
    direction: Direction,
    from: u32,
    to: u32,
) -> Vec<SandboxInvoice> {
    let dir = match direction {
        Direction::Issued => sandbox_docs::Direction::Issued,
        Direction::Received => sandbox_docs::Direction::Received,
    };
    let invoices = sandbox_docs::invoices_for_period(FIEL_RFC, dir, day(from), day(to));
    for invoice in &invoices {
        let xml = sandbox_docs::render_xml(FIEL_RFC, dir, invoice).expect("xml");
        assert_eq!(fake.add_cfdi(&xml), invoice.uuid);
        if let Some(at) = invoice.cancelled_at {
            fake.cancel(&invoice.uuid, at);
        }
    }
    invoices
}

/// Signs a hand-made signed call (`<s:Envelope>` with the operation in `s:Body` and a
/// `{SIGNATURE}` placeholder inside its child) with the test e.firma's key, the way the
/// SAT's documentation describes, independently of the library's signer.
pub fn sign_by_hand(envelope: &str) -> String {
    let b64 = |bytes: &[u8]| base64::engine::general_purpose::STANDARD.encode(bytes);
    let pem = String::from_utf8(sat("fake-fiel/EKU9003173C9.key.pem")).expect("pem");
    let key = rsa::RsaPrivateKey::from_pkcs8_pem(&pem).expect("key");
    let unsigned = xmldsig::parse(envelope.replace("{SIGNATURE}", "").as_bytes()).expect("xml");
    let (body, parent) =
        xmldsig::find(&unsigned, &Default::default(), xmldsig::SOAP_NS, "Body").expect("body");
    let operation = body.elements().next().expect("operation");
    let canonical = xmldsig::canonical(operation, &body.scope(&parent), &|_, _| false);
    let children = format!(
        concat!(
            r#"<CanonicalizationMethod Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"></CanonicalizationMethod>"#,
            r#"<SignatureMethod Algorithm="http://www.w3.org/2000/09/xmldsig#rsa-sha1"></SignatureMethod>"#,
            r#"<Reference URI=""><Transforms><Transform Algorithm="http://www.w3.org/2001/10/xml-exc-c14n#"></Transform></Transforms>"#,
            r#"<DigestMethod Algorithm="http://www.w3.org/2000/09/xmldsig#sha1"></DigestMethod><DigestValue>{}</DigestValue></Reference>"#,
        ),
        b64(&Sha1::digest(canonical.as_bytes()))
    );
    let dsig = "http://www.w3.org/2000/09/xmldsig#";
    let signed_info = format!(r#"<SignedInfo xmlns="{dsig}">{children}</SignedInfo>"#);
    let value = key
        .sign(
            rsa::Pkcs1v15Sign::new::<Sha1>(),
            &Sha1::digest(signed_info.as_bytes()),
        )
        .expect("sign");
    let cert = sat_efirma();
    let signature = format!(
        concat!(
            r#"<Signature xmlns="{}"><SignedInfo>{}</SignedInfo><SignatureValue>{}</SignatureValue>"#,
            "<KeyInfo><X509Data><X509IssuerSerial><X509IssuerName>{}</X509IssuerName><X509SerialNumber>{}</X509SerialNumber></X509IssuerSerial>",
            "<X509Certificate>{}</X509Certificate></X509Data></KeyInfo></Signature>",
        ),
        dsig,
        children,
        b64(&value),
        cert.issuer_name(),
        cert.serial_decimal(),
        b64(cert.certificate_der()),
    );
    envelope.replace("{SIGNATURE}", &signature)
}

/// POSTs a raw body to the fake with a `SOAPAction` and, if given, a token.
pub fn post(url: &str, action: &str, token: Option<&Token>, body: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .into();
    let mut request = agent
        .post(url)
        .header("Content-Type", "text/xml; charset=utf-8")
        .header("SOAPAction", action);
    if let Some(token) = token {
        request = request.header(
            "Authorization",
            format!("WRAP access_token=\"{}\"", token.value),
        );
    }
    let mut response = request.send(body.as_bytes()).expect("post");
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().expect("body"))
}
