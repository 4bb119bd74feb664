//! The SAT's catalogs (c_FormaPago, c_UsoCFDI, c_ClaveUnidad, c_CveRetenc, ...): the
//! description and validity of every code an invoice, a payment, a payroll receipt or a
//! retention carries, embedded in the binary and each read once, when first asked.
//!
//! The data is `data/<edition>/<catalog>.tsv` (`.tsv.zst` when large), written by
//! `refresh.py` from the SAT's catalogs as phpcfdi/resources-sat-catalogs publishes them
//! (public domain) and c_ClaveProdServ from the satcfdi package (MIT); `data/SOURCES.md`
//! says which copy. Lookups are in `table.rs`: [`Catalog::label`] writes a code as an
//! accountant reads it (`01 - Efectivo`), and a code the catalog does not know is
//! written as it came, never dropped.

mod table;

use chrono::NaiveDate;

use crate::cfdi::Version;

/// Which CFDI's base catalogs a code is read in: CFDI 3.3 and 4.0 publish their own
/// c_UsoCFDI, c_RegimenFiscal, c_TipoRelacion... The other catalogs (Nómina,
/// Retenciones, Pagos, and the ones only 4.0 has) have one edition, whatever this says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Edition {
    Cfdi33,
    Cfdi40,
}

/// The day CFDI 4.0 came into force.
const CFDI_40_FROM: (i32, u32, u32) = (2022, 1, 1);

impl Edition {
    /// The edition of a document's version (3.2 documents, which had no catalogs of
    /// their own, read 3.3's).
    pub fn of(version: Version) -> Edition {
        match version {
            Version::V40 => Edition::Cfdi40,
            Version::V32 | Version::V33 => Edition::Cfdi33,
        }
    }

    /// The edition in force on `day`: 4.0 from 2022-01-01, 3.3 before.
    pub fn on(day: NaiveDate) -> Edition {
        let (y, m, d) = CFDI_40_FROM;
        match NaiveDate::from_ymd_opt(y, m, d) {
            Some(from) if day < from => Edition::Cfdi33,
            _ => Edition::Cfdi40,
        }
    }
}

/// One code of a catalog, as the SAT publishes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// As the XML writes it: `01`, `G03`, `E48`, `MXN`.
    pub code: &'static str,
    /// The SAT's description, as published (`Transferencia electrónica de fondos`).
    pub description: &'static str,
    /// The first day it may be used; None when the catalog does not say.
    pub valid_from: Option<NaiveDate>,
    /// The last day it may be used; None while it is in force.
    pub valid_to: Option<NaiveDate>,
}

impl Entry {
    /// Whether the SAT accepted the code on `day`.
    pub fn is_valid_on(&self, day: NaiveDate) -> bool {
        self.valid_from.is_none_or(|from| from <= day) && self.valid_to.is_none_or(|to| day <= to)
    }
}

/// A catalog of the SAT. The variants are the catalogs' names without `c_`; where
/// Retenciones publishes a catalog of the same name as the CFDI's (c_Pais,
/// c_Periodicidad), its variant says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Catalog {
    // The CFDI (3.3 and 4.0).
    FormaPago,
    MetodoPago,
    UsoCfdi,
    RegimenFiscal,
    TipoDeComprobante,
    Exportacion,
    ObjetoImp,
    Impuesto,
    TipoFactor,
    TipoRelacion,
    Moneda,
    Pais,
    ClaveUnidad,
    ClaveProdServ,
    Periodicidad,
    Meses,
    // Nómina 1.2.
    Banco,
    Estado,
    OrigenRecurso,
    PeriodicidadPago,
    RiesgoPuesto,
    TipoContrato,
    TipoDeduccion,
    TipoHoras,
    TipoIncapacidad,
    TipoJornada,
    TipoNomina,
    TipoOtroPago,
    TipoPercepcion,
    TipoRegimen,
    // Retenciones 2.0.
    CveRetenc,
    EntidadesFederativas,
    PaisRetenciones,
    PeriodicidadRetenciones,
    Periodo,
    TipoContribuyenteSujetoRetencion,
    TipoDividendoOUtilidadDistribuida,
    TipoImpuesto,
    TipoPagoRet,
    // Pagos 2.0.
    TipoCadenaPago,
}

