//! The answer: `Envelope/Body/{tempuri}ConsultaResponse/{tempuri}ConsultaResult/*`,
//! children read by local name (their prefix and datacontract namespace vary); a missing,
//! empty or self-closed child is empty. Texts are compared without case, accents or
//! extra blanks, so an answer that lost its accents in transit still reads.

use roxmltree::{Document, Node};

use super::envelope::TEMPURI_NS;
use crate::domain::sat_status::{Cancellable, CancellationStatus, Efos, State};
use crate::sat::efirma::responses::{fault_of, ResponseError};

/// `CodigoEstatus`: `S - ...` found; `N - 601: ...` / `N - 602: ...` not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Code {
    Found,
    /// 601, "La expresión impresa proporcionada no es válida": also what a wrong total
    /// or a CFDI the SAT does not (yet) know gives, and at times a transient failure
    /// on a valid one (FACTS.md §4).
    InvalidExpression,
    /// 602, "Comprobante no encontrado".
    NotFound,
    /// Another `N - ` code, as written.
    Other(String),
}

impl Code {
    fn parse(text: &str) -> Code {
        let text = text.trim();
        if text.starts_with("S - ") || text == "S" {
            return Code::Found;
        }
        let number: String = text
            .trim_start_matches("N - ")
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        match number.as_str() {
            "601" => Code::InvalidExpression,
            "602" => Code::NotFound,
            _ => Code::Other(text.to_owned()),
        }
    }

    /// The number the service's records keep (`601`, `602`), `S` when found.
    pub fn as_str(&self) -> &str {
        match self {
            Code::Found => "S",
            Code::InvalidExpression => "601",
            Code::NotFound => "602",
            Code::Other(text) => text,
        }
    }
}

/// One answer. When the code is not `S - ` the other fields are not meaningful (the SAT
/// has been seen filling them anyway) and are left empty.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    pub code: Code,
    pub state: State,
    pub cancellable: Option<Cancellable>,
    pub cancellation_status: Option<CancellationStatus>,
    pub efos: Efos,
}

/// Reads an answer; a SOAP fault or an answer without `ConsultaResult` is an error.
pub fn parse(xml: &str) -> Result<Answer, ResponseError> {
    let doc = Document::parse(xml.trim())
        .map_err(|e| ResponseError::Malformed(format!("not XML: {e}")))?;
    if let Some(fault) = fault_of(&doc) {
        return Err(fault);
    }
    let result = doc
        .descendants()
        .find(|n| n.has_tag_name((TEMPURI_NS, "ConsultaResult")))
        .ok_or_else(|| ResponseError::Malformed("no ConsultaResult element".into()))?;
    let field = |name: &str| child_text(result, name);
    let code = Code::parse(&field("CodigoEstatus"));
    if code != Code::Found {
        return Ok(Answer {
            code,
            state: State::NotFound,
            cancellable: None,
            cancellation_status: None,
            efos: Efos::Unknown,
        });
    }
    let state = state(&field("Estado"))?;
    Ok(Answer {
        code,
        state,
        cancellable: cancellable(&field("EsCancelable"))?,
        cancellation_status: cancellation_status(&field("EstatusCancelacion"))?,
        efos: Efos::from_code(&field("ValidacionEFOS")),
    })
}

fn child_text(parent: Node<'_, '_>, name: &str) -> String {
    parent
        .children()
        .find(|n| n.is_element() && n.tag_name().name() == name)
        .and_then(|n| n.text())
        .map(str::trim)
        .unwrap_or("")
        .to_owned()
}

