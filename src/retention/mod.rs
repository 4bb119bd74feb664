//! CFDI de Retenciones e Información de Pagos parser (RET 1.0 and 2.0).
//!
//! A document class of its own beside the Comprobante (`crate::cfdi`), read with the
//! same tools and bounds: `cfdi::xml`'s tree builder (size, depth, attribute and node
//! limits, BOM and UTF-8 rules) and attribute reader (RET 2.0 spelling as "modern",
//! RET 1.0 as "legacy"), and the Comprobante's TimbreFiscalDigital reader (1.0 and
//! 1.1, wherever it sits among the complements). Errors are [`CfdiError`]s, so both
//! classes refuse the same things the same way.
//!
//! Values are read, not validated: public documents carry values outside the XSDs
//! (`Ejercicio="2027"`, `DescRetenc="0.00"`, totals that do not add up), and they are
//! kept as written. What ingestion needs to store a document (a stamp UUID, FechaExp, a
//! Receptor) is checked by [`Retention::parse_stamped`].

mod complements;
mod document;

#[cfg(test)]
mod tests;

use crate::cfdi::{CfdiError, Decimal, Related, Stamp};
use serde::Serialize;
use std::collections::BTreeMap;

pub use complements::Complement;

/// RET 1.0's namespace; its complements live under it in both versions.
pub const RET1: &str = "http://www.sat.gob.mx/esquemas/retencionpago/1";
pub const RET2: &str = "http://www.sat.gob.mx/esquemas/retencionpago/2";

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Version {
    #[serde(rename = "1.0")]
    V10,
    #[serde(rename = "2.0")]
    V20,
}

impl Version {
    pub fn as_str(self) -> &'static str {
        match self {
            Version::V10 => "1.0",
            Version::V20 => "2.0",
        }
    }
}

