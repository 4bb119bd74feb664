//! A supplier's DIOT settings: what a CFDI cannot say about the operations with it (the
//! operation type, whether their tax effects were given, which border region its 8% is,
//! why its IVA is not creditable, a foreign supplier's tax id, name and country), kept
//! per taxpayer and supplier RFC and read by every month's DIOT. Unset fields take the
//! documented defaults (`resolve`). The DIOT's own code lists are here too, with the
//! descriptions an accountant reads (`/docs/month-close#codes`).

use serde_json::{json, Map, Value};

use super::FieldErrors;
use crate::catalogs::{Catalog, Edition};

/// The DIOT's two batch layouts: 54 fields for periods from January 2025, 24 before.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    Fields54,
    Fields24,
}

impl Layout {
    /// The layout of a period starting in `year`.
    pub fn of_year(year: i32) -> Layout {
        if year >= 2025 {
            Layout::Fields54
        } else {
            Layout::Fields24
        }
    }

    pub fn fields(self) -> usize {
        match self {
            Layout::Fields54 => 54,
            Layout::Fields24 => 24,
        }
    }

    pub fn parse(s: &str) -> Option<Layout> {
        match s {
            "54" => Some(Layout::Fields54),
            "24" => Some(Layout::Fields24),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Layout::Fields54 => "54",
            Layout::Fields24 => "24",
        }
    }
}

/// Tipo de tercero: (code, description).
pub const THIRD_PARTY_TYPES: &[(&str, &str)] = &[
    ("04", "Proveedor nacional"),
    ("05", "Proveedor extranjero"),
    ("15", "Proveedor global"),
];

/// Tipo de operación: (code, description).
pub const OPERATION_TYPES: &[(&str, &str)] = &[
    ("02", "Enajenación de bienes"),
    ("03", "Prestación de servicios profesionales"),
    ("06", "Uso o goce temporal de bienes"),
    ("07", "Importación de bienes o servicios"),
    ("08", "Importación por transferencia virtual"),
    ("85", "Otros"),
    ("87", "Operaciones globales"),
];

/// The operation types each third-party type may report in a layout.
pub fn operation_types(third_party: &str, layout: Layout) -> &'static [&'static str] {
    match (layout, third_party) {
        (Layout::Fields54, "04") => &["02", "03", "06", "08", "85"],
        (Layout::Fields54, "05") => &["02", "03", "07"],
        (Layout::Fields54, "15") => &["87"],
        (Layout::Fields24, "04") => &["03", "06", "85"],
        (Layout::Fields24, "05") => &["03", "85"],
        (Layout::Fields24, "15") => &["85"],
        _ => &[],
    }
}

/// The operation type a supplier without one reports: 85 (Otros), which claims nothing
/// specific; a foreign supplier's is 07 in the 2025 layout (85 is not among its
/// operations there), a global supplier's 87.
pub fn default_operation_type(third_party: &str, layout: Layout) -> &'static str {
    match (layout, third_party) {
        (Layout::Fields54, "05") => "07",
        (Layout::Fields54, "15") => "87",
        _ => "85",
    }
}

pub fn description(list: &[(&'static str, &'static str)], code: &str) -> Option<&'static str> {
    list.iter().find(|(c, _)| *c == code).map(|(_, d)| *d)
}

/// The RFC the SAT's generic public (national) and foreign RFCs are written with.
pub const GENERIC_NATIONAL: &str = "XAXX010101000";
pub const GENERIC_FOREIGN: &str = "XEXX010101000";

/// The third-party type an RFC reads as: the generic RFCs map to the global (15) and
/// foreign (05) types, any other to a national supplier (04).
pub fn third_party_of(tax_id: &str) -> &'static str {
    match tax_id {
        GENERIC_NATIONAL => "15",
        GENERIC_FOREIGN => "05",
        _ => "04",
    }
}

wire_enum!(
    /// Which border region's stimulus a supplier's 8% IVA is.
    BorderRegion {
        North => "north",
        South => "south",
    }
);

impl BorderRegion {
    pub fn description(self) -> &'static str {
        match self {
            BorderRegion::North => "Región fronteriza norte",
            BorderRegion::South => "Región fronteriza sur",
        }
    }
}

