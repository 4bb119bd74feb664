//! A DIOT record (`diot::Record`) as the SAT's batch layouts write it: the 54 fields of
//! periods from January 2025 or the 24 of earlier ones, in their order, pipe-delimited,
//! amounts in whole pesos; the TXT the SAT's batch upload takes; and the JSON view of
//! each record with its codes described and its fields labelled in Spanish.
//!
//! Rounding: each amount field is the exact sum of its shares' cents, rounded once to
//! whole pesos, half away from zero (1,234.50 is 1,235); a zero is an empty field. A
//! net that comes out negative (credit notes over payments) is left empty, with a
//! note. The 2025 layout ends a line without a pipe, the 24-field one with one (as
//! each layout's sources write it); lines end in CRLF, the file is UTF-8 without BOM.

use rust_decimal::{Decimal, RoundingStrategy};
use serde_json::{json, Value};

use super::diot::{Diot, Record, Regime};
use crate::catalogs::{Catalog, Edition};
use crate::domain::supplier::{
    description, Layout, NonCreditable, GENERIC_FOREIGN, OPERATION_TYPES, THIRD_PARTY_TYPES,
};

/// The 2025 layout's fields, in order (`/docs/diot#layout-54`).
pub const LABELS_54: [&str; 54] = [
    "Tipo de tercero",
    "Tipo de operación",
    "RFC",
    "Número de identificación fiscal",
    "Nombre del extranjero",
    "País o jurisdicción de residencia fiscal",
    "Especificar lugar de la jurisdicción fiscal",
    "Valor de los actos pagados en la región fronteriza norte",
    "Devoluciones, descuentos y bonificaciones en la región fronteriza norte",
    "Valor de los actos pagados en la región fronteriza sur",
    "Devoluciones, descuentos y bonificaciones en la región fronteriza sur",
    "Valor de los actos pagados a la tasa del 16%",
    "Devoluciones, descuentos y bonificaciones a la tasa del 16%",
    "Valor de los actos pagados en la importación de bienes tangibles a la tasa del 16%",
    "Devoluciones, descuentos y bonificaciones de la importación de bienes tangibles",
    "Valor de los actos pagados en la importación de bienes intangibles y servicios a la tasa del 16%",
    "Devoluciones, descuentos y bonificaciones de la importación de bienes intangibles y servicios",
    "IVA acreditable en la región fronteriza norte, exclusivamente de actividades gravadas",
    "IVA acreditable en la región fronteriza norte, asociado a la proporción",
    "IVA acreditable en la región fronteriza sur, exclusivamente de actividades gravadas",
    "IVA acreditable en la región fronteriza sur, asociado a la proporción",
    "IVA acreditable a la tasa del 16%, exclusivamente de actividades gravadas",
    "IVA acreditable a la tasa del 16%, asociado a la proporción",
    "IVA acreditable de la importación de bienes tangibles, exclusivamente de actividades gravadas",
    "IVA acreditable de la importación de bienes tangibles, asociado a la proporción",
    "IVA acreditable de la importación de bienes intangibles y servicios, exclusivamente de actividades gravadas",
    "IVA acreditable de la importación de bienes intangibles y servicios, asociado a la proporción",
    "IVA no acreditable en la región fronteriza norte, por la proporción",
    "IVA no acreditable en la región fronteriza norte, por no cumplir requisitos",
    "IVA no acreditable en la región fronteriza norte, por actividades exentas",
    "IVA no acreditable en la región fronteriza norte, por actividades no objeto",
    "IVA no acreditable en la región fronteriza sur, por la proporción",
    "IVA no acreditable en la región fronteriza sur, por no cumplir requisitos",
    "IVA no acreditable en la región fronteriza sur, por actividades exentas",
    "IVA no acreditable en la región fronteriza sur, por actividades no objeto",
    "IVA no acreditable a la tasa del 16%, por la proporción",
    "IVA no acreditable a la tasa del 16%, por no cumplir requisitos",
    "IVA no acreditable a la tasa del 16%, por actividades exentas",
    "IVA no acreditable a la tasa del 16%, por actividades no objeto",
    "IVA no acreditable de la importación de bienes tangibles, por la proporción",
    "IVA no acreditable de la importación de bienes tangibles, por no cumplir requisitos",
    "IVA no acreditable de la importación de bienes tangibles, por actividades exentas",
    "IVA no acreditable de la importación de bienes tangibles, por actividades no objeto",
    "IVA no acreditable de la importación de bienes intangibles y servicios, por la proporción",
    "IVA no acreditable de la importación de bienes intangibles y servicios, por no cumplir requisitos",
    "IVA no acreditable de la importación de bienes intangibles y servicios, por actividades exentas",
    "IVA no acreditable de la importación de bienes intangibles y servicios, por actividades no objeto",
    "IVA retenido por el contribuyente",
    "Valor de los actos pagados en la importación por los que no se pagará el IVA (exentos)",
    "Valor de los actos pagados por los que no se pagará el IVA (exentos)",
    "Valor de los demás actos pagados a la tasa del 0%",
    "Valor de los actos no objeto del IVA realizados en territorio nacional",
    "Valor de los actos no objeto del IVA por no tener establecimiento en territorio nacional",
    "Manifiesto que se dio efectos fiscales a los comprobantes",
];

