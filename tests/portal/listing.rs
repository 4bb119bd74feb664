//! Listing: per-day queries (page, mode postback, search), results parsed by caption,
//! and windows split while the portal's 500-row cap is hit.

use crate::common::fake_sat_portal::pages;
use crate::common::fake_sat_portal::{FakePortal, Setup};
use crate::portal::support::*;
use cfdi_extract::domain::extraction::{Direction, Period};
use cfdi_extract::sat::ciec::Portal;
use cfdi_extract::sat::ciec::{Authority, Session};
use cfdi_extract::sat::{Metadata, RunContext};
use rust_decimal::Decimal;

const KIJ_SAMPLES: [&str; 3] = [
    "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
    "cfdi40-ingreso-pue-tfd-ampersand-rfc.xml",
    "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
];

pub fn session(fake: &FakePortal, dir: &std::path::Path) -> Box<dyn Session> {
    let portal = Portal::new(config(fake, command_captcha(&solver_script(dir, 0, 0))));
    let run = RunContext {
        entity_id: "entity".into(),
        extraction_id: "extraction".into(),
        period: None,
    };
    portal.login(&credential(RFC, CIEC), &run).expect("logs in")
}

fn list(setup: Setup, direction: Direction, period: Period) -> (Vec<Metadata>, FakePortal) {
    let fake = FakePortal::start(setup);
    let dir = tempfile::tempdir().expect("tmp");
    let listed = session(&fake, dir.path())
        .list(direction, period)
        .expect("lists");
    (listed, fake)
}

#[test]
fn received_invoices_are_listed_day_by_day_with_their_metadata() {
    let mut setup = Setup::new(RFC, CIEC);
    setup.invoices = KIJ_SAMPLES
        .iter()
        .map(|f| sample_invoice(f, true))
        .collect();
    let period = Period {
        from: day(2019, 12, 31),
        to: day(2020, 1, 2),
    };
    let (listed, fake) = list(setup, Direction::Received, period);
    assert_eq!(listed.len(), 3, "{listed:#?}");
    let ppd = listed
        .iter()
        .find(|m| m.uuid == "6D7434A6-E3F2-47AD-9E4C-08849946AFA0")
        .expect("the PPD invoice");
    assert_eq!(ppd.issuer_tax_id, "H&E951128469");
    assert_eq!(ppd.receiver_tax_id, RFC);
    assert_eq!(ppd.invoice_type.as_deref(), Some("I"));
    assert!(ppd.total.is_some_and(|t| t > Decimal::ZERO));
    assert!(!ppd.cancelled);
    let pago = listed
        .iter()
        .find(|m| m.invoice_type.as_deref() == Some("P"))
        .expect("pago");
    assert_eq!(pago.uuid, "5B64ADA3-AA4C-40B4-A2F5-572CED52BE31");
    fake.seen(|s| {
        assert!(s.refusals.is_empty(), "{:?}", s.refusals);
        let days: Vec<_> = s
            .searches
            .iter()
            .map(|(p, d, a, b)| (p.as_str(), *d, *a, *b))
            .collect();
        assert_eq!(
            days,
            [
                ("ConsultaReceptor.aspx", day(2019, 12, 31), 0, 86_399),
                ("ConsultaReceptor.aspx", day(2020, 1, 1), 0, 86_399),
                ("ConsultaReceptor.aspx", day(2020, 1, 2), 0, 86_399),
            ]
        );
    });
}

#[test]
fn issued_invoices_are_searched_on_the_issuer_page_by_date_time_range() {
    let mut setup = Setup::new(RFC, CIEC);
    setup.invoices = synthetic_invoices(day(2024, 2, 29), 4, 3600);
    let period = Period {
        from: day(2024, 2, 29),
        to: day(2024, 2, 29),
    };
    let (listed, fake) = list(setup, Direction::Issued, period);
    assert_eq!(listed.len(), 4);
    assert!(
        listed[0].cancelled,
        "every 7th synthetic invoice is cancelled"
    );
    assert_eq!(listed[1].total, Some(Decimal::new(100_150, 2)));
    assert_eq!(listed[2].issued_at.as_deref(), Some("2024-02-29T02:00:00"));
    fake.seen(|s| {
        assert_eq!(s.searches.len(), 1);
        assert_eq!(s.searches[0].0, "ConsultaEmisor.aspx");
        assert_eq!((s.searches[0].2, s.searches[0].3), (0, 86_399));
    });
}

#[test]
fn a_full_answer_is_split_in_halves_until_every_window_fits() {
    // 1,100 invoices a minute apart from midnight: the day and its morning are full.
    let mut setup = Setup::new(RFC, CIEC);
    let invoices = synthetic_invoices(day(2024, 3, 1), 1100, 60);
    let expected: Vec<String> = invoices.iter().map(|i| i.row.uuid.clone()).collect();
    setup.invoices = invoices;
    let period = Period {
        from: day(2024, 3, 1),
        to: day(2024, 3, 1),
    };
    let (listed, fake) = list(setup, Direction::Received, period);
    let got: Vec<String> = listed.iter().map(|m| m.uuid.clone()).collect();
    assert_eq!(got, expected, "all of them, once, in time order");
    fake.seen(|s| {
        let windows: Vec<(u32, u32)> = s.searches.iter().map(|(_, _, a, b)| (*a, *b)).collect();
        assert_eq!(
            windows,
            [
                (0, 86_399),
                (0, 43_199),
                (0, 21_599),
                (21_600, 43_199),
                (43_200, 86_399)
            ]
        );
    });
}

#[test]
fn recorded_and_trimmed_result_pages_parse_through_the_whole_flow() {
    let one_day = Period {
        from: day(2019, 3, 31),
        to: day(2019, 3, 31),
    };
    for (page, count) in [
        ("fake-to-extract-metadata-zero-cfdi.html", 0),
        ("fake-to-extract-metadata-one-cfdi.html", 1),
        ("fake-to-extract-metadata-ten-cfdi.html", 10),
        ("fake-to-extract-metadata-missing-uuid.html", 2),
    ] {
        let mut setup = Setup::new(RFC, CIEC);
        setup.search_html = Some(pages::recorded(page));
        let (listed, _fake) = list(setup, Direction::Received, one_day);
        assert_eq!(listed.len(), count, "{page}");
    }
    // The recorded search answer, a delta exactly as the real portal sent it.
    let mut setup = Setup::new(RFC, CIEC);
    setup.search_raw = Some(pages::recorded("sample-to-extract-metadata-one-cfdi.html"));
    let (listed, _fake) = list(setup, Direction::Received, one_day);
    let uuids: Vec<&str> = listed.iter().map(|m| m.uuid.as_str()).collect();
    assert!(
        uuids.contains(&"B97262E5-704C-4BF7-AE26-9174FEF04D63"),
        "{uuids:?}"
    );
    assert!(
        uuids.contains(&"1271B699-21D3-4569-9CD7-F22BD99ED395"),
        "{uuids:?}"
    );
}
