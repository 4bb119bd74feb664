//! The embedded tables and the lookups over them. Each table is read when first asked
//! for and kept for the life of the process: sorted by code, found by binary search.

use std::sync::OnceLock;

use chrono::NaiveDate;
use include_dir::{include_dir, Dir};

use super::{Catalog, Edition, Entry, Folder};

static DATA: Dir<'static> = include_dir!("$CARGO_MANIFEST_DIR/src/catalogs/data");

/// Folders a catalog may have a table in (`Folder`'s variants).
const FOLDERS: usize = 5;

/// One slot per catalog and folder, filled at the first lookup; None where the
/// catalog has no table in that folder.
static TABLES: [OnceLock<Option<Table>>; Catalog::ALL.len() * FOLDERS] =
    [const { OnceLock::new() }; Catalog::ALL.len() * FOLDERS];

/// A catalog's entries in one edition, sorted by code.
struct Table {
    entries: Vec<Entry>,
}

impl Table {
    fn find(&self, code: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.code.cmp(code))
            .ok()
            .map(|at| &self.entries[at])
    }
}

fn table(catalog: Catalog, folder: Folder) -> Option<&'static Table> {
    TABLES[catalog as usize * FOLDERS + folder as usize]
        .get_or_init(|| load(catalog, folder))
        .as_ref()
}

/// The table's text: a `.tsv` as embedded, a `.tsv.zst` decompressed once and kept
/// for the process's life (its entries borrow from it).
fn text(catalog: Catalog, folder: Folder) -> Option<&'static str> {
    let path = format!("{}/{}.tsv", folder.name(), catalog.sat_name());
    if let Some(file) = DATA.get_file(&path) {
        return file.contents_utf8();
    }
    let packed = DATA.get_file(format!("{path}.zst"))?;
    let bytes = zstd::stream::decode_all(packed.contents()).ok()?;
    let text = String::from_utf8(bytes).ok()?;
    Some(Box::leak(text.into_boxed_str()))
}

fn load(catalog: Catalog, folder: Folder) -> Option<Table> {
    let mut entries: Vec<Entry> = text(catalog, folder)?
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(entry)
        .collect();
    // refresh.py writes them sorted; sorting again keeps the search right regardless.
    entries.sort_by(|a, b| a.code.cmp(b.code));
    Some(Table { entries })
}

/// `code TAB description TAB valid from TAB valid to`; None for a line without a code.
fn entry(line: &'static str) -> Option<Entry> {
    let mut fields = line.split('\t');
    let code = fields.next().filter(|c| !c.is_empty())?;
    let description = fields.next().unwrap_or("");
    let mut day = || {
        fields
            .next()
            .and_then(|d| NaiveDate::parse_from_str(d, "%Y-%m-%d").ok())
    };
    let valid_from = day();
    let valid_to = day();
    Some(Entry {
        code,
        description,
        valid_from,
        valid_to,
    })
}