/// The layout of periods before 2025 (`/docs/diot#layout-24`).
pub const LABELS_24: [&str; 24] = [
    "Tipo de tercero",
    "Tipo de operación",
    "RFC",
    "Número de ID fiscal",
    "Nombre del extranjero",
    "País de residencia",
    "Nacionalidad",
    "Valor de los actos pagados a la tasa del 15% o 16%",
    "Valor de los actos pagados a la tasa del 15%",
    "IVA pagado no acreditable a la tasa del 15% o 16%",
    "Valor de los actos pagados a la tasa del 10% u 11%",
    "Valor de los actos pagados a la tasa del 10%",
    "Valor de los actos pagados sujetos al estímulo de la región fronteriza norte",
    "IVA pagado no acreditable a la tasa del 10% u 11%",
    "IVA pagado no acreditable sujeto al estímulo de la región fronteriza norte",
    "Valor de los actos pagados en la importación a la tasa del 15% o 16%",
    "IVA pagado no acreditable por la importación a la tasa del 15% o 16%",
    "Valor de los actos pagados en la importación a la tasa del 10% u 11%",
    "IVA pagado no acreditable por la importación a la tasa del 10% u 11%",
    "Valor de los actos pagados en la importación exentos",
    "Valor de los demás actos pagados a la tasa del 0%",
    "Valor de los actos pagados por los que no se pagará el IVA (exentos)",
    "IVA retenido por el contribuyente",
    "IVA correspondiente a las devoluciones, descuentos y bonificaciones sobre compras",
];

/// An amount as a field writes it: whole pesos, half away from zero; empty for zero.
pub fn whole_pesos(v: Decimal) -> String {
    let v = v.round_dp_with_strategy(0, RoundingStrategy::MidpointAwayFromZero);
    if v.is_zero() {
        String::new()
    } else {
        v.normalize().to_string()
    }
}

