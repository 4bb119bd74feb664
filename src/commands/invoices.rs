//! `cfdi-extract invoices import`: documents from files (invoices and retentions, told
//! apart by their root element), through the ingestion path extractions use (so
//! aggregates and visibility follow the same rules).
//! `cfdi-extract invoices export`: one entity's period to a CSV or XLSX file.

use crate::cfdi::{CfdiError, MAX_DOCUMENT_BYTES};
use crate::cli::InvoicesCommand;
use crate::db::{self, entities::Entity, invoices::Filter, Checkpoints, Db, Store};
use crate::domain::class::DocumentClass;
use crate::domain::entity::normalize_tax_id;
use crate::domain::extraction::Direction;
use crate::events;
use crate::export::{self, About, Format, Layout};
use crate::ingest::{self, IngestError, Owner};
use crate::seal::{
    Certificate, Lookup, SatCertificates, Seal, Status as SealStatus, Trust, Verifier,
};
use anyhow::{bail, Context};
use std::io::Read;
use std::path::{Path, PathBuf};

pub fn run(store: &Store, cmd: InvoicesCommand) -> anyhow::Result<()> {
    match cmd {
        InvoicesCommand::Import {
            entity,
            direction,
            files,
            require_valid_seal,
        } => import(store, &entity, &direction, &files, require_valid_seal),
        InvoicesCommand::Export {
            entity,
            from,
            to,
            direction,
            items,
            format,
            layout,
            out,
        } => {
            let db = Db::connect(store, 2, Checkpoints::Automatic)?;
            let entity = find_entity(&db, &entity)?;
            let date = |name: &str, v: &str| {
                crate::time::parse_date(v)
                    .with_context(|| format!("--{name} must be a date (YYYY-MM-DD), not {v:?}"))
            };
            let (from, to) = (date("from", &from)?, date("to", &to)?);
            if to < from {
                bail!("--to must be on or after --from");
            }
            let about = About {
                tax_id: Some(entity.tax_id.clone()),
                name: Some(entity.name.clone()),
                direction: direction.clone(),
                from: Some(from.format("%Y-%m-%d").to_string()),
                to: Some(to.format("%Y-%m-%d").to_string()),
                search: None,
            };
            let filter = Filter {
                entity_id: Some(entity.id.clone()),
                direction,
                issued_from: Some(from.format("%Y-%m-%d").to_string()),
                issued_before: Some(crate::time::day_after(to)),
                ..Filter::default()
            };
            let rows = if items {
                &export::ITEMS
            } else {
                &export::INVOICES
            };
            let format = Format::parse(&format).context("--format must be csv or xlsx")?;
            let layout = Layout::parse(&layout).context("--layout must be api or accountant")?;
            let file = std::fs::File::create(&out)
                .with_context(|| format!("cannot create {}", out.display()))?;
            let written = export::write(
                &db,
                &entity.org_id,
                &filter,
                rows,
                layout,
                &about,
                format,
                std::io::BufWriter::new(file),
            )?;
            println!("exported\t{}\t{written}", out.display());
            Ok(())
        }
    }
}

/// An entity of any organization, by id (the command line acts for every one).
fn find_entity(db: &Db, id: &str) -> anyhow::Result<Entity> {
    let canonical = uuid::Uuid::parse_str(id).map(|u| u.to_string()).ok();
    canonical
        .map(|c| db::entities::get_any(&db.conn()?, &c))
        .transpose()?
        .flatten()
        .with_context(|| format!("no entity {id:?}"))
}

fn import(
    store: &Store,
    entity: &str,
    direction: &str,
    files: &[PathBuf],
    require_valid_seal: bool,
) -> anyhow::Result<()> {
    let db = Db::connect(store, 2, Checkpoints::Automatic)?;
    let direction = Direction::parse(direction).context("direction must be issued or received")?;
    let entity = find_entity(&db, entity)?;
    let seals = Seals::new(&db);
    let mut failed = 0;
    for file in files {
        let (outcome, seal) =
            import_file(&db, &entity, direction, file, &seals, require_valid_seal)?;
        match outcome {
            // An invoice's line is the contract's; another class names itself.
            Ok((DocumentClass::Invoices, id)) => println!("imported\t{}\t{id}", file.display()),
            Ok((class, id)) => {
                println!("imported\t{}\t{id}\t{}", file.display(), class.singular())
            }
            Err(reason) => {
                failed += 1;
                println!("skipped\t{}\t{reason}", file.display());
            }
        }
        if let Some(seal) = seal {
            println!("seal\t{}\t{}", file.display(), seal_line(&seal));
        }
    }
    if failed > 0 {
        bail!("{failed} of {} file(s) could not be imported", files.len());
    }
    Ok(())
}

/// How an import verifies seals: offline, with the SAT's authorities and the SAT
/// certificates already stored (by the server, or `sat-certificates load`); a stamp
/// whose certificate is not stored is `unverified`, never fetched from here.
struct Seals<'a> {
    trust: Trust,
    db: &'a Db,
}

