//! CFDI (Mexican electronic invoice) parser.
//!
//! Reads CFDI 3.2, 3.3 and 4.0 documents, the TimbreFiscalDigital stamp
//! (1.0 and 1.1) and the Pagos 1.0 / 2.0 payment complements into plain
//! structs. Amounts are exact decimals with the scale they were written
//! with. Elements are matched by namespace URI and local name, never by
//! prefix. The parser never panics: every bad input maps to a [`CfdiError`].

mod document;
pub(crate) mod limits;
mod pagos;
mod payroll;
pub mod printed;
pub(crate) mod stamp;
mod stated_taxes;
mod taxes;
pub(crate) mod xml;

#[cfg(test)]
mod tests;

use std::fmt;

pub use limits::{MAX_DOCUMENT_BYTES, MAX_NODES};
pub use rust_decimal::Decimal;
use serde::Serialize;

/// CFDI schema version of the Comprobante.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Version {
    #[serde(rename = "3.2")]
    V32,
    #[serde(rename = "3.3")]
    V33,
    #[serde(rename = "4.0")]
    V40,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V32 => "3.2",
            Version::V33 => "3.3",
            Version::V40 => "4.0",
        }
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// TipoDeComprobante: Ingreso, Egreso, Traslado, Nómina, Pago.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum InvoiceType {
    I,
    E,
    T,
    N,
    P,
}

impl InvoiceType {
    pub fn as_str(self) -> &'static str {
        match self {
            InvoiceType::I => "I",
            InvoiceType::E => "E",
            InvoiceType::T => "T",
            InvoiceType::N => "N",
            InvoiceType::P => "P",
        }
    }

    /// Parses a 3.3/4.0 code (`I`, `E`, ...) or a 3.2 word (`ingreso`,
    /// `egreso`, `traslado`), case-insensitively.
    pub fn from_code(code: &str) -> Option<Self> {
        let code = code.trim().to_ascii_lowercase();
        match code.as_str() {
            "i" | "ingreso" => Some(InvoiceType::I),
            "e" | "egreso" => Some(InvoiceType::E),
            "t" | "traslado" => Some(InvoiceType::T),
            "n" => Some(InvoiceType::N),
            "p" => Some(InvoiceType::P),
            _ => None,
        }
    }
}

impl fmt::Display for InvoiceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A parsed Comprobante. Strings are kept as written, without surrounding blanks,
/// unless noted.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Cfdi {
    pub version: Version,
    pub invoice_type: InvoiceType,
    pub series: Option<String>,
    pub folio: Option<String>,
    /// Fecha as written, e.g. "2025-01-24T10:10:41".
    pub issued_at: String,
    pub issuer: Party,
    pub receiver: Party,
    /// Moneda as written (may be free text such as "Pesos", or "XXX").
    pub currency: Option<String>,
    pub exchange_rate: Option<Decimal>,
    pub subtotal: Decimal,
    pub discount: Option<Decimal>,
    pub total: Decimal,
    /// Root-level Impuestos@TotalImpuestosTrasladados.
    pub taxes_transferred: Option<Decimal>,
    /// Root-level Impuestos@TotalImpuestosRetenidos.
    pub taxes_withheld: Option<Decimal>,
    /// MetodoPago, only when it is "PUE" or "PPD" (never for 3.2, which has no such field).
    pub payment_method: Option<String>,
    /// FormaPago; for 3.2 metodoDePago, which holds the form of payment ("01", "04",
    /// or text), while 3.2's formaDePago means one payment or installments.
    pub payment_form: Option<String>,
    /// Sello: the issuer's digital seal (base64), as written.
    pub seal: Option<String>,
    /// NoCertificado: the issuer certificate's serial number.
    pub certificate_number: Option<String>,
    pub stamp: Option<Stamp>,
    pub items: Vec<Item>,
    /// Every Pago of every Pagos complement, in document order; only for type P.
    pub payments: Vec<Payment>,
    pub related: Vec<Related>,
    // What the printed representation shows beyond the stored fields; skipped when
    // serialized, so stored and API JSON stay as they are.
    /// LugarExpedicion: the place of issue's postal code (3.2: as written).
    #[serde(skip)]
    pub place_of_issue: Option<String>,
    /// Exportacion (4.0 only), e.g. `01` (not an export).
    #[serde(skip)]
    pub export: Option<String>,
    /// The root Impuestos' entries, one per tax (Traslado then Retencion, in document
    /// order); 3.2 names the tax (`IVA`) and gives `tasa` as a percentage.
    #[serde(skip)]
    pub tax_breakdown: Vec<ItemTax>,
    /// The Pagos 2.0 Totales node (type P only).
    #[serde(skip)]
    pub payment_totals: Option<PaymentTotals>,
    /// Every Nómina 1.2 complement (type N only), for the printed receipt.
    #[serde(skip)]
    pub payroll: Vec<Payroll>,
    /// Taxes stated outside the concepts' 3.3/4.0 breakdown (see [`StatedTaxes`]).
    pub stated_taxes: StatedTaxes,
}

