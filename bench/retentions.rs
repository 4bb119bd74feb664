//! Retention ingest: 10,000 CFDI de Retenciones (copies of the shared RET 1.0 digital
//! platform and RET 2.0 all-complements samples, each with a UUID of its own) parsed,
//! compressed and stored through `ingest::prepare_retention` and
//! `ingest::store_retention` in batches of 500 per transaction, the way an import or a
//! package stores them. Prints `retention_documents` and `retention_rate <documents per
//! second>` (median of 3 passes, each on a fresh database).

use cfdi_extract::db::{self, Db};
use cfdi_extract::domain::extraction::Direction;
use cfdi_extract::ingest::{self, Owner};
use cfdi_extract::seal;
use std::time::Instant;

const DOCUMENTS: usize = 10_000;
const BATCH: usize = 500;
const SAMPLES: [(&str, &str); 2] = [
    (
        "ret10-plataformastecnologicas-tfd10.xml",
        "F25F9852-6F4C-4782-9D47-3119EB3FAD3A",
    ),
    (
        "ret20-todos-complementos-relacionado-tfd11.xml",
        "02e3bc7c-beda-41bf-8a6b-f74915e9b61f",
    ),
];

fn documents() -> Vec<Vec<u8>> {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/retenciones-samples/"
    );
    let texts: Vec<(String, &str)> = SAMPLES
        .iter()
        .map(|(name, uuid)| {
            let text = std::fs::read_to_string(format!("{dir}{name}")).expect("sample");
            (text, *uuid)
        })
        .collect();
    (0..DOCUMENTS)
        .map(|i| {
            let (text, uuid) = &texts[i % texts.len()];
            let own = format!("{:08X}-0000-4000-8000-{:012X}", i, i);
            text.replace(uuid, &own).into_bytes()
        })
        .collect()
}

/// One pass on a fresh database: the seconds storing every document took.
fn ingest(docs: &[Vec<u8>]) -> anyhow::Result<f64> {
    let dir = tempfile::tempdir()?;
    let db = Db::open(dir.path(), 2)?;
    let (org, entity) = db.tx(|tx| {
        let org = db::orgs::insert(tx, "Bench")?;
        let entity = db::entities::insert(tx, &org.id, "XAXX010101000", "Bench", b"sealed")?;
        Ok((org.id, entity.id))
    })?;
    let owner = Owner {
        org_id: &org,
        entity_id: &entity,
        batch: "bench",
    };
    let start = Instant::now();
    for chunk in docs.chunks(BATCH) {
        // Parsed and compressed before the write transaction, as imports do.
        let prepared = chunk
            .iter()
            .map(|xml| ingest::prepare_retention(xml, None, seal::Verifier::offline()))
            .collect::<Result<Vec<_>, _>>()?;
        db.tx(|tx| {
            for doc in &prepared {
                ingest::store_retention(tx, owner, Direction::Received, None, doc)
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            Ok(())
        })?;
    }
    let seconds = start.elapsed().as_secs_f64();
    let stored: i64 = db.conn()?.one(
        "SELECT COUNT(*) FROM retentions",
        cfdi_extract::db::sql::params![],
        |r| r.get(0),
    )?;
    anyhow::ensure!(stored as usize == docs.len(), "{stored} stored");
    Ok(seconds)
}

fn main() -> anyhow::Result<()> {
    let docs = documents();
    let mut rates: Vec<f64> = (0..3)
        .map(|_| ingest(&docs).map(|s| docs.len() as f64 / s))
        .collect::<anyhow::Result<_>>()?;
    rates.sort_by(f64::total_cmp);
    println!("retention_documents {}", docs.len());
    println!("retention_rate {:.0}", rates[1]);
    Ok(())
}