/// A parsed Retenciones document. Strings are as written (trimmed), decimals keep
/// their written scale, absent attributes are None.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Retention {
    pub version: Version,
    /// FolioInt: the issuer's internal folio (not a fiscal id).
    pub internal_folio: Option<String>,
    /// FechaExp as written.
    pub issued_at: Option<String>,
    /// CveRetenc: the retention key (c_Retenciones / c_CveRetenc).
    pub key: Option<String>,
    /// DescRetenc.
    pub key_description: Option<String>,
    /// LugarExpRetenc (2.0 only): the place of issue's postal code.
    pub place_of_issue: Option<String>,
    /// NumCert (1.0) / NoCertificado (2.0).
    pub certificate_number: Option<String>,
    /// Sello (may be present and empty).
    pub seal: Option<String>,
    /// CfdiRetenRelacionados (2.0): related documents, not this one's UUID.
    pub related: Vec<Related>,
    pub issuer: Issuer,
    /// None when the document has no Receptor element.
    pub receiver: Option<Receiver>,
    pub period: Option<Period>,
    pub totals: Totals,
    /// ImpRetenidos, in document order.
    pub withheld_taxes: Vec<WithheldTax>,
    /// Every element of the Complemento but the stamp, in document order.
    pub complements: Vec<Complement>,
    pub stamp: Option<Stamp>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Issuer {
    /// RFCEmisor (1.0) / RfcE (2.0).
    pub tax_id: String,
    /// NomDenRazSocE.
    pub name: Option<String>,
    /// CURPE (1.0 only).
    pub curp: Option<String>,
    /// RegimenFiscalE (2.0 only).
    pub regime: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Receiver {
    /// Nacionalidad (1.0) / NacionalidadR (2.0) as written: `Nacional` or `Extranjero`.
    pub nationality: Option<String>,
    /// The Nacional child, when there is one.
    pub national: Option<NationalReceiver>,
    /// The Extranjero child, when there is one.
    pub foreign: Option<ForeignReceiver>,
}

impl Receiver {
    /// The receiver's tax id: a national one's RFC, else a foreign one's NumRegIdTrib.
    pub fn tax_id(&self) -> Option<&str> {
        match (&self.national, &self.foreign) {
            (Some(national), _) => Some(&national.tax_id),
            (None, Some(foreign)) => foreign.tax_id.as_deref(),
            (None, None) => None,
        }
    }

    pub fn name(&self) -> Option<&str> {
        match (&self.national, &self.foreign) {
            (Some(national), _) => national.name.as_deref(),
            (None, Some(foreign)) => foreign.name.as_deref(),
            (None, None) => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NationalReceiver {
    /// RFCRecep (1.0) / RfcR (2.0).
    pub tax_id: String,
    pub name: Option<String>,
    /// CURPR (1.0) / CurpR (2.0).
    pub curp: Option<String>,
    /// DomicilioFiscalR (2.0 only).
    pub postal_code: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ForeignReceiver {
    /// NumRegIdTrib (1.0) / NumRegIdTribR (2.0): the foreign tax id, optional.
    pub tax_id: Option<String>,
    pub name: Option<String>,
}

/// Periodo: the months the withholdings cover. 1.0 writes months as integers (`6`),
/// 2.0 as catalog codes (`06`): both read as numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Period {
    pub start_month: u32,
    pub end_month: u32,
    /// Ejerc (1.0) / Ejercicio (2.0).
    pub year: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Totals {
    /// montoTotOperacion / MontoTotOperacion.
    pub operation: Decimal,
    pub taxed: Option<Decimal>,
    pub exempt: Option<Decimal>,
    /// montoTotRet / MontoTotRet, as written (it need not equal the entries' sum).
    pub withheld: Option<Decimal>,
    /// UtilidadBimestral (2.0 only).
    pub bimonthly_profit: Option<Decimal>,
    /// ISRCorrespondiente (2.0 only).
    pub isr_due: Option<Decimal>,
}

/// One ImpRetenidos entry. Deserialize reads it back from the stored JSON (the period
/// summary).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct WithheldTax {
    pub base: Option<Decimal>,
    /// Impuesto (1.0: `01` ISR, `02` IVA, `03` IEPS) / ImpuestoRet (2.0: `001`...), as
    /// written; [`WithheldTax::tax_code`] gives the CFDI catalog's code for both.
    pub tax: Option<String>,
    /// montoRet / MontoRet.
    pub amount: Decimal,
    /// TipoPagoRet as written: text in 1.0 (`Pago provisional`), a code in 2.0 (`03`).
    pub payment_type: Option<String>,
}

impl WithheldTax {
    /// The tax as the CFDI catalog codes it (`001` ISR, `002` IVA, `003` IEPS), so
    /// withholdings from both classes and versions add up under one key; another value
    /// stays as written.
    pub fn tax_code(&self) -> Option<String> {
        let tax = self.tax.as_deref()?;
        Some(match tax {
            "01" | "1" => "001".to_owned(),
            "02" | "2" => "002".to_owned(),
            "03" | "3" => "003".to_owned(),
            other => other.to_owned(),
        })
    }
}

impl Retention {
    /// Parses a Retenciones document; unstamped ones parse (stamp None).
    pub fn parse(bytes: &[u8]) -> Result<Retention, CfdiError> {
        crate::cfdi::xml::with_tree(bytes, document::parse_root)
    }

    /// The document read from an already built tree whose root is a Retenciones.
    pub(crate) fn from_root(root: roxmltree::Node<'_, '_>) -> Result<Retention, CfdiError> {
        document::parse_root(root)
    }

    /// Whether `root` is a Retenciones element of either version's namespace.
    pub(crate) fn is_root(root: roxmltree::Node<'_, '_>) -> bool {
        let tag = root.tag_name();
        tag.name() == "Retenciones" && matches!(tag.namespace(), Some(RET1 | RET2))
    }

    /// The fiscal UUID, or [`CfdiError::Unstamped`].
    pub fn uuid(&self) -> Result<&str, CfdiError> {
        self.stamp
            .as_ref()
            .and_then(|stamp| stamp.uuid.as_deref())
            .ok_or(CfdiError::Unstamped)
    }

    /// What a stored document needs beyond parsing: a stamp UUID, its date of issue
    /// (the list's order and date filters) and a receiver (the direction a document
    /// is filed under). The SAT's schemas require all three.
    pub fn check_storable(&self) -> Result<(), CfdiError> {
        self.uuid()?;
        if self.issued_at.is_none() {
            return Err(CfdiError::Missing("FechaExp"));
        }
        if self.receiver.is_none() {
            return Err(CfdiError::Missing("Receptor"));
        }
        Ok(())
    }

    /// parse + [`Retention::check_storable`]: what ingestion uses.
    pub fn parse_stamped(bytes: &[u8]) -> Result<Retention, CfdiError> {
        let retention = Retention::parse(bytes)?;
        retention.check_storable()?;
        Ok(retention)
    }

    /// The sum of the entries' amounts, for comparing with `totals.withheld` (never used
    /// to replace it).
    pub fn entries_withheld(&self) -> Decimal {
        self.withheld_taxes.iter().map(|t| t.amount).sum()
    }

    /// Withheld amounts by (tax code, payment type as written).
    pub fn withheld_by_tax(&self) -> BTreeMap<(String, String), Decimal> {
        let mut out: BTreeMap<(String, String), Decimal> = BTreeMap::new();
        for t in &self.withheld_taxes {
            let key = (
                t.tax_code().unwrap_or_default(),
                t.payment_type.clone().unwrap_or_default(),
            );
            *out.entry(key).or_default() += t.amount;
        }
        out
    }
}
