//! A `Write` that hands its bytes to an async reader in chunks, for streaming an export
//! written on a blocking thread: the bounded channel makes the writer wait while the
//! client is slow, and fail (so the export stops) once the client has gone.

use std::io::{self, Write};

use tokio::sync::mpsc;

/// Bytes gathered before a chunk is sent.
const CHUNK: usize = 64 * 1024;
/// Chunks in flight: at most CHUNK * (DEPTH + 1) bytes are held per export.
pub const DEPTH: usize = 4;

pub struct ChannelWriter {
    tx: mpsc::Sender<Vec<u8>>,
    buf: Vec<u8>,
}

impl ChannelWriter {
    pub fn new(tx: mpsc::Sender<Vec<u8>>) -> Self {
        ChannelWriter {
            tx,
            buf: Vec::with_capacity(CHUNK),
        }
    }

    fn send(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::replace(&mut self.buf, Vec::with_capacity(CHUNK));
        self.tx
            .blocking_send(chunk)
            .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "the client has gone"))
    }
}

impl Write for ChannelWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.send()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.send()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn chunks_arrive_in_order_and_a_gone_reader_is_an_error() {
        let (tx, mut rx) = mpsc::channel(DEPTH);
        let writer = std::thread::spawn(move || {
            let mut w = ChannelWriter::new(tx);
            for n in 0..100_000u32 {
                write!(w, "{n},").unwrap();
            }
            w.flush().unwrap();
        });
        let mut got = Vec::new();
        while let Some(chunk) = rx.blocking_recv() {
            assert!(chunk.len() <= CHUNK + 16);
            got.extend(chunk);
        }
        writer.join().unwrap();
        let expected: String = (0..100_000u32).map(|n| format!("{n},")).collect();
        assert_eq!(String::from_utf8(got).unwrap(), expected);

        let (tx, rx) = mpsc::channel(1);
        drop(rx);
        let mut w = ChannelWriter::new(tx);
        assert!(w.write_all(&[0; CHUNK]).is_err());
    }
}
