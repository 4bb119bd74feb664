//! Writes to `invoices` made by the ingestion path (`crate::ingest`): the listing's
//! metadata-only rows, processed documents, status changes and payment aggregates.

use crate::cfdi::{Cfdi, InvoiceType};
use crate::db::sql::params;
use crate::db::Conn;
use crate::domain::extraction::Direction;
use crate::domain::listing::Metadata;
use crate::domain::payments::Aggregate;

/// Whose invoice a row is, and the batch writing it (an extraction's id, or one
/// imported file's): invoice events are coalesced per batch (`events::invoices`).
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    pub org_id: &'a str,
    pub entity_id: &'a str,
    pub batch: &'a str,
}

/// Stored decimal text (exact, as parsed).
pub fn text(d: Option<rust_decimal::Decimal>) -> Option<String> {
    d.map(|d| d.to_string())
}

/// What ingesting needs to know of a stored invoice (a listing's entry or a document).
#[derive(Debug, Clone)]
pub struct Known {
    pub id: String,
    pub processed: bool,
    pub status: String,
    pub cancelled_at: Option<String>,
    pub invoice_type: Option<String>,
}

impl Known {
    /// Its status and cancellation time, as a document stored over it keeps them.
    pub fn status(&self) -> (&'static str, Option<String>) {
        match self.status.as_str() {
            "cancelled" => ("cancelled", self.cancelled_at.clone()),
            _ => ("active", None),
        }
    }

    fn of(r: &crate::db::sql::Row, at: usize) -> anyhow::Result<Known> {
        Ok(Known {
            id: r.get(at)?,
            processed: r.get(at + 1)?,
            status: r.get(at + 2)?,
            cancelled_at: r.get(at + 3)?,
            invoice_type: r.get(at + 4)?,
        })
    }
}

pub fn known(conn: &Conn, entity_id: &str, uuid: &str) -> anyhow::Result<Option<Known>> {
    conn.opt(
        "SELECT id, xml_processed, status, cancelled_at, type FROM invoices WHERE entity_id = ?1 AND uuid = ?2",
        params![entity_id, uuid],
        |r| Known::of(r, 0),
    )
}

/// `known` for each of `uuids` (as stored: a listing's upper case, a document's own
/// spelling) that the entity has, by UUID: one read for a whole page of a listing, or
/// a batch of documents (`ingest::Ahead`).
pub fn known_all(
    conn: &Conn,
    entity_id: &str,
    uuids: &[String],
) -> anyhow::Result<std::collections::HashMap<String, Known>> {
    let list = serde_json::to_string(uuids)?;
    // PostgreSQL looks each UUID up by the unique key, LATERALly: its planner, with
    // statistics of a smaller table, otherwise read all of the entity's rows and
    // hashed them against the list, on every page of a listing.
    let sql = conn.pick(
        "SELECT uuid, id, xml_processed, status, cancelled_at, type FROM invoices
          WHERE entity_id = ?1 AND uuid IN (SELECT value FROM json_each(?2))",
        "SELECT i.uuid, i.id, i.xml_processed, i.status, i.cancelled_at, i.type
           FROM json_each(?2) u CROSS JOIN LATERAL (
                SELECT uuid, id, xml_processed, status, cancelled_at, type FROM invoices
                 WHERE entity_id = ?1 AND uuid = u.value LIMIT 1) i",
    );
    let rows = conn.all(sql, params![entity_id, list], |r| {
        Ok((r.get::<String>(0)?, Known::of(r, 1)?))
    })?;
    Ok(rows.into_iter().collect())
}

pub fn set_status(
    conn: &Conn,
    id: &str,
    status: &str,
    cancelled_at: Option<&str>,
    now: &str,
) -> anyhow::Result<()> {
    conn.defer(
        "UPDATE invoices SET status = ?2, cancelled_at = ?3, updated_at = ?4 WHERE id = ?1",
        params![id, status, cancelled_at, now],
    )?;
    Ok(())
}

/// A listing's entry new to the entity, to be stored as a metadata-only row.
pub struct Listed<'a> {
    pub id: String,
    uuid: String,
    status: &'static str,
    entry: &'a Metadata,
    /// Of the entry, as the row stores them: a type the SAT's catalog knows, exact text.
    invoice_type: Option<&'a str>,
    total: Option<String>,
}

impl<'a> Listed<'a> {
    /// `entry` under `uuid` (as the listing step spells it), with a new id.
    pub fn new(uuid: String, entry: &'a Metadata, status: &'static str) -> Listed<'a> {
        Listed {
            id: uuid::Uuid::now_v7().to_string(),
            uuid,
            status,
            invoice_type: entry
                .invoice_type
                .as_deref()
                .filter(|t| InvoiceType::from_code(t).is_some()),
            total: entry.total.map(|t| t.to_string()),
            entry,
        }
    }

    pub fn invoice_type(&self) -> Option<&'a str> {
        self.invoice_type
    }
}

