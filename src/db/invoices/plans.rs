//! The list's query plans: each common filter and order is served by an index, read in
//! order, with no sort of the matching rows (`USE TEMP B-TREE`), so a page costs the
//! same at a million invoices as at a thousand. We never run ANALYZE and statements
//! keep one plan (QPSG), so the plan of an empty database is the plan of a full one.

use super::{list_sql, Filter};
use crate::db::classes::Order;
use crate::db::sql::Param;
use crate::db::Memory;

fn plan(f: &Filter, after_cursor: bool) -> String {
    let conn = Memory::new();
    let after = ("x", "x");
    let (org, limit): (&dyn Param, &dyn Param) = (&"x", &50_i64);
    let q = list_sql(&conn, org, f, after_cursor.then_some(&after), limit);
    let sql = format!("EXPLAIN QUERY PLAN {}", q.sql);
    let rows = conn
        .all(&sql, &q.params, |r| r.get::<String>(3))
        .expect("explain");
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

#[test]
fn a_search_reads_a_whole_uuid_by_its_index_and_text_in_the_lists_order() {
    use crate::domain::search::Search;
    let search_plan = |q: Search| {
        plan(
            &Filter {
                q: Some(q),
                ..Filter::default()
            },
            false,
        )
    };
    let uuid = search_plan(Search::Uuid("C2832671-DA6D-11EF-A83D-00155D012007".into()));
    assert!(uuid.contains("USING INDEX invoices_org_uuid"), "{uuid}");
    // Text is matched while the issued_at index is read in order: a page stops at its
    // limit, with no sort of every match.
    assert_served_by(
        Filter {
            q: Some(Search::Contains("%KEMPER%".into())),
            ..Filter::default()
        },
        "invoices_org_issued",
    );
    assert_served_by(
        Filter {
            entity_id: Some("e".into()),
            q: Some(Search::Contains("%A-12%".into())),
            ..Filter::default()
        },
        "invoices_entity_issued",
    );
}

/// The plan of `sql` (numbered parameters bound to `args`).
fn plan_of(sql: &str, args: &[&dyn Param]) -> String {
    let conn = Memory::new();
    conn.all(&format!("EXPLAIN QUERY PLAN {sql}"), args, |r| {
        r.get::<String>(3)
    })
    .expect("explain")
    .join("\n")
}

/// A relation page reads its rows in order off an index, wherever its cursor is: no
/// sort of all the rows a document names (or that name it), so a page of a document of
/// 100,000 relations costs what a page of ten does.
#[test]
fn relation_pages_read_their_index_in_order() {
    let relates = plan_of(
        &super::relations::relates_to_sql(),
        &[&"id", &-1_i64, &100_i64],
    );
    assert!(
        relates.contains("SEARCH r USING PRIMARY KEY (invoice_id=? AND position>?)"),
        "{relates}"
    );
    assert!(!relates.contains("TEMP B-TREE"), "{relates}");
    let related = plan_of(
        &super::relations::related_by_sql(),
        &[&"id", &"", &"", &0_i64, &100_i64],
    );
    assert!(
        related.contains("USING COVERING INDEX invoice_relations_named")
            || related.contains("USING INDEX invoice_relations_named"),
        "{related}"
    );
    assert!(!related.contains("TEMP B-TREE"), "{related}");
    assert!(!related.contains("SCAN"), "{related}");
}

/// The counts and the credits are index lookups too: the count of what an invoice names
/// is its last position, of what names it a row per naming document, and a credit note
/// is one row of `invoices_credited`.
#[test]
fn relation_counts_and_credits_are_index_lookups() {
    let counts = plan_of(super::relations::COUNTS, &[&"id"]);
    assert!(!counts.contains("SCAN"), "{counts}");
    assert!(counts.contains("invoice_relation_counts_named"), "{counts}");
    let credits = plan_of(super::relations::CREDITS, &[&"id"]);
    assert!(credits.contains("invoices_credited"), "{credits}");
    assert!(!credits.contains("SCAN"), "{credits}");
    assert!(!credits.contains("TEMP B-TREE"), "{credits}");
    assert!(!counts.contains("TEMP B-TREE"), "{counts}");
}
