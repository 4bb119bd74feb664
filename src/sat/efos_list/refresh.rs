//! The 69-B list's refresh: a thread of its own downloads the list every
//! `--list-69b-every` from `--list-69b-url` (or takes the sandbox's built-in one) and
//! loads it as `list-69b load` does. An identical file makes no new version; a file
//! that fails to download or to parse changes nothing (the line that broke it is
//! logged and kept for `list-69b show`), and the next try comes sooner. The last try
//! is kept in `settings`, so a restart neither repeats a refresh nor skips one.

use std::time::Duration;

use anyhow::Context as _;
use chrono::Utc;

use super::{load, Loaded, MAX_LIST_BYTES};
use crate::db::{self, Db};
use crate::periodic::Periodic;

/// Where the last try is kept: `<RFC 3339 time> <outcome>`.
pub const LAST_TRY_SETTING: &str = "list_69b_last_try";
/// The longest a failed try waits for the next.
const RETRY: Duration = Duration::from_secs(3600);
/// A download of a few MB from a slow server; on this thread, it holds nothing else.
const DOWNLOAD_TIMEOUT: Duration = Duration::from_secs(300);

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

    fn fetch(&self) -> anyhow::Result<Vec<u8>> {
        match self {
            Origin::BuiltIn { bytes, .. } => Ok(bytes.to_vec()),
            Origin::Url(url) => download(url),
        }
    }
}

fn download(url: &str) -> anyhow::Result<Vec<u8>> {
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(DOWNLOAD_TIMEOUT))
        .build();
    let mut response = ureq::Agent::new_with_config(config)
        .get(url)
        .call()
        .context("download failed")?;
    response
        .body_mut()
        .with_config()
        .limit(MAX_LIST_BYTES)
        .read_to_vec()
        .context("download failed")
}

/// Starts the refresh; the first try is due one interval after the last one (at once
/// when there was none).
pub fn start(db: Db, origin: Origin, every: Duration) -> anyhow::Result<Periodic> {
    let last = db::settings::get(&*db.conn()?, LAST_TRY_SETTING)?
        .and_then(|v| crate::time::parse(v.split(' ').next().unwrap_or("")));
    let since = last.and_then(|t| (Utc::now() - t).to_std().ok());
    let first = since.map_or(Duration::ZERO, |s| every.saturating_sub(s));
    Periodic::spawn("list-69b", first, move || {
        if try_once(&db, &origin) {
            every
        } else {
            every.min(RETRY)
        }
    })
}

/// One try: fetch, parse, load; its outcome logged and kept. False when it failed.
fn try_once(db: &Db, origin: &Origin) -> bool {
    let source = origin.name();
    let loaded = origin.fetch().and_then(|bytes| load(db, &bytes, source));
    let (outcome, ok) = match &loaded {
        Ok(Loaded::New(version, changed, events)) => {
            log::info!(
                "69-B list from {source}: version {}, {} taxpayers, {} changed, {events} event(s)",
                version.id,
                version.entries,
                changed.len()
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
            (format!("refused: {e:#}"), false)
        }
    };
    let value = format!("{} {outcome}", crate::time::now());
    if let Err(e) = db.tx(|tx| db::settings::set(tx, LAST_TRY_SETTING, &value)) {
        log::error!("69-B list: cannot record the try: {e:#}");
    }
    ok
}
