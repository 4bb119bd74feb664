//! Subcommands.

pub mod invoices;
pub mod list_69b;
pub mod ops;
pub mod org;
pub mod sat_certificates;
pub mod serve;
pub mod user;

use crate::cli::{Cli, Command};
use crate::db::Store;

pub fn run(cli: Cli) -> anyhow::Result<()> {
    let store = Store::new(&cli.data_dir, cli.database_url.as_ref());
    match cli.command {
        Command::Serve(args) => serve::run(&store, &cli.data_dir, *args),
        Command::Org(cmd) => org::run(&store, cmd),
        Command::User(cmd) => user::run(&store, &cli.data_dir, cmd),
        Command::Invoices(cmd) => invoices::run(&store, cmd),
        Command::List69b(cmd) => list_69b::run(&store, cmd),
        Command::SatCertificates(cmd) => sat_certificates::run(&store, cmd),
        Command::Backup { to, with_key, key } => {
            ops::backup(&store, &cli.data_dir, &to, with_key, &key)
        }
        Command::Restore { from, force } => ops::restore(&store, &cli.data_dir, &from, force),
        Command::Check { key } => ops::check(&store, &cli.data_dir, &key),
        Command::Healthcheck {
            address,
            port,
            timeout,
        } => ops::healthcheck(address, port, timeout),
    }
}