/// Where a catalog's tables are: the folders under `data/`, in the order a lookup
/// tries them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Folder {
    Cfdi33,
    Cfdi40,
    Nomina12,
    Retenciones20,
    Pagos20,
}

impl Folder {
    fn name(self) -> &'static str {
        match self {
            Folder::Cfdi33 => "cfdi33",
            Folder::Cfdi40 => "cfdi40",
            Folder::Nomina12 => "nomina12",
            Folder::Retenciones20 => "retenciones20",
            Folder::Pagos20 => "pagos20",
        }
    }
}

impl Catalog {
    /// Every catalog, for the tests and the docs.
    pub const ALL: [Catalog; 40] = [
        Catalog::FormaPago,
        Catalog::MetodoPago,
        Catalog::UsoCfdi,
        Catalog::RegimenFiscal,
        Catalog::TipoDeComprobante,
        Catalog::Exportacion,
        Catalog::ObjetoImp,
        Catalog::Impuesto,
        Catalog::TipoFactor,
        Catalog::TipoRelacion,
        Catalog::Moneda,
        Catalog::Pais,
        Catalog::ClaveUnidad,
        Catalog::ClaveProdServ,
        Catalog::Periodicidad,
        Catalog::Meses,
        Catalog::Banco,
        Catalog::Estado,
        Catalog::OrigenRecurso,
        Catalog::PeriodicidadPago,
        Catalog::RiesgoPuesto,
        Catalog::TipoContrato,
        Catalog::TipoDeduccion,
        Catalog::TipoHoras,
        Catalog::TipoIncapacidad,
        Catalog::TipoJornada,
        Catalog::TipoNomina,
        Catalog::TipoOtroPago,
        Catalog::TipoPercepcion,
        Catalog::TipoRegimen,
        Catalog::CveRetenc,
        Catalog::EntidadesFederativas,
        Catalog::PaisRetenciones,
        Catalog::PeriodicidadRetenciones,
        Catalog::Periodo,
        Catalog::TipoContribuyenteSujetoRetencion,
        Catalog::TipoDividendoOUtilidadDistribuida,
        Catalog::TipoImpuesto,
        Catalog::TipoPagoRet,
        Catalog::TipoCadenaPago,
    ];

