use super::*;
use crate::domain::extraction::{Direction, Period};
use crate::sandbox::ciec::SandboxPortal;
use crate::sandbox::docs::{self as sandbox_docs};
use crate::sat::ciec::Authority;
use crate::sat::ciec::Credential;
use crate::sat::efirma::credential::tests::test_efirma;
use crate::sat::efirma::envelope::DocumentStatus;
use crate::sat::efirma::package::{Package, PackageError};
use crate::sat::efirma::Session as WsSession;
use crate::sat::Metadata;
use chrono::{NaiveDate, NaiveDateTime};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;

const EKU: &str = "EKU9003173C9";
const BIG: &str = "BIG900101AAA";

struct Fixture {
    dir: tempfile::TempDir,
    service: SandboxService,
    run: RunContext,
}

/// A sandbox on a temp store, and a run of an entity of `rfc`.
fn fixture(rfc: &str) -> Fixture {
    let dir = tempfile::tempdir().expect("tmp");
    let store = SandboxStore::open(dir.path()).expect("store");
    let entity_id = format!("entity-{rfc}");
    Fixture {
        service: SandboxService::new(store, Duration::ZERO),
        dir,
        run: RunContext {
            entity_id,
            extraction_id: "run-1".into(),
            period: None,
        },
    }
}

impl Fixture {
    fn session(&self, rfc: &str) -> Session<'_> {
        self.service
            .open(rfc, Some(&self.run), DocumentClass::Invoices)
            .expect("session")
    }

    /// The same data directory opened again, as after a restart.
    fn reopen(&mut self) {
        let store = SandboxStore::open(self.dir.path()).expect("store");
        self.service = SandboxService::new(store, Duration::ZERO);
    }
}

fn at(text: &str) -> NaiveDateTime {
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S").expect("time")
}

fn window(direction: Direction, request_type: RequestType, start: &str, end: &str) -> WindowQuery {
    WindowQuery {
        direction,
        request_type,
        start: at(start),
        end: at(end),
        status: match (direction, request_type) {
            (Direction::Received, RequestType::Cfdi) => DocumentStatus::Active,
            _ => DocumentStatus::All,
        },
        counterpart: None,
        document_type: None,
        complement: None,
        on_behalf_of: None,
    }
}

fn request_id(answer: &QueryAnswer) -> String {
    assert_eq!(answer.status.code, SatCode::Accepted, "{answer:?}");
    answer.request_id.clone().expect("request id")
}

/// Verifies until finished (exactly three times), checking each state on the way.
fn verify_until_finished(session: &mut dyn WsSession, id: &str) -> VerifyAnswer {
    let first = session.verify(id).expect("verify");
    assert_eq!(first.state, RequestState::Accepted, "{first:?}");
    assert!(first.package_ids.is_empty());
    let second = session.verify(id).expect("verify");
    assert_eq!(second.state, RequestState::InProgress, "{second:?}");
    let third = session.verify(id).expect("verify");
    assert_eq!(third.state, RequestState::Finished, "{third:?}");
    assert_eq!(third.status.code, SatCode::Accepted);
    third
}

fn download(session: &mut dyn WsSession, package_id: &str) -> Vec<u8> {
    let answer = session.download(package_id).expect("download");
    assert_eq!(answer.status.code, SatCode::Accepted, "{answer:?}");
    answer.package.expect("package")
}

/// Every CFDI of the packages, by file name.
fn cfdi_files(session: &mut dyn WsSession, ids: &[String]) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    for id in ids {
        let mut package = Package::open(download(session, id)).expect("zip");
        for file in package.cfdis() {
            let file = file.expect("cfdi");
            assert!(
                files.insert(file.name, file.xml).is_none(),
                "one file per CFDI"
            );
        }
    }
    files
}

fn metadata_rows(session: &mut dyn WsSession, ids: &[String]) -> Vec<Metadata> {
    let mut rows = Vec::new();
    for id in ids {
        let mut package = Package::open(download(session, id)).expect("zip");
        let count = package
            .for_each_metadata(|m| {
                rows.push(m);
                Ok::<_, PackageError>(())
            })
            .expect("rows");
        assert_eq!(count.skipped, 0);
    }
    rows
}

