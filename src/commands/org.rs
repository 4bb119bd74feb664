//! `cfdi-extract org create|list`.

use crate::cli::OrgCommand;
use crate::db::{self, Checkpoints, Db, Store};

pub fn run(store: &Store, cmd: OrgCommand) -> anyhow::Result<()> {
    let db = Db::connect(store, 2, Checkpoints::Automatic)?;
    match cmd {
        OrgCommand::Create { name } => {
            let name = name.trim();
            if name.is_empty() {
                anyhow::bail!("the organization name can't be blank");
            }
            let org = db.tx(|tx| db::orgs::insert(tx, name))?;
            println!("{}", org.id);
        }
        OrgCommand::List => {
            for org in db::orgs::list(&db.conn()?)? {
                println!("{}\t{}\t{}", org.id, org.name, org.created_at);
            }
        }
    }
    Ok(())
}