/// Lower case, accents dropped, `U+FFFD` and blanks collapsed: `Cancelable con
/// aceptación` and `CANCELABLE CON ACEPTACION` read alike.
fn normal(text: &str) -> String {
    let folded: String = text
        .chars()
        .filter(|c| *c != '\u{FFFD}')
        .map(|c| match c {
            'á' | 'Á' => 'a',
            'é' | 'É' => 'e',
            'í' | 'Í' => 'i',
            'ó' | 'Ó' => 'o',
            'ú' | 'Ú' | 'ü' | 'Ü' => 'u',
            c => c.to_ascii_lowercase(),
        })
        .collect();
    folded.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn unexpected(field: &str, text: &str) -> ResponseError {
    ResponseError::Malformed(format!("unexpected {field} {text:?}"))
}

fn state(text: &str) -> Result<State, ResponseError> {
    match normal(text).as_str() {
        "vigente" => Ok(State::Active),
        "cancelado" => Ok(State::Cancelled),
        "no encontrado" => Ok(State::NotFound),
        _ => Err(unexpected("Estado", text)),
    }
}

fn cancellable(text: &str) -> Result<Option<Cancellable>, ResponseError> {
    // The lost accent of `aceptación` may leave `aceptacin` behind (U+FFFD dropped).
    match normal(text).as_str() {
        "" => Ok(None),
        "no cancelable" => Ok(Some(Cancellable::No)),
        "cancelable sin aceptacion" | "cancelable sin aceptacin" => {
            Ok(Some(Cancellable::WithoutAcceptance))
        }
        "cancelable con aceptacion" | "cancelable con aceptacin" => {
            Ok(Some(Cancellable::WithAcceptance))
        }
        _ => Err(unexpected("EsCancelable", text)),
    }
}

fn cancellation_status(text: &str) -> Result<Option<CancellationStatus>, ResponseError> {
    use CancellationStatus as C;
    match normal(text).as_str() {
        "" => Ok(None),
        "en proceso" => Ok(Some(C::InProcess)),
        "plazo vencido" => Ok(Some(C::DeadlinePassed)),
        "cancelado con aceptacion" | "cancelado con aceptacin" => {
            Ok(Some(C::CancelledWithAcceptance))
        }
        "cancelado sin aceptacion" | "cancelado sin aceptacin" => {
            Ok(Some(C::CancelledWithoutAcceptance))
        }
        "solicitud rechazada" => Ok(Some(C::Rejected)),
        _ => Err(unexpected("EstatusCancelacion", text)),
    }
}

/// The answer the service would give, as the SAT writes it (the sandbox and the test
/// fakes answer with it).
pub fn write(answer: &Answer) -> String {
    let code = match &answer.code {
        Code::Found => "S - Comprobante obtenido satisfactoriamente.",
        Code::InvalidExpression => "N - 601: La expresión impresa proporcionada no es válida.",
        Code::NotFound => "N - 602: Comprobante no encontrado.",
        Code::Other(text) => text,
    };
    let state = match answer.state {
        State::Active => "Vigente",
        State::Cancelled => "Cancelado",
        State::NotFound | State::NotRegistered => "No Encontrado",
    };
    let cancellable = match answer.cancellable {
        None => "",
        Some(Cancellable::No) => "No cancelable",
        Some(Cancellable::WithoutAcceptance) => "Cancelable sin aceptación",
        Some(Cancellable::WithAcceptance) => "Cancelable con aceptación",
    };
    let cancellation = match answer.cancellation_status {
        None => "",
        Some(CancellationStatus::InProcess) => "En proceso",
        Some(CancellationStatus::DeadlinePassed) => "Plazo vencido",
        Some(CancellationStatus::CancelledWithAcceptance) => "Cancelado con aceptación",
        Some(CancellationStatus::CancelledWithoutAcceptance) => "Cancelado sin aceptación",
        Some(CancellationStatus::Rejected) => "Solicitud rechazada",
    };
    let efos = match answer.efos {
        Efos::Listed => "100",
        Efos::NotListed => "200",
        Efos::Unknown => "",
    };
    format!(
        r#"<s:Envelope xmlns:s="http://schemas.xmlsoap.org/soap/envelope/"><s:Body><ConsultaResponse xmlns="http://tempuri.org/"><ConsultaResult xmlns:a="http://schemas.datacontract.org/2004/07/Sat.Cfdi.Negocio.ConsultaCfdi.Servicio" xmlns:i="http://www.w3.org/2001/XMLSchema-instance"><a:CodigoEstatus>{code}</a:CodigoEstatus><a:EsCancelable>{cancellable}</a:EsCancelable><a:Estado>{state}</a:Estado><a:EstatusCancelacion>{cancellation}</a:EstatusCancelacion><a:ValidacionEFOS>{efos}</a:ValidacionEFOS></ConsultaResult></ConsultaResponse></s:Body></s:Envelope>"#
    )
}