    /// The SAT's name of the catalog: `c_FormaPago`.
    pub fn sat_name(self) -> &'static str {
        match self {
            Catalog::FormaPago => "c_FormaPago",
            Catalog::MetodoPago => "c_MetodoPago",
            Catalog::UsoCfdi => "c_UsoCFDI",
            Catalog::RegimenFiscal => "c_RegimenFiscal",
            Catalog::TipoDeComprobante => "c_TipoDeComprobante",
            Catalog::Exportacion => "c_Exportacion",
            Catalog::ObjetoImp => "c_ObjetoImp",
            Catalog::Impuesto => "c_Impuesto",
            Catalog::TipoFactor => "c_TipoFactor",
            Catalog::TipoRelacion => "c_TipoRelacion",
            Catalog::Moneda => "c_Moneda",
            Catalog::Pais | Catalog::PaisRetenciones => "c_Pais",
            Catalog::ClaveUnidad => "c_ClaveUnidad",
            Catalog::ClaveProdServ => "c_ClaveProdServ",
            Catalog::Periodicidad | Catalog::PeriodicidadRetenciones => "c_Periodicidad",
            Catalog::Meses => "c_Meses",
            Catalog::Banco => "c_Banco",
            Catalog::Estado => "c_Estado",
            Catalog::OrigenRecurso => "c_OrigenRecurso",
            Catalog::PeriodicidadPago => "c_PeriodicidadPago",
            Catalog::RiesgoPuesto => "c_RiesgoPuesto",
            Catalog::TipoContrato => "c_TipoContrato",
            Catalog::TipoDeduccion => "c_TipoDeduccion",
            Catalog::TipoHoras => "c_TipoHoras",
            Catalog::TipoIncapacidad => "c_TipoIncapacidad",
            Catalog::TipoJornada => "c_TipoJornada",
            Catalog::TipoNomina => "c_TipoNomina",
            Catalog::TipoOtroPago => "c_TipoOtroPago",
            Catalog::TipoPercepcion => "c_TipoPercepcion",
            Catalog::TipoRegimen => "c_TipoRegimen",
            Catalog::CveRetenc => "c_CveRetenc",
            Catalog::EntidadesFederativas => "c_EntidadesFederativas",
            Catalog::Periodo => "c_Periodo",
            Catalog::TipoContribuyenteSujetoRetencion => "c_TipoContribuyenteSujetoRetencion",
            Catalog::TipoDividendoOUtilidadDistribuida => "c_TipoDividendoOUtilidadDistribuida",
            Catalog::TipoImpuesto => "c_TipoImpuesto",
            Catalog::TipoPagoRet => "c_TipoPagoRet",
            Catalog::TipoCadenaPago => "c_TipoCadenaPago",
        }
    }

    /// The catalog the SAT names `name` (`c_FormaPago`); `retenciones`: the Retenciones'
    /// own table where it publishes one under a CFDI catalog's name (c_Pais,
    /// c_Periodicidad).
    pub fn named(name: &str, retenciones: bool) -> Option<Catalog> {
        let mut found = Catalog::ALL.into_iter().filter(|c| c.sat_name() == name);
        let first = found.next()?;
        Some(match found.next() {
            Some(second) if retenciones == second.is_retenciones() => second,
            _ if retenciones == first.is_retenciones() => first,
            Some(second) => second,
            None => first,
        })
    }

    /// Whether the catalog is one of the CFDI de Retenciones'.
    pub fn is_retenciones(self) -> bool {
        self.folders(Edition::Cfdi40) == [Folder::Retenciones20]
    }

    /// The folders holding this catalog's tables, the edition asked for first: a CFDI
    /// catalog falls back to the other edition's table, so a code either edition
    /// knows is described.
    fn folders(self, edition: Edition) -> &'static [Folder] {
        use Catalog::*;
        match self {
            FormaPago | MetodoPago | UsoCfdi | RegimenFiscal | TipoDeComprobante | Impuesto
            | TipoFactor | TipoRelacion | Moneda | Pais | ClaveUnidad => match edition {
                Edition::Cfdi40 => &[Folder::Cfdi40, Folder::Cfdi33],
                Edition::Cfdi33 => &[Folder::Cfdi33, Folder::Cfdi40],
            },
            Exportacion | ObjetoImp | ClaveProdServ | Periodicidad | Meses => &[Folder::Cfdi40],
            Banco | Estado | OrigenRecurso | PeriodicidadPago | RiesgoPuesto | TipoContrato
            | TipoDeduccion | TipoHoras | TipoIncapacidad | TipoJornada | TipoNomina
            | TipoOtroPago | TipoPercepcion | TipoRegimen => &[Folder::Nomina12],
            CveRetenc
            | EntidadesFederativas
            | PaisRetenciones
            | PeriodicidadRetenciones
            | Periodo
            | TipoContribuyenteSujetoRetencion
            | TipoDividendoOUtilidadDistribuida
            | TipoImpuesto
            | TipoPagoRet => &[Folder::Retenciones20],
            TipoCadenaPago => &[Folder::Pagos20],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalogs_are_found_by_the_sats_name_and_retenciones_own_by_asking() {
        assert_eq!(
            Catalog::named("c_FormaPago", false),
            Some(Catalog::FormaPago)
        );
        assert_eq!(
            Catalog::named("c_FormaPago", true),
            Some(Catalog::FormaPago)
        );
        assert_eq!(Catalog::named("c_Pais", false), Some(Catalog::Pais));
        assert_eq!(
            Catalog::named("c_Pais", true),
            Some(Catalog::PaisRetenciones)
        );
        assert_eq!(
            Catalog::named("c_Periodicidad", true),
            Some(Catalog::PeriodicidadRetenciones)
        );
        assert_eq!(
            Catalog::named("c_CveRetenc", false),
            Some(Catalog::CveRetenc)
        );
        assert_eq!(Catalog::named("c_Nada", false), None);
        for catalog in Catalog::ALL {
            let again = Catalog::named(catalog.sat_name(), catalog.is_retenciones());
            assert_eq!(again, Some(catalog), "{catalog:?}");
        }
    }
}
