//! SQL for `/metrics`: counts read at scrape time. Both tables stay small (the job
//! queue holds only unfinished work; an extraction is one per entity, month and
//! direction), and each count reads an index or a short table.

use super::sql::params;
use super::Conn;

/// (label values..., count) rows of a GROUP BY.
pub type Counts = Vec<(Vec<String>, i64)>;

/// Jobs by kind and status (`queued`, `running`).
pub fn jobs(conn: &Conn) -> anyhow::Result<Counts> {
    group(
        conn,
        "SELECT kind, status, COUNT(*) FROM jobs GROUP BY kind, status",
        2,
    )
}

/// Extractions by status and failed reason (empty when none).
pub fn extractions(conn: &Conn) -> anyhow::Result<Counts> {
    group(
        conn,
        "SELECT status, COALESCE(failed_reason, ''), COUNT(*) FROM extractions
         GROUP BY status, failed_reason",
        2,
    )
}

/// The database's size in bytes as the engine sees it (SQLite: pages in use and free).
pub fn database_bytes(conn: &Conn) -> anyhow::Result<i64> {
    conn.one(
        conn.pick(
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()",
            "SELECT pg_database_size(current_database())",
        ),
        params![],
        |r| r.get(0),
    )
}

fn group(conn: &Conn, sql: &str, labels: usize) -> anyhow::Result<Counts> {
    conn.all(sql, params![], |r| {
        let values = (0..labels)
            .map(|i| r.get::<String>(i))
            .collect::<anyhow::Result<Vec<_>>>()?;
        Ok((values, r.get(labels)?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::Memory;

    #[test]
    fn counts_group_by_their_labels() {
        let conn = Memory::new();
        conn.batch(
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