/// Metadata-only rows for `rows`, many per statement (`rows::insert`): a listing's
/// page is mostly new entries.
pub fn insert_metadata(
    conn: &Conn,
    owner: Owner,
    direction: Direction,
    rows: &[Listed],
    now: &str,
) -> anyhow::Result<()> {
    crate::db::rows::insert(
        conn,
        "invoices (org_id, entity_id, direction, created_at, updated_at, id, uuid, type, issued_at,
            certified_at, issuer_tax_id, issuer_name, receiver_tax_id, receiver_name, total, status, cancelled_at)",
        &[&owner.org_id, &owner.entity_id, &direction.as_str(), &now, &now],
        rows,
        |r| {
            let m = r.entry;
            vec![
                &r.id, &r.uuid, &r.invoice_type, &m.issued_at,
                &m.certified_at, &m.issuer_tax_id, &m.issuer_name, &m.receiver_tax_id, &m.receiver_name,
                &r.total, &r.status, &m.cancelled_at,
            ]
        },
    )
}

/// A processed document's row (the metadata-only row, if any, becomes it), with its
/// payment aggregate `agg` (see `ingest::payments::own_aggregate`) and, when the SAT
/// was never asked about it and no check is planned, its first status check planned
/// now (`jobs::sat_status`). Storing a document already processed (the e.firma channel
/// downloads a period's package again, an import repeats a file) keeps its `updated_at`
/// unless something a client sees changed, so `updated_since` reports only real
/// changes. (SET expressions read the row as it was before the update.) The seal's
/// answer (`seals::Answer`: its status, its object's key, the certificate it awaits;
/// the object kept by the caller) is written with the row, not by an update after it: on
/// PostgreSQL each update writes a new row version and an entry in each index.
/// `first`: no document of this invoice was stored before (what one would have
/// written beside the row, its concepts' pages and relations, is not there to replace).
#[allow(clippy::too_many_arguments)]
pub fn upsert_processed(
    tx: &Conn,
    owner: Owner,
    direction: Direction,
    id: &str,
    first: bool,
    uuid: &str,
    c: &Cfdi,
    status: &str,
    cancelled_at: Option<&str>,
    has_pdf: bool,
    agg: &Aggregate,
    seal: (&str, &str, Option<&str>),
) -> anyhow::Result<()> {
    let now = crate::time::now();
    let payments_json = (c.invoice_type == InvoiceType::P)
        .then(|| serde_json::to_string(&c.payments))
        .transpose()?;
    tx.defer(
        "INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed, type, version, series, folio,
            issued_at, certified_at, issuer_tax_id, issuer_name, issuer_tax_regime, receiver_tax_id, receiver_name,
            receiver_cfdi_use, currency, exchange_rate, subtotal, discount, taxes_transferred, taxes_withheld, total,
            payment_method, payment_form, status, cancelled_at, has_pdf, items_json, items_count, payments_json,
            stated_taxes_json, paid_amount, due_amount, last_payment_date, fully_paid_at, payment_conflicts, outstanding,
            sat_check_at, created_at, updated_at, seal_status, seal_key, seal_awaits)
         VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, ?8, ?9,
            ?10, ?11, ?12, ?13, ?14, ?15, ?16,
            ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24,
            ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32,
            ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?40, ?40, ?41, ?42, ?43)
         ON CONFLICT (entity_id, uuid) DO UPDATE SET
            xml_processed = 1, type = excluded.type, version = excluded.version, series = excluded.series,
            folio = excluded.folio, issued_at = excluded.issued_at, certified_at = excluded.certified_at,
            issuer_tax_id = excluded.issuer_tax_id, issuer_name = excluded.issuer_name,
            issuer_tax_regime = excluded.issuer_tax_regime, receiver_tax_id = excluded.receiver_tax_id,
            receiver_name = excluded.receiver_name, receiver_cfdi_use = excluded.receiver_cfdi_use,
            currency = excluded.currency, exchange_rate = excluded.exchange_rate, subtotal = excluded.subtotal,
            discount = excluded.discount, taxes_transferred = excluded.taxes_transferred,
            taxes_withheld = excluded.taxes_withheld, total = excluded.total,
            payment_method = excluded.payment_method, payment_form = excluded.payment_form,
            status = excluded.status, cancelled_at = excluded.cancelled_at,
            has_pdf = CASE WHEN excluded.has_pdf <> 0 OR invoices.has_pdf <> 0 THEN 1 ELSE 0 END,
            items_json = excluded.items_json,
            items_count = excluded.items_count,
            payments_json = excluded.payments_json, stated_taxes_json = excluded.stated_taxes_json,
            paid_amount = excluded.paid_amount, due_amount = excluded.due_amount,
            last_payment_date = excluded.last_payment_date, fully_paid_at = excluded.fully_paid_at,
            payment_conflicts = excluded.payment_conflicts, outstanding = excluded.outstanding,
            seal_status = excluded.seal_status, seal_key = excluded.seal_key,
            seal_awaits = excluded.seal_awaits,
            sat_check_at = CASE WHEN invoices.sat_checked_at IS NULL AND invoices.sat_check_at IS NULL
                THEN excluded.sat_check_at ELSE invoices.sat_check_at END,
            updated_at = CASE WHEN invoices.xml_processed = 1 AND invoices.status IS NOT DISTINCT FROM excluded.status
                    AND invoices.cancelled_at IS NOT DISTINCT FROM excluded.cancelled_at
                    AND (invoices.has_pdf <> 0 OR excluded.has_pdf = 0)
                    AND invoices.total IS NOT DISTINCT FROM excluded.total
                    AND invoices.items_json IS NOT DISTINCT FROM excluded.items_json
                    AND invoices.payments_json IS NOT DISTINCT FROM excluded.payments_json
                    AND invoices.stated_taxes_json IS NOT DISTINCT FROM excluded.stated_taxes_json
                    AND invoices.paid_amount IS NOT DISTINCT FROM excluded.paid_amount
                    AND invoices.due_amount IS NOT DISTINCT FROM excluded.due_amount
                    AND invoices.last_payment_date IS NOT DISTINCT FROM excluded.last_payment_date
                    AND invoices.fully_paid_at IS NOT DISTINCT FROM excluded.fully_paid_at
                    AND invoices.payment_conflicts IS NOT DISTINCT FROM excluded.payment_conflicts
                THEN invoices.updated_at ELSE excluded.updated_at END",
        params![
            // ?1-?9
            id, owner.org_id, owner.entity_id, uuid, direction.as_str(),
            c.invoice_type.as_str(), c.version.as_str(), c.series, c.folio,
            // ?10-?16
            c.issued_at, c.stamp.as_ref().and_then(|s| s.certified_at.clone()),
            c.issuer.tax_id, c.issuer.name, c.issuer.regime, c.receiver.tax_id, c.receiver.name,
            // ?17-?24
            c.receiver.cfdi_use, c.currency, text(c.exchange_rate), c.subtotal.to_string(),
            text(c.discount), text(c.taxes_transferred), text(c.taxes_withheld), c.total.to_string(),
            // ?25-?32
            c.payment_method, c.payment_form, status, cancelled_at, has_pdf,
            serde_json::to_string(super::first_items(&c.items))?, c.items.len() as i64, payments_json,
            // ?33-?40
            (!c.stated_taxes.is_empty()).then(|| serde_json::to_string(&c.stated_taxes)).transpose()?,
            agg.paid_amount.to_string(), agg.due_amount.to_string(),
            agg.last_payment_date, agg.fully_paid_at, agg.payment_conflicts,
            agg.due_amount > rust_decimal::Decimal::ZERO, now,
            // ?41-?43
            seal.0, seal.1, seal.2,
        ],
    )?;
    super::store_item_pages(tx, id, &c.items, first)?;
    super::relations::store(tx, id, owner.entity_id, &c.issued_at, &c.related, first)?;
    Ok(())
}

