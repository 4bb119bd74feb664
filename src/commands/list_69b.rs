//! `cfdi-extract list-69b load FILE` and `list-69b show`: the SAT's 69-B list.

use crate::cli::List69bCommand;
use crate::db::{self, Checkpoints, Db, Store};
use crate::periodic::Stopping;
use crate::sat::list_69b::{self, refresh, spool::spool, Loaded, MAX_LIST_BYTES};
use anyhow::Context;

pub fn run(store: &Store, cmd: List69bCommand) -> anyhow::Result<()> {
    let db = Db::connect(store, 2, Checkpoints::Automatic)?;
    match cmd {
        List69bCommand::Load { file } => {
            let source = file.display().to_string();
            let opened =
                std::fs::File::open(&file).with_context(|| format!("cannot open {source}"))?;
            let list = spool(opened, MAX_LIST_BYTES).with_context(|| source.clone())?;
            // Never stopped from within: a signal ends the process, and the
            // transaction with it.
            match list_69b::load(&db, list, &source, &Stopping::default())
                .with_context(|| format!("{source} refused; the current list is kept"))?
            {
                Loaded::New(version, changed, events) => println!(
                    "loaded\tversion {}\t{} taxpayers\tupdated to {}\t{changed} changed\t{events} events",
                    version.id,
                    version.entries,
                    version.updated_to.as_deref().unwrap_or("unknown"),
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