/// The record's fields in `layout`, each as written, and the notes of what a field
/// could not take (a negative net).
pub fn values(r: &Record, layout: Layout) -> (Vec<String>, Vec<String>) {
    let mut f = Fields {
        values: vec![String::new(); layout.fields()],
        notes: Vec::new(),
    };
    let foreign = r.third_party_type == "05";
    f.set(1, r.third_party_type.to_owned());
    f.set(2, r.operation_type.clone());
    // A foreign supplier's RFC is optional: the generic one says nothing.
    if r.tax_id != GENERIC_FOREIGN {
        f.set(3, r.tax_id.clone());
    }
    if foreign {
        f.set(4, r.foreign_tax_id.clone().unwrap_or_default());
        let name = r.foreign_name.clone().or_else(|| r.name.clone());
        f.set(5, name.unwrap_or_default());
    }
    let a = &r.amounts;
    match layout {
        Layout::Fields54 => {
            if foreign {
                f.set(6, r.country.clone().unwrap_or_default());
                f.set(7, r.jurisdiction.clone().unwrap_or_default());
            }
            // The regimes' blocks, in the layout's order: north, south, 16%, tangible
            // imports (by customs, never on a CFDI), intangible imports and services.
            let north = r.border_region == crate::domain::supplier::BorderRegion::North;
            let none = Regime::default();
            let (rfn, rfs) = if north {
                (&a.border, &none)
            } else {
                (&none, &a.border)
            };
            let (general, imports) = if foreign {
                (&none, &a.general)
            } else {
                (&a.general, &none)
            };
            for (k, regime) in [rfn, rfs, general, &none, imports].into_iter().enumerate() {
                f.amount(8 + 2 * k, regime.paid);
                f.amount(9 + 2 * k, regime.returns);
                let field = match r.non_creditable {
                    None => 18 + 2 * k,
                    Some(reason) => 28 + 4 * k + reason_index(reason),
                };
                f.net(field, regime.net_iva(), "IVA");
            }
            f.net(48, a.withheld, "IVA retenido");
            if foreign {
                f.net(49, a.exempt, "exentos");
                f.net(53, a.not_subject + a.zero, "no objeto");
            } else {
                f.net(50, a.exempt, "exentos");
                f.net(51, a.zero, "tasa 0%");
                f.net(52, a.not_subject, "no objeto");
            }
            f.set(54, if r.tax_effects { "01" } else { "02" }.to_owned());
        }
        Layout::Fields24 => {
            if foreign {
                f.set(6, r.legacy_country.clone().unwrap_or_default());
                f.set(7, r.legacy_nationality.clone().unwrap_or_default());
            }
            let not_creditable = |regime: &Regime| {
                if r.non_creditable.is_some() {
                    regime.iva
                } else {
                    Decimal::ZERO
                }
            };
            if foreign {
                f.amount(16, a.general.paid);
                f.amount(17, not_creditable(&a.general));
                f.net(20, a.exempt, "exentos");
            } else {
                f.amount(8, a.general.paid);
                f.amount(10, not_creditable(&a.general));
                f.net(22, a.exempt, "exentos");
            }
            f.amount(13, a.border.paid);
            f.amount(15, not_creditable(&a.border));
            f.net(21, a.zero, "tasa 0%");
            f.net(23, a.withheld, "IVA retenido");
            f.amount(24, a.general.iva_returns + a.border.iva_returns);
            if !(a.not_subject.is_zero()) {
                f.notes.push(
                    "El formato de 24 campos no tiene campo para los actos no objeto del IVA: no se declaran."
                        .to_owned(),
                );
            }
        }
    }
    (f.values, f.notes)
}

/// The position of a non-creditable reason within its regime's four fields.
fn reason_index(reason: NonCreditable) -> usize {
    match reason {
        NonCreditable::Proportion => 0,
        NonCreditable::Requirements => 1,
        NonCreditable::ExemptActivities => 2,
        NonCreditable::NotSubjectActivities => 3,
    }
}

struct Fields {
    values: Vec<String>,
    notes: Vec<String>,
}

impl Fields {
    /// Field `n` (counted from 1, as the layouts number them).
    fn set(&mut self, n: usize, value: String) {
        self.values[n - 1] = value;
    }

    fn amount(&mut self, n: usize, v: Decimal) {
        self.set(n, whole_pesos(v));
    }

    /// A net of credit notes: a negative one is left empty, with a note.
    fn net(&mut self, n: usize, v: Decimal, what: &str) {
        if v < Decimal::ZERO {
            self.notes.push(format!(
                "Campo {n} ({what}): las notas de crédito superan lo pagado en el mes ({v}); se deja vacío."
            ));
        } else {
            self.amount(n, v);
        }
    }
}

/// One record as the batch file's line.
pub fn line(r: &Record, layout: Layout) -> String {
    joined(&values(r, layout).0, layout)
}

/// Fields between pipes; the 24-field layout ends with one too.
fn joined(values: &[String], layout: Layout) -> String {
    let mut line = values.join("|");
    if layout == Layout::Fields24 {
        line.push('|');
    }
    line
}

/// The batch file: one line per record, CRLF after each.
pub fn txt(d: &Diot, layout: Layout) -> String {
    d.records.iter().map(|r| line(r, layout) + "\r\n").collect()
}

fn labels(layout: Layout) -> &'static [&'static str] {
    match layout {
        Layout::Fields54 => &LABELS_54,
        Layout::Fields24 => &LABELS_24,
    }
}

fn code(code: &str, description: Option<&str>) -> Value {
    json!({ "code": code, "description": description })
}