/// The whole conversation with the public test e.firma: metadata then CFDI.
#[test]
fn a_full_conversation_reads_back_through_the_package_reader() {
    let f = fixture(EKU);
    let efirma = test_efirma();
    let mut session = f
        .service
        .connect(&efirma, Some(&f.run), DocumentClass::Invoices)
        .expect("connects");
    let metadata = window(
        Direction::Issued,
        RequestType::Metadata,
        "2025-03-01T00:00:00",
        "2025-03-14T23:59:59",
    );
    let id = request_id(
        &session
            .query(&Query::Window(metadata.clone()))
            .expect("query"),
    );
    assert!(uuid::Uuid::parse_str(&id).is_ok(), "{id}");
    let done = verify_until_finished(&mut *session, &id);
    assert_eq!(done.package_ids, vec![format!("{id}_01")]);
    let rows = metadata_rows(&mut *session, &done.package_ids);
    assert_eq!(rows.len() as u64, done.cfdi_count);
    assert!(
        rows.len() > 40,
        "about 5 a day plus complements: {}",
        rows.len()
    );
    assert!(rows.iter().all(|m| m.issuer_tax_id == EKU));

    let cfdi = WindowQuery {
        request_type: RequestType::Cfdi,
        ..metadata
    };
    let id = request_id(&session.query(&Query::Window(cfdi.clone())).expect("query"));
    let done = verify_until_finished(&mut *session, &id);
    let files = cfdi_files(&mut *session, &done.package_ids);
    assert_eq!(files.len() as u64, done.cfdi_count);
    for (name, xml) in &files {
        let parsed = crate::cfdi::Cfdi::parse_stamped(xml).expect("parses");
        assert_eq!(format!("{}.xml", parsed.uuid().expect("uuid")), *name);
    }
    // The XML of every listed invoice but the ones withheld from this first run.
    let listed: BTreeSet<_> = rows.iter().map(|m| format!("{}.xml", m.uuid)).collect();
    let served: BTreeSet<_> = files.keys().cloned().collect();
    assert!(served.is_subset(&listed));
    let withheld = sandbox_docs::invoices_for_period(
        EKU,
        sandbox_docs::Direction::Issued,
        metadata.start.date(),
        metadata.end.date(),
    )
    .into_iter()
    .filter(|inv| inv.xml_withheld_first)
    .count();
    assert_eq!(listed.len() - served.len(), withheld);
}

/// Metadata and XML are what the CIEC sandbox gives the same run, byte for byte.
#[test]
fn packages_carry_what_the_ciec_sandbox_serves() {
    let f = fixture(EKU);
    for direction in [Direction::Issued, Direction::Received] {
        let from = NaiveDate::from_ymd_opt(2025, 5, 1).expect("date");
        let to = NaiveDate::from_ymd_opt(2025, 5, 31).expect("date");
        let ciec = SandboxPortal::new(f.service.db.clone(), Duration::ZERO);
        let credential = Credential {
            tax_id: EKU.into(),
            password: "sandbox1".into(),
        };
        let mut portal = ciec.login(&credential, &f.run).expect("login");
        let listing = portal.list(direction, Period { from, to }).expect("list");
        let documents = portal.download(direction, &listing).expect("download");

        let mut session = f.session(EKU);
        let mut query = window(
            direction,
            RequestType::Metadata,
            "2025-05-01T00:00:00",
            "2025-05-31T23:59:59",
        );
        let id = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
        let done = verify_until_finished(&mut session, &id);
        let mut rows = metadata_rows(&mut session, &done.package_ids);
        for row in &mut rows {
            let inv_certified = row.certified_at.take().expect("certified");
            assert!(row.issued_at.as_deref() <= Some(inv_certified.as_str()));
        }
        assert_eq!(rows, listing, "{direction:?}");
        assert!(
            rows.iter().any(|m| m.cancelled),
            "some cancellations in a month"
        );

        query.request_type = RequestType::Cfdi;
        query.status = match direction {
            Direction::Issued => DocumentStatus::All,
            Direction::Received => DocumentStatus::Active,
        };
        let id = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
        let done = verify_until_finished(&mut session, &id);
        let files = cfdi_files(&mut session, &done.package_ids);
        let expected: BTreeMap<String, Vec<u8>> = documents
            .iter()
            .zip(&listing)
            .filter(|(_, m)| direction == Direction::Issued || !m.cancelled)
            .filter_map(|(d, _)| Some((format!("{}.xml", d.uuid), d.xml.clone()?)))
            .collect();
        assert!(
            expected.len() < listing.len(),
            "withheld or cancelled ones left out"
        );
        assert_eq!(files, expected, "{direction:?}");
    }
}

#[test]
fn the_certification_columns_are_the_stamp_of_the_xml() {
    let f = fixture(EKU);
    let mut session = f.session(EKU);
    let query = window(
        Direction::Issued,
        RequestType::Metadata,
        "2025-02-03T00:00:00",
        "2025-02-03T23:59:59",
    );
    let id = request_id(&session.query(&Query::Window(query.clone())).expect("query"));
    let done = verify_until_finished(&mut session, &id);
    let mut text = String::new();
    let bytes = download(&mut session, &done.package_ids[0]);
    zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .expect("zip")
        .by_index(0)
        .expect("entry")
        .read_to_string(&mut text)
        .expect("text");
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some(packages::METADATA_HEADER));
    let invoices =
        sandbox_docs::invoices_for_day(EKU, sandbox_docs::Direction::Issued, query.start.date());
    for (line, inv) in lines.zip(&invoices) {
        let fields: Vec<&str> = line.split('~').collect();
        assert_eq!(fields.len(), 12, "{line}");
        assert_eq!(fields[0], inv.uuid);
        let xml = String::from_utf8(
            sandbox_docs::render_xml(EKU, sandbox_docs::Direction::Issued, inv).expect("xml"),
        )
        .expect("utf-8");
        assert!(
            xml.contains(&format!("RfcProvCertif=\"{}\"", fields[5])),
            "{line}"
        );
        let stamped = fields[7].replace(' ', "T");
        assert!(
            xml.contains(&format!("FechaTimbrado=\"{stamped}\"")),
            "{line}"
        );
    }
}

mod rules;
