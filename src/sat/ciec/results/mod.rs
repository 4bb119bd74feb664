//! The search results table `#ctl00_MainContent_tblResult` (facts §5, §6). Columns are
//! found by their caption, never by position, because the SAT adds, removes, renames
//! and reorders them. Captions compare without case, accents or extra white space.

use super::html::{by_id, collapse_whitespace, text_of};
use crate::sat::Metadata;
use rust_decimal::Decimal;
use scraper::{ElementRef, Html};
use std::str::FromStr;
use url::Url;

pub(super) const TABLE_ID: &str = "ctl00_MainContent_tblResult";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Column {
    Uuid,
    IssuerTaxId,
    IssuerName,
    ReceiverTaxId,
    ReceiverName,
    IssuedAt,
    CertifiedAt,
    Total,
    Effect,
    State,
    CancelledAt,
    /// Known captions whose values the service does not store.
    Ignored,
}

/// Normalised caption -> column. Old names stay listed so a rename back is still known.
const CAPTIONS: &[(&str, Column)] = &[
    ("folio fiscal", Column::Uuid),
    ("rfc emisor", Column::IssuerTaxId),
    ("nombre o razon social del emisor", Column::IssuerName),
    ("rfc receptor", Column::ReceiverTaxId),
    ("nombre o razon social del receptor", Column::ReceiverName),
    ("fecha de emision", Column::IssuedAt),
    ("fecha de certificacion", Column::CertifiedAt),
    ("total", Column::Total),
    ("efecto del comprobante", Column::Effect),
    ("estado del comprobante", Column::State),
    ("fecha de cancelacion", Column::CancelledAt),
    ("acciones", Column::Ignored),
    ("pac que certifico", Column::Ignored),
    ("estatus de cancelacion", Column::Ignored),
    ("estatus de proceso de cancelacion", Column::Ignored),
    ("fecha de solicitud de la cancelacion", Column::Ignored),
    ("fecha de proceso de cancelacion", Column::Ignored),
    ("rfc a cuenta de terceros", Column::Ignored),
    ("motivo", Column::Ignored),
    ("folio de sustitucion", Column::Ignored),
];

/// Without these a row cannot become `Metadata`.
const REQUIRED: &[(Column, &str)] = &[
    (Column::Uuid, "Folio Fiscal"),
    (Column::IssuerTaxId, "RFC Emisor"),
    (Column::ReceiverTaxId, "RFC Receptor"),
];

/// Missing these loses information silently (e.g. every invoice would look vigente).
const EXPECTED: &[(Column, &str)] = &[
    (Column::IssuerName, "Nombre o Razón Social del Emisor"),
    (Column::ReceiverName, "Nombre o Razón Social del Receptor"),
    (Column::IssuedAt, "Fecha de Emisión"),
    (Column::CertifiedAt, "Fecha de Certificación"),
    (Column::Total, "Total"),
    (Column::Effect, "Efecto del Comprobante"),
    (Column::State, "Estado del Comprobante"),
    (Column::CancelledAt, "Fecha de Cancelación"),
];

/// One listed invoice and where its documents are.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Row {
    pub metadata: Metadata,
    pub xml_url: Option<Url>,
    pub pdf_url: Option<Url>,
}

#[derive(Debug, Default)]
pub(super) struct Table {
    pub rows: Vec<Row>,
    /// Data rows on the page, with or without a UUID: the portal's 500 cap counts these.
    pub row_count: usize,
    /// Captions the connector does not know (worth a warning: the SAT changed the page).
    pub unknown_captions: Vec<String>,
    /// Expected captions that are absent.
    pub missing_captions: Vec<&'static str>,
}

#[derive(Debug, thiserror::Error, PartialEq)]
pub(super) enum TableError {
    #[error("the page has no results table")]
    NoTable,
    #[error("the results table lacks the columns {0:?}")]
    MissingColumns(Vec<&'static str>),
}

/// Lower case, no accents, single spaces: how captions compare.
pub(super) fn normalise(caption: &str) -> String {
    collapse_whitespace(caption)
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'ä' => 'a',
            'é' | 'è' | 'ë' => 'e',
            'í' | 'ì' | 'ï' => 'i',
            'ó' | 'ò' | 'ö' => 'o',
            'ú' | 'ù' | 'ü' => 'u',
            'ñ' => 'n',
            other => other,
        })
        .collect()
}

