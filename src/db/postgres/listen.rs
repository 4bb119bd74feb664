//! Wakes across instances. A transaction that queued work sends `pg_notify` with its
//! commit (PostgreSQL delivers it only if the transaction commits); every instance
//! holds one connection listening, and wakes one of its own workers of each kind named,
//! as a local commit does. A lost connection is made again; since notifications sent
//! meanwhile are gone, the reconnection wakes every worker once (they poll anyway).

use super::connection::Connection;
use super::tls::Target;
use crate::db::sql::{params, Driver as _};
use crate::db::waker::{Waker, Work};
use postgres::fallible_iterator::FallibleIterator;
use postgres::Client;
use std::sync::Arc;
use std::time::Duration;

const CHANNEL: &str = "cfdi_extract_work";

/// Sends, with the commit, the kinds of work queued (`Work` indexes, `0,2`).
pub fn notify(conn: &Connection, works: &str) -> anyhow::Result<()> {
    conn.defer("SELECT pg_notify(?1, ?2)", params![CHANNEL, works])
}

/// Starts the listening thread; it runs as long as the process.
pub fn start(target: Arc<Target>, waker: Arc<Waker>) -> anyhow::Result<()> {
    std::thread::Builder::new()
        .name("pg-listen".into())
        .spawn(move || {
            // Said once per outage: the pool says when the server is unreachable.
            let mut failing = false;
            loop {
                match target.connect() {
                    Ok(client) => {
                        failing = false;
                        if let Err(e) = listen(client, &waker) {
                            log::warn!(
                                "the PostgreSQL wake connection failed, reconnecting: {e:#}"
                            );
                        }
                    }
                    Err(e) if !failing => {
                        failing = true;
                        log::warn!(
                            "cannot connect to PostgreSQL for wakes (trying every second): {:#}",
                            anyhow::Error::from(e)
                        );
                    }
                    Err(_) => {}
                }
                std::thread::sleep(Duration::from_secs(1));
            }
        })?;
    Ok(())
}

fn listen(mut client: Client, waker: &Waker) -> anyhow::Result<()> {
    client.batch_execute(&format!("LISTEN {CHANNEL}"))?;
    waker.wake_all();
    loop {
        {
            let mut notifications = client.notifications();
            let mut incoming = notifications.timeout_iter(Duration::from_secs(10));
            while let Some(note) = incoming.next()? {
                for index in note.payload().split(',') {
                    if let Some(work) = index.parse().ok().and_then(|i: usize| Work::ALL.get(i)) {
                        waker.wake_one(*work);
                    }
                }
            }
        }
        if client.is_closed() {
            anyhow::bail!("the connection closed");
        }
    }
}
