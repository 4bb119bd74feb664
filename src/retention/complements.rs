//! The complements a Retenciones carries: which one each is (by namespace, never by
//! prefix), its version, and the amounts that matter to an accountant for the ones the
//! SAT publishes. Complement detail never makes a document unreadable: an amount that
//! is not a decimal is left out.

use roxmltree::Node;
use serde::Serialize;
use std::collections::BTreeMap;

use crate::cfdi::xml::parse_decimal;
use crate::cfdi::Decimal;

/// Where the SAT's retention complements live: `<BASE><name>`, in RET 1.0 and 2.0 alike.
const BASE: &str = "http://www.sat.gob.mx/esquemas/retencionpago/1/";

/// Each known complement: its namespace's last segment, the code the SAT's bulk
/// download filters it by (`ComplementoRetenciones`), and the amounts read from it as
/// `(element, attribute)`: `""` is the complement's own element, another name its first
/// descendant of that name. An amount is keyed by its attribute, prefixed `Element@`
/// when it is a descendant's.
type Known = (
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

const KNOWN: &[Known] = &[
    (
        "arrendamientoenfideicomiso",
        "arrendamientoenfideicomiso",
        &[
            ("", "PagProvEfecPorFiduc"),
            ("", "RendimFideicom"),
            ("", "DeduccCorresp"),
            ("", "MontTotRet"),
            ("", "MontResFiscDistFibras"),
            ("", "MontOtrosConceptDistr"),
        ],
    ),
    (
        "dividendos",
        "dividendos",
        &[
            ("DividOUtil", "MontISRAcredRetMexico"),
            ("DividOUtil", "MontISRAcredRetExtranjero"),
            ("DividOUtil", "MontRetExtDivExt"),
            ("DividOUtil", "MontISRAcredNal"),
            ("DividOUtil", "MontDivAcumNal"),
            ("DividOUtil", "MontDivAcumExt"),
            ("Remanente", "ProporcionRem"),
        ],
    ),
    (
        "enajenaciondeacciones",
        "enajenaciondeacciones",
        &[("", "Ganancia"), ("", "Perdida")],
    ),
    (
        "fideicomisonoempresarial",
        "fideicomisonoempresarial",
        &[
            ("IngresosOEntradas", "MontTotEntradasPeriodo"),
            ("DeduccOSalidas", "MontTotEgresPeriodo"),
            ("RetEfectFideicomiso", "MontRetRelPagFideic"),
        ],
    ),
    (
        "intereses",
        "intereses",
        &[("", "MontIntNominal"), ("", "MontIntReal"), ("", "Perdida")],
    ),
    (
        "intereseshipotecarios",
        "intereseshipotecarios",
        &[
            ("", "MontTotIntNominalesDev"),
            ("", "MontTotIntNominalesDevYPag"),
            ("", "MontTotIntRealPagDeduc"),
            ("", "SaldoInsoluto"),
        ],
    ),
    (
        "operacionesconderivados",
        "operacionesconderivados",
        &[("", "MontGanAcum"), ("", "MontPerdDed")],
    ),
    ("pagosaextranjeros", "pagosaextranjeros", &[]),
    ("planesderetiro", "planesderetiro", PLANES),
    ("planesderetiro11", "planesderetiro11", PLANES),
    (
        "premios",
        "premios",
        &[
            ("", "MontTotPago"),
            ("", "MontTotPagoGrav"),
            ("", "MontTotPagoExent"),
        ],
    ),
    ("sectorfinanciero", "sectorfinanciero", &[]),
    (
        "PlataformasTecnologicas10",
        "serviciosplataformastecnologicas10",
        &[
            ("", "MonTotServSIVA"),
            ("", "TotalIVATrasladado"),
            ("", "TotalIVARetenido"),
            ("", "TotalISRRetenido"),
            ("", "DifIVAEntregadoPrestServ"),
            ("", "MonTotalporUsoPlataforma"),
        ],
    ),
];

const PLANES: &[(&str, &str)] = &[
    ("", "MontTotAportAnioInmAnterior"),
    ("", "MontIntRealesDevengAniooInmAnt"),
    ("", "MontTotRetiradoAnioInmAnt"),
    ("", "MontTotExentRetiradoAnioInmAnt"),
    ("", "MontTotExedenteAnioInmAnt"),
    ("", "MontTotRetiradoAnioInmAntPer"),
];

/// One element of the Complemento (besides the stamp).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Complement {
    /// The element's local name, e.g. `Dividendos`, `ServiciosPlataformasTecnologicas`.
    pub name: String,
    /// Its namespace URI (None for an element without one).
    pub namespace: Option<String>,
    /// The SAT's code for it (`dividendos`, `serviciosplataformastecnologicas10`, ...);
    /// None for a complement the SAT does not publish for retenciones.
    pub code: Option<&'static str>,
    /// Its Version attribute as written.
    pub version: Option<String>,
    /// The amounts that matter for it, with their written scale.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub amounts: BTreeMap<String, Decimal>,
}

pub(super) fn parse(node: Node<'_, '_>) -> Complement {
    let namespace = node.tag_name().namespace();
    let known = namespace
        .and_then(|ns| ns.strip_prefix(BASE))
        .and_then(|segment| KNOWN.iter().find(|(s, _, _)| *s == segment));
    let mut amounts = BTreeMap::new();
    for (element, attribute) in known.map_or(&[][..], |(_, _, amounts)| *amounts) {
        let (holder, key) = if element.is_empty() {
            (Some(node), (*attribute).to_owned())
        } else {
            let holder = node.descendants().find(|d| {
                d.is_element()
                    && d.tag_name().name() == *element
                    && d.tag_name().namespace() == namespace
            });
            (holder, format!("{element}@{attribute}"))
        };
        let value = holder
            .and_then(|h| h.attribute(*attribute))
            .and_then(parse_decimal);
        if let Some(value) = value {
            amounts.insert(key, value);
        }
    }
    Complement {
        name: node.tag_name().name().to_owned(),
        namespace: namespace.map(str::to_owned),
        code: known.map(|(_, code, _)| *code),
        version: node.attribute("Version").map(|v| v.trim().to_owned()),
        amounts,
    }
}