/// What an invoice's payment aggregate is computed from.
pub struct PaymentBasis {
    pub id: String,
    pub invoice_type: Option<String>,
    pub payment_method: Option<String>,
    pub currency: Option<String>,
    pub total: Option<String>,
    pub cancelled: bool,
}

/// The basis of a processed invoice of the entity; None while only its complements are here.
pub fn payment_basis(
    conn: &Conn,
    entity_id: &str,
    uuid: &str,
) -> anyhow::Result<Option<PaymentBasis>> {
    conn.opt(
        &format!(
            "SELECT id, type, payment_method, currency, total, status FROM invoices
              WHERE {}",
            super::PROCESSED_BY_UUID
        ),
        params![entity_id, uuid],
        |r| {
            Ok(PaymentBasis {
                id: r.get(0)?,
                invoice_type: r.get(1)?,
                payment_method: r.get(2)?,
                currency: r.get(3)?,
                total: r.get(4)?,
                cancelled: r.get::<String>(5)? == "cancelled",
            })
        },
    )
}

/// Writes an aggregate, touching the row only when something changed.
pub fn set_payments(conn: &Conn, id: &str, agg: &Aggregate) -> anyhow::Result<()> {
    conn.defer(
        "UPDATE invoices SET paid_amount = ?2, due_amount = ?3, last_payment_date = ?4,
            fully_paid_at = ?5, payment_conflicts = ?6, outstanding = ?7, updated_at = ?8
         WHERE id = ?1 AND (paid_amount IS DISTINCT FROM ?2 OR due_amount IS DISTINCT FROM ?3
            OR last_payment_date IS DISTINCT FROM ?4 OR fully_paid_at IS DISTINCT FROM ?5
            OR payment_conflicts IS DISTINCT FROM ?6)",
        params![
            id,
            agg.paid_amount.to_string(),
            agg.due_amount.to_string(),
            agg.last_payment_date,
            agg.fully_paid_at,
            agg.payment_conflicts,
            agg.due_amount > rust_decimal::Decimal::ZERO,
            crate::time::now(),
        ],
    )?;
    Ok(())
}
