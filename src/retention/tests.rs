//! Every shared retenciones sample against its EXPECTED.md facts, and the refusal rules
//! the Comprobante follows (malformed, oversized, unstamped).

use super::*;
use crate::cfdi::MAX_DOCUMENT_BYTES;

const SAMPLES_DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/retenciones-samples/"
);

fn read(file: &str) -> Vec<u8> {
    std::fs::read(format!("{SAMPLES_DIR}{file}")).expect("sample")
}

fn parse(file: &str) -> Retention {
    Retention::parse(&read(file)).unwrap_or_else(|e| panic!("{file}: {e}"))
}

fn dec(value: &str) -> Decimal {
    Decimal::from_str_exact(value).expect("decimal")
}

fn opt(value: Option<&str>) -> Option<String> {
    value.map(str::to_owned)
}

/// The seal's last 8 characters, `""` when empty, None when absent.
fn seal_tail(r: &Retention) -> Option<String> {
    r.seal
        .as_deref()
        .map(|s| s[s.len().saturating_sub(8)..].to_owned())
}

/// One EXPECTED.md table.
struct Expected {
    file: &'static str,
    version: Version,
    folio: Option<&'static str>,
    issued_at: Option<&'static str>,
    key: Option<&'static str>,
    description: Option<&'static str>,
    certificate: Option<&'static str>,
    seal: Option<&'static str>,
    /// (RFC, name, CURP)
    issuer: (&'static str, Option<&'static str>, Option<&'static str>),
    receiver: Option<Rec>,
    period: Option<(u32, u32, u32)>,
    /// (operation, taxed, exempt, withheld)
    totals: (
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
    ),
    /// (base, tax, amount, payment type)
    withheld: &'static [Entry],
    /// (local name, namespace segment after `…/retencionpago/1/`, Version)
    complements: &'static [(&'static str, &'static str, &'static str)],
    /// (version, UUID, FechaTimbrado)
    tfd: Option<(Option<&'static str>, &'static str, Option<&'static str>)>,
    /// Whether Σ entries equals the total withheld (EXPECTED.md's "Check").
    adds_up: bool,
}

struct Rec {
    nationality: Option<&'static str>,
    /// (RFC, name, CURP)
    national: Option<(&'static str, Option<&'static str>, Option<&'static str>)>,
    /// (NumRegIdTrib, name)
    foreign: Option<(Option<&'static str>, Option<&'static str>)>,
}

const DEMO_ISSUER: (&str, Option<&str>, Option<&str>) = (
    "AAA010101AAA",
    Some("Empresa DEMO para Rentenciones S de TST"),
    Some("AAAA010101HNLMNLD2"),
);
const DEMO_RECEIVER: Rec = Rec {
    nationality: Some("Nacional"),
    national: Some((
        "XAXX010101000",
        Some("PÚBLICO EN GENERAL S DE TST"),
        Some("VAHE820926HNLLRD02"),
    )),
    foreign: None,
};
const DEMO_TOTALS: (&str, Option<&str>, Option<&str>, Option<&str>) = (
    "14000.00",
    Some("13000.00"),
    Some("1000.00"),
    Some("3500.00"),
);
type Entry = (
    Option<&'static str>,
    Option<&'static str>,
    &'static str,
    Option<&'static str>,
);
const DEMO_TWO: &[Entry] = &[
    (
        Some("1000.00"),
        Some("01"),
        "500.00",
        Some("Pago definitivo"),
    ),
    (
        Some("1000.00"),
        Some("02"),
        "500.00",
        Some("Pago provisional"),
    ),
];

/// The SAT demo family: the same parties, period and totals.
#[allow(clippy::too_many_arguments)]
const fn demo(
    file: &'static str,
    folio: &'static str,
    issued_at: &'static str,
    key: &'static str,
    description: &'static str,
    seal: &'static str,
    withheld: &'static [Entry],
    complements: &'static [(&'static str, &'static str, &'static str)],
    uuid: &'static str,
    stamped_at: &'static str,
) -> Expected {
    Expected {
        file,
        version: Version::V10,
        folio: Some(folio),
        issued_at: Some(issued_at),
        key: Some(key),
        description: Some(description),
        certificate: Some("20001000000100005867"),
        seal: Some(seal),
        issuer: DEMO_ISSUER,
        receiver: Some(DEMO_RECEIVER),
        period: Some((6, 6, 2014)),
        totals: DEMO_TOTALS,
        withheld,
        complements,
        tfd: Some((Some("1.0"), uuid, Some(stamped_at))),
        adds_up: false,
    }
}

