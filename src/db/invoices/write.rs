//! Writes to `invoices` made by the ingestion path (`crate::ingest`): the listing's
//! metadata-only rows, processed documents, status changes and payment aggregates.

use crate::cfdi::{Cfdi, InvoiceType};
use crate::domain::extraction::Direction;
use crate::domain::listing::Metadata;
use crate::domain::payments::Aggregate;
use rusqlite::{named_params, params, Connection, OptionalExtension};

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

/// What the listing step needs to know of a stored invoice.
pub struct Known {
    pub id: String,
    pub processed: bool,
    pub status: String,
    pub invoice_type: Option<String>,
}

pub fn known(conn: &Connection, entity_id: &str, uuid: &str) -> anyhow::Result<Option<Known>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, xml_processed, status, type FROM invoices WHERE entity_id = ?1 AND uuid = ?2",
        )?
        .query_row(params![entity_id, uuid], |r| {
            Ok(Known {
                id: r.get(0)?,
                processed: r.get(1)?,
                status: r.get(2)?,
                invoice_type: r.get(3)?,
            })
        })
        .optional()?)
}

pub fn set_status(
    conn: &Connection,
    id: &str,
    status: &str,
    cancelled_at: Option<&str>,
    now: &str,
) -> anyhow::Result<()> {
    conn.prepare_cached(
        "UPDATE invoices SET status = ?2, cancelled_at = ?3, updated_at = ?4 WHERE id = ?1",
    )?
    .execute(params![id, status, cancelled_at, now])?;
    Ok(())
}

/// An invoice's status and cancellation time; `active` when there is no row.
pub fn status(conn: &Connection, id: &str) -> anyhow::Result<(&'static str, Option<String>)> {
    let row: Option<(String, Option<String>)> = conn
        .prepare_cached("SELECT status, cancelled_at FROM invoices WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(match row {
        Some((s, at)) if s == "cancelled" => ("cancelled", at),
        _ => ("active", None),
    })
}

/// A metadata-only row from a listing entry.
pub fn insert_metadata(
    conn: &Connection,
    owner: Owner,
    direction: Direction,
    uuid: &str,
    m: &Metadata,
    status: &str,
    now: &str,
) -> anyhow::Result<()> {
    conn.prepare_cached(
        "INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed, type, issued_at, certified_at,
            issuer_tax_id, issuer_name, receiver_tax_id, receiver_name, total, status, cancelled_at, created_at, updated_at)
         VALUES (:id, :org, :entity, :uuid, :direction, 0, :type, :issued_at, :certified_at,
            :issuer, :issuer_name, :receiver, :receiver_name, :total, :status, :cancelled_at, :now, :now)",
    )?
    .execute(named_params! {
        ":id": uuid::Uuid::now_v7().to_string(), ":org": owner.org_id, ":entity": owner.entity_id,
        ":uuid": uuid, ":direction": direction.as_str(),
        ":type": m.invoice_type.as_deref().filter(|t| InvoiceType::from_code(t).is_some()),
        ":issued_at": m.issued_at, ":certified_at": m.certified_at,
        ":issuer": m.issuer_tax_id, ":issuer_name": m.issuer_name,
        ":receiver": m.receiver_tax_id, ":receiver_name": m.receiver_name,
        ":total": m.total.map(|t| t.to_string()), ":status": status, ":cancelled_at": m.cancelled_at, ":now": now,
    })?;
    Ok(())
}

