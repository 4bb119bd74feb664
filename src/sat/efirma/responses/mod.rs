//! The service's answers as typed values. Elements are matched by namespace and local
//! name (prefixes vary between answers); a SOAP fault is an error of its own.

use base64::Engine;
use chrono::{DateTime, Utc};
use roxmltree::{Document, Node};

use super::envelope::SAT_NS;

const SOAP_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";
const AUTH_NS: &str = "http://DescargaMasivaTerceros.gob.mx";
const WSU_NS: &str =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";

/// `CodEstatus` (every answer) and `CodigoEstadoSolicitud` (verification) share numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SatCode {
    /// 300
    InvalidUser,
    /// 301
    MalformedXml,
    /// 302
    MalformedSeal,
    /// 303: the seal does not match `RfcSolicitante`.
    SealRfcMismatch,
    /// 304
    CertificateRevokedOrExpired,
    /// 305
    InvalidCertificate,
    /// 404: unhandled error at the SAT; retry later.
    Unhandled,
    /// 5000
    Accepted,
    /// 5001: not authorised for that third party.
    ThirdPartyNotAuthorized,
    /// 5002: the lifetime requests with these parameters are used up.
    LifetimeLimitReached,
    /// 5003: over the maximum of CFDI or metadata for one request: split the window.
    OverMaximum,
    /// 5004: no results, or the request or package was not found.
    NotFound,
    /// 5005: a live request with the same parameters exists.
    Duplicate,
    /// 5006
    InternalError,
    /// 5008: the package was already downloaded the maximum number of times (two).
    DownloadsExhausted,
    Other(u32),
}

impl SatCode {
    pub fn from_code(code: u32) -> Self {
        match code {
            300 => SatCode::InvalidUser,
            301 => SatCode::MalformedXml,
            302 => SatCode::MalformedSeal,
            303 => SatCode::SealRfcMismatch,
            304 => SatCode::CertificateRevokedOrExpired,
            305 => SatCode::InvalidCertificate,
            404 => SatCode::Unhandled,
            5000 => SatCode::Accepted,
            5001 => SatCode::ThirdPartyNotAuthorized,
            5002 => SatCode::LifetimeLimitReached,
            5003 => SatCode::OverMaximum,
            5004 => SatCode::NotFound,
            5005 => SatCode::Duplicate,
            5006 => SatCode::InternalError,
            5008 => SatCode::DownloadsExhausted,
            other => SatCode::Other(other),
        }
    }

    pub fn code(self) -> u32 {
        match self {
            SatCode::InvalidUser => 300,
            SatCode::MalformedXml => 301,
            SatCode::MalformedSeal => 302,
            SatCode::SealRfcMismatch => 303,
            SatCode::CertificateRevokedOrExpired => 304,
            SatCode::InvalidCertificate => 305,
            SatCode::Unhandled => 404,
            SatCode::Accepted => 5000,
            SatCode::ThirdPartyNotAuthorized => 5001,
            SatCode::LifetimeLimitReached => 5002,
            SatCode::OverMaximum => 5003,
            SatCode::NotFound => 5004,
            SatCode::Duplicate => 5005,
            SatCode::InternalError => 5006,
            SatCode::DownloadsExhausted => 5008,
            SatCode::Other(code) => code,
        }
    }
}

/// `CodEstatus` with its `Mensaje`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub code: SatCode,
    pub message: String,
}

impl Status {
    pub fn accepted(&self) -> bool {
        self.code == SatCode::Accepted
    }
}

/// `EstadoSolicitud`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequestState {
    Accepted,
    InProgress,
    Finished,
    Error,
    Rejected,
    Expired,
    Other(u32),
}

impl RequestState {
    pub fn from_code(code: u32) -> Self {
        match code {
            1 => RequestState::Accepted,
            2 => RequestState::InProgress,
            3 => RequestState::Finished,
            4 => RequestState::Error,
            5 => RequestState::Rejected,
            6 => RequestState::Expired,
            other => RequestState::Other(other),
        }
    }
}

/// The authentication token and its validity (from the answer's own timestamp).
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    pub value: String,
    pub created: Option<DateTime<Utc>>,
    pub expires: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("value", &"<redacted>")
            .field("created", &self.created)
            .field("expires", &self.expires)
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryAnswer {
    pub status: Status,
    /// `IdSolicitud`; absent when the query was refused.
    pub request_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyAnswer {
    pub status: Status,
    pub state: RequestState,
    /// `CodigoEstadoSolicitud`.
    pub state_code: SatCode,
    pub cfdi_count: u64,
    pub package_ids: Vec<String>,
}

#[derive(Clone, PartialEq, Eq)]
pub struct DownloadAnswer {
    pub status: Status,
    /// The package's ZIP bytes; `None` when the answer carries none.
    pub package: Option<Vec<u8>>,
}

impl std::fmt::Debug for DownloadAnswer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DownloadAnswer")
            .field("status", &self.status)
            .field("package_bytes", &self.package.as_ref().map(Vec::len))
            .finish()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResponseError {
    /// A SOAP fault (e.g. `a:InvalidSecurity` when the signature is refused).
    #[error("the web service answered with a fault {code}: {message}")]
    Fault { code: String, message: String },
    #[error("the web service's answer is not understood: {0}")]
    Malformed(String),
}

fn malformed(what: impl Into<String>) -> ResponseError {
    ResponseError::Malformed(what.into())
}

/// The SOAP fault an answer carries, if it is XML with one.
pub fn fault(xml: &str) -> Option<ResponseError> {
    fault_of(&Document::parse(xml).ok()?)
}

/// The SOAP fault of a parsed answer (shared with the status service's client).
pub(crate) fn fault_of(doc: &Document<'_>) -> Option<ResponseError> {
    let fault = doc
        .descendants()
        .find(|n| n.has_tag_name((SOAP_NS, "Fault")))?;
    let child = |name: &str| {
        fault
            .children()
            .find(|n| n.tag_name().name() == name)
            .and_then(|n| n.text())
            .map(|t| t.trim().to_string())
            .unwrap_or_default()
    };
    Some(ResponseError::Fault {
        code: child("faultcode"),
        message: child("faultstring"),
    })
}

fn parse(xml: &str) -> Result<Document<'_>, ResponseError> {
    let doc = Document::parse(xml).map_err(|e| malformed(format!("not XML: {e}")))?;
    match fault_of(&doc) {
        Some(fault) => Err(fault),
        None => Ok(doc),
    }
}

