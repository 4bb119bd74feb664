//! A list on its way in (a download, a file given to the CLI): copied to an unnamed
//! temporary file in `TMPDIR`, up to the cap, learning its SHA-256 and whether it is
//! UTF-8 on the way, so that it is then parsed from disk and never held in memory.

use std::fs::File;
use std::io::{Read, Seek, Write};

use anyhow::Context as _;
use sha2::{Digest, Sha256};

/// A spooled list, its file rewound.
#[derive(Debug)]
pub struct Spooled {
    pub file: File,
    pub sha256: String,
    /// The whole file is UTF-8 (else it is read as Windows-1252: `csv::Decoded`).
    pub utf8: bool,
}

/// Copies `from` to a temporary file (gone when the `Spooled` is dropped, or the process
/// ends); refused past `limit` bytes.
pub fn spool(mut from: impl Read, limit: u64) -> anyhow::Result<Spooled> {
    let mut file = tempfile::tempfile().context("cannot create a temporary file (TMPDIR)")?;
    let mut sha = Sha256::new();
    let mut utf8 = Utf8::default();
    let mut buf = vec![0; 64 * 1024];
    let mut total = 0u64;
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("cannot read the list"),
        };
        total += n as u64;
        anyhow::ensure!(total <= limit, "over {limit} bytes: not the 69-B list");
        sha.update(&buf[..n]);
        utf8.feed(&buf[..n]);
        file.write_all(&buf[..n])
            .context("cannot write the temporary file (TMPDIR)")?;
    }
    file.rewind()
        .context("cannot read the temporary file back")?;
    Ok(Spooled {
        file,
        sha256: sha.finalize().iter().map(|b| format!("{b:02x}")).collect(),
        utf8: utf8.done(),
    })
}

/// Whether bytes handed in pieces are UTF-8 as a whole: a character cut between two
/// pieces is carried over.
#[derive(Debug, Default)]
struct Utf8 {
    broken: bool,
    carry: Vec<u8>,
}

impl Utf8 {
    fn feed(&mut self, piece: &[u8]) {
        if self.broken {
            return;
        }
        let joined;
        let bytes = if self.carry.is_empty() {
            piece
        } else {
            joined = [std::mem::take(&mut self.carry).as_slice(), piece].concat();
            &joined
        };
        match std::str::from_utf8(bytes) {
            Ok(_) => {}
            // Cut short at the end: the rest comes with the next piece.
            Err(e) if e.error_len().is_none() => self.carry = bytes[e.valid_up_to()..].to_vec(),
            Err(_) => self.broken = true,
        }
    }

    fn done(self) -> bool {
        !self.broken && self.carry.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spooled(bytes: &[u8], limit: u64) -> anyhow::Result<(Spooled, Vec<u8>)> {
        let mut s = spool(bytes, limit)?;
        let mut back = vec![];
        s.file.read_to_end(&mut back)?;
        Ok((s, back))
    }

    #[test]
    fn a_spooled_list_reads_back_whole_with_its_sha256() {
        let (s, back) = spooled(b"abc", 3).expect("spooled");
        assert_eq!(back, b"abc");
        assert_eq!(
            s.sha256,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(s.utf8);
        let err = spooled(b"abcd", 3).expect_err("over the limit");
        assert!(err.to_string().contains("over 3 bytes"), "{err}");
    }

    #[test]
    fn utf8_is_told_from_windows_1252_across_pieces() {
        let whole = |pieces: &[&[u8]]| {
            let mut u = Utf8::default();
            pieces.iter().for_each(|p| u.feed(p));
            u.done()
        };
        let enie = "Ñ".as_bytes();
        assert!(
            whole(&[b"PE", &enie[..1], &enie[1..], b"A"]),
            "cut inside Ñ"
        );
        assert!(!whole(&[b"PE\xD1A"]), "Windows-1252 Ñ");
        assert!(!whole(&[b"PE", &enie[..1]]), "cut short at the end");
        assert!(!whole(&[b"\xD1", "Ñ".as_bytes()]));
    }
}