const MINIMAL_TOTALS_10: (&str, Option<&str>, Option<&str>, Option<&str>) =
    ("2000000.00", None, None, None);
const MINIMAL_TOTALS_20: (&str, Option<&str>, Option<&str>, Option<&str>) =
    ("4076.73", None, None, None);

fn minimal(
    file: &'static str,
    version: Version,
    seal: Option<&'static str>,
    receiver: Option<Rec>,
    totals: (
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        Option<&'static str>,
    ),
    uuid: &'static str,
) -> Expected {
    Expected {
        file,
        version,
        folio: None,
        issued_at: None,
        key: None,
        description: None,
        certificate: None,
        seal,
        issuer: ("AAA010101AAA", None, None),
        receiver,
        period: None,
        totals,
        withheld: &[],
        complements: &[],
        tfd: Some((None, uuid, None)),
        adds_up: true,
    }
}

fn expected() -> Vec<Expected> {
    let ret20_all: &[(&str, &str, &str)] = &[
        (
            "Arrendamientoenfideicomiso",
            "arrendamientoenfideicomiso",
            "1.0",
        ),
        ("Dividendos", "dividendos", "1.0"),
        ("EnajenaciondeAcciones", "enajenaciondeacciones", "1.0"),
        (
            "Fideicomisonoempresarial",
            "fideicomisonoempresarial",
            "1.0",
        ),
        ("Intereses", "intereses", "1.0"),
        ("Intereseshipotecarios", "intereseshipotecarios", "1.0"),
        ("Operacionesconderivados", "operacionesconderivados", "1.0"),
        ("Pagosaextranjeros", "pagosaextranjeros", "1.0"),
        ("Planesderetiro", "planesderetiro11", "1.1"),
        ("Premios", "premios", "1.0"),
        ("SectorFinanciero", "sectorfinanciero", "1.0"),
    ];
    let national_min = |rfc: &'static str| Rec {
        nationality: None,
        national: Some((rfc, None, None)),
        foreign: None,
    };
    vec![
        demo(
            "ret10-arrendamientoenfideicomiso-tfd10.xml",
            "TEST00002",
            "2015-02-24T11:02:42-06:00",
            "17",
            "Arrendamiento en fideicomiso",
            "6j6WH4Y=",
            DEMO_TWO,
            &[(
                "Arrendamientoenfideicomiso",
                "arrendamientoenfideicomiso",
                "1.0",
            )],
            "7da04986-e13b-4873-acce-8f06dcd8886a",
            "2015-02-24T11:02:42",
        ),
        demo(
            "ret10-dividendos-nacional-tfd10.xml",
            "TEST00003",
            "2015-02-24T11:02:43-06:00",
            "14",
            "Dividendos",
            "g48+Eio=",
            &[(
                Some("1000.00"),
                Some("01"),
                "500.00",
                Some("Pago definitivo"),
            )],
            &[("Dividendos", "dividendos", "1.0")],
            "a6d77767-7fa2-4acd-a8a0-f3126aff9fbe",
            "2015-02-24T11:02:43",
        ),
        demo(
            "ret10-enajenaciondeacciones-tfd10.xml",
            "TEST00004",
            "2015-02-24T11:02:44-06:00",
            "06",
            "Enajenación de Acciones",
            "WLUi67Q=",
            DEMO_TWO,
            &[("EnajenaciondeAcciones", "enajenaciondeacciones", "1.0")],
            "7a33c3b5-b8c3-4fe5-a21f-887dcb3f1f85",
            "2015-02-24T11:02:44",
        ),
        demo(
            "ret10-intereses-tfd10.xml",
            "TEST00006",
            "2015-02-24T11:02:46-06:00",
            "16",
            "Intereses",
            "S0jqUcY=",
            DEMO_TWO,
            &[("Intereses", "intereses", "1.0")],
            "f3a703de-0f27-498f-bc36-b60bbf0d60f7",
            "2015-02-24T11:02:46",
        ),
        demo(
            "ret10-operacionesconderivados-tfd10.xml",
            "TEST00008",
            "2015-02-24T11:02:48-06:00",
            "24",
            "Operaciones financieras derivadas de capital",
            "J57Dje0=",
            DEMO_TWO,
            &[("Operacionesconderivados", "operacionesconderivados", "1.0")],
            "89442741-0898-41fa-ae58-397e5d095e89",
            "2015-02-24T11:02:48",
        ),
        Expected {
            receiver: Some(Rec {
                nationality: Some("Extranjero"),
                national: None,
                foreign: Some((Some("XEXX010101000"), Some("WALLACE & SMITH CO. LTD"))),
            }),
            ..demo(
                "ret10-pagosaextranjeros-extranjero-tfd10.xml",
                "TEST00009",
                "2015-02-24T11:02:49-06:00",
                "18",
                "Pagos realizados a favor de residentes en el extranjero",
                "pM6ZjK0=",
                DEMO_TWO,
                &[("Pagosaextranjeros", "pagosaextranjeros", "1.0")],
                "452ca1f6-c2b8-46d3-bd29-e9e2dba2da12",
                "2015-02-24T11:02:49",
            )
        },
        demo(
            "ret10-planesderetiro-tfd10.xml",
            "TEST00010",
            "2015-02-24T11:02:50-06:00",
            "22",
            "Planes personales de retiro",
            "UCIuj/w=",
            DEMO_TWO,
            &[("Planesderetiro", "planesderetiro", "1.0")],
            "ddd43fd2-07eb-4788-8d88-149755b16bf7",
            "2015-02-24T11:02:50",
        ),
        Expected {
            receiver: Some(Rec {
                nationality: Some("Nacional"),
                national: Some((
                    "XAXX010101000",
                    Some("PÚBLICO EN GENERAL S DE TST"),
                    Some("XAXX01010100000000"),
                )),
                foreign: None,
            }),
            ..demo(
                "ret10-sin-complemento-tfd10.xml",
                "TEST00001",
                "2014-12-29T14:29:16-06:00",
                "25",
                "Otro tipo de retención",
                "Bq2BR58=",
                DEMO_TWO,
                &[],
                "02c9d65b-dbe4-4df4-adea-5172f8cbff7c",
                "2015-01-05T15:16:54",
            )
        },
        Expected {
            file: "ret20-todos-complementos-relacionado-tfd11.xml",
            version: Version::V20,
            folio: Some("1RETENCION"),
            issued_at: Some("2021-12-12T12:45:29"),
            key: Some("01"),
            description: Some("0.00"),
            certificate: Some("30001000000300023708"),
            seal: Some(""),
            issuer: ("AAAA010101AAA", Some("PERSONA FÍSICA DE PRUEBA"), None),
            receiver: Some(Rec {
                nationality: Some("Nacional"),
                national: Some((
                    "XAXX010101000",
                    Some("PERSONA FISICA NACIONAL DE PRUEBA"),
                    Some("XAXX010101HNTXXX00"),
                )),
                foreign: None,
            }),
            period: Some((1, 12, 2027)),
            totals: ("1.00", Some("1.00"), Some("1.00"), Some("1.00")),
            withheld: &[
                (Some("8.0"), Some("001"), "1.00", Some("02")),
                (Some("16.0"), Some("002"), "1.00", Some("03")),
                (Some("16.0"), Some("003"), "1.00", Some("04")),
            ],
            complements: ret20_all,
            tfd: Some((
                Some("1.1"),
                "02e3bc7c-beda-41bf-8a6b-f74915e9b61f",
                Some("2021-12-09T16:24:00"),
            )),
            adds_up: false,
        },
        Expected {
            file: "ret20-min-extranjero-unstamped.xml",
            version: Version::V20,
            folio: None,
            issued_at: Some("2021-12-12T12:45:29"),
            key: Some("01"),
            description: None,
            certificate: Some("30001000000300023708"),
            seal: Some(""),
            issuer: ("AAAA010101AAA", Some("PERSONA FÍSICA DE PRUEBA"), None),
            receiver: Some(Rec {
                nationality: Some("Extranjero"),
                national: None,
                foreign: Some((None, Some("PERSONA FISICA NACIONAL DE PRUEBA"))),
            }),
            period: Some((1, 12, 2027)),
            totals: ("1.00", Some("1.00"), Some("1.00"), Some("1.00")),
            withheld: &[(None, None, "1.00", Some("02"))],
            complements: &[],
            tfd: None,
            adds_up: true,
        },
        Expected {
            file: "ret10-dividendos-extranjero-eku-unstamped.xml",
            version: Version::V10,
            folio: None,
            issued_at: Some("2021-01-13T14:15:16-06:00"),
            key: Some("14"),
            description: None,
            certificate: Some("30001000000500003416"),
            seal: Some("8yjhAQ=="),
            issuer: ("EKU9003173C9", Some("ESCUELA KEMPER URGATE SA DE CV"), None),
            receiver: Some(Rec {
                nationality: Some("Extranjero"),
                national: None,
                foreign: Some((Some("998877665544332211"), Some("WORLD WIDE COMPANY INC"))),
            }),
            period: Some((5, 5, 2018)),
            totals: ("55578643", Some("0"), Some("55578643"), Some("0")),
            withheld: &[(Some("0"), Some("01"), "0", Some("Pago provisional"))],
            complements: &[("Dividendos", "dividendos", "1.0")],
            tfd: None,
            adds_up: true,
        },
        Expected {
            file: "ret10-plataformastecnologicas-tfd10.xml",
            version: Version::V10,
            folio: Some("P07D"),
            issued_at: Some("2020-09-10T13:11:36-06:00"),
            key: Some("26"),
            description: None,
            certificate: Some("00001000000502647679"),
            seal: Some("3Do/JA=="),
            issuer: ("EKU9003173C9", Some("Escuela Kemper Urgate SA DE SV"), None),
            receiver: Some(Rec {
                nationality: Some("Nacional"),
                national: Some(("AAA010101AAA", Some("Publico General"), None)),
                foreign: None,
            }),
            period: Some((8, 8, 2020)),
            totals: (
                "8092.24",
                Some("8092.24"),
                Some("0.00"),
                Some("1294.758400"),
            ),
            withheld: &[
                (
                    Some("8092.240000"),
                    Some("01"),
                    "647.379200",
                    Some("Pago provisional"),
                ),
                (
                    Some("1294.758400"),
                    Some("02"),
                    "647.379200",
                    Some("Pago provisional"),
                ),
            ],
            complements: &[(
                "ServiciosPlataformasTecnologicas",
                "PlataformasTecnologicas10",
                "1.0",
            )],
            tfd: Some((
                Some("1.0"),
                "F25F9852-6F4C-4782-9D47-3119EB3FAD3A",
                Some("2020-09-10T15:11:36"),
            )),
            adds_up: true,
        },
        minimal(
            "ret10-fake-extranjero-minimal.xml",
            Version::V10,
            None,
            Some(Rec {
                nationality: None,
                national: None,
                foreign: Some((Some("1234567890"), None)),
            }),
            MINIMAL_TOTALS_10,
            "fc1b47b2-42f3-4ca2-8587-36e0a216c4d5",
        ),
        minimal(
            "ret10-fake-nacional-minimal.xml",
            Version::V10,
            None,
            Some(national_min("SUL010720JN8")),
            MINIMAL_TOTALS_10,
            "fc1b47b2-42f3-4ca2-8587-36e0a216c4d5",
        ),
        minimal(
            "ret20-fake-nacional-minimal.xml",
            Version::V20,
            Some("qsIe6w=="),
            Some(national_min("SUL010720JN8")),
            MINIMAL_TOTALS_20,
            "4E3DD8EA-5220-8C42-85A8-E37F9D7502F8",
        ),
        minimal(
            "ret20-fake-sin-receptor-taxid.xml",
            Version::V20,
            Some("qsIe6w=="),
            None,
            MINIMAL_TOTALS_20,
            "4E3DD8EA-5220-8C42-85A8-E37F9D7502F8",
        ),
    ]
}

