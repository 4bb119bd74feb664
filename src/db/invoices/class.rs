//! Invoices as a document class (`Stored` for `InvoiceClass`): their files in
//! `documents`, their change marks in `invoice_changes` with the snapshot
//! `invoice.updated` compares, and their list and read.

use super::super::classes::{Files, ListRow, Order, Stored, Tracked};
use super::{Conn, Filter};
use crate::domain::class::{DocumentClass, InvoiceClass};
use crate::domain::event::Kind;
use crate::domain::totals::Totals;

impl Stored for InvoiceClass {
    const CLASS: DocumentClass = DocumentClass::Invoices;
    type Filter = Filter;
    const FILES: Files = Files {
        table: "documents",
        key: "invoice_id",
        name: "invoice",
    };
    /// NULL while the invoice is not visible (metadata only); amounts as decimal text.
    const TRACKED: Tracked = Tracked {
        table: "invoice_changes",
        key: "invoice_id",
        source: "invoices",
        snapshot: concat!(
            "CASE WHEN xml_processed = 1 THEN json_object(
            'status', status, 'cancelled_at', cancelled_at,
            'has_pdf', json(CASE WHEN has_pdf <> 0 THEN 'true' ELSE 'false' END),
            'paid_amount', paid_amount, 'due_amount', due_amount,
            'last_payment_date', last_payment_date, 'fully_paid_at', fully_paid_at,
            'payment_conflicts', json(CASE WHEN payment_conflicts <> 0 THEN 'true' ELSE 'false' END),
            'sat_status', json(CASE WHEN sat_state IS NOT NULL THEN json_object(
                'state', sat_state, 'cancellable', sat_cancellable,
                'cancellation_status', sat_cancellation_status, 'efos', sat_efos) END),
            'seal', json(",
            crate::db::classes::seal_object!(),
            ")) END"
        ),
    };
    const CREATED: Kind = Kind::InvoiceCreated;
    const UPDATED: Kind = Kind::InvoiceUpdated;
    const AMOUNTS: &'static [&'static str] = &["paid_amount", "due_amount"];
    const WITH_XML: &'static str = " AND xml_processed = 1";

    fn order(f: &Filter) -> Order {
        f.order
    }

    fn list(
        conn: &Conn,
        org_id: &str,
        f: &Filter,
        after: Option<(&str, &str)>,
        limit: i64,
    ) -> anyhow::Result<Vec<ListRow>> {
        super::list(conn, org_id, f, after, limit)
    }

    fn get(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
        super::get(conn, org_id, id)
    }

    fn get_all(
        conn: &Conn,
        org_id: &str,
        ids: &[&str],
    ) -> anyhow::Result<std::collections::HashMap<String, String>> {
        super::get_all(conn, org_id, ids)
    }

    fn uuid(conn: &Conn, org_id: &str, id: &str) -> anyhow::Result<Option<String>> {
        Ok(super::visible(conn, org_id, id)?.map(|(uuid, _)| uuid))
    }

    fn totals(conn: &Conn, org_id: &str, f: &Filter) -> anyhow::Result<Totals> {
        super::totals(conn, org_id, f)
    }
}