/// Taxes a document states outside its concepts' breakdown, each in the concept
/// taxes' shape. Stored beside the concepts (`invoices.stated_taxes_json`) and read
/// back by the period summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct StatedTaxes {
    /// CFDI 3.2's Impuestos entries: `impuesto` as its code (IVA 002, ISR 001, IEPS
    /// 003), `tasa` as a fraction (16.00 -> 0.160000) with factor `Tasa`; 3.2 states
    /// no base.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub legacy: Vec<ItemTax>,
    /// Local taxes (`implocal:ImpuestosLocales`): the tax is the local tax's name as
    /// written (ImpLocTrasladado / ImpLocRetenido), the rate a fraction, no base.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub local: Vec<ItemTax>,
    /// ISR withheld on payroll (Nómina 1.1 / 1.2 deductions of type 002), one
    /// withheld `001` entry per Nómina complement.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub payroll: Vec<ItemTax>,
}

impl StatedTaxes {
    pub fn is_empty(&self) -> bool {
        self.legacy.is_empty() && self.local.is_empty() && self.payroll.is_empty()
    }
}

/// Emisor or Receptor.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Party {
    /// Rfc as written (trimmed); may be empty when the attribute is present but empty.
    pub tax_id: String,
    pub name: Option<String>,
    /// Emisor's RegimenFiscal; for the Receptor its RegimenFiscalReceptor (4.0 only).
    pub regime: Option<String>,
    /// Receptor's UsoCFDI; always None for the Emisor.
    pub cfdi_use: Option<String>,
    /// Receptor's DomicilioFiscalReceptor (4.0 only): the postal code of its tax address.
    pub postal_code: Option<String>,
}

/// TimbreFiscalDigital.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stamp {
    /// Upper-cased and well formed (8-4-4-4-12 hex); None when absent or empty.
    pub uuid: Option<String>,
    pub version: Option<String>,
    /// FechaTimbrado as written.
    pub certified_at: Option<String>,
    /// RfcProvCertif as written ("" stays `Some("")`).
    pub provider_tax_id: Option<String>,
    /// SelloSAT (base64), as written.
    pub sat_seal: Option<String>,
    /// NoCertificadoSAT.
    pub sat_certificate_number: Option<String>,
    /// The original string of the stamp (cadena original del complemento de
    /// certificación), built as the SAT's XSLT for its version builds it.
    #[serde(skip)]
    pub original_string: String,
}

/// A Concepto line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Item {
    /// ClaveProdServ, the SAT product key; None for 3.2, which has none
    /// (its noIdentificacion is the seller's own code).
    pub product_code: Option<String>,
    pub description: String,
    pub quantity: Decimal,
    /// ClaveUnidad, else Unidad (3.2: unidad).
    pub unit: Option<String>,
    pub unit_price: Decimal,
    pub discount: Option<Decimal>,
    pub amount: Decimal,
    /// The concept's own taxes (Concepto/Impuestos, CFDI 3.3 and 4.0), transfers first,
    /// in document order; empty when the concept has none (and always for 3.2).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taxes: Vec<ItemTax>,
    /// ObjetoImp (4.0 only): whether the concept is subject to tax (`01` no, `02` yes, ...).
    #[serde(skip)]
    pub tax_object: Option<String>,
}

