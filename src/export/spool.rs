//! An export on its way to the client. The writer (on the heavy pool) appends to an
//! unlinked temporary file and never waits for the client; the response follows the
//! file as it grows. So a slow or stalled client holds its socket and the file (gone
//! when both ends are dropped), never a thread, a database connection or its
//! organization's turn.

use std::fs::File;
use std::io::{self, Cursor, Write};
use std::os::unix::fs::FileExt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rocket::futures::Stream;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;

/// Bytes gathered before they are written to the file and offered to the reader.
const CHUNK: usize = 64 * 1024;

/// How far the writer has got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Progress {
    written: u64,
    end: End,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Writing,
    Done,
    Failed,
}

/// A spool in the temporary directory (`TMPDIR`): its writer and its reader.
pub fn new() -> io::Result<(SpoolWriter, Spooled)> {
    let file = tempfile::tempfile()?;
    let reader = Arc::new(file.try_clone()?);
    let (progress, rx) = watch::channel(Progress {
        written: 0,
        end: End::Writing,
    });
    let writer = SpoolWriter {
        file,
        buf: Vec::with_capacity(CHUNK),
        written: 0,
        progress,
    };
    let spooled = Spooled {
        file: reader,
        progress: rx,
        pos: 0,
    };
    Ok((writer, spooled))
}

pub struct SpoolWriter {
    file: File,
    buf: Vec<u8>,
    written: u64,
    progress: watch::Sender<Progress>,
}

impl SpoolWriter {
    /// The export is complete (`ok`) or stopped short; a writer dropped without this
    /// counts as failed, so the client never takes a cut file for a whole one.
    pub fn finish(mut self, ok: bool) {
        let end = match self.flush() {
            Ok(()) if ok => End::Done,
            _ => End::Failed,
        };
        self.end(end);
    }

    fn end(&self, end: End) {
        self.progress.send_modify(|p| {
            if p.end == End::Writing {
                p.end = end;
            }
        });
    }
}

impl Write for SpoolWriter {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= CHUNK {
            self.flush()?;
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        // Nobody will read the rest: stop the export instead of finishing it.
        if self.progress.is_closed() {
            return Err(io::Error::new(
                io::ErrorKind::BrokenPipe,
                "the client has gone",
            ));
        }
        if self.buf.is_empty() {
            return Ok(());
        }
        self.file.write_all(&self.buf)?;
        self.written += self.buf.len() as u64;
        self.buf.clear();
        let written = self.written;
        self.progress.send_modify(|p| p.written = written);
        Ok(())
    }
}

impl Drop for SpoolWriter {
    fn drop(&mut self) {
        self.end(End::Failed);
    }
}

/// What the writer had done when the reader first looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Bytes are there to send.
    Started,
    /// The writer finished or failed before writing anything.
    Empty,
}

pub struct Spooled {
    file: Arc<File>,
    progress: watch::Receiver<Progress>,
    pos: u64,
}

impl Spooled {
    /// Waits until the first bytes are written or the writer has ended.
    pub async fn start(&mut self) -> Start {
        let first = self
            .progress
            .wait_for(|p| p.written > 0 || p.end != End::Writing)
            .await
            .map(|p| p.written > 0);
        match first {
            Ok(true) => Start::Started,
            _ => Start::Empty,
        }
    }

    /// The next bytes in order, waiting for the writer when the reader has caught up;
    /// None at the end of a complete file, an error when the writer failed.
    async fn next(&mut self) -> Option<io::Result<Vec<u8>>> {
        loop {
            let progress = *self.progress.borrow_and_update();
            if self.pos < progress.written {
                let len = (progress.written - self.pos).min(CHUNK as u64) as usize;
                let (file, pos) = (self.file.clone(), self.pos);
                // A read of the page cache: short, and never waiting on the client.
                let read = tokio::task::spawn_blocking(move || {
                    let mut bytes = vec![0; len];
                    file.read_exact_at(&mut bytes, pos).map(|()| bytes)
                })
                .await
                .unwrap_or_else(|e| Err(io::Error::other(e)));
                if read.is_ok() {
                    self.pos += len as u64;
                }
                return Some(read);
            }
            match progress.end {
                End::Done => return None,
                End::Failed => return Some(Err(io::Error::other("the export failed"))),
                End::Writing => {}
            }
            if self.progress.changed().await.is_err() {
                // The writer is gone; its last word (kept by the channel) decides.
                if self.progress.borrow().end == End::Writing {
                    return Some(Err(io::Error::other("the export stopped")));
                }
            }
        }
    }

    /// The bytes as a stream of readers, for `Response::streamed_body`.
    pub fn into_stream(self) -> impl Stream<Item = Chunk> + Send {
        rocket::futures::stream::unfold(Some(self), |spooled| async move {
            let mut spooled = spooled?;
            match spooled.next().await? {
                Ok(bytes) => Some((Chunk::Bytes(Cursor::new(bytes)), Some(spooled))),
                // An error ends the response without its last chunk: cut, not complete.
                Err(e) => Some((Chunk::Failed(Some(e)), None)),
            }
        })
    }
}

/// One piece of the response body.
pub enum Chunk {
    Bytes(Cursor<Vec<u8>>),
    Failed(Option<io::Error>),
}

impl AsyncRead for Chunk {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            Chunk::Bytes(bytes) => Pin::new(bytes).poll_read(cx, buf),
            Chunk::Failed(e) => Poll::Ready(Err(e
                .take()
                .unwrap_or_else(|| io::Error::other("the export failed")))),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use rocket::futures::StreamExt;
    use tokio::io::AsyncReadExt;

    async fn collect(spooled: Spooled) -> (Vec<u8>, Option<io::Error>) {
        let mut chunks = Box::pin(spooled.into_stream());
        let mut got = Vec::new();
        while let Some(mut chunk) = chunks.next().await {
            if let Err(e) = chunk.read_to_end(&mut got).await {
                return (got, Some(e));
            }
        }
        (got, None)
    }

    #[tokio::test]
    async fn the_reader_follows_the_writer_who_never_waits_for_it() {
        let (mut writer, mut spooled) = new().unwrap();
        let expected: String = (0..100_000u32).map(|n| format!("{n},")).collect();
        // The writer finishes before anyone reads: nothing it does waits on the reader.
        let done = std::thread::spawn(move || {
            for n in 0..100_000u32 {
                write!(writer, "{n},").unwrap();
            }
            writer.finish(true);
        });
        done.join().unwrap();
        assert_eq!(spooled.start().await, Start::Started);
        let (got, error) = collect(spooled).await;
        assert!(error.is_none());
        assert_eq!(String::from_utf8(got).unwrap(), expected);
    }

    #[tokio::test]
    async fn a_failed_or_dropped_writer_cuts_the_stream_with_an_error() {
        let (mut writer, spooled) = new().unwrap();
        writer.write_all(&[b'x'; CHUNK + 10]).unwrap();
        drop(writer);
        let (got, error) = collect(spooled).await;
        // What was written is sent, then the error: never a clean end.
        assert_eq!(got.len(), CHUNK + 10);
        assert!(error.is_some());

        let (writer, mut spooled) = new().unwrap();
        writer.finish(false);
        assert_eq!(spooled.start().await, Start::Empty);

        // A reader gone (the client closed the connection) stops the writer.
        let (mut writer, spooled) = new().unwrap();
        drop(spooled);
        let gone = writer.write_all(&[0; CHUNK]).unwrap_err();
        assert_eq!(gone.kind(), io::ErrorKind::BrokenPipe);
    }
}