impl Catalog {
    /// The entry of `code` (blanks around it ignored), looked up in `edition`'s table
    /// first, then in the other's; None when neither knows it.
    pub fn entry(self, code: &str, edition: Edition) -> Option<&'static Entry> {
        let code = code.trim();
        self.folders(edition)
            .iter()
            .find_map(|folder| table(self, *folder)?.find(code))
    }

    /// The SAT's description of `code`, when the catalog has one.
    pub fn description(self, code: &str, edition: Edition) -> Option<&'static str> {
        self.entry(code, edition)
            .map(|e| e.description)
            .filter(|d| !d.is_empty())
    }

    /// The description an accountant reads beside `code`: without the period some
    /// descriptions end with (4.0 publishes `Gastos en general.`); None when the
    /// catalog does not know the code or describes it by the code itself (c_TipoFactor's
    /// `Tasa`).
    pub fn describe(self, code: &str, edition: Edition) -> Option<&'static str> {
        let e = self.entry(code, edition)?;
        let description = e.description.strip_suffix('.').unwrap_or(e.description);
        (!description.is_empty() && description != e.code).then_some(description)
    }

    /// `code` as an accountant reads it: `01 - Efectivo` (`G03 - Gastos en general`,
    /// [`Catalog::describe`]); the code alone where its description is the code itself
    /// (c_TipoFactor's `Tasa`); and a code the catalog does not know as it came.
    pub fn label(self, code: &str, edition: Edition) -> String {
        match (self.entry(code, edition), self.describe(code, edition)) {
            (Some(e), Some(description)) => format!("{} - {description}", e.code),
            (Some(e), None) => e.code.to_owned(),
            (None, _) => code.to_owned(),
        }
    }

    /// Every entry of the table a lookup in `edition` tries first.
    pub fn entries(self, edition: Edition) -> &'static [Entry] {
        self.folders(edition)
            .first()
            .and_then(|folder| table(self, *folder))
            .map_or(&[], |t| t.entries.as_slice())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn every_catalog_has_every_table_it_names() {
        for (n, catalog) in Catalog::ALL.into_iter().enumerate() {
            assert_eq!(catalog as usize, n, "ALL is in declaration order");
            for edition in [Edition::Cfdi33, Edition::Cfdi40] {
                for folder in catalog.folders(edition) {
                    let t = table(catalog, *folder).unwrap_or_else(|| {
                        panic!("{}/{}: no table", folder.name(), catalog.sat_name())
                    });
                    assert!(!t.entries.is_empty(), "{catalog:?}");
                    let sorted = t.entries.windows(2).all(|w| w[0].code < w[1].code);
                    assert!(sorted, "{catalog:?}: sorted, each code once");
                }
            }
        }
        // Every embedded table is one a catalog names.
        let named: Vec<String> = Catalog::ALL
            .iter()
            .flat_map(|c| {
                [Edition::Cfdi33, Edition::Cfdi40]
                    .iter()
                    .flat_map(move |e| c.folders(*e))
                    .map(move |f| format!("{}/{}", f.name(), c.sat_name()))
            })
            .collect();
        for dir in DATA.dirs() {
            for file in dir.files() {
                let path = file.path().to_string_lossy();
                let stem = path.trim_end_matches(".zst").trim_end_matches(".tsv");
                assert!(
                    named.iter().any(|n| n == stem),
                    "{path} is read by no catalog"
                );
            }
        }
    }

    #[test]
    fn codes_read_with_their_descriptions() {
        let cases = [
            (Catalog::FormaPago, "01", "01 - Efectivo"),
            (
                Catalog::FormaPago,
                "03",
                "03 - Transferencia electrónica de fondos",
            ),
            (
                Catalog::MetodoPago,
                "PPD",
                "PPD - Pago en parcialidades o diferido",
            ),
            (Catalog::UsoCfdi, "G03", "G03 - Gastos en general"),
            (
                Catalog::RegimenFiscal,
                "601",
                "601 - General de Ley Personas Morales",
            ),
            (Catalog::TipoDeComprobante, "I", "I - Ingreso"),
            (Catalog::Exportacion, "01", "01 - No aplica"),
            (Catalog::ObjetoImp, "02", "02 - Sí objeto de impuesto"),
            (Catalog::Impuesto, "002", "002 - IVA"),
            (Catalog::TipoFactor, "Tasa", "Tasa"),
            (Catalog::Moneda, "MXN", "MXN - Peso Mexicano"),
            (Catalog::Pais, "MEX", "MEX - México"),
            (Catalog::ClaveUnidad, "E48", "E48 - Unidad de servicio"),
            (Catalog::ClaveUnidad, "H87", "H87 - Pieza"),
            (
                Catalog::ClaveProdServ,
                "84111506",
                "84111506 - Servicios de facturación",
            ),
            (Catalog::Meses, "13", "13 - Enero-Febrero"),
            (Catalog::TipoNomina, "O", "O - Nómina ordinaria"),
            (Catalog::PeriodicidadPago, "04", "04 - Quincenal"),
            (Catalog::Estado, "CMX", "CMX - Ciudad de México"),
            (Catalog::TipoPagoRet, "04", "04 - Pago provisional ISR"),
            (Catalog::CveRetenc, "01", "01 - Servicios profesionales"),
            (Catalog::TipoCadenaPago, "01", "01 - SPEI"),
        ];
        for (catalog, code, label) in cases {
            assert_eq!(catalog.label(code, Edition::Cfdi40), label, "{catalog:?}");
        }
    }

    #[test]
    fn a_description_is_read_without_its_period_or_the_code_itself() {
        assert_eq!(
            Catalog::UsoCfdi.describe("G03", Edition::Cfdi40),
            Some("Gastos en general")
        );
        assert_eq!(Catalog::TipoFactor.describe("Tasa", Edition::Cfdi40), None);
        assert_eq!(Catalog::FormaPago.describe("77", Edition::Cfdi40), None);
    }

    #[test]
    fn an_unknown_code_is_written_as_it_came() {
        assert_eq!(Catalog::FormaPago.label("77", Edition::Cfdi40), "77");
        assert_eq!(
            Catalog::FormaPago.label("Transferencia", Edition::Cfdi33),
            "Transferencia"
        );
        assert_eq!(Catalog::ClaveProdServ.label("", Edition::Cfdi40), "");
        assert!(Catalog::Moneda.entry("mxn", Edition::Cfdi40).is_none());
        // Blanks around a code are not part of it.
        assert_eq!(
            Catalog::FormaPago.label(" 01 ", Edition::Cfdi40),
            "01 - Efectivo"
        );
    }

    #[test]
    fn editions_differ_and_fall_back_to_each_other() {
        // 4.0 ends some descriptions with a period, 3.3 not; a label never does.
        assert_eq!(
            Catalog::UsoCfdi.description("G03", Edition::Cfdi33),
            Some("Gastos en general")
        );
        assert_eq!(
            Catalog::UsoCfdi.description("G03", Edition::Cfdi40),
            Some("Gastos en general.")
        );
        // P01 (Por definir) is 3.3's only; CN01 (Nómina) 4.0's only: either edition
        // describes both.
        for edition in [Edition::Cfdi33, Edition::Cfdi40] {
            assert_eq!(
                Catalog::UsoCfdi.description("P01", edition),
                Some("Por definir")
            );
            assert_eq!(
                Catalog::UsoCfdi.description("CN01", edition),
                Some("Nómina")
            );
        }
        assert!(Catalog::UsoCfdi
            .entries(Edition::Cfdi33)
            .iter()
            .all(|e| e.code != "CN01"));
        // The same code in both editions, with its own validity in each.
        let p01 = Catalog::UsoCfdi.entry("P01", Edition::Cfdi33).unwrap();
        assert!(p01.valid_to.is_some(), "{p01:?}");
    }

    #[test]
    fn validity_and_the_edition_in_force() {
        // 04 (No objeto ... no causa impuesto) entered c_ObjetoImp on 2022-10-07.
        let objeto = Catalog::ObjetoImp.entry("04", Edition::Cfdi40).unwrap();
        assert_eq!(objeto.valid_from, Some(day("2022-10-07")));
        assert!(!objeto.is_valid_on(day("2022-10-06")));
        assert!(objeto.is_valid_on(day("2022-10-07")));
        let p01 = Catalog::UsoCfdi.entry("P01", Edition::Cfdi33).unwrap();
        assert!(!p01.is_valid_on(p01.valid_to.unwrap().succ_opt().unwrap()));
        assert_eq!(Edition::on(day("2021-12-31")), Edition::Cfdi33);
        assert_eq!(Edition::on(day("2022-01-01")), Edition::Cfdi40);
        assert_eq!(Edition::of(crate::cfdi::Version::V32), Edition::Cfdi33);
        assert_eq!(Edition::of(crate::cfdi::Version::V40), Edition::Cfdi40);
    }

    #[test]
    fn product_keys_are_all_there() {
        let all = Catalog::ClaveProdServ.entries(Edition::Cfdi40);
        assert!(all.len() > 50_000, "{}", all.len());
        assert_eq!(
            Catalog::ClaveProdServ.description("01010101", Edition::Cfdi33),
            Some("No existe en el catálogo")
        );
        assert!(all
            .iter()
            .all(|e| e.code.len() == 8 && !e.description.is_empty()));
    }
}
