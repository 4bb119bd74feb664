//! `cfdi-extract list-69b load FILE` and `list-69b show`: the SAT's 69-B list.

use crate::cli::List69bCommand;
use crate::db::{self, Checkpoints, Db, Store};
use crate::sat::list_69b::{self, refresh, Loaded, MAX_LIST_BYTES};
use anyhow::Context;
use std::io::Read;

pub fn run(store: &Store, cmd: List69bCommand) -> anyhow::Result<()> {
    let db = Db::connect(store, 2, Checkpoints::Automatic)?;
    match cmd {
        List69bCommand::Load { file } => {
            let mut bytes = vec![];
            std::fs::File::open(&file)
                .with_context(|| format!("cannot open {}", file.display()))?
                .take(MAX_LIST_BYTES + 1)
                .read_to_end(&mut bytes)
                .with_context(|| format!("cannot read {}", file.display()))?;
            anyhow::ensure!(
                bytes.len() as u64 <= MAX_LIST_BYTES,
                "{}: over {MAX_LIST_BYTES} bytes: not the 69-B list",
                file.display()
            );
            let source = file.display().to_string();
            match list_69b::load(&db, &bytes, &source)
                .with_context(|| format!("{source} refused; the current list is kept"))?
            {
                Loaded::New(version, changed, events) => println!(
                    "loaded\tversion {}\t{} taxpayers\tupdated to {}\t{} changed\t{events} events",
                    version.id,
                    version.entries,
                    version.updated_to.as_deref().unwrap_or("unknown"),
                    changed.len()
                ),
                Loaded::Unchanged(version) => {
                    println!(
                        "unchanged\tversion {}\tthe same file as the current list",
                        version.id
                    )
                }
            }
        }
        List69bCommand::Show => {
            let conn = db.conn()?;
            match db::list_69b::current(&conn)? {
                Some(v) => println!(
                    "version {}\tloaded {}\tupdated to {}\t{} taxpayers\t{}",
                    v.id,
                    v.loaded_at,
                    v.updated_to.as_deref().unwrap_or("unknown"),
                    v.entries,
                    v.source
                ),
                None => println!("no list loaded"),
            }
            // The refresh's last try, with the line that broke a refused download.
            if let Some(last) = db::settings::get(&conn, refresh::LAST_TRY_SETTING)? {
                println!("last refresh\t{last}");
            }
        }
    }
    Ok(())
}