/// A record as the API shows it: its codes with their descriptions, its amounts in
/// pesos with cents, its fields numbered and labelled, its line, and its notes.
pub fn view(r: &Record, layout: Layout) -> Value {
    let (values, field_notes) = values(r, layout);
    let fields: Vec<Value> = (labels(layout).iter().zip(&values).enumerate())
        .map(|(i, (label, value))| json!({ "number": i + 1, "label": label, "value": value }))
        .collect();
    let mut notes = r.notes.clone();
    notes.extend(field_notes);
    if r.third_party_type == "05" {
        let missing = match layout {
            Layout::Fields54 => r.country.is_none(),
            Layout::Fields24 => r.legacy_country.is_none(),
        };
        if missing {
            notes.push("Proveedor extranjero sin país de residencia: guárdelo en su configuración (country o legacy_country).".to_owned());
        }
    }
    let non_creditable = r.non_creditable.map(|n| {
        json!({
            "code": n.as_str(),
            "description": n.description(),
            "because": r.non_creditable_because,
        })
    });
    let line = joined(&values, layout);
    json!({
        "tax_id": r.tax_id,
        "name": r.name,
        "third_party_type": code(r.third_party_type, description(THIRD_PARTY_TYPES, r.third_party_type)),
        "operation_type": code(&r.operation_type, description(OPERATION_TYPES, &r.operation_type)),
        "tax_effects": code(
            if r.tax_effects { "01" } else { "02" },
            Some(if r.tax_effects { "Sí se dio efectos fiscales" } else { "No se dio efectos fiscales" }),
        ),
        "border_region": code(r.border_region.as_str(), Some(r.border_region.description())),
        "non_creditable": non_creditable,
        "definitive_69b": r.definitive_69b,
        "saved": r.saved,
        "foreign_tax_id": r.foreign_tax_id,
        "foreign_name": r.foreign_name,
        "country": r.country.as_deref().map(|c| code(c, Catalog::Pais.describe(c, Edition::Cfdi40))),
        "jurisdiction": r.jurisdiction,
        "legacy_country": r.legacy_country,
        "legacy_nationality": r.legacy_nationality,
        "count": r.count,
        "amounts": r.amounts,
        "fields": fields,
        "line": line,
        "notes": notes,
    })
}

#[cfg(test)]
mod tests {
    use std::str::FromStr;

    use super::*;
    use crate::domain::supplier::BorderRegion;
    use crate::summary::diot::{Amounts, Because};

    fn dec(s: &str) -> Decimal {
        Decimal::from_str(s).expect("a decimal")
    }

    fn record(third: &'static str, amounts: Amounts) -> Record {
        Record {
            third_party_type: third,
            operation_type: "85".into(),
            tax_id: "PRO010101AB1".into(),
            name: Some("Proveedor".into()),
            saved: false,
            tax_effects: true,
            border_region: BorderRegion::North,
            non_creditable: None,
            non_creditable_because: None,
            definitive_69b: false,
            foreign_tax_id: None,
            foreign_name: None,
            country: None,
            jurisdiction: None,
            legacy_country: None,
            legacy_nationality: None,
            count: 1,
            amounts,
            notes: vec![],
        }
    }

    fn regime(paid: &str, returns: &str, iva: &str, iva_returns: &str) -> Regime {
        Regime {
            paid: dec(paid),
            returns: dec(returns),
            iva: dec(iva),
            iva_returns: dec(iva_returns),
        }
    }

    /// The non-empty fields, as `number=value`.
    fn filled(values: &[String]) -> Vec<String> {
        (values.iter().enumerate())
            .filter(|(_, v)| !v.is_empty())
            .map(|(i, v)| format!("{}={v}", i + 1))
            .collect()
    }

    #[test]
    fn whole_pesos_round_half_away_from_zero_and_leave_zero_empty() {
        assert_eq!(whole_pesos(dec("1234.50")), "1235");
        assert_eq!(whole_pesos(dec("1234.49")), "1234");
        assert_eq!(whole_pesos(dec("0.49")), "");
        assert_eq!(whole_pesos(dec("0.00")), "");
        assert_eq!(whole_pesos(dec("18500.00")), "18500");
    }

