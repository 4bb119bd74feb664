//! The SAT's 69-B list (taxpayers presumed to invoice simulated operations, Article 69-B
//! of the CFF) as the service's values.

use chrono::NaiveDate;

wire_enum!(
    /// A taxpayer's situation on the list.
    Situation {
        /// `Presunto`: presumed; the taxpayer may still disprove it.
        Presumed => "presumed",
        /// `Desvirtuado`: disproved; off the hook.
        Disproved => "disproved",
        /// `Definitivo`: confirmed: its invoices back no deductible expense.
        Definitive => "definitive",
        /// `Sentencia Favorable`: a court ruled for the taxpayer.
        FavorableRuling => "favorable_ruling",
    }
);

impl Situation {
    /// The list's column 4, folded (lower case, no accents).
    pub fn from_list(folded: &str) -> Option<Situation> {
        match folded {
            "presunto" => Some(Situation::Presumed),
            "desvirtuado" => Some(Situation::Disproved),
            "definitivo" => Some(Situation::Definitive),
            "sentencia favorable" => Some(Situation::FavorableRuling),
            _ => None,
        }
    }
}

/// One taxpayer on the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub rfc: String,
    pub name: String,
    pub situation: Situation,
    /// Publication on the SAT's page and in the DOF, per stage.
    pub presumed: Published,
    pub disproved: Published,
    pub definitive: Published,
    pub favorable: Published,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Published {
    pub sat: Option<NaiveDate>,
    pub dof: Option<NaiveDate>,
}

/// A whole list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct List {
    /// "Información actualizada al 31 de marzo de 2024": the list's cut-off date.
    pub updated_to: Option<NaiveDate>,
    /// Keyed by RFC: a repeated RFC keeps its last row.
    pub entries: Vec<Entry>,
}
