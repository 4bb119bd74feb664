//! The list's query plans: each common filter and order is served by an index, read in
//! order, with no sort of the matching rows (`USE TEMP B-TREE`), so a page costs the
//! same at a million invoices as at a thousand. We never run ANALYZE and statements
//! keep one plan (QPSG), so the plan of an empty database is the plan of a full one.

use super::{list_sql, Filter, Order};
use rusqlite::Connection;

fn plan(f: &Filter, after_cursor: bool) -> String {
    let mut conn = Connection::open_in_memory().expect("memory db");
    crate::db::migrate::apply(&mut conn).expect("schema");
    let sql = format!("EXPLAIN QUERY PLAN {}", list_sql(f, after_cursor));
    let mut stmt = conn.prepare(&sql).expect("prepare");
    let count = stmt.parameter_count();
    let args: Vec<Option<String>> = (0..count).map(|_| Some("x".into())).collect();
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args), |r| r.get::<_, String>(3))
        .expect("explain")
        .collect::<Result<Vec<_>, _>>()
        .expect("rows");
    rows.join("\n")
}

fn assert_served_by(f: Filter, index: &str) {
    for after_cursor in [false, true] {
        let plan = plan(&f, after_cursor);
        assert!(
            plan.contains(&format!("USING INDEX {index}")),
            "{f:?}: {plan}"
        );
        assert!(!plan.contains("TEMP B-TREE"), "{f:?} sorts: {plan}");
    }
}

fn since() -> Option<String> {
    Some("2026-01-01T00:00:00.000000Z".into())
}

#[test]
fn changes_since_a_point_read_the_updated_at_indexes_in_order() {
    assert_served_by(
        Filter {
            updated_since: since(),
            order: Order::UpdatedAsc,
            ..Filter::default()
        },
        "invoices_org_updated",
    );
    assert_served_by(
        Filter {
            order: Order::UpdatedAsc,
            ..Filter::default()
        },
        "invoices_org_updated",
    );
    assert_served_by(
        Filter {
            entity_id: Some("e".into()),
            direction: Some("issued".into()),
            updated_since: since(),
            order: Order::UpdatedAsc,
            ..Filter::default()
        },
        "invoices_entity_updated",
    );
}

#[test]
fn the_default_order_still_reads_the_issued_at_indexes() {
    assert_served_by(Filter::default(), "invoices_org_issued");
    assert_served_by(
        Filter {
            entity_id: Some("e".into()),
            issued_from: Some("2026-01-01".into()),
            issued_before: Some("2026-02-01".into()),
            invoice_type: Some("I".into()),
            ..Filter::default()
        },
        "invoices_entity_issued",
    );
}