#[test]
fn every_shared_sample_has_its_expected_facts() {
    let expected = expected();
    let mut files: Vec<String> = std::fs::read_dir(SAMPLES_DIR)
        .expect("samples")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".xml"))
        .collect();
    files.sort();
    let mut covered: Vec<String> = expected.iter().map(|e| e.file.to_owned()).collect();
    covered.sort();
    assert_eq!(files, covered, "every sample has its facts here");
    for e in &expected {
        check(e, &parse(e.file));
    }
}

#[track_caller]
fn check(e: &Expected, r: &Retention) {
    let f = e.file;
    assert_eq!(r.version, e.version, "{f}");
    assert_eq!(r.internal_folio, opt(e.folio), "{f}");
    assert_eq!(r.issued_at, opt(e.issued_at), "{f}");
    assert_eq!(r.key, opt(e.key), "{f}");
    assert_eq!(r.key_description, opt(e.description), "{f}");
    assert_eq!(r.certificate_number, opt(e.certificate), "{f}");
    assert_eq!(seal_tail(r), opt(e.seal), "{f}");
    let (rfc, name, curp) = e.issuer;
    assert_eq!(r.issuer.tax_id, rfc, "{f}");
    assert_eq!(r.issuer.name, opt(name), "{f}");
    assert_eq!(r.issuer.curp, opt(curp), "{f}");
    match (&e.receiver, &r.receiver) {
        (None, None) => {}
        (Some(want), Some(got)) => {
            assert_eq!(got.nationality, opt(want.nationality), "{f}");
            let national = got
                .national
                .as_ref()
                .map(|n| (n.tax_id.as_str(), n.name.as_deref(), n.curp.as_deref()));
            assert_eq!(national, want.national, "{f}");
            let foreign = got
                .foreign
                .as_ref()
                .map(|n| (n.tax_id.as_deref(), n.name.as_deref()));
            assert_eq!(foreign, want.foreign, "{f}");
        }
        (want, got) => panic!("{f}: receiver {:?} vs {got:?}", want.is_some()),
    }
    let period = r.period.map(|p| (p.start_month, p.end_month, p.year));
    assert_eq!(period, e.period, "{f}");
    let (operation, taxed, exempt, withheld) = e.totals;
    let optd = |v: Option<&str>| v.map(dec);
    assert_eq!(r.totals.operation, dec(operation), "{f}");
    // Same value and the same written scale.
    assert_eq!(r.totals.operation.to_string(), operation, "{f}");
    assert_eq!(r.totals.taxed, optd(taxed), "{f}");
    assert_eq!(r.totals.exempt, optd(exempt), "{f}");
    assert_eq!(r.totals.withheld, optd(withheld), "{f}");
    let entries: Vec<_> = r
        .withheld_taxes
        .iter()
        .map(|t| {
            (
                t.base.map(|b| b.to_string()),
                t.tax.clone(),
                t.amount.to_string(),
                t.payment_type.clone(),
            )
        })
        .collect();
    let want: Vec<_> = e
        .withheld
        .iter()
        .map(|(base, tax, amount, kind)| (opt(*base), opt(*tax), (*amount).to_owned(), opt(*kind)))
        .collect();
    assert_eq!(entries, want, "{f}");
    let complements: Vec<_> = r
        .complements
        .iter()
        .map(|c| (c.name.clone(), c.namespace.clone(), c.version.clone()))
        .collect();
    let want: Vec<_> = e
        .complements
        .iter()
        .map(|(name, segment, version)| {
            (
                (*name).to_owned(),
                Some(format!("{}/{segment}", RET1)),
                Some((*version).to_owned()),
            )
        })
        .collect();
    assert_eq!(complements, want, "{f}");
    let stamp = r.stamp.as_ref().map(|s| {
        (
            s.version.clone(),
            s.uuid.clone().unwrap_or_default(),
            s.certified_at.clone(),
        )
    });
    let want = e.tfd.map(|(version, uuid, at)| {
        // UUIDs are upper-cased, as the Comprobante's are.
        (opt(version), uuid.to_ascii_uppercase(), opt(at))
    });
    assert_eq!(stamp, want, "{f}");
    // Totals as written: flagged when they do not add up, never corrected.
    let adds_up = r.totals.withheld.is_none_or(|t| t == r.entries_withheld());
    assert_eq!(adds_up, e.adds_up, "{f}");
}