wire_enum!(
    /// Why a supplier's IVA is not creditable: the 2025 layout's four reasons.
    NonCreditable {
        /// The part not credited under the proportion of LIVA art. 5-V.
        Proportion => "proportion",
        /// The expense does not meet the requirements (not deductible, no CFDI in order,
        /// a definitive 69-B issuer).
        Requirements => "requirements",
        /// Tied to exempt activities.
        ExemptActivities => "exempt_activities",
        /// Tied to activities not subject to IVA.
        NotSubjectActivities => "not_subject_activities",
    }
);

impl NonCreditable {
    pub fn description(self) -> &'static str {
        match self {
            NonCreditable::Proportion => "Por la proporción (art. 5-V LIVA)",
            NonCreditable::Requirements => "Por no cumplir requisitos",
            NonCreditable::ExemptActivities => "Por actividades exentas",
            NonCreditable::NotSubjectActivities => "Por actividades no objeto",
        }
    }
}

/// Longest texts, as the layouts take them.
const FOREIGN_TAX_ID_MAX: usize = 40;
const FOREIGN_NAME_MAX: usize = 300;
const JURISDICTION_MAX: usize = 300;
const NATIONALITY_MAX: usize = 40;

/// A supplier's stored settings; None is "the default".
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Supplier {
    /// The supplier's RFC as its CFDI write it (upper case).
    pub tax_id: String,
    pub third_party_type: Option<String>,
    pub operation_type: Option<String>,
    /// Field 54: whether the tax effects of its CFDI were given (01) or not (02).
    pub tax_effects: Option<bool>,
    pub border_region: Option<BorderRegion>,
    pub non_creditable: Option<NonCreditable>,
    pub foreign_tax_id: Option<String>,
    pub foreign_name: Option<String>,
    /// ISO 3166 alpha-3, as the SAT's c_Pais (the 2025 layout's field 6).
    pub country: Option<String>,
    /// Field 7 of the 2025 layout, when the country is ZZZ.
    pub jurisdiction: Option<String>,
    /// The 24-field layout's country (its own two-letter catalog) and nationality.
    pub legacy_country: Option<String>,
    pub legacy_nationality: Option<String>,
    pub created_at: String,
    pub updated_at: String,
}

/// A supplier's settings with every default applied, for one layout.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    pub third_party_type: &'static str,
    pub operation_type: String,
    pub tax_effects: bool,
    pub border_region: BorderRegion,
    pub non_creditable: Option<NonCreditable>,
}

impl Supplier {
    /// Defaults: the type the RFC reads as, operation 85 (`default_operation_type`),
    /// tax effects given (01), the north border region, IVA creditable.
    pub fn resolve(tax_id: &str, saved: Option<&Supplier>, layout: Layout) -> Resolved {
        let third_party = saved
            .and_then(|s| s.third_party_type.as_deref())
            .and_then(|t| THIRD_PARTY_TYPES.iter().find(|(c, _)| *c == t))
            .map_or_else(|| third_party_of(tax_id), |(c, _)| *c);
        Resolved {
            third_party_type: third_party,
            operation_type: saved
                .and_then(|s| s.operation_type.clone())
                .unwrap_or_else(|| default_operation_type(third_party, layout).to_owned()),
            tax_effects: saved.and_then(|s| s.tax_effects).unwrap_or(true),
            border_region: saved
                .and_then(|s| s.border_region)
                .unwrap_or(BorderRegion::North),
            non_creditable: saved.and_then(|s| s.non_creditable),
        }
    }

