//! The request: a SOAP 1.1 envelope with `{http://tempuri.org/}Consulta` and its one
//! child `expresionImpresa`, the expression as escaped text (phpcfdi/sat-estado-cfdi's
//! form; python-satcfdi's CDATA reaches the SAT as the same string).

use roxmltree::Document;

use crate::sat::efirma::signing::text;

pub const SOAP_ACTION: &str = "http://tempuri.org/IConsultaCFDIService/Consulta";
pub const SOAP_NS: &str = "http://schemas.xmlsoap.org/soap/envelope/";
pub const TEMPURI_NS: &str = "http://tempuri.org/";

/// The request body for `expression`.
pub fn request(expression: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?><s:Envelope xmlns:s="{SOAP_NS}"><s:Body><c:Consulta xmlns:c="{TEMPURI_NS}"><c:expresionImpresa>{}</c:expresionImpresa></c:Consulta></s:Body></s:Envelope>"#,
        text(expression)
    )
}

/// The expression a request asks about, in any of the forms clients send (prefixes,
/// CDATA or escaped text): what a server, the sandbox's or a fake, reads.
pub fn expression_of(body: &str) -> Option<String> {
    let doc = Document::parse(body).ok()?;
    let node = doc
        .descendants()
        .find(|n| n.has_tag_name((TEMPURI_NS, "expresionImpresa")))?;
    Some(node.text().unwrap_or("").trim().to_owned())
}