#[test]
fn complements_carry_their_amounts() {
    let platforms = parse("ret10-plataformastecnologicas-tfd10.xml");
    let c = &platforms.complements[0];
    assert_eq!(c.code, Some("serviciosplataformastecnologicas10"));
    assert_eq!(c.amounts["TotalISRRetenido"].to_string(), "647.379200");
    assert_eq!(c.amounts["TotalIVARetenido"].to_string(), "647.379200");
    assert_eq!(c.amounts["MonTotServSIVA"], dec("8092.24"));

    let dividends = parse("ret10-dividendos-nacional-tfd10.xml");
    let c = &dividends.complements[0];
    assert_eq!(c.code, Some("dividendos"));
    assert_eq!(c.amounts["DividOUtil@MontISRAcredRetMexico"], dec("35.00"));
    assert_eq!(c.amounts["DividOUtil@MontISRAcredNal"], dec("30.00"));
    assert_eq!(c.amounts["Remanente@ProporcionRem"], dec("0.00"));

    let shares = parse("ret10-enajenaciondeacciones-tfd10.xml");
    assert_eq!(shares.complements[0].amounts["Ganancia"], dec("2521.00"));
    assert_eq!(shares.complements[0].amounts["Perdida"], dec("234.00"));
    let interest = parse("ret10-intereses-tfd10.xml");
    assert_eq!(
        interest.complements[0].amounts["MontIntReal"],
        dec("4278.16")
    );
    let derivatives = parse("ret10-operacionesconderivados-tfd10.xml");
    assert_eq!(
        derivatives.complements[0].amounts["MontGanAcum"].to_string(),
        "5671.212"
    );
    let lease = parse("ret10-arrendamientoenfideicomiso-tfd10.xml");
    assert_eq!(
        lease.complements[0].amounts["PagProvEfecPorFiduc"],
        dec("1230.00")
    );
    let retirement = parse("ret10-planesderetiro-tfd10.xml");
    assert_eq!(
        retirement.complements[0].amounts["MontTotAportAnioInmAnterior"].to_string(),
        "62812.8734"
    );

    let all = parse("ret20-todos-complementos-relacionado-tfd11.xml");
    let codes: Vec<_> = all.complements.iter().map(|c| c.code).collect();
    assert!(codes.iter().all(Option::is_some), "{codes:?}");
    assert_eq!(codes[8], Some("planesderetiro11"));
    let prizes = &all.complements[9];
    assert_eq!(prizes.amounts["MontTotPago"], dec("50000"));
    assert_eq!(
        all.related,
        vec![Related {
            relation_type: Some("09".into()),
            uuid: "13FEC5B0-843D-4D49-B30A-AF93ADCBEE02".into(),
        }]
    );
    assert_eq!(all.place_of_issue.as_deref(), Some("99999"));
    assert_eq!(all.issuer.regime.as_deref(), Some("630"));
    let national = all.receiver.as_ref().and_then(|r| r.national.as_ref());
    assert_eq!(
        national.and_then(|n| n.postal_code.as_deref()),
        Some("99999")
    );
    assert_eq!(all.totals.bimonthly_profit, Some(dec("12")));
    assert_eq!(
        all.totals.isr_due.map(|d| d.to_string()).as_deref(),
        Some("11.2")
    );
}

