//! `cfdi-extract invoices import`: documents from files, through the ingestion path
//! extractions use (so aggregates and visibility follow the same rules).

use crate::cli::InvoicesCommand;
use crate::db::{self, Db};
use crate::domain::extraction::Direction;
use crate::ingest::{self, Owner};
use anyhow::{bail, Context};
use std::path::Path;

pub fn run(data_dir: &Path, cmd: InvoicesCommand) -> anyhow::Result<()> {
    let InvoicesCommand::Import {
        entity,
        direction,
        files,
    } = cmd;
    let db = Db::open(data_dir, 2)?;
    let direction = Direction::parse(&direction).context("direction must be issued or received")?;
    let entity_id = uuid::Uuid::parse_str(&entity).map(|u| u.to_string()).ok();
    let entity = entity_id
        .map(|id| db::entities::get_any(&*db.conn()?, &id))
        .transpose()?
        .flatten()
        .with_context(|| format!("no entity {entity:?}"))?;
    let owner = Owner {
        org_id: &entity.org_id,
        entity_id: &entity.id,
    };
    let mut failed = 0;
    for file in &files {
        let xml = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        let pdf = std::fs::read(file.with_extension("pdf")).ok();
        // One transaction per file: a bad file never undoes the good ones. A document
        // error happens before any write; a storage error rolls the file back.
        let imported = db.tx(|tx| {
            match ingest::ingest_document(tx, owner, direction, None, &xml, pdf.as_deref()) {
                Err(ingest::IngestError::Storage(e)) => Err(e),
                other => Ok(other),
            }
        })?;
        match imported {
            Ok(id) => println!("imported\t{}\t{id}", file.display()),
            Err(e) => {
                failed += 1;
                println!("skipped\t{}\t{e}", file.display());
            }
        }
    }
    if failed > 0 {
        bail!("{failed} of {} file(s) could not be imported", files.len());
    }
    Ok(())
}
