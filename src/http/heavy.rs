//! Heavy requests: exports, summaries, rendered PDFs and e.firma checks, work that runs
//! for seconds where a list runs for milliseconds. It runs on a thread pool of its own,
//! so it never takes the blocking threads every database call and password check waits
//! for, and each organization gets a bounded share of that pool: `per_org` requests at
//! a time, `QUEUE` more waiting their turn, and beyond that a 429 with `Retry-After`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::Context as _;
use parking_lot::Mutex;
use tokio::runtime::Runtime;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use crate::http::error::{ApiError, ApiResult};

/// Heavy requests of one organization that may wait for its turn; more are refused.
pub const QUEUE: usize = 8;
/// Export downloads of one organization open at once: each keeps its spool file in
/// `TMPDIR` until its client has read it (or gone), so they bound its disk use.
pub const OPEN_DOWNLOADS: usize = 16;

pub struct Heavy {
    /// A runtime used only for its blocking pool: `threads` threads at most.
    pool: Option<Runtime>,
    per_org: usize,
    orgs: Mutex<HashMap<String, Arc<Share>>>,
}

/// One organization's share: `running` permits, how many hold or await one, and its
/// open downloads.
struct Share {
    running: Arc<Semaphore>,
    admitted: AtomicUsize,
    downloads: AtomicUsize,
}

/// One open export download of an organization, held until its response ends.
pub struct Download(Arc<Share>);

impl Drop for Download {
    fn drop(&mut self) {
        self.0.downloads.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An organization's turn on the pool, held while its work runs (an export holds it
/// until its file is written, not while the client downloads it).
pub struct Turn {
    _permit: OwnedSemaphorePermit,
    _admitted: Admitted,
}

struct Admitted(Arc<Share>);

impl Drop for Admitted {
    fn drop(&mut self) {
        self.0.admitted.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Heavy {
    /// `threads` for heavy work; each organization may use about half of them at once,
    /// so one organization never holds them all.
    pub fn new(threads: usize) -> anyhow::Result<Heavy> {
        let threads = threads.max(2);
        let pool = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(threads)
            .thread_name("heavy")
            .build()
            .context("cannot start the pool for heavy requests")?;
        Ok(Heavy {
            pool: Some(pool),
            per_org: threads / 2,
            orgs: Mutex::default(),
        })
    }

    /// A pool sized for this machine: one thread per core.
    pub fn for_this_host() -> anyhow::Result<Heavy> {
        Heavy::new(std::thread::available_parallelism().map_or(2, |n| n.get()))
    }

    fn share(&self, org: &str) -> Arc<Share> {
        self.orgs
            .lock()
            .entry(org.to_string())
            .or_insert_with(|| {
                Arc::new(Share {
                    running: Arc::new(Semaphore::new(self.per_org)),
                    admitted: AtomicUsize::new(0),
                    downloads: AtomicUsize::new(0),
                })
            })
            .clone()
    }

    /// Opens one of `org`'s export downloads; a 429 when `OPEN_DOWNLOADS` are open.
    pub fn download(&self, org: &str) -> ApiResult<Download> {
        let share = self.share(org);
        if share.downloads.fetch_add(1, Ordering::AcqRel) >= OPEN_DOWNLOADS {
            share.downloads.fetch_sub(1, Ordering::AcqRel);
            return Err(ApiError::TooManyRequests);
        }
        Ok(Download(share))
    }

    /// Waits for `org`'s turn; a 429 when `QUEUE` of its requests already wait.
    pub async fn turn(&self, org: &str) -> ApiResult<Turn> {
        let share = self.share(org);
        if share.admitted.fetch_add(1, Ordering::AcqRel) >= self.per_org + QUEUE {
            share.admitted.fetch_sub(1, Ordering::AcqRel);
            return Err(ApiError::TooManyRequests);
        }
        let admitted = Admitted(share.clone());
        let permit = share
            .running
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| ApiError::Internal(e.into()))?;
        Ok(Turn {
            _permit: permit,
            _admitted: admitted,
        })
    }

    /// Runs `f` on the heavy pool; the caller holds a `Turn` (moved into `f` when the
    /// work outlives the request).
    pub fn spawn<T, F>(&self, f: F) -> JoinHandle<T>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        match &self.pool {
            Some(pool) => pool.spawn_blocking(f),
            // Only while dropping: never seen by a request.
            None => tokio::task::spawn_blocking(f),
        }
    }

    /// `f` on the heavy pool in `org`'s turn, for work that ends with the request.
    pub async fn run<T, E, F>(&self, org: &str, f: F) -> ApiResult<T>
    where
        T: Send + 'static,
        E: Into<ApiError> + Send + 'static,
        F: FnOnce() -> Result<T, E> + Send + 'static,
    {
        let turn = self.turn(org).await?;
        let out = self.spawn(move || {
            let _turn = turn;
            f()
        });
        out.await
            .map_err(|e| ApiError::Internal(anyhow::anyhow!("heavy task failed: {e}")))?
            .map_err(Into::into)
    }
}

impl Drop for Heavy {
    /// Dropped by Rocket inside the async runtime, where a runtime may not block.
    fn drop(&mut self) {
        if let Some(pool) = self.pool.take() {
            pool.shutdown_background();
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[tokio::test]
    async fn an_organization_waits_its_turn_and_is_refused_past_its_queue() {
        let heavy = Heavy::new(4).unwrap();
        assert_eq!(heavy.per_org, 2);
        let mut held = Vec::new();
        for _ in 0..2 {
            held.push(heavy.turn("a").await.unwrap());
        }
        // The third waits (its future is pending) and counts against the queue.
        let waiting: Vec<_> = (0..QUEUE).map(|_| Box::pin(heavy.turn("a"))).collect();
        let mut waiting = waiting;
        for w in &mut waiting {
            assert!(tokio::time::timeout(Duration::from_millis(10), w)
                .await
                .is_err());
        }
        assert!(matches!(
            heavy.turn("a").await,
            Err(ApiError::TooManyRequests)
        ));
        // Another organization is not affected.
        let other = heavy.turn("b").await.unwrap();
        drop(other);
        // A finished turn admits the next.
        held.pop();
        drop(waiting);
        assert!(heavy.turn("a").await.is_ok());
    }

    #[test]
    fn open_downloads_are_bounded_per_organization_until_they_end() {
        let heavy = Heavy::new(2).unwrap();
        let open: Vec<_> = (0..OPEN_DOWNLOADS)
            .map(|_| heavy.download("a").unwrap())
            .collect();
        assert!(matches!(
            heavy.download("a"),
            Err(ApiError::TooManyRequests)
        ));
        assert!(heavy.download("b").is_ok());
        drop(open);
        assert!(heavy.download("a").is_ok());
    }

    #[tokio::test]
    async fn work_runs_on_threads_of_its_own() {
        let heavy = Heavy::new(2).unwrap();
        let name = heavy
            .run("a", || {
                Ok::<_, ApiError>(std::thread::current().name().map(String::from))
            })
            .await
            .unwrap();
        assert_eq!(name.as_deref(), Some("heavy"));
    }
}