/// The table's own rows: not those of the small tables nested in the "Acciones" cells.
fn own_rows(table: ElementRef<'_>) -> Vec<ElementRef<'_>> {
    let mut rows = Vec::new();
    for child in table.child_elements() {
        match child.value().name() {
            "tr" => rows.push(child),
            "thead" | "tbody" | "tfoot" => {
                rows.extend(child.child_elements().filter(|e| e.value().name() == "tr"))
            }
            _ => {}
        }
    }
    rows
}

fn cells(row: ElementRef<'_>) -> Vec<ElementRef<'_>> {
    row.child_elements()
        .filter(|e| matches!(e.value().name(), "td" | "th"))
        .collect()
}

/// Parses the results table of a search answer (a delta or a full page), resolving the
/// document links against `portal`.
pub(super) fn parse(html: &str, portal: &Url) -> Result<Table, TableError> {
    let doc = Html::parse_document(html);
    let table = by_id(doc.root_element(), TABLE_ID).ok_or(TableError::NoTable)?;
    let rows = own_rows(table);
    let Some((header, data)) = rows.split_first() else {
        return Err(TableError::MissingColumns(
            REQUIRED.iter().map(|r| r.1).collect(),
        ));
    };
    let mut columns = Vec::new();
    let mut unknown_captions = Vec::new();
    for cell in cells(*header) {
        let caption = text_of(cell);
        let key = normalise(&caption);
        let column = CAPTIONS
            .iter()
            .find(|(c, _)| *c == key)
            .map(|(_, col)| *col);
        if column.is_none() && !caption.is_empty() {
            unknown_captions.push(caption);
        }
        columns.push(column);
    }
    let has = |col: Column| columns.contains(&Some(col));
    let missing_required: Vec<&'static str> = REQUIRED
        .iter()
        .filter(|(c, _)| !has(*c))
        .map(|r| r.1)
        .collect();
    if !missing_required.is_empty() {
        return Err(TableError::MissingColumns(missing_required));
    }
    let mut table_out = Table {
        unknown_captions,
        missing_captions: EXPECTED
            .iter()
            .filter(|(c, _)| !has(*c))
            .map(|r| r.1)
            .collect(),
        ..Table::default()
    };
    for row in data {
        let values = cells(*row);
        if values.is_empty() {
            continue;
        }
        table_out.row_count += 1;
        let value = |col: Column| -> String {
            columns
                .iter()
                .position(|c| *c == Some(col))
                .and_then(|i| values.get(i))
                .map(|cell| text_of(*cell))
                .unwrap_or_default()
        };
        let uuid = value(Column::Uuid).to_ascii_uppercase();
        if uuid.is_empty() {
            continue; // as the portal's own scraper does: no UUID, no invoice
        }
        let cancelled = normalise(&value(Column::State)) == "cancelado";
        let metadata = Metadata {
            uuid,
            issuer_tax_id: value(Column::IssuerTaxId).to_ascii_uppercase(),
            issuer_name: non_empty(value(Column::IssuerName)),
            receiver_tax_id: value(Column::ReceiverTaxId).to_ascii_uppercase(),
            receiver_name: non_empty(value(Column::ReceiverName)),
            issued_at: local_time(&value(Column::IssuedAt)),
            certified_at: local_time(&value(Column::CertifiedAt)),
            total: parse_total(&value(Column::Total)),
            invoice_type: invoice_type(&value(Column::Effect)).map(str::to_string),
            cancelled,
            cancelled_at: local_time(&value(Column::CancelledAt)).filter(|_| cancelled),
        };
        table_out.rows.push(Row {
            metadata,
            xml_url: xml_link(*row, portal),
            pdf_url: pdf_link(*row, portal),
        });
    }
    Ok(table_out)
}

fn non_empty(s: String) -> Option<String> {
    (!s.is_empty()).then_some(s)
}

/// `$1,234.56` (also `-$5.00`, `$ 0.00`) as an exact decimal.
pub(super) fn parse_total(text: &str) -> Option<Decimal> {
    let cleaned: String = text
        .chars()
        .filter(|c| !matches!(c, '$' | ',' | ' ' | '\u{a0}'))
        .collect();
    if cleaned.is_empty() {
        return None;
    }
    Decimal::from_str(&cleaned).ok()
}

/// "Efecto del Comprobante" as the CFDI `TipoDeComprobante` letter.
pub(super) fn invoice_type(effect: &str) -> Option<&'static str> {
    match normalise(effect).as_str() {
        "ingreso" => Some("I"),
        "egreso" => Some("E"),
        "traslado" => Some("T"),
        "nomina" => Some("N"),
        "pago" => Some("P"),
        _ => None,
    }
}

const LOCAL_TIME: &str = "%Y-%m-%dT%H:%M:%S";

/// The portal's dates as the service's local time text (`2019-01-02T04:37:21`).
pub(in crate::sat) fn local_time(text: &str) -> Option<String> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%d/%m/%Y %H:%M:%S",
    ]
    .iter()
    .find_map(|f| chrono::NaiveDateTime::parse_from_str(text, f).ok())
    .map(|t| t.format(LOCAL_TIME).to_string())
}

/// The first `'...'` argument of a button's `onclick` handler.
fn quoted_argument(onclick: &str) -> Option<&str> {
    let start = onclick.find('\'')? + 1;
    let len = onclick[start..].find('\'')?;
    Some(&onclick[start..start + len]).filter(|s| !s.is_empty())
}

fn onclick_of<'a>(row: ElementRef<'a>, id: &str) -> Option<&'a str> {
    by_id(row, id)?.value().attr("onclick")
}

/// `BtnDescarga`: `return AccionCfdi('RecuperaCfdi.aspx?Datos=...','Recuperacion');`
fn xml_link(row: ElementRef<'_>, portal: &Url) -> Option<Url> {
    let target = quoted_argument(onclick_of(row, "BtnDescarga")?)?;
    portal.join(target).ok()
}

/// `BtnRI`: `recuperaRepresentacionImpresa('<token>');` (older pages passed a URL).
fn pdf_link(row: ElementRef<'_>, portal: &Url) -> Option<Url> {
    let token = quoted_argument(onclick_of(row, "BtnRI")?)?;
    if token.contains(".aspx") {
        return portal.join(token).ok();
    }
    portal
        .join(&format!("RepresentacionImpresa.aspx?Datos={token}"))
        .ok()
}

#[cfg(test)]
mod tests;