fn element<'a, 'i>(
    doc: &'a Document<'i>,
    ns: &str,
    name: &str,
) -> Result<Node<'a, 'i>, ResponseError> {
    doc.descendants()
        .find(|n| n.has_tag_name((ns, name)))
        .ok_or_else(|| malformed(format!("no {name} element")))
}

fn number(node: Node<'_, '_>, name: &str) -> Result<u32, ResponseError> {
    let text = node
        .attribute(name)
        .ok_or_else(|| malformed(format!("no {name}")))?;
    text.trim()
        .parse()
        .map_err(|_| malformed(format!("{name} is not a number: {text}")))
}

fn status(node: Node<'_, '_>) -> Result<Status, ResponseError> {
    Ok(Status {
        code: SatCode::from_code(number(node, "CodEstatus")?),
        message: node.attribute("Mensaje").unwrap_or_default().to_string(),
    })
}

fn time(doc: &Document<'_>, name: &str) -> Option<DateTime<Utc>> {
    let text = doc
        .descendants()
        .find(|n| n.has_tag_name((WSU_NS, name)))?
        .text()?;
    DateTime::parse_from_rfc3339(text.trim())
        .ok()
        .map(|t| t.with_timezone(&Utc))
}

pub fn authenticate(xml: &str) -> Result<Token, ResponseError> {
    let doc = parse(xml)?;
    let value = element(&doc, AUTH_NS, "AutenticaResult")?
        .text()
        .map(str::trim)
        .unwrap_or_default();
    if value.is_empty() {
        return Err(malformed("the authentication answer carries no token"));
    }
    Ok(Token {
        value: value.to_string(),
        created: time(&doc, "Created"),
        expires: time(&doc, "Expires"),
    })
}

/// Any of the three query answers (`SolicitaDescarga{Emitidos,Recibidos,Folio}Result`).
pub fn query(xml: &str) -> Result<QueryAnswer, ResponseError> {
    let doc = parse(xml)?;
    let result = doc
        .descendants()
        .find(|n| {
            let name = n.tag_name();
            name.namespace() == Some(SAT_NS)
                && name.name().starts_with("SolicitaDescarga")
                && name.name().ends_with("Result")
        })
        .ok_or_else(|| malformed("no SolicitaDescarga result"))?;
    Ok(QueryAnswer {
        status: status(result)?,
        request_id: result
            .attribute("IdSolicitud")
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(str::to_string),
    })
}

pub fn verify(xml: &str) -> Result<VerifyAnswer, ResponseError> {
    let doc = parse(xml)?;
    let result = element(&doc, SAT_NS, "VerificaSolicitudDescargaResult")?;
    let optional = |name: &str| match result.attribute(name) {
        Some(_) => number(result, name).map(Some),
        None => Ok(None),
    };
    Ok(VerifyAnswer {
        status: status(result)?,
        state: RequestState::from_code(optional("EstadoSolicitud")?.unwrap_or(0)),
        state_code: SatCode::from_code(optional("CodigoEstadoSolicitud")?.unwrap_or(0)),
        cfdi_count: optional("NumeroCFDIs")?.map_or(0, u64::from),
        package_ids: result
            .children()
            .filter(|n| n.has_tag_name((SAT_NS, "IdsPaquetes")))
            .filter_map(|n| n.text())
            .map(str::trim)
            .filter(|id| !id.is_empty())
            .map(str::to_string)
            .collect(),
    })
}

pub fn download(xml: &str) -> Result<DownloadAnswer, ResponseError> {
    let doc = parse(xml)?;
    let header = element(&doc, SAT_NS, "respuesta")?;
    let package = doc
        .descendants()
        .find(|n| n.has_tag_name((SAT_NS, "Paquete")))
        .and_then(|n| n.text())
        .map(|text| {
            let compact: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
            base64::engine::general_purpose::STANDARD
                .decode(compact)
                .map_err(|e| malformed(format!("the package is not base64: {e}")))
        })
        .transpose()?
        .filter(|bytes| !bytes.is_empty());
    Ok(DownloadAnswer {
        status: status(header)?,
        package,
    })
}

#[cfg(test)]
mod tests;
