//! SQL for `/metrics`: counts read at scrape time. Both tables stay small (the job
//! queue holds only unfinished work; an extraction is one per entity, month and
//! direction), and each count reads an index or a short table.

use rusqlite::Connection;

/// (label values..., count) rows of a GROUP BY.
pub type Counts = Vec<(Vec<String>, i64)>;

/// Jobs by kind and status (`queued`, `running`).
pub fn jobs(conn: &Connection) -> anyhow::Result<Counts> {
    group(
        conn,
        "SELECT kind, status, COUNT(*) FROM jobs GROUP BY kind, status",
        2,
    )
}

/// Extractions by status and failed reason (empty when none).
pub fn extractions(conn: &Connection) -> anyhow::Result<Counts> {
    group(
        conn,
        "SELECT status, COALESCE(failed_reason, ''), COUNT(*) FROM extractions
         GROUP BY status, failed_reason",
        2,
    )
}

/// The database's size in bytes as SQLite sees it (pages in use and free).
pub fn database_bytes(conn: &Connection) -> anyhow::Result<i64> {
    Ok(conn.query_row(
        "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
        [],
        |r| r.get(0),
    )?)
}

fn group(conn: &Connection, sql: &str, labels: usize) -> anyhow::Result<Counts> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map([], |r| {
        let values = (0..labels)
            .map(|i| r.get::<_, String>(i))
            .collect::<Result<Vec<_>, _>>()?;
        Ok((values, r.get(labels)?))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_group_by_their_labels() {
        let mut conn = Connection::open_in_memory().expect("db");
        crate::db::migrate::apply(&mut conn).expect("schema");
        conn.execute_batch(
            "INSERT INTO jobs (kind, target_id, status, run_at, created_at)
                 VALUES ('deliver_webhook', 'd1', 'queued', 't', 't'),
                        ('deliver_webhook', 'd2', 'queued', 't', 't'),
                        ('run_extraction', 'x', 'running', 't', 't');",
        )
        .expect("seed");
        let mut jobs = jobs(&conn).expect("jobs");
        jobs.sort();
        assert_eq!(
            jobs,
            [
                (vec!["deliver_webhook".into(), "queued".into()], 2),
                (vec!["run_extraction".into(), "running".into()], 1)
            ]
        );
        assert!(extractions(&conn).expect("extractions").is_empty());
        assert!(database_bytes(&conn).expect("size") > 0);
    }
}
