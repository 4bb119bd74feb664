//! The fake SAT's answers, in the shapes of the recorded ones
//! (`tests/fixtures/sat-ws-fixtures/*/response-*.xml`), without whitespace between elements.

use base64::Engine;
use chrono::{DateTime, SecondsFormat, Utc};

use super::xmldsig::SAT_NS;

const ENVELOPE_OPEN: &str = r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/">"#;
const BODY_OPEN: &str = r#"<s:Body xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">"#;

/// The SAT's usual `Mensaje` for a code.
pub fn message(code: u32) -> &'static str {
    match code {
        300 => "Usuario No Válido",
        301 => "XML Mal Formado",
        302 => "Sello Mal Formado",
        303 => "Sello no corresponde con RfcSolicitante",
        304 => "Certificado Revocado o Caduco",
        305 => "Certificado Inválido",
        404 => "Error no Controlado",
        5000 => "Solicitud Aceptada",
        5001 => "Tercero no autorizado",
        5002 => "Se han agotado las solicitudes de por vida",
        5003 => "Tope máximo",
        5004 => "No se encontró la información",
        5005 => "Solicitud duplicada",
        5006 => "Error interno en el proceso",
        5008 => "Máximo de descargas permitidas",
        _ => "Error",
    }
}

fn attr(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('"', "&quot;")
}

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// `response-with-token.xml`.
pub fn token(value: &str, created: DateTime<Utc>, expires: DateTime<Utc>) -> String {
    format!(
        concat!(
            r#"<?xml version="1.0"?><s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/" xmlns:u="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd">"#,
            r#"<s:Header><o:Security xmlns:o="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd" s:mustUnderstand="1">"#,
            r#"<u:Timestamp u:Id="_0"><u:Created>{}</u:Created><u:Expires>{}</u:Expires></u:Timestamp></o:Security></s:Header>"#,
            r#"<s:Body><AutenticaResponse xmlns="http://DescargaMasivaTerceros.gob.mx"><AutenticaResult>{}</AutenticaResult></AutenticaResponse></s:Body></s:Envelope>"#,
        ),
        time(created),
        time(expires),
        attr(value),
    )
}

/// `response-with-error.xml`: what a refused authentication gets (with HTTP 500).
pub fn fault() -> String {
    format!(
        concat!(
            "{}<s:Body><s:Fault>",
            r#"<faultcode xmlns:a="http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd">a:InvalidSecurity</faultcode>"#,
            r#"<faultstring xml:lang="en-US">An error occurred when verifying security for the message.</faultstring>"#,
            "</s:Fault></s:Body></s:Envelope>",
        ),
        ENVELOPE_OPEN
    )
}

/// `query/response-*.xml`; `operation` is `SolicitaDescarga{Emitidos,Recibidos,Folio}`.
pub fn query(operation: &str, code: u32, request_id: Option<&str>) -> String {
    let id = request_id
        .map(|id| format!(r#" IdSolicitud="{}""#, attr(id)))
        .unwrap_or_default();
    format!(
        r#"{ENVELOPE_OPEN}{BODY_OPEN}<{operation}Response xmlns="{SAT_NS}"><{operation}Result{id} CodEstatus="{code}" Mensaje="{}" /></{operation}Response></s:Body></s:Envelope>"#,
        attr(message(code)),
    )
}

/// What a verification reports.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verification {
    pub code: u32,
    pub state: Option<u32>,
    pub state_code: Option<u32>,
    pub count: usize,
    pub packages: Vec<String>,
}

/// `verify/response-*.xml`.
pub fn verify(v: &Verification) -> String {
    let mut attrs = format!(r#" CodEstatus="{}""#, v.code);
    if let (Some(state), Some(state_code)) = (v.state, v.state_code) {
        attrs.push_str(&format!(
            r#" EstadoSolicitud="{state}" CodigoEstadoSolicitud="{state_code}" NumeroCFDIs="{}""#,
            v.count
        ));
    }
    let message = attr(message(
        v.state_code.filter(|_| v.code == 5000).unwrap_or(v.code),
    ));
    let packages: String = v
        .packages
        .iter()
        .map(|id| format!("<IdsPaquetes>{}</IdsPaquetes>", attr(id)))
        .collect();
    format!(
        r#"{ENVELOPE_OPEN}{BODY_OPEN}<VerificaSolicitudDescargaResponse xmlns="{SAT_NS}"><VerificaSolicitudDescargaResult{attrs} Mensaje="{message}">{packages}</VerificaSolicitudDescargaResult></VerificaSolicitudDescargaResponse></s:Body></s:Envelope>"#
    )
}

/// `download/response-with-package-template.xml`, with the package or without one.
pub fn download(code: u32, package: Option<&[u8]>) -> String {
    let package = package
        .map(|p| base64::engine::general_purpose::STANDARD.encode(p))
        .unwrap_or_default();
    format!(
        concat!(
            r#"<?xml version="1.0" encoding="UTF-8"?>{}<s:Header><h:respuesta CodEstatus="{}" Mensaje="{}" xmlns:h="{}" xmlns="{}" xmlns:xsd="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" /></s:Header>"#,
            r#"{}<RespuestaDescargaMasivaTercerosSalida xmlns="{}"><Paquete>{}</Paquete></RespuestaDescargaMasivaTercerosSalida></s:Body></s:Envelope>"#,
        ),
        ENVELOPE_OPEN,
        code,
        attr(message(code)),
        SAT_NS,
        SAT_NS,
        BODY_OPEN,
        SAT_NS,
        package,
    )
}
