//! Downloads through the row links, within the session that listed them.

use crate::common::fake_sat_portal::{FakePortal, Setup};
use crate::common::invoices::sample_bytes;
use crate::portal::listing::session;
use crate::portal::support::*;
use cfdi_extract::domain::extraction::{Direction, Period};
use cfdi_extract::sat::{Metadata, SatError};

#[test]
fn xml_and_pdf_come_back_in_order_and_missing_links_give_none() {
    let mut setup = Setup::new(RFC, CIEC);
    let with_pdf = sample_invoice("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml", true);
    let no_pdf = sample_invoice("cfdi40-ingreso-pue-tfd-ampersand-rfc.xml", false);
    let mut cancelled = sample_invoice("cfdi40-pago20-tfd-full-payment-of-ppd.xml", true);
    cancelled.row.state = "Cancelado".into();
    cancelled.row.xml_token = None; // the portal offers no XML for it
    setup.invoices = vec![with_pdf.clone(), no_pdf.clone(), cancelled.clone()];
    let fake = FakePortal::start(setup);
    let dir = tempfile::tempdir().expect("tmp");
    let mut session = session(&fake, dir.path());
    let listed = session
        .list(
            Direction::Received,
            Period {
                from: day(2020, 1, 1),
                to: day(2020, 1, 1),
            },
        )
        .expect("lists");
    assert_eq!(listed.len(), 3);
    // Ask in an order of our own: the answer follows it.
    let order = [&cancelled, &with_pdf, &no_pdf];
    let items: Vec<Metadata> = order
        .iter()
        .map(|inv| {
            listed
                .iter()
                .find(|m| m.uuid == inv.row.uuid)
                .expect("listed")
                .clone()
        })
        .collect();
    let docs = session
        .download(Direction::Received, &items)
        .expect("downloads");
    let uuids: Vec<&str> = docs.iter().map(|d| d.uuid.as_str()).collect();
    let wanted: Vec<&str> = order.iter().map(|i| i.row.uuid.as_str()).collect();
    assert_eq!(uuids, wanted);
    assert_eq!((docs[0].xml.as_ref(), docs[0].pdf.is_some()), (None, true));
    assert_eq!(
        docs[1].xml.as_deref(),
        Some(sample_bytes("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml").as_slice())
    );
    assert!(docs[1].pdf.as_ref().is_some_and(|p| p.starts_with(b"%PDF")));
    assert_eq!(docs[2].xml.as_deref(), with_xml(&no_pdf));
    assert_eq!(docs[2].pdf, None);
    fake.seen(|s| {
        // Tokens arrived exactly as the page gave them (`+`, `/`, `=` untouched).
        assert!(
            s.downloads
                .contains(&with_pdf.row.xml_token.clone().expect("token")),
            "{:?}",
            s.downloads
        );
        assert!(s.refusals.is_empty(), "{:?}", s.refusals);
    });
}

fn with_xml(inv: &crate::common::fake_sat_portal::FakeInvoice) -> Option<&[u8]> {
    inv.xml.as_deref()
}

#[test]
fn many_downloads_run_on_the_bounded_pool() {
    let mut setup = Setup::new(RFC, CIEC);
    let samples = [
        "cfdi40-ingreso-pue-real-tfd.xml",
        "cfdi40-ingreso-pue-descuento-tfd.xml",
        "cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
        "cfdi33-ingreso-pue-real-implocal-tfd.xml",
        "cfdi33-ingreso-pue-detallista-tfd.xml",
        "cfdi33-ingreso-pue-tfd-leading-comment.xml",
    ];
    let mut invoices: Vec<_> = samples.iter().map(|f| sample_invoice(f, true)).collect();
    // Put them all on one day so one listing finds them.
    for (i, inv) in invoices.iter_mut().enumerate() {
        inv.issued = day(2025, 1, 24).and_hms_opt(10, i as u32, 0).expect("time");
        inv.row.issued_at = inv.issued.format("%Y-%m-%dT%H:%M:%S").to_string();
    }
    setup.invoices = invoices.clone();
    let fake = FakePortal::start(setup);
    let dir = tempfile::tempdir().expect("tmp");
    let mut session = session(&fake, dir.path());
    let listed = session
        .list(
            Direction::Issued,
            Period {
                from: day(2025, 1, 24),
                to: day(2025, 1, 24),
            },
        )
        .expect("lists");
    assert_eq!(listed.len(), samples.len());
    let docs = session
        .download(Direction::Issued, &listed)
        .expect("downloads");
    for (doc, meta) in docs.iter().zip(&listed) {
        assert_eq!(doc.uuid, meta.uuid);
        let inv = invoices
            .iter()
            .find(|i| i.row.uuid == meta.uuid)
            .expect("known");
        assert_eq!(doc.xml, inv.xml);
        assert!(doc.pdf.is_some());
    }
}

#[test]
fn an_xml_the_portal_does_not_serve_is_left_metadata_only() {
    let mut setup = Setup::new(RFC, CIEC);
    let mut inv = sample_invoice("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml", false);
    inv.xml = None; // the link is there but the fake answers 404
    setup.invoices = vec![inv];
    let fake = FakePortal::start(setup);
    let dir = tempfile::tempdir().expect("tmp");
    let mut session = session(&fake, dir.path());
    let listed = session
        .list(
            Direction::Received,
            Period {
                from: day(2020, 1, 1),
                to: day(2020, 1, 1),
            },
        )
        .expect("lists");
    let docs = session
        .download(Direction::Received, &listed)
        .expect("no failure");
    assert_eq!(docs.len(), 1);
    assert!(docs[0].xml.is_none());
}

#[test]
fn an_invoice_not_listed_in_this_session_cannot_be_downloaded() {
    let fake = FakePortal::start(Setup::new(RFC, CIEC));
    let dir = tempfile::tempdir().expect("tmp");
    let mut session = session(&fake, dir.path());
    let stranger = Metadata {
        uuid: "00000000-0000-4000-8000-000000000000".into(),
        issuer_tax_id: "AAA010101AAA".into(),
        receiver_tax_id: RFC.into(),
        ..Metadata::default()
    };
    let err = session
        .download(Direction::Received, &[stranger])
        .expect_err("unknown");
    assert!(matches!(err, SatError::Unavailable(_)), "{err:?}");
}
