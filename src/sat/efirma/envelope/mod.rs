//! The four request bodies, as the service expects them: SOAP 1.1 envelopes without
//! whitespace between elements, each signed with the e.firma (see `signing`).

use chrono::{DateTime, NaiveDateTime, SecondsFormat, Utc};

use super::credential::Efirma;
use super::endpoints::Operation;
use super::signing::{self, attr, text, KeyInfo};
use crate::domain::extraction::Direction;

const SOAP_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";
const WSU_NS: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
const WSSE_NS: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
const BASE64_ENCODING: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0#Base64Binary";
/// The authentication service's namespace (note: no `.sat`).
const AUTH_NS: &str = "http://DescargaMasivaTerceros.gob.mx";
/// Every other call's namespace.
pub const SAT_NS: &str = "http://DescargaMasivaTerceros.sat.gob.mx";

/// How long the authentication timestamp is valid (the service's token lives as long).
pub const TIMESTAMP_LIFETIME: chrono::Duration = chrono::Duration::minutes(5);

/// A request ready to POST: where (by operation) and what.
#[derive(Debug, Clone)]
pub struct SoapRequest {
    pub operation: Operation,
    pub body: String,
}

/// What a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestType {
    Cfdi,
    Metadata,
}

impl RequestType {
    pub fn as_sat(self) -> &'static str {
        match self {
            RequestType::Cfdi => "CFDI",
            RequestType::Metadata => "Metadata",
        }
    }
}

/// `EstadoComprobante`. Received CFDI (XML) can only be asked as `Active`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DocumentStatus {
    All,
    Active,
    Cancelled,
}

impl DocumentStatus {
    pub fn as_sat(self) -> &'static str {
        match self {
            DocumentStatus::All => "Todos",
            DocumentStatus::Active => "Vigente",
            DocumentStatus::Cancelled => "Cancelado",
        }
    }
}

/// A request for the invoices of a window, issued or received by the e.firma's holder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowQuery {
    pub direction: Direction,
    pub request_type: RequestType,
    /// Local (Mexico) time, as the service takes it.
    pub start: NaiveDateTime,
    pub end: NaiveDateTime,
    pub status: DocumentStatus,
    /// The other party: the receiver for issued invoices, the issuer for received ones.
    pub counterpart: Option<String>,
    /// `TipoComprobante` letter (I, E, T, N, P).
    pub document_type: Option<String>,
    /// `Complemento` code (e.g. `nomina12`).
    pub complement: Option<String>,
    /// `RfcACuentaTerceros`.
    pub on_behalf_of: Option<String>,
}

/// What the query call asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Query {
    Window(WindowQuery),
    /// One invoice by UUID (`SolicitaDescargaFolio`).
    Uuid(String),
}

