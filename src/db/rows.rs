//! Multi-row INSERTs: many rows per statement instead of a statement each (on
//! PostgreSQL each statement is a message to parse, bind and execute), in a handful of
//! statement shapes so each engine's prepared statements serve any count.

use crate::db::sql::{Param, Query};
use crate::db::Conn;

/// The most rows one INSERT writes.
const ROWS: usize = 256;

/// How many rows each INSERT of `n` rows writes: `ROWS` at a time, the rest in powers of
/// two, so that a handful of statement texts serve any count (each engine keeps its
/// prepared statements by text).
fn batches(mut n: usize) -> Vec<usize> {
    let (mut out, mut size) = (Vec::new(), ROWS);
    while n > 0 {
        while size > n {
            size /= 2;
        }
        out.push(size);
        n -= size;
    }
    out
}

/// Inserts `rows` into `into` (a table and its columns), a batch per statement
/// (`batches`), deferred as any write (`Conn::defer`): each row's values are
/// `shared`'s, then `own`'s.
pub fn insert<'a, T>(
    conn: &Conn,
    into: &str,
    shared: &[&'a dyn Param],
    rows: &'a [T],
    own: impl Fn(&'a T) -> Vec<&'a dyn Param>,
) -> anyhow::Result<()> {
    let mut rest = rows;
    for size in batches(rows.len()) {
        let (batch, after) = rest.split_at(size);
        let mut q = Query::new(format!("INSERT INTO {into} VALUES "));
        for (i, row) in batch.iter().enumerate() {
            q.sql.push_str(if i == 0 { "(" } else { ", (" });
            for (j, value) in shared.iter().enumerate() {
                match i {
                    // The first row binds the shared values; the others name them again.
                    0 => q.bind(*value),
                    _ => q.sql.push_str(&format!("?{}", j + 1)),
                }
                q.sql.push_str(", ");
            }
            for (j, value) in own(row).into_iter().enumerate() {
                if j > 0 {
                    q.sql.push_str(", ");
                }
                q.bind(value);
            }
            q.sql.push(')');
        }
        conn.defer(&q.sql, &q.params)?;
        rest = after;
    }
    Ok(())
}

/// Deletes the rows of `table` whose `column` is `id`, before they are written again;
/// nothing when there can be none (`first`: the invoice's first document), so most of an
/// extraction's documents send no such statement.
pub fn clear(conn: &Conn, table: &str, column: &str, id: &str, first: bool) -> anyhow::Result<()> {
    if !first {
        conn.defer(
            &format!("DELETE FROM {table} WHERE {column} = ?1"),
            crate::db::sql::params![id],
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn any_count_is_written_in_a_few_statement_shapes() {
        assert_eq!(super::batches(0), Vec::<usize>::new());
        assert_eq!(super::batches(1), [1]);
        assert_eq!(super::batches(300), [256, 32, 8, 4]);
        let many = super::batches(100_001);
        assert_eq!(many.iter().sum::<usize>(), 100_001);
        assert!(many.iter().all(|n| n.is_power_of_two() && *n <= 256));
    }
}