/// A processed document's row (the metadata-only row, if any, becomes it), with its
/// payment aggregate `agg` (see `ingest::payments::own_aggregate`). Storing a
/// document already processed (the e.firma channel downloads a period's package again,
/// an import repeats a file) keeps its `updated_at` unless something a client sees
/// changed, so `updated_since` reports only real changes. (SET expressions read the row
/// as it was before the update.)
#[allow(clippy::too_many_arguments)]
pub fn upsert_processed(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    id: &str,
    uuid: &str,
    c: &Cfdi,
    status: &str,
    cancelled_at: Option<&str>,
    has_pdf: bool,
    agg: &Aggregate,
) -> anyhow::Result<()> {
    let now = crate::time::now();
    let payments_json = (c.invoice_type == InvoiceType::P)
        .then(|| serde_json::to_string(&c.payments))
        .transpose()?;
    tx.prepare_cached(
        "INSERT INTO invoices (id, org_id, entity_id, uuid, direction, xml_processed, type, version, series, folio,
            issued_at, certified_at, issuer_tax_id, issuer_name, issuer_tax_regime, receiver_tax_id, receiver_name,
            receiver_cfdi_use, currency, exchange_rate, subtotal, discount, taxes_transferred, taxes_withheld, total,
            payment_method, payment_form, status, cancelled_at, has_pdf, items_json, items_count, payments_json,
            stated_taxes_json, paid_amount, due_amount, last_payment_date, fully_paid_at, payment_conflicts, outstanding,
            created_at, updated_at)
         VALUES (:id, :org, :entity, :uuid, :direction, 1, :type, :version, :series, :folio,
            :issued_at, :certified_at, :issuer, :issuer_name, :issuer_regime, :receiver, :receiver_name,
            :cfdi_use, :currency, :rate, :subtotal, :discount, :transferred, :withheld, :total,
            :method, :form, :status, :cancelled_at, :has_pdf, :items, :items_count, :payments,
            :stated, :paid, :due, :last, :full, :conflicts, :outstanding, :now, :now)
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
            has_pdf = (excluded.has_pdf OR has_pdf), items_json = excluded.items_json,
            items_count = excluded.items_count,
            payments_json = excluded.payments_json, stated_taxes_json = excluded.stated_taxes_json,
            paid_amount = excluded.paid_amount, due_amount = excluded.due_amount,
            last_payment_date = excluded.last_payment_date, fully_paid_at = excluded.fully_paid_at,
            payment_conflicts = excluded.payment_conflicts, outstanding = excluded.outstanding,
            updated_at = iif(xml_processed = 1 AND status IS excluded.status
                    AND cancelled_at IS excluded.cancelled_at AND (has_pdf OR NOT excluded.has_pdf)
                    AND total IS excluded.total AND items_json IS excluded.items_json
                    AND payments_json IS excluded.payments_json
                    AND stated_taxes_json IS excluded.stated_taxes_json
                    AND paid_amount IS excluded.paid_amount AND due_amount IS excluded.due_amount
                    AND last_payment_date IS excluded.last_payment_date
                    AND fully_paid_at IS excluded.fully_paid_at
                    AND payment_conflicts IS excluded.payment_conflicts,
                updated_at, excluded.updated_at)",
    )?
    .execute(named_params! {
        ":id": id, ":org": owner.org_id, ":entity": owner.entity_id, ":uuid": uuid,
        ":direction": direction.as_str(), ":type": c.invoice_type.as_str(), ":version": c.version.as_str(),
        ":series": c.series, ":folio": c.folio, ":issued_at": c.issued_at,
        ":certified_at": c.stamp.as_ref().and_then(|s| s.certified_at.clone()),
        ":issuer": c.issuer.tax_id, ":issuer_name": c.issuer.name, ":issuer_regime": c.issuer.regime,
        ":receiver": c.receiver.tax_id, ":receiver_name": c.receiver.name, ":cfdi_use": c.receiver.cfdi_use,
        ":currency": c.currency, ":rate": text(c.exchange_rate), ":subtotal": c.subtotal.to_string(),
        ":discount": text(c.discount), ":transferred": text(c.taxes_transferred), ":withheld": text(c.taxes_withheld),
        ":total": c.total.to_string(), ":method": c.payment_method, ":form": c.payment_form,
        ":status": status, ":cancelled_at": cancelled_at, ":has_pdf": has_pdf,
        ":items": serde_json::to_string(super::first_items(&c.items))?,
        ":items_count": c.items.len() as i64,
        ":payments": payments_json, ":now": now,
        ":stated": (!c.stated_taxes.is_empty()).then(|| serde_json::to_string(&c.stated_taxes)).transpose()?,
        ":paid": agg.paid_amount.to_string(), ":due": agg.due_amount.to_string(),
        ":last": agg.last_payment_date, ":full": agg.fully_paid_at, ":conflicts": agg.payment_conflicts,
        ":outstanding": agg.due_amount > rust_decimal::Decimal::ZERO,
    })?;
    super::store_item_pages(tx, id, &c.items)?;
    super::relations::store(tx, id, owner.entity_id, &c.related)?;
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
    conn: &Connection,
    entity_id: &str,
    uuid: &str,
) -> anyhow::Result<Option<PaymentBasis>> {
    Ok(conn
        .prepare_cached(
            "SELECT id, type, payment_method, currency, total, status FROM invoices
             WHERE entity_id = ?1 AND uuid = ?2 AND xml_processed = 1",
        )?
        .query_row(params![entity_id, uuid], |r| {
            Ok(PaymentBasis {
                id: r.get(0)?,
                invoice_type: r.get(1)?,
                payment_method: r.get(2)?,
                currency: r.get(3)?,
                total: r.get(4)?,
                cancelled: r.get::<_, String>(5)? == "cancelled",
            })
        })
        .optional()?)
}

/// Writes an aggregate, touching the row only when something changed.
pub fn set_payments(conn: &Connection, id: &str, agg: &Aggregate) -> anyhow::Result<()> {
    conn.prepare_cached(
        "UPDATE invoices SET paid_amount = :paid, due_amount = :due, last_payment_date = :last,
            fully_paid_at = :full, payment_conflicts = :conflicts, outstanding = :outstanding, updated_at = :now
         WHERE id = :id AND (paid_amount IS NOT :paid OR due_amount IS NOT :due OR last_payment_date IS NOT :last
            OR fully_paid_at IS NOT :full OR payment_conflicts IS NOT :conflicts)",
    )?
    .execute(named_params! {
        ":id": id, ":paid": agg.paid_amount.to_string(), ":due": agg.due_amount.to_string(),
        ":last": agg.last_payment_date, ":full": agg.fully_paid_at, ":conflicts": agg.payment_conflicts,
        ":outstanding": agg.due_amount > rust_decimal::Decimal::ZERO, ":now": crate::time::now(),
    })?;
    Ok(())
}