    /// A PUT's body for the supplier `tax_id` (already upper case and an RFC): every
    /// field optional, null or absent meaning the default.
    pub fn parse(tax_id: &str, body: &Map<String, Value>) -> Result<Supplier, FieldErrors> {
        let mut errors = FieldErrors::new();
        let text = |key: &str, max: usize, errors: &mut FieldErrors| -> Option<String> {
            match body.get(key) {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) if s.trim().is_empty() => None,
                Some(Value::String(s)) => {
                    let s = s.trim();
                    if s.chars().count() > max {
                        errors.add(key, &format!("must be at most {max} characters"));
                    } else if s.contains(['|', '\r', '\n']) {
                        // The batch file is one line per record, fields between pipes.
                        errors.add(key, "must not contain | or line breaks");
                    }
                    Some(s.to_owned())
                }
                Some(_) => {
                    errors.add(key, super::NOT_A_STRING);
                    None
                }
            }
        };
        let third_party_type = text("third_party_type", 2, &mut errors);
        if let Some(t) = &third_party_type {
            if description(THIRD_PARTY_TYPES, t).is_none() {
                errors.add("third_party_type", "must be 04, 05 or 15");
            }
        }
        let resolved_type = third_party_type
            .as_deref()
            .filter(|t| description(THIRD_PARTY_TYPES, t).is_some())
            .unwrap_or_else(|| third_party_of(tax_id));
        let operation_type = text("operation_type", 2, &mut errors);
        if let Some(op) = &operation_type {
            let valid = [Layout::Fields54, Layout::Fields24]
                .iter()
                .any(|l| operation_types(resolved_type, *l).contains(&op.as_str()));
            if !valid {
                let mut codes: Vec<&str> = [Layout::Fields54, Layout::Fields24]
                    .iter()
                    .flat_map(|l| operation_types(resolved_type, *l).iter().copied())
                    .collect();
                codes.sort_unstable();
                codes.dedup();
                errors.add(
                    "operation_type",
                    &format!(
                        "must be one of {} for third-party type {resolved_type}",
                        codes.join(", ")
                    ),
                );
            }
        }
        let tax_effects = match body.get("tax_effects") {
            None | Some(Value::Null) => None,
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => {
                errors.add("tax_effects", "must be true or false");
                None
            }
        };
        let choice = |key: &str, words: &[&str], errors: &mut FieldErrors| {
            let word = text(key, 40, errors)?;
            if !words.contains(&word.as_str()) {
                errors.add(key, &format!("must be one of {}", words.join(", ")));
                return None;
            }
            Some(word)
        };
        let border_region = choice("border_region", BorderRegion::WIRE, &mut errors)
            .and_then(|w| BorderRegion::parse(&w));
        let non_creditable = choice("non_creditable", NonCreditable::WIRE, &mut errors)
            .and_then(|w| NonCreditable::parse(&w));
        let foreign_tax_id = text("foreign_tax_id", FOREIGN_TAX_ID_MAX, &mut errors);
        let foreign_name = text("foreign_name", FOREIGN_NAME_MAX, &mut errors);
        let country = text("country", 3, &mut errors).map(|c| c.to_uppercase());
        if let Some(c) = &country {
            let known = Catalog::Pais.entry(c, Edition::Cfdi40).is_some();
            if c.len() != 3 || !known || c == "MEX" {
                errors.add(
                    "country",
                    "must be a foreign country's code in the SAT's c_Pais catalog (ISO 3166 alpha-3, ZZZ for another)",
                );
            }
        }
        let jurisdiction = text("jurisdiction", JURISDICTION_MAX, &mut errors);
        if jurisdiction.is_some() && country.as_deref() != Some("ZZZ") {
            errors.add("jurisdiction", "is only for country ZZZ");
        }
        let legacy_country = text("legacy_country", 2, &mut errors).map(|c| c.to_uppercase());
        if let Some(c) = &legacy_country {
            if c.len() != 2 || !c.chars().all(|ch| ch.is_ascii_uppercase()) {
                errors.add(
                    "legacy_country",
                    "must be two letters (the 24-field layout's country catalog)",
                );
            }
        }
        let legacy_nationality = text("legacy_nationality", NATIONALITY_MAX, &mut errors);
        let foreign = [
            ("foreign_tax_id", foreign_tax_id.is_some()),
            ("foreign_name", foreign_name.is_some()),
            ("country", country.is_some()),
            ("jurisdiction", jurisdiction.is_some()),
            ("legacy_country", legacy_country.is_some()),
            ("legacy_nationality", legacy_nationality.is_some()),
        ];
        if resolved_type != "05" {
            for (key, given) in foreign {
                if given {
                    errors.add(key, "is only for a foreign supplier (third_party_type 05)");
                }
            }
        }
        errors.into_result()?;
        Ok(Supplier {
            tax_id: tax_id.to_owned(),
            third_party_type,
            operation_type,
            tax_effects,
            border_region,
            non_creditable,
            foreign_tax_id,
            foreign_name,
            country,
            jurisdiction,
            legacy_country,
            legacy_nationality,
            created_at: String::new(),
            updated_at: String::new(),
        })
    }

    /// What storage keeps of it: the settings alone, as a PUT's body writes them (a
    /// JSON object, read back by `from_stored`).
    pub fn settings(&self) -> Value {
        let mut view = self.view();
        if let Some(fields) = view.as_object_mut() {
            for key in ["tax_id", "created_at", "updated_at"] {
                fields.remove(key);
            }
        }
        view
    }

    /// Stored settings read back; what no longer validates (a code list narrowed
    /// since) is an error naming the supplier rather than a silent default.
    pub fn from_stored(
        tax_id: &str,
        settings: &str,
        created_at: String,
        updated_at: String,
    ) -> anyhow::Result<Supplier> {
        let value: Value = serde_json::from_str(settings)?;
        let body = value
            .as_object()
            .ok_or_else(|| anyhow::anyhow!("supplier {tax_id}: settings are not an object"))?;
        let supplier = Supplier::parse(tax_id, body)
            .map_err(|e| anyhow::anyhow!("supplier {tax_id}: stored settings {e:?}"))?;
        Ok(Supplier {
            created_at,
            updated_at,
            ..supplier
        })
    }

    /// The API's shape: what is stored (null for a default).
    pub fn view(&self) -> Value {
        json!({
            "tax_id": self.tax_id,
            "third_party_type": self.third_party_type,
            "operation_type": self.operation_type,
            "tax_effects": self.tax_effects,
            "border_region": self.border_region.map(BorderRegion::as_str),
            "non_creditable": self.non_creditable.map(NonCreditable::as_str),
            "foreign_tax_id": self.foreign_tax_id,
            "foreign_name": self.foreign_name,
            "country": self.country,
            "jurisdiction": self.jurisdiction,
            "legacy_country": self.legacy_country,
            "legacy_nationality": self.legacy_nationality,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        })
    }
}