#[test]
fn taxes_of_both_versions_share_the_cfdi_catalog_codes() {
    let v1 = parse("ret10-plataformastecnologicas-tfd10.xml");
    let by_tax = v1.withheld_by_tax();
    let isr = by_tax[&("001".to_owned(), "Pago provisional".to_owned())];
    assert_eq!(isr.to_string(), "647.379200");
    let v2 = parse("ret20-todos-complementos-relacionado-tfd11.xml");
    let codes: Vec<_> = v2
        .withheld_taxes
        .iter()
        .map(WithheldTax::tax_code)
        .collect();
    assert_eq!(
        codes,
        vec![Some("001".into()), Some("002".into()), Some("003".into())]
    );
}

#[test]
fn storing_needs_a_stamp_a_date_and_a_receiver() {
    for file in [
        "ret20-min-extranjero-unstamped.xml",
        "ret10-dividendos-extranjero-eku-unstamped.xml",
    ] {
        let err = Retention::parse_stamped(&read(file)).expect_err(file);
        assert_eq!(err, CfdiError::Unstamped, "{file}");
    }
    // The expression-test fakes carry a UUID but no FechaExp, and one no Receptor.
    let err =
        Retention::parse_stamped(&read("ret10-fake-nacional-minimal.xml")).expect_err("no date");
    assert_eq!(err, CfdiError::Missing("FechaExp"));
    let text = String::from_utf8(read("ret20-fake-sin-receptor-taxid.xml")).expect("utf8");
    let dated = text.replacen(
        "Version=\"2.0\"",
        "Version=\"2.0\" FechaExp=\"2021-12-12T12:45:29\"",
        1,
    );
    assert_eq!(
        Retention::parse_stamped(dated.as_bytes()).expect_err("no receiver"),
        CfdiError::Missing("Receptor")
    );
    assert!(Retention::parse_stamped(&read("ret10-intereses-tfd10.xml")).is_ok());
}