    #[test]
    fn a_national_supplier_in_both_layouts() {
        let mut r = record(
            "04",
            Amounts {
                general: regime("10000.00", "500.00", "1600.00", "80.00"),
                border: regime("1000.00", "0", "80.00", "0"),
                zero: dec("300.40"),
                exempt: dec("200.50"),
                not_subject: dec("99.99"),
                withheld: dec("1066.67"),
            },
        );
        let (values, notes) = super::values(&r, Layout::Fields54);
        assert_eq!(values.len(), 54);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(
            filled(&values),
            [
                "1=04",
                "2=85",
                "3=PRO010101AB1",
                "8=1000",
                "12=10000",
                "13=500",
                "18=80",
                "22=1520",
                "48=1067",
                "50=201",
                "51=300",
                "52=100",
                "54=01"
            ]
        );
        assert_eq!(line(&r, Layout::Fields54).split('|').count(), 54);
        assert!(!line(&r, Layout::Fields54).ends_with('|'));
        let (values, notes) = super::values(&r, Layout::Fields24);
        assert_eq!(values.len(), 24);
        assert_eq!(
            filled(&values),
            [
                "1=04",
                "2=85",
                "3=PRO010101AB1",
                "8=10000",
                "13=1000",
                "21=300",
                "22=201",
                "23=1067",
                "24=80"
            ]
        );
        assert_eq!(notes.len(), 1, "not subject has no field: {notes:?}");
        let line24 = line(&r, Layout::Fields24);
        assert!(line24.ends_with("|80|"), "{line24}");
        assert_eq!(line24.matches('|').count(), 24);
        // Not creditable for not meeting the requirements (a definitive 69-B issuer).
        r.non_creditable = Some(NonCreditable::Requirements);
        r.non_creditable_because = Some(Because::IssuerDefinitive69b);
        r.border_region = BorderRegion::South;
        r.tax_effects = false;
        let (values, _) = super::values(&r, Layout::Fields54);
        let f = filled(&values);
        assert!(f.contains(&"10=1000".to_owned()), "{f:?}");
        assert!(f.contains(&"33=80".to_owned()), "{f:?}");
        assert!(f.contains(&"37=1520".to_owned()), "{f:?}");
        assert!(f.contains(&"54=02".to_owned()), "{f:?}");
        assert!(
            !f.iter()
                .any(|v| v.starts_with("22=") || v.starts_with("18=")),
            "{f:?}"
        );
        let (values, _) = super::values(&r, Layout::Fields24);
        let f = filled(&values);
        assert!(
            f.contains(&"10=1600".to_owned()) && f.contains(&"15=80".to_owned()),
            "{f:?}"
        );
    }

    #[test]
    fn a_foreign_supplier_takes_the_import_fields() {
        let mut r = record(
            "05",
            Amounts {
                general: regime("18500.00", "0", "2960.00", "0"),
                exempt: dec("100.00"),
                not_subject: dec("50.00"),
                ..Amounts::default()
            },
        );
        r.tax_id = GENERIC_FOREIGN.into();
        r.operation_type = "07".into();
        r.foreign_tax_id = Some("98-7654321".into());
        r.country = Some("USA".into());
        r.legacy_country = Some("US".into());
        r.legacy_nationality = Some("Estadounidense".into());
        let (values, _) = super::values(&r, Layout::Fields54);
        assert_eq!(
            filled(&values),
            [
                "1=05",
                "2=07",
                "4=98-7654321",
                "5=Proveedor",
                "6=USA",
                "16=18500",
                "26=2960",
                "49=100",
                "53=50",
                "54=01"
            ]
        );
        let (values, _) = super::values(&r, Layout::Fields24);
        assert_eq!(
            filled(&values),
            [
                "1=05",
                "2=07",
                "4=98-7654321",
                "5=Proveedor",
                "6=US",
                "7=Estadounidense",
                "16=18500",
                "20=100"
            ]
        );
        let v = view(&r, Layout::Fields54);
        assert_eq!(v["country"]["code"], "USA");
        assert!(
            v["country"]["description"]
                .as_str()
                .is_some_and(|d| d.contains("Estados Unidos")),
            "{v}"
        );
        assert_eq!(v["third_party_type"]["description"], "Proveedor extranjero");
        assert_eq!(v["fields"][15]["number"], 16);
        assert_eq!(v["fields"][15]["value"], "18500");
    }

    #[test]
    fn a_negative_net_is_left_empty_with_a_note() {
        let r = record(
            "04",
            Amounts {
                general: regime("100.00", "200.00", "16.00", "32.00"),
                zero: dec("-10.00"),
                ..Amounts::default()
            },
        );
        let (values, notes) = super::values(&r, Layout::Fields54);
        assert_eq!(
            filled(&values),
            [
                "1=04",
                "2=85",
                "3=PRO010101AB1",
                "12=100",
                "13=200",
                "54=01"
            ]
        );
        assert_eq!(notes.len(), 2, "{notes:?}");
    }
}
