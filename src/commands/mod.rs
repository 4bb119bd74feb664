//! Subcommands.

pub mod invoices;
pub mod list_69b;
pub mod ops;
pub mod org;
pub mod serve;
pub mod user;

use crate::cli::{Cli, Command};

pub fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Serve(args) => serve::run(&cli.data_dir, *args),
        Command::Org(cmd) => org::run(&cli.data_dir, cmd),
        Command::User(cmd) => user::run(&cli.data_dir, cmd),
        Command::Invoices(cmd) => invoices::run(&cli.data_dir, cmd),
        Command::List69b(cmd) => list_69b::run(&cli.data_dir, cmd),
        Command::Backup { to, with_key, key } => ops::backup(&cli.data_dir, &to, with_key, &key),
        Command::Restore { from, force } => ops::restore(&cli.data_dir, &from, force),
        Command::Check { key } => ops::check(&cli.data_dir, &key),
        Command::Healthcheck {
            address,
            port,
            timeout,
        } => ops::healthcheck(address, port, timeout),
    }
}