#[test]
fn malformed_and_foreign_documents_are_refused_like_a_comprobante() {
    assert_eq!(Retention::parse(b"  \n"), Err(CfdiError::Empty));
    assert!(matches!(
        Retention::parse(b"<retenciones:Retenciones"),
        Err(CfdiError::Malformed(_))
    ));
    assert!(matches!(
        Retention::parse(&[0x3c, 0xff, 0xfe]),
        Err(CfdiError::Malformed(m)) if m.contains("UTF-8")
    ));
    // A Comprobante is another class.
    let invoice = br#"<cfdi:Comprobante xmlns:cfdi="http://www.sat.gob.mx/cfd/4" Version="4.0"/>"#;
    assert_eq!(
        Retention::parse(invoice),
        Err(CfdiError::NotCfdi(
            "{http://www.sat.gob.mx/cfd/4}Comprobante".into()
        ))
    );
    // A version its namespace does not declare.
    let text = String::from_utf8(read("ret10-intereses-tfd10.xml")).expect("utf8");
    let wrong = text.replacen("Version=\"1.0\"", "Version=\"2.0\"", 1);
    assert_eq!(
        Retention::parse(wrong.as_bytes()),
        Err(CfdiError::UnsupportedVersion("2.0".into()))
    );
    // Amounts are decimals, never floats or free text.
    let bad = text.replacen(
        "montoTotOperacion=\"14000.00\"",
        "montoTotOperacion=\"1e4\"",
        1,
    );
    assert_eq!(
        Retention::parse(bad.as_bytes()),
        Err(CfdiError::Invalid {
            field: "Totales@MontoTotOperacion",
            value: "1e4".into()
        })
    );
    let bad_month = text.replacen("MesIni=\"6\"", "MesIni=\"junio\"", 1);
    assert!(matches!(
        Retention::parse(bad_month.as_bytes()),
        Err(CfdiError::Invalid {
            field: "Periodo@MesIni",
            ..
        })
    ));
    let bad_date = text.replacen("2015-02-24T11:02:46-06:00", "24/02/2015", 1);
    assert!(matches!(
        Retention::parse(bad_date.as_bytes()),
        Err(CfdiError::Invalid {
            field: "FechaExp",
            ..
        })
    ));
    let no_issuer = text.replacen("<retenciones:Emisor ", "<retenciones:Otro ", 1);
    assert_eq!(
        Retention::parse(no_issuer.as_bytes()),
        Err(CfdiError::Missing("Emisor"))
    );
    // A malformed stamp UUID is refused, as on a Comprobante.
    let bad_uuid = text.replacen("UUID=\"f3a703de", "UUID=\"zz", 1);
    assert!(matches!(
        Retention::parse(bad_uuid.as_bytes()),
        Err(CfdiError::Invalid {
            field: "TimbreFiscalDigital@UUID",
            ..
        })
    ));
}

