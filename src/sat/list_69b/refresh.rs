//! The 69-B list's refresh: a thread of its own downloads the list every
//! `--list-69b-every` from `--list-69b-url` (or takes the sandbox's built-in one) and
//! loads it as `list-69b load` does. An identical file makes no new version; a file
//! that fails to download or to parse changes nothing (the line that broke it is
//! logged and kept for `list-69b show`), and the next try comes sooner. The last try
//! is kept in `settings`, so a restart neither repeats a refresh nor skips one. A stop
//! abandons a download under way at once (a slow server cannot hold it past systemd's
//! `TimeoutStopSec`), and the current list stays as it was.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use anyhow::Context as _;
use chrono::Utc;

use super::spool::{spool, Spooled};
use super::{load, Abandoned, Loaded, MAX_LIST_BYTES};
use crate::db::{self, Db};
use crate::periodic::{Periodic, Stopping};

/// Where the last try is kept: `<RFC 3339 time> <outcome>`.
pub const LAST_TRY_SETTING: &str = "list_69b_last_try";
/// The longest a failed try waits for the next.
const RETRY: Duration = Duration::from_secs(3600);
/// The whole download (the list is a few MB).
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(60);
/// How often a try waiting for its download looks whether the server is stopping.
const STOP_POLL: Duration = Duration::from_millis(100);
/// How the last try's outcome starts when it failed.
const REFUSED: &str = "refused";

/// Where the list comes from.
#[derive(Debug, Clone)]
pub enum Origin {
    /// Downloaded (`--list-69b-url`, or the SAT's with `--sat portal`).
    Url(String),
    /// Built in (the sandbox's), named for `source`.
    BuiltIn {
        name: &'static str,
        bytes: &'static [u8],
    },
}

impl Origin {
    fn name(&self) -> &str {
        match self {
            Origin::Url(url) => url,
            Origin::BuiltIn { name, .. } => name,
        }
    }

    /// The list, spooled; None when the server stopped first.
    fn fetch(&self, stopping: &Stopping) -> anyhow::Result<Option<Spooled>> {
        match self {
            Origin::BuiltIn { bytes, .. } => spool(*bytes, MAX_LIST_BYTES).map(Some),
            Origin::Url(url) => download_unless_stopped(url, stopping),
        }
    }
}

/// Downloads on a thread of its own and waits for it unless the server stops first:
/// then the download is abandoned (its thread ends with the process, or at its
/// timeout), whatever it was doing (resolving, connecting, a server trickling bytes).
fn download_unless_stopped(url: &str, stopping: &Stopping) -> anyhow::Result<Option<Spooled>> {
    let (done, result) = mpsc::sync_channel(1);
    let url = url.to_owned();
    std::thread::Builder::new()
        .name("list-69b-download".into())
        .spawn(move || {
            let _ = done.send(download(&url));
        })
        .context("cannot start the download")?;
    loop {
        match result.recv_timeout(STOP_POLL) {
            Ok(list) => return list.map(Some),
            Err(RecvTimeoutError::Timeout) if stopping.is_set() => return Ok(None),
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => anyhow::bail!("the download ended unanswered"),
        }
    }
}

/// The download, spooled to disk as it arrives.
fn download(url: &str) -> anyhow::Result<Spooled> {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(DOWNLOAD_TIMEOUT))
        .build();
    let mut response = ureq::Agent::new_with_config(config)
        .get(url)
        .call()
        .context("download failed")?;
    spool(response.body_mut().as_reader(), MAX_LIST_BYTES).context("download failed")
}

/// The wait after a try.
fn wait_after(ok: bool, every: Duration) -> Duration {
    if ok {
        every
    } else {
        every.min(RETRY)
    }
}

/// What is left of the wait after the last try (`LAST_TRY_SETTING`'s value) at `now`.
fn first_wait(last: Option<&str>, every: Duration, now: chrono::DateTime<Utc>) -> Duration {
    last.and_then(|v| v.split_once(' '))
        .and_then(|(at, outcome)| {
            let since = (now - crate::time::parse(at)?).to_std().ok()?;
            Some(wait_after(!outcome.starts_with(REFUSED), every).saturating_sub(since))
        })
        .unwrap_or(Duration::ZERO)
}

/// Starts the refresh; the first try is due the wait after the last one (at once when
/// there was none).
pub fn start(db: Db, origin: Origin, every: Duration) -> anyhow::Result<Periodic> {
    let last = db::settings::get(&db.conn()?, LAST_TRY_SETTING)?;
    let first = first_wait(last.as_deref(), every, Utc::now());
    Periodic::spawn_watching("list-69b", first, move |stopping| {
        wait_after(try_once(&db, &origin, stopping), every)
    })
}

/// One try: fetch, parse, load; its outcome logged and kept. False when it failed. A
/// try the stop cut short (downloading or loading) records nothing: the next start
/// tries again.
fn try_once(db: &Db, origin: &Origin, stopping: &Stopping) -> bool {
    let source = origin.name();
    let loaded = match origin.fetch(stopping) {
        Ok(None) => Err(Abandoned.into()),
        Ok(Some(list)) => load(db, list, source, stopping),
        Err(e) => Err(e),
    };
    if let Some(Abandoned) = loaded.as_ref().err().and_then(|e| e.downcast_ref()) {
        log::info!("69-B list from {source}: abandoned, the server is stopping");
        return true;
    }
    let (outcome, ok) = match &loaded {
        Ok(Loaded::New(version, changed, events)) => {
            log::info!(
                "69-B list from {source}: version {}, {} taxpayers, {changed} changed, {events} event(s)",
                version.id,
                version.entries,
            );
            (format!("loaded version {}", version.id), true)
        }
        Ok(Loaded::Unchanged(version)) => {
            log::info!(
                "69-B list from {source}: unchanged (version {})",
                version.id
            );
            (format!("unchanged version {}", version.id), true)
        }
        Err(e) => {
            log::error!("69-B list from {source} refused; the current list is kept: {e:#}");
            (format!("{REFUSED}: {e:#}"), false)
        }
    };
    let value = format!("{} {outcome}", crate::time::now());
    if let Err(e) = db.tx(|tx| db::settings::set(tx, LAST_TRY_SETTING, &value)) {
        log::error!("69-B list: cannot record the try: {e:#}");
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    #[test]
    fn a_restart_waits_what_is_left_of_the_last_tries_wait() {
        let now = crate::time::parse("2026-05-03T12:00:00Z").expect("time");
        // Never tried: at once.
        assert_eq!(first_wait(None, DAY, now), Duration::ZERO);
        // Loaded 2 hours ago, daily: 22 hours left.
        let ok = "2026-05-03T10:00:00.000000Z loaded version 4";
        assert_eq!(first_wait(Some(ok), DAY, now), DAY - 2 * RETRY);
        // Refused 20 minutes ago: the hour's retry, 40 minutes left.
        let refused = "2026-05-03T11:40:00.000000Z refused: line 5: 19 fields";
        assert_eq!(
            first_wait(Some(refused), DAY, now),
            Duration::from_secs(2400)
        );
        // Long past: at once; a shorter interval than the retry wins.
        let old = "2026-04-01T00:00:00.000000Z unchanged version 4";
        assert_eq!(first_wait(Some(old), DAY, now), Duration::ZERO);
        let secs = Duration::from_secs(1);
        assert_eq!(first_wait(Some(refused), secs, now), Duration::ZERO);
    }
}