/// The DIOT's code lists with their descriptions (`GET /v1/diot/codes`).
pub fn codes() -> Value {
    let list = |l: &[(&str, &str)]| -> Vec<Value> {
        l.iter()
            .map(|(code, description)| json!({ "code": code, "description": description }))
            .collect()
    };
    let by_type = |layout: Layout| -> Value {
        THIRD_PARTY_TYPES
            .iter()
            .map(|(t, _)| {
                (
                    (*t).to_owned(),
                    json!({
                        "operation_types": operation_types(t, layout),
                        "default_operation_type": default_operation_type(t, layout),
                    }),
                )
            })
            .collect::<Map<String, Value>>()
            .into()
    };
    json!({
        "third_party_types": list(THIRD_PARTY_TYPES),
        "operation_types": list(OPERATION_TYPES),
        "layouts": {
            "54": by_type(Layout::Fields54),
            "24": by_type(Layout::Fields24),
        },
        "border_regions": BorderRegion::ALL.iter()
            .map(|r| json!({ "code": r.as_str(), "description": r.description() }))
            .collect::<Vec<_>>(),
        "non_creditable_reasons": NonCreditable::ALL.iter()
            .map(|r| json!({ "code": r.as_str(), "description": r.description() }))
            .collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(rfc: &str, body: Value) -> Result<Supplier, FieldErrors> {
        Supplier::parse(rfc, body.as_object().expect("an object"))
    }

    #[test]
    fn defaults_follow_the_rfc_and_the_layout() {
        let r = Supplier::resolve("AAA010101AAA", None, Layout::Fields54);
        assert_eq!(
            (r.third_party_type, r.operation_type.as_str()),
            ("04", "85")
        );
        assert!(r.tax_effects);
        assert_eq!(r.border_region, BorderRegion::North);
        assert_eq!(r.non_creditable, None);
        let global = Supplier::resolve(GENERIC_NATIONAL, None, Layout::Fields54);
        assert_eq!(
            (global.third_party_type, global.operation_type.as_str()),
            ("15", "87")
        );
        let global = Supplier::resolve(GENERIC_NATIONAL, None, Layout::Fields24);
        assert_eq!(global.operation_type, "85");
        let foreign = Supplier::resolve(GENERIC_FOREIGN, None, Layout::Fields54);
        assert_eq!(
            (foreign.third_party_type, foreign.operation_type.as_str()),
            ("05", "07")
        );
        assert_eq!(
            Supplier::resolve(GENERIC_FOREIGN, None, Layout::Fields24).operation_type,
            "85"
        );
    }

    #[test]
    fn saved_settings_override_the_defaults() {
        let saved = parse(
            "AAA010101AAA",
            json!({"operation_type": "03", "tax_effects": false, "border_region": "south",
                   "non_creditable": "exempt_activities"}),
        )
        .expect("valid");
        let r = Supplier::resolve("AAA010101AAA", Some(&saved), Layout::Fields54);
        assert_eq!(r.operation_type, "03");
        assert!(!r.tax_effects);
        assert_eq!(r.border_region, BorderRegion::South);
        assert_eq!(r.non_creditable, Some(NonCreditable::ExemptActivities));
        // A national RFC declared foreign.
        let foreign = parse(
            "AAA010101AAA",
            json!({"third_party_type": "05", "foreign_tax_id": "98-7654321", "country": "usa"}),
        )
        .expect("valid");
        assert_eq!(foreign.country.as_deref(), Some("USA"));
        let r = Supplier::resolve("AAA010101AAA", Some(&foreign), Layout::Fields54);
        assert_eq!(
            (r.third_party_type, r.operation_type.as_str()),
            ("05", "07")
        );
    }

    #[test]
    fn bad_settings_name_each_field() {
        let errors = parse(
            "AAA010101AAA",
            json!({"third_party_type": "09", "operation_type": "99", "tax_effects": "yes",
                   "border_region": "east", "non_creditable": "maybe",
                   "foreign_tax_id": "X1", "country": "MEX"}),
        )
        .expect_err("invalid");
        for field in [
            "third_party_type",
            "operation_type",
            "tax_effects",
            "border_region",
            "non_creditable",
            "foreign_tax_id",
            "country",
        ] {
            assert!(errors.contains(field), "{field}: {errors:?}");
        }
        // An operation another type has.
        let errors = parse(GENERIC_FOREIGN, json!({"operation_type": "06"})).expect_err("06");
        assert_eq!(
            errors.to_json()["errors"]["operation_type"][0],
            "must be one of 02, 03, 07, 85 for third-party type 05"
        );
        let errors = parse(
            GENERIC_FOREIGN,
            json!({"foreign_name": "A | B", "jurisdiction": "Isla", "country": "USA",
                   "legacy_country": "USA"}),
        )
        .expect_err("bad texts");
        for field in ["foreign_name", "jurisdiction", "legacy_country"] {
            assert!(errors.contains(field), "{field}: {errors:?}");
        }
        assert!(parse(
            GENERIC_FOREIGN,
            json!({"country": "ZZZ", "jurisdiction": "Isla de Man", "legacy_country": "XX"})
        )
        .is_ok());
    }

    #[test]
    fn stored_settings_read_back_as_saved() {
        let saved = parse(
            GENERIC_FOREIGN,
            json!({"operation_type": "03", "tax_effects": false, "foreign_tax_id": "98-7654321",
                   "foreign_name": "Acme Inc.", "country": "USA", "legacy_country": "US"}),
        )
        .expect("valid");
        let text = saved.settings().to_string();
        assert!(!text.contains("created_at"), "{text}");
        let back =
            Supplier::from_stored(GENERIC_FOREIGN, &text, "a".into(), "b".into()).expect("read");
        assert_eq!(
            back,
            Supplier {
                created_at: "a".into(),
                updated_at: "b".into(),
                ..saved
            }
        );
        assert!(Supplier::from_stored("AAA010101AAA", "[]", String::new(), String::new()).is_err());
    }

    #[test]
    fn the_codes_list_every_type_with_its_operations() {
        let codes = codes();
        assert_eq!(
            codes["third_party_types"][1]["description"],
            "Proveedor extranjero"
        );
        assert_eq!(
            codes["layouts"]["54"]["05"]["operation_types"],
            json!(["02", "03", "07"])
        );
        assert_eq!(codes["layouts"]["24"]["04"]["default_operation_type"], "85");
        assert_eq!(
            codes["non_creditable_reasons"].as_array().map(Vec::len),
            Some(4)
        );
    }
}
