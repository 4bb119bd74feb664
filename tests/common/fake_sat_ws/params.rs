//! A query's parameters as the fake SAT reads them from the signed request, and the
//! checks that refuse impossible ones.

use cfdi_extract::sat::efirma::endpoints::Operation;
use chrono::NaiveDateTime;

use super::xmldsig::Element;
use super::{Direction, DocumentStatus, RequestType};

/// A query's parameters, as read from the signed request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryParams {
    pub rfc: String,
    /// None for a query by UUID (`SolicitaDescargaFolio`).
    pub direction: Option<Direction>,
    pub request_type: RequestType,
    pub start: Option<NaiveDateTime>,
    pub end: Option<NaiveDateTime>,
    pub status: DocumentStatus,
    pub uuid: Option<String>,
    /// The receiver asked for on issued queries, the issuer on received ones.
    pub counterpart: Option<String>,
    pub document_type: Option<String>,
    /// Every parameter, canonical: what "the same query" means.
    pub(super) key: String,
}

impl QueryParams {
    pub fn is_cfdi(&self) -> bool {
        self.request_type == RequestType::Cfdi
    }
}

/// A query's parameters, or the code refusing it: 301 for a malformed or impossible
/// request, 5001 for asking about someone else's invoices.
pub fn read_params(operation: Operation, s: &Element, rfc: &str) -> Result<QueryParams, u32> {
    let upper = |name: &str| {
        s.attr(name)
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_ascii_uppercase)
    };
    let time = |name: &str| {
        s.attr(name)
            .map(|v| NaiveDateTime::parse_from_str(v, "%Y-%m-%dT%H:%M:%S").map_err(|_| 301_u32))
            .transpose()
    };
    let mut key: Vec<String> = s.attrs.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let receivers: Vec<String> = s
        .elements()
        .filter(|e| e.local() == "RfcReceptores")
        .flat_map(|e| e.elements())
        .map(|e| e.text().trim().to_ascii_uppercase())
        .collect();
    key.extend(receivers.iter().map(|r| format!("receptor={r}")));
    key.sort();
    let mut params = QueryParams {
        rfc: rfc.to_string(),
        direction: None,
        request_type: RequestType::Cfdi,
        start: time("FechaInicial")?,
        end: time("FechaFinal")?,
        status: DocumentStatus::All,
        uuid: upper("Folio"),
        counterpart: None,
        document_type: upper("TipoComprobante"),
        key: format!("{operation:?}|{}", key.join("|")),
    };
    if operation == Operation::QueryUuid {
        return params.uuid.is_some().then_some(params).ok_or(301);
    }
    params.request_type = match s.attr("TipoSolicitud") {
        Some("CFDI") => RequestType::Cfdi,
        Some("Metadata") => RequestType::Metadata,
        _ => return Err(301),
    };
    params.status = match s.attr("EstadoComprobante") {
        None | Some("Todos") => DocumentStatus::All,
        Some("Vigente") => DocumentStatus::Active,
        Some("Cancelado") => DocumentStatus::Cancelled,
        Some(_) => return Err(301),
    };
    let (Some(start), Some(end)) = (params.start, params.end) else {
        return Err(301);
    };
    if end <= start {
        return Err(301);
    }
    if operation == Operation::QueryIssued {
        params.direction = Some(Direction::Issued);
        params.counterpart = receivers.first().cloned();
        if upper("RfcEmisor").is_some_and(|e| e != rfc) {
            return Err(5001);
        }
    } else {
        params.direction = Some(Direction::Received);
        params.counterpart = upper("RfcEmisor");
        if upper("RfcReceptor").is_some_and(|r| r != rfc) {
            return Err(5001);
        }
        // Received CFDI (XML) can only be asked while active.
        if params.is_cfdi() && params.status != DocumentStatus::Active {
            return Err(301);
        }
    }
    Ok(params)
}
