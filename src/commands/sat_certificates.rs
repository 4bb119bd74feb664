//! `cfdi-extract sat-certificates load FILE.cer...`: the SAT's stamping certificates
//! from files, for deployments that do not reach the SAT's repository.

use anyhow::Context;

use crate::cli::SatCertificatesCommand;
use crate::db::{Checkpoints, Db, Store};
use crate::sat::certificates;
use crate::seal::Trust;

/// A `.cer` is a couple of KiB; a larger file is not one.
const MAX_FILE_BYTES: u64 = 64 * 1024;

pub fn run(store: &Store, cmd: SatCertificatesCommand) -> anyhow::Result<()> {
    let db = Db::connect(store, 2, Checkpoints::Automatic)?;
    let SatCertificatesCommand::Load { files } = cmd;
    let mut read = Vec::new();
    for file in &files {
        let size = std::fs::metadata(file)
            .with_context(|| format!("cannot open {}", file.display()))?
            .len();
        anyhow::ensure!(
            size <= MAX_FILE_BYTES,
            "{}: over {MAX_FILE_BYTES} bytes: not a certificate",
            file.display()
        );
        let bytes =
            std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
        read.push((file.display().to_string(), bytes));
    }
    // Stored if the SAT or the sandbox's authority issued it; whether a stamp signed
    // with it verifies is decided by the server's trust (the sandbox's only there).
    let trust = Trust::sat().and(crate::sandbox::docs::authority_certificate().clone());
    let mut refused = 0;
    for (name, outcome) in certificates::load(&db, &trust, &read) {
        match outcome {
            Ok((number, true)) => println!("loaded\t{number}\t{name}"),
            Ok((number, false)) => println!("already stored\t{number}\t{name}"),
            Err(why) => {
                refused += 1;
                eprintln!("refused\t{name}: the certificate {why}");
            }
        }
    }
    anyhow::ensure!(refused == 0, "{refused} of {} files refused", files.len());
    Ok(())
}