/// A Traslado or Retencion of a concept. Values are as written; a decimal that does
/// not parse is None (a concept's tax detail never makes a document unreadable).
/// Deserialize reads it back from the stored JSON (the period summary).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct ItemTax {
    /// `transferred` (Traslado) or `withheld` (Retencion).
    pub kind: TaxKind,
    /// Impuesto: `001` ISR, `002` IVA, `003` IEPS.
    pub tax: String,
    /// TipoFactor: `Tasa`, `Cuota` or `Exento`.
    pub factor: Option<String>,
    /// TasaOCuota.
    pub rate: Option<Decimal>,
    pub base: Option<Decimal>,
    /// Importe (absent when exempt).
    pub amount: Option<Decimal>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaxKind {
    Transferred,
    Withheld,
}

/// One Pago node of a Pagos 1.0 or 2.0 complement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Payment {
    /// FechaPago as written.
    pub paid_at: String,
    /// FormaDePagoP.
    pub payment_form: Option<String>,
    /// MonedaP.
    pub currency: String,
    /// TipoCambioP.
    pub exchange_rate: Option<Decimal>,
    /// Monto, in `currency`.
    pub amount: Decimal,
    /// DoctoRelacionado rows, verbatim (duplicates are kept).
    pub related_documents: Vec<RelatedDocument>,
    /// The payment's own taxes, in MonedaP: Pagos 2.0 ImpuestosP (TrasladoP then
    /// RetencionP), Pagos 1.0 Impuestos; read leniently like a concept's.
    #[serde(skip)]
    pub taxes: Vec<ItemTax>,
}

/// The Totales node of a Pagos 2.0 complement, in MXN; each None when absent.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PaymentTotals {
    pub withheld_iva: Option<Decimal>,
    pub withheld_isr: Option<Decimal>,
    pub withheld_ieps: Option<Decimal>,
    pub base_iva16: Option<Decimal>,
    pub iva16: Option<Decimal>,
    pub base_iva8: Option<Decimal>,
    pub iva8: Option<Decimal>,
    pub base_iva0: Option<Decimal>,
    pub iva0: Option<Decimal>,
    pub base_iva_exempt: Option<Decimal>,
    /// MontoTotalPagos.
    pub total_paid: Option<Decimal>,
}

/// A Nómina 1.2 complement: the receipt's period, the employee and each perception,
/// deduction and other payment, as written (codes as codes; an amount that is not a
/// decimal is None). Read for the printed receipt only; the period summary reads the
/// ISR withheld through [`StatedTaxes::payroll`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Payroll {
    /// TipoNomina: `O` ordinaria, `E` extraordinaria.
    pub payroll_type: Option<String>,
    pub paid_on: Option<String>,
    pub period_from: Option<String>,
    pub period_to: Option<String>,
    pub days_paid: Option<Decimal>,
    pub total_perceptions: Option<Decimal>,
    pub total_deductions: Option<Decimal>,
    pub total_other_payments: Option<Decimal>,
    /// Emisor@RegistroPatronal.
    pub employer_registration: Option<String>,
    pub employee: Employee,
    pub perceptions: Vec<PayrollLine>,
    pub deductions: Vec<PayrollLine>,
    pub other_payments: Vec<PayrollLine>,
}

/// The Nómina's Receptor.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Employee {
    pub curp: Option<String>,
    pub social_security_number: Option<String>,
    pub employee_number: Option<String>,
    /// FechaInicioRelLaboral.
    pub started_on: Option<String>,
    /// Antigüedad, as written (`P63W`).
    pub seniority: Option<String>,
    pub contract_type: Option<String>,
    pub unionized: Option<String>,
    pub workday_type: Option<String>,
    pub regime_type: Option<String>,
    pub department: Option<String>,
    pub position: Option<String>,
    pub job_risk: Option<String>,
    pub payment_frequency: Option<String>,
    pub bank: Option<String>,
    pub account: Option<String>,
    /// SalarioBaseCotApor.
    pub base_salary: Option<Decimal>,
    pub integrated_daily_salary: Option<Decimal>,
    /// ClaveEntFed.
    pub state: Option<String>,
}