fn sat_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Authentication: a WS-Security header whose timestamp (`created` .. +5 min) is signed;
/// `token_id` names the binary security token (`uuid-<uuid>-1` by convention).
pub fn authenticate(
    efirma: &Efirma,
    created: DateTime<Utc>,
    token_id: &str,
) -> Result<SoapRequest, rsa::Error> {
    let times = format!(
        "<u:Created>{}</u:Created><u:Expires>{}</u:Expires>",
        sat_time(created),
        sat_time(created + TIMESTAMP_LIFETIME)
    );
    let canonical = format!(r#"<u:Timestamp xmlns:u="{WSU_NS}" u:Id="_0">{times}</u:Timestamp>"#);
    let signature =
        signing::signature(efirma, &canonical, "#_0", KeyInfo::TokenReference(token_id))?;
    let body = format!(
        concat!(
            r#"<?xml version="1.0"?><s:Envelope xmlns:s="{soap}" xmlns:u="{wsu}"><s:Header>"#,
            r#"<o:Security xmlns:o="{wsse}" s:mustUnderstand="1"><u:Timestamp u:Id="_0">{times}</u:Timestamp>"#,
            r#"<o:BinarySecurityToken u:Id="{id}" ValueType="{x509}" EncodingType="{b64}">{cert}</o:BinarySecurityToken>"#,
            r#"{signature}</o:Security></s:Header><s:Body><Autentica xmlns="{auth}"></Autentica></s:Body></s:Envelope>"#,
        ),
        soap = SOAP_NS,
        wsu = WSU_NS,
        wsse = WSSE_NS,
        times = times,
        id = attr(token_id),
        x509 = signing::X509_TOKEN,
        b64 = BASE64_ENCODING,
        cert = signing::certificate_base64(efirma),
        signature = signature,
        auth = AUTH_NS,
    );
    Ok(SoapRequest {
        operation: Operation::Authenticate,
        body,
    })
}

/// A signed call: `<des:{operation}><des:{child} attributes>{inner}<Signature/></...>`.
/// The digest covers the operation element without the signature, in canonical form
/// (attributes sorted by name, empty ones left out).
fn signed(
    efirma: &Efirma,
    operation: &str,
    child: &str,
    mut attributes: Vec<(&str, String)>,
    inner: &str,
) -> Result<String, rsa::Error> {
    attributes.retain(|(_, v)| !v.is_empty());
    attributes.sort_by(|a, b| a.0.cmp(b.0));
    let attributes: String = attributes
        .iter()
        .map(|(name, value)| format!(r#" {name}="{}""#, attr(value)))
        .collect();
    let open = format!("<des:{child}{attributes}>{inner}");
    let close = format!("</des:{child}></des:{operation}>");
    let canonical = format!(r#"<des:{operation} xmlns:des="{SAT_NS}">{open}{close}"#);
    let signature = signing::signature(efirma, &canonical, "", KeyInfo::X509)?;
    Ok(format!(
        concat!(
            r#"<?xml version="1.0"?><s:Envelope xmlns:s="{soap}" xmlns:des="{sat}" xmlns:xd="{dsig}">"#,
            r#"<s:Header></s:Header><s:Body><des:{operation}>{open}{signature}{close}</s:Body></s:Envelope>"#,
        ),
        soap = SOAP_NS,
        sat = SAT_NS,
        dsig = signing::DSIG_NS,
        operation = operation,
        open = open,
        signature = signature,
        close = close,
    ))
}

fn local(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S").to_string()
}

/// The query (`SolicitaDescarga{Emitidos,Recibidos,Folio}`).
pub fn query(efirma: &Efirma, query: &Query) -> Result<SoapRequest, rsa::Error> {
    let rfc = efirma.rfc().to_string();
    let q = match query {
        Query::Uuid(uuid) => {
            let attributes = vec![("RfcSolicitante", rfc), ("Folio", uuid.clone())];
            let body = signed(efirma, "SolicitaDescargaFolio", "solicitud", attributes, "")?;
            return Ok(SoapRequest {
                operation: Operation::QueryUuid,
                body,
            });
        }
        Query::Window(q) => q,
    };
    let counterpart = q.counterpart.clone().unwrap_or_default();
    let mut attributes = vec![
        ("RfcSolicitante", rfc.clone()),
        ("TipoSolicitud", q.request_type.as_sat().to_string()),
        ("FechaInicial", local(q.start)),
        ("FechaFinal", local(q.end)),
        ("EstadoComprobante", q.status.as_sat().to_string()),
        (
            "TipoComprobante",
            q.document_type.clone().unwrap_or_default(),
        ),
        ("Complemento", q.complement.clone().unwrap_or_default()),
        (
            "RfcACuentaTerceros",
            q.on_behalf_of.clone().unwrap_or_default(),
        ),
    ];
    let (operation, name, inner) = match q.direction {
        Direction::Issued => {
            attributes.push(("RfcEmisor", rfc));
            let receivers = if counterpart.is_empty() {
                String::new()
            } else {
                format!(
                    "<des:RfcReceptores><des:RfcReceptor>{}</des:RfcReceptor></des:RfcReceptores>",
                    text(&counterpart)
                )
            };
            (
                Operation::QueryIssued,
                "SolicitaDescargaEmitidos",
                receivers,
            )
        }
        Direction::Received => {
            attributes.push(("RfcReceptor", rfc));
            attributes.push(("RfcEmisor", counterpart));
            (
                Operation::QueryReceived,
                "SolicitaDescargaRecibidos",
                String::new(),
            )
        }
    };
    Ok(SoapRequest {
        operation,
        body: signed(efirma, name, "solicitud", attributes, &inner)?,
    })
}

/// The state of a query, by the SAT's request id.
pub fn verify(efirma: &Efirma, request_id: &str) -> Result<SoapRequest, rsa::Error> {
    let attributes = vec![
        ("IdSolicitud", request_id.to_string()),
        ("RfcSolicitante", efirma.rfc().to_string()),
    ];
    Ok(SoapRequest {
        operation: Operation::Verify,
        body: signed(
            efirma,
            "VerificaSolicitudDescarga",
            "solicitud",
            attributes,
            "",
        )?,
    })
}

/// One package, by its id.
pub fn download(efirma: &Efirma, package_id: &str) -> Result<SoapRequest, rsa::Error> {
    let attributes = vec![
        ("IdPaquete", package_id.to_string()),
        ("RfcSolicitante", efirma.rfc().to_string()),
    ];
    Ok(SoapRequest {
        operation: Operation::Download,
        body: signed(
            efirma,
            "PeticionDescargaMasivaTercerosEntrada",
            "peticionDescarga",
            attributes,
            "",
        )?,
    })
}

#[cfg(test)]
mod tests;
