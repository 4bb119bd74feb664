//! Seal verification (`seal`): verifications a second on the genuine shared samples
//! (CFDI 3.2, 3.3, 4.0 and Retenciones 1.0; the SAT's stamp unverified: its
//! certificates are not bundled), and on a sandbox month (every check, the stamp's
//! too, against the sandbox's authority); then what sealing costs the sandbox's
//! generation: a month rendered (sealed and stamped) a second, and one document's
//! sealing and stamping alone. Prints `name value` lines; each figure is the median of
//! 3 passes.

use std::time::Instant;

use cfdi_extract::sandbox::docs::{
    authority_certificate, invoices_for_period, render_xml, sat_certificate, Direction,
};
use cfdi_extract::seal::{
    verify, Lookup, NoSatCertificates, SatCertificates, Signer, Status, Subject, Trust, Verifier,
};
use chrono::{NaiveDate, TimeZone, Utc};

const GENUINE: &[&str] = &[
    "cfdi-samples/cfdi32-ingreso-real-legacy-tfd10.xml",
    "cfdi-samples/cfdi33-ingreso-pue-real-implocal-tfd.xml",
    "cfdi-samples/cfdi33-ingreso-ppd-multiples-tasas-tfd.xml",
    "cfdi-samples/cfdi40-ingreso-pue-real-tfd.xml",
    "cfdi-samples/cfdi40-pago20-tfd-full-payment-of-ppd.xml",
    "cfdi-samples/cfdi40-ingreso-ppd-retenciones-tfd-oneline.xml",
    "retenciones-samples/ret10-intereses-tfd10.xml",
    "retenciones-samples/ret10-planesderetiro-tfd10.xml",
];

struct SandboxSat;

impl SatCertificates for SandboxSat {
    fn lookup(&self, _number: &str) -> Lookup {
        Lookup::Found(Box::new(sat_certificate().clone()))
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Documents a second over `passes` passes of `f` on `n` documents.
fn rate(n: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..3)
            .map(|_| {
                let start = Instant::now();
                f();
                n as f64 / start.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn main() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/");
    let genuine: Vec<Vec<u8>> = GENUINE
        .iter()
        .map(|f| std::fs::read(format!("{dir}{f}")).expect("sample"))
        .collect();
    let sat = Trust::sat();
    for doc in &genuine {
        let seal = verify(doc, &sat, &NoSatCertificates)
            .expect("xml")
            .expect("sealed");
        assert_eq!(seal.checks.issuer_seal.status, Status::Valid);
    }
    let rounds = 200;
    let real = rate(rounds * genuine.len(), || {
        for _ in 0..rounds {
            for doc in &genuine {
                let _ = verify(doc, &sat, &NoSatCertificates);
            }
        }
    });
    println!("seal_samples {}", genuine.len());
    println!("seal_samples_rate {real:.0}");

    let from = NaiveDate::from_ymd_opt(2025, 3, 1).expect("date");
    let to = NaiveDate::from_ymd_opt(2025, 3, 31).expect("date");
    let listed: Vec<_> = [Direction::Issued, Direction::Received]
        .into_iter()
        .flat_map(|d| {
            invoices_for_period("AAA010101AAA", d, from, to)
                .into_iter()
                .map(move |i| (d, i))
        })
        .collect();
    let mut month = Vec::new();
    let render = rate(listed.len(), || {
        month = listed
            .iter()
            .map(|(d, i)| render_xml("AAA010101AAA", *d, i).expect("xml"))
            .collect();
    });
    let trust = Trust::sat().and(authority_certificate().clone());
    for doc in &month {
        let seal = verify(doc, &trust, &SandboxSat)
            .expect("xml")
            .expect("sealed");
        assert_eq!(seal.status, Status::Valid);
    }
    let sandbox = rate(month.len(), || {
        for doc in &month {
            let _ = verify(doc, &trust, &SandboxSat);
        }
    });
    println!("seal_sandbox_month {}", month.len());
    println!("seal_sandbox_rate {sandbox:.0}");
    // What verification adds to the ingest's preparing of a document (parse, compress;
    // now verify on the same tree), the chain check remembered per certificate.
    let verifier = Verifier {
        trust: &trust,
        sat: &SandboxSat,
    };
    let verified = rate(month.len(), || {
        for doc in &month {
            let _ = cfdi_extract::ingest::prepare(doc, None, verifier).expect("prepared");
        }
    });
    let unverified = rate(month.len(), || {
        for doc in &month {
            let _ = cfdi_extract::cfdi::Cfdi::parse_stamped(doc).expect("parsed");
            let _ = cfdi_extract::db::documents::xml(doc);
        }
    });
    println!("ingest_prepare_verified_rate {verified:.0}");
    println!("ingest_prepare_unverified_rate {unverified:.0}");
    println!(
        "ingest_verification_us_per_document {:.0}",
        1e6 / verified - 1e6 / unverified
    );
    println!("sandbox_render_rate {render:.0}");

    // Sealing and stamping alone, with keys of the sandbox's sizes.
    let year = |y| {
        Utc.with_ymd_and_hms(y, 1, 1, 0, 0, 0)
            .single()
            .expect("date")
    };
    let subject = |name, number| Subject {
        name,
        number,
        valid_from: year(2000),
        valid_to: year(2099),
    };
    let authority = Signer::self_signed(
        include_bytes!("../src/sandbox/docs/keys/authority.der"),
        &subject("CN=Bench", "00000000000000000001"),
    )
    .expect("authority");
    let issuer = authority
        .issue(
            include_bytes!("../src/sandbox/docs/keys/issuer0.der"),
            &subject(
                "CN=AAA010101AAA,OU=Bench,2.5.4.45=AAA010101AAA",
                "00001000000000000042",
            ),
        )
        .expect("issuer");
    let stamper = authority
        .issue(
            include_bytes!("../src/sandbox/docs/keys/sat.der"),
            &subject("CN=SAT,OU=Bench", "00001000000000000099"),
        )
        .expect("sat");
    let texts: Vec<String> = month
        .iter()
        .map(|d| String::from_utf8(d.clone()).expect("utf-8"))
        .collect();
    let sealing = rate(texts.len(), || {
        for t in &texts {
            let sealed = issuer.seal_document(t).expect("seal");
            let _ = stamper.stamp_document(&sealed).expect("stamp");
        }
    });
    println!("sandbox_seal_and_stamp_rate {sealing:.0}");
    // Where sealing's time goes: the original string alone, and one signature.
    let cadenas = rate(texts.len(), || {
        for t in &texts {
            let doc = roxmltree::Document::parse(t).expect("xml");
            let root = doc.root_element();
            let _ = cfdi_extract::seal::original_string(
                cfdi_extract::seal::Kind::of(root).expect("kind"),
                root,
            );
        }
    });
    println!("seal_cadena_rate {cadenas:.0}");
    let signatures = rate(1000, || {
        for i in 0..1000u32 {
            let _ = issuer.sign(cfdi_extract::seal::Hash::Sha256, &i.to_le_bytes());
        }
    });
    println!("seal_sandbox_sign_rate {signatures:.0}");
    let parses = rate(texts.len(), || {
        for t in &texts {
            let _ = roxmltree::Document::parse(t).expect("xml");
        }
    });
    println!("seal_parse_rate {parses:.0}");
}