impl SatCertificates for Seals<'_> {
    fn lookup(&self, number: &str) -> Lookup {
        let stored = self
            .db
            .conn()
            .and_then(|c| db::sat_certificates::get(&c, number))
            .map_err(|e| format!("the certificate store could not be read ({e})"));
        match stored.and_then(|der| der.map(|d| Certificate::from_der(&d)).transpose()) {
            Ok(Some(cert)) => Lookup::Found(Box::new(cert)),
            Ok(None) => Lookup::Missing(format!(
                "the SAT certificate {number} is not stored yet (the server fetches it; \
                 `cfdi-extract sat-certificates load` loads it from a file)"
            )),
            Err(why) => Lookup::Missing(why),
        }
    }
}

impl<'a> Seals<'a> {
    fn new(db: &'a Db) -> Self {
        Seals {
            trust: Trust::sat(),
            db,
        }
    }
}

/// A `seal` line's status and, when it is not valid, the reasons of the checks that
/// are not (the invalid ones first).
fn seal_line(seal: &Seal) -> String {
    let status = serde_json::to_value(seal.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    match seal.status {
        SealStatus::Valid => status,
        SealStatus::Invalid => format!("{status}\t{}", seal.invalid_reasons().join("; ")),
        SealStatus::Unverified => format!("{status}\t{}", seal.unverified_reasons().join("; ")),
    }
}

type Imported = Result<(DocumentClass, String), String>;

/// Imports one file: what it was stored as, or why the file was skipped, and its seal
/// when it is a sealed document. The outer error is for what stops the whole run (an
/// unreadable file, the database).
fn import_file(
    db: &Db,
    entity: &Entity,
    direction: Direction,
    file: &Path,
    seals: &Seals<'_>,
    require_valid_seal: bool,
) -> anyhow::Result<(Imported, Option<Seal>)> {
    let xml = read_bounded(file).with_context(|| format!("cannot read {}", file.display()))?;
    let pdf = std::fs::read(file.with_extension("pdf")).ok();
    // Parsed and compressed before the write transaction: a large or hostile document
    // costs its CPU without holding the database lock the server's writes wait for.
    // Verified on the same tree, once the bounded parser has refused what is hostile.
    let verifier = Verifier {
        trust: &seals.trust,
        sat: seals,
    };
    let doc = match ingest::prepare_any(&xml, pdf.as_deref(), verifier) {
        Ok(doc) => doc,
        Err(e) => return Ok((Err(IngestError::from(e).to_string()), None)),
    };
    let seal = doc.seal().map(|v| v.seal.clone());
    if let Some(reason) = not_the_entity(direction, doc.party(direction), entity) {
        return Ok((Err(reason), seal));
    }
    if let Some(seal) = seal.as_ref().filter(|s| s.status == SealStatus::Invalid) {
        if require_valid_seal {
            let reason = format!(
                "its seal is invalid ({}) and --require-valid-seal is given",
                seal.invalid_reasons().join("; ")
            );
            return Ok((Err(reason), Some(seal.clone())));
        }
    }
    // Each file is a batch of its own: its invoice events commit with it.
    let batch = uuid::Uuid::now_v7().to_string();
    let owner = Owner {
        org_id: &entity.org_id,
        entity_id: &entity.id,
        batch: &batch,
    };
    // One transaction per file: a bad file never undoes the good ones, and a storage
    // error rolls the file back.
    let stored = db.tx(|tx| {
        tx.lock(db::Lock::Entity(&entity.id))?;
        let stored = doc
            .store(tx, owner, direction, None, &mut ingest::Ahead::none())
            .map(|id| (doc.class(), id));
        match stored {
            Err(IngestError::Storage(e)) => Err(e),
            other => {
                events::documents::flush(tx, &batch, i64::MAX)?;
                Ok(other.map_err(|e| e.to_string()))
            }
        }
    })?;
    Ok((stored, seal))
}

/// The file's bytes, reading at most one byte past the document size limit (the
/// parser then refuses it) so a huge file is never loaded whole.
fn read_bounded(file: &Path) -> std::io::Result<Vec<u8>> {
    let limit = u64::try_from(MAX_DOCUMENT_BYTES).unwrap_or(u64::MAX);
    let mut bytes = Vec::new();
    std::fs::File::open(file)?
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Why the document does not belong to the entity in this direction, if it does not:
/// an issued document's issuer (a received one's receiver) must be the entity.
fn not_the_entity(direction: Direction, tax_id: &str, entity: &Entity) -> Option<String> {
    let role = match direction {
        Direction::Issued => "issuer",
        Direction::Received => "receiver",
    };
    let rfc = normalize_tax_id(tax_id);
    (rfc != entity.tax_id).then(|| {
        format!(
            "the document's {role} RFC is {:?}, not the entity's {:?} (check --entity and --direction)",
            CfdiError::quoted(&rfc),
            entity.tax_id
        )
    })
}