/// A Percepcion, Deduccion or OtroPago.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PayrollLine {
    /// TipoPercepcion, TipoDeduccion or TipoOtroPago.
    pub kind: Option<String>,
    /// Clave: the employer's own key.
    pub key: Option<String>,
    pub concept: Option<String>,
    /// A perception's ImporteGravado and ImporteExento.
    pub taxed: Option<Decimal>,
    pub exempt: Option<Decimal>,
    /// A deduction's or other payment's Importe.
    pub amount: Option<Decimal>,
}

/// A DoctoRelacionado row. Amounts are in the document's currency (MonedaDR).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RelatedDocument {
    /// IdDocumento upper-cased; None when absent or empty.
    pub uuid: Option<String>,
    pub series: Option<String>,
    pub folio: Option<String>,
    /// MonedaDR.
    pub currency: Option<String>,
    /// MonedaDR units per unit of MonedaP: Pagos 2.0 EquivalenciaDR,
    /// Pagos 1.0 TipoCambioDR. Absent means 1.
    pub equivalence: Option<Decimal>,
    /// MetodoDePagoDR (Pagos 1.0 only).
    pub payment_method: Option<String>,
    /// NumParcialidad.
    pub installment: Option<u32>,
    /// ImpSaldoAnt.
    pub previous_balance: Option<Decimal>,
    /// ImpPagado (may be absent in Pagos 1.0).
    pub amount_paid: Option<Decimal>,
    /// ImpSaldoInsoluto.
    pub outstanding_balance: Option<Decimal>,
    /// The share of the paid invoice's taxes this payment carries (Pagos 2.0
    /// ImpuestosDR: TrasladosDR then RetencionesDR), in MonedaDR; empty for Pagos 1.0,
    /// which has none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub taxes: Vec<ItemTax>,
}

/// A CfdiRelacionado entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Related {
    /// TipoRelacion of the enclosing CfdiRelacionados.
    pub relation_type: Option<String>,
    /// Upper-cased UUID.
    pub uuid: String,
}

#[derive(Debug, Clone, thiserror::Error, PartialEq)]
pub enum CfdiError {
    #[error("empty document")]
    Empty,
    #[error("malformed XML: {0}")]
    Malformed(String),
    /// Over one of the parsing limits (size, depth, attributes, nodes).
    #[error("document refused: {0}")]
    OverLimit(String),
    /// The root is not `{cfd/3 or cfd/4}Comprobante`.
    #[error("not a CFDI: {0}")]
    NotCfdi(String),
    #[error("unsupported CFDI version {0:?}")]
    UnsupportedVersion(String),
    /// A required element or attribute, e.g. "Emisor", "Receptor@Rfc", "Total".
    #[error("missing {0}")]
    Missing(&'static str),
    /// A present value that cannot be parsed, e.g. a non-decimal amount.
    #[error("invalid {field}: {value:?}")]
    Invalid { field: &'static str, value: String },
    #[error("not stamped: no TimbreFiscalDigital UUID")]
    Unstamped,
    /// Two TimbreFiscalDigital stamps naming different UUIDs: which one is the
    /// document's cannot be told.
    #[error("two TimbreFiscalDigital stamps with different UUIDs: {0} and {1}")]
    ConflictingStamps(String, String),
}

impl CfdiError {
    /// Longest value quoted in an error: errors are one line, a hostile value is not.
    const QUOTED: usize = 80;

    /// [`CfdiError::Invalid`] quoting at most the first 80 characters of `value`.
    pub(crate) fn invalid(field: &'static str, value: &str) -> CfdiError {
        CfdiError::Invalid {
            field,
            value: Self::quoted(value),
        }
    }

    /// `value` cut to its first 80 characters.
    pub(crate) fn quoted(value: &str) -> String {
        match value.char_indices().nth(Self::QUOTED) {
            Some((end, _)) => format!("{}...", &value[..end]),
            None => value.to_owned(),
        }
    }
}

/// `Cfdi::parse` and `Cfdi::parse_stamped` are in `document.rs`: the parser's modules
/// build on this file's types, and this file calls none of them.
impl Cfdi {
    /// The fiscal UUID, or [`CfdiError::Unstamped`].
    pub fn uuid(&self) -> Result<&str, CfdiError> {
        self.stamp
            .as_ref()
            .and_then(|stamp| stamp.uuid.as_deref())
            .ok_or(CfdiError::Unstamped)
    }
}