#[test]
fn oversized_and_hostile_documents_hit_the_comprobante_limits() {
    let text = String::from_utf8(read("ret10-intereses-tfd10.xml")).expect("utf8");
    let mut huge = text.clone().into_bytes();
    huge.resize(MAX_DOCUMENT_BYTES + 1, b' ');
    assert!(matches!(
        Retention::parse(&huge),
        Err(CfdiError::OverLimit(m)) if m.contains("MiB")
    ));
    let deep = format!("{}{}", "<a>".repeat(200), "</a>".repeat(200));
    let nested = text.replacen(
        "<retenciones:Addenda/>",
        &format!("<retenciones:Addenda>{deep}</retenciones:Addenda>"),
        1,
    );
    assert!(matches!(
        Retention::parse(nested.as_bytes()),
        Err(CfdiError::OverLimit(m)) if m.contains("nested")
    ));
    let attributes: String = (0..300).map(|i| format!(" a{i}=\"1\"")).collect();
    let wide = text.replacen(
        "<retenciones:Addenda/>",
        &format!("<retenciones:Addenda{attributes}/>"),
        1,
    );
    assert!(matches!(
        Retention::parse(wide.as_bytes()),
        Err(CfdiError::OverLimit(m)) if m.contains("attributes")
    ));
}

#[test]
fn a_utf8_bom_and_attribute_blanks_are_tolerated() {
    let text = String::from_utf8(read("ret10-intereses-tfd10.xml")).expect("utf8");
    let spaced = text.replacen(
        "RFCEmisor=\"AAA010101AAA\"",
        "RFCEmisor=\" AAA010101AAA \"",
        1,
    );
    let bytes = [&[0xEF, 0xBB, 0xBF][..], spaced.as_bytes()].concat();
    let r = Retention::parse(&bytes).expect("parses");
    assert_eq!(r.issuer.tax_id, "AAA010101AAA");
}
