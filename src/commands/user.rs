//! `cfdi-extract user create|list|set-password`. Passwords come from stdin only.

use crate::cli::UserCommand;
use crate::db::{self, Checkpoints, Db, Store};
use anyhow::{bail, Context};
use std::io::Read;
use std::path::Path;

/// Reads the password from stdin: the whole input, without its final line break.
fn read_password() -> anyhow::Result<String> {
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .context("cannot read the password from stdin")?;
    let password = input.strip_suffix('\n').unwrap_or(&input);
    let password = password.strip_suffix('\r').unwrap_or(password);
    if password.is_empty() {
        bail!("the password can't be empty");
    }
    Ok(password.to_string())
}

fn check_email(email: &str) -> anyhow::Result<()> {
    let email = email.trim();
    match email.split_once('@') {
        Some((local, domain))
            if !local.is_empty()
                && !domain.is_empty()
                && !email.contains(char::is_whitespace)
                && !email.contains(':') =>
        {
            Ok(())
        }
        _ => bail!("{email:?} is not a valid email address"),
    }
}

pub fn run(store: &Store, data_dir: &Path, cmd: UserCommand) -> anyhow::Result<()> {
    let db = Db::connect(store, 2, Checkpoints::Automatic)?;
    match cmd {
        UserCommand::Create { org, email, .. } => {
            check_email(&email)?;
            let org = db::orgs::find(&db.conn()?, &org)?.with_context(|| {
                format!("no organization {org:?} (see `cfdi-extract org list`)")
            })?;
            let hash = crate::password::hash(&read_password()?)?;
            let user = db
                .tx(|tx| db::users::insert(tx, &org.id, &email, &hash))
                .map_err(|e| {
                    if db::is_unique_violation(&e) {
                        anyhow::anyhow!(
                            "a user with email {} already exists",
                            db::users::normalize_email(&email)
                        )
                    } else {
                        e
                    }
                })?;
            println!("{}", user.id);
        }
        UserCommand::List { org } => {
            let conn = db.conn()?;
            let org_id = match org {
                Some(o) => Some(
                    db::orgs::find(&conn, &o)?
                        .with_context(|| format!("no organization {o:?}"))?
                        .id,
                ),
                None => None,
            };
            for u in db::users::list(&conn, org_id.as_deref())? {
                println!("{}\t{}\t{}\t{}", u.id, u.email, u.org_id, u.created_at);
            }
        }
        UserCommand::SetPassword { email, .. } => {
            let hash = crate::password::hash(&read_password()?)?;
            if !db.tx(|tx| db::users::set_password(tx, &email, &hash))? {
                bail!("no user with email {}", db::users::normalize_email(&email));
            }
            // After the commit: a running server retires cached logins on its next request.
            crate::auth::users_stamp::bump(data_dir)?;
            println!("password updated");
        }
    }
    Ok(())
}
