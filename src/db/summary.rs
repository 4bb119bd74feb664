//! SQL of the period summary: an entity's processed documents issued in a period, and
//! the payment-complement entries paid in it, handed one at a time to the pure
//! computation in `crate::summary`. Nothing is gathered per document: rows are
//! read as they come (a document's concept taxes added up per line page by page), so
//! a summary's memory does not grow with the number of documents in the period.

use rust_decimal::Decimal;
use serde::Deserialize;

use super::invoices::{dec, ITEMS_PAGE};
use super::sql::{params, Row};
use super::Conn;
use crate::cfdi::{ItemTax, Party, StatedTaxes};
use crate::domain::summary::{fold_into, Document, PaidEntry, RetentionWithholding};
use crate::retention::WithheldTax;

/// One entity's documents of one direction, issued (or paid) on or after `from` and
/// before `before` (both `YYYY-MM-DD`).
pub struct Period<'a> {
    pub org_id: &'a str,
    pub entity_id: &'a str,
    pub direction: &'a str,
    pub from: &'a str,
    pub before: &'a str,
}

super::sql::columns! {
    /// What the summary reads of a document.
    Id = "id",
    Type = "type",
    Currency = "currency",
    Subtotal = "subtotal",
    Discount = "discount",
    TaxesTransferred = "taxes_transferred",
    TaxesWithheld = "taxes_withheld",
    Total = "total",
    PaymentMethod = "payment_method",
    State = "status",
    ItemsJson = "items_json",
    ItemsCount = "items_count",
    ExchangeRate = "exchange_rate",
    StatedTaxesJson = "stated_taxes_json",
    Uuid = "uuid",
    IssuedAt = "issued_at",
    IssuerTaxId = "issuer_tax_id",
    IssuerName = "issuer_name",
    ReceiverTaxId = "receiver_tax_id",
    ReceiverName = "receiver_name",
    ReceiverCfdiUse = "receiver_cfdi_use",
}

/// Calls `f` with each processed document of the period (cancelled ones included:
/// the computation counts and skips them).
pub fn each_document(conn: &Conn, p: &Period, f: impl FnMut(Document)) -> anyhow::Result<()> {
    each_document_of(conn, p, p.direction, f)
}

/// `each_document` of the entity's invoices of `direction`, whatever the period's
/// (the withholdings section reads the issued ones in every summary).
pub fn each_document_of(
    conn: &Conn,
    p: &Period,
    direction: &str,
    mut f: impl FnMut(Document),
) -> anyhow::Result<()> {
    conn.each(
        &format!(
            "SELECT {COLUMNS} FROM invoices
         WHERE entity_id = ?1 AND org_id = ?2 AND direction = ?3
           AND xml_processed = 1 AND issued_at >= ?4 AND issued_at < ?5
         ORDER BY issued_at, id"
        ),
        params![p.entity_id, p.org_id, direction, p.from, p.before],
        |row| {
            f(document(conn, row)?);
            Ok(())
        },
    )
}

/// Calls `f` with each retention the entity received in the period: one whose
/// period's last month falls in the summary's months, or without a period, one issued
/// (FechaExp) in it. Cancelled ones included: the computation skips them.
pub fn each_retention(
    conn: &Conn,
    p: &Period,
    mut f: impl FnMut(RetentionWithholding),
) -> anyhow::Result<()> {
    // The period's last month: the month of the day before `before` (a date, or past
    // the last one).
    let last_month = chrono::NaiveDate::parse_from_str(p.before, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.pred_opt())
        .map_or_else(|| "9999-12".to_string(), |d| d.format("%Y-%m").to_string());
    conn.each(
        &format!(
            "SELECT status, withheld_json FROM retentions
             WHERE entity_id = ?1 AND org_id = ?2 AND direction = 'received'
               AND CASE WHEN period_year IS NULL
                        THEN issued_at >= ?3 AND issued_at < ?4
                        ELSE {} BETWEEN substr(?3, 1, 7) AND ?5
                   END
             ORDER BY issued_at, id",
            super::retentions::period_end(conn)
        ),
        params![p.entity_id, p.org_id, p.from, p.before, last_month],
        |row| {
            let taxes: Vec<WithheldTax> = serde_json::from_str(&row.get::<String>(1)?)?;
            f(RetentionWithholding {
                cancelled: row.get::<String>(0)? == "cancelled",
                taxes: taxes
                    .iter()
                    .map(|t| (t.tax_code(), t.payment_type.clone(), t.amount))
                    .collect(),
            });
            Ok(())
        },
    )
}

fn document(conn: &Conn, r: &Row) -> anyhow::Result<Document> {
    let id: String = r.get(Col::Id.at())?;
    let get_dec = |c: Col| -> anyhow::Result<Option<Decimal>> { Ok(dec(r.get(c.at())?)) };
    let amount = |c: Col| -> anyhow::Result<Decimal> { Ok(get_dec(c)?.unwrap_or_default()) };
    let items_count: Option<i64> = r.get(Col::ItemsCount.at())?;
    let first_page = r.get(Col::ItemsJson.at())?;
    let (taxes, untaxed) = concept_taxes(conn, &id, first_page, items_count.unwrap_or(0))?;
    let mut receiver = party(r, Col::ReceiverTaxId.at(), Col::ReceiverName.at())?;
    receiver.cfdi_use = r.get(Col::ReceiverCfdiUse.at())?;
    Ok(Document {
        invoice_type: r.get::<Option<String>>(Col::Type.at())?.unwrap_or_default(),
        currency: r.get(Col::Currency.at())?,
        subtotal: amount(Col::Subtotal)?,
        discount: get_dec(Col::Discount)?,
        taxes_transferred: get_dec(Col::TaxesTransferred)?,
        taxes_withheld: get_dec(Col::TaxesWithheld)?,
        total: amount(Col::Total)?,
        payment_method: r.get(Col::PaymentMethod.at())?,
        cancelled: r.get::<String>(Col::State.at())? == "cancelled",
        taxes,
        exchange_rate: get_dec(Col::ExchangeRate)?,
        stated: match r.get::<Option<String>>(Col::StatedTaxesJson.at())? {
            Some(json) => serde_json::from_str(&json)?,
            None => StatedTaxes::default(),
        },
        uuid: r.get(Col::Uuid.at())?,
        issued_at: r
            .get::<Option<String>>(Col::IssuedAt.at())?
            .unwrap_or_default(),
        issuer: party(r, Col::IssuerTaxId.at(), Col::IssuerName.at())?,
        receiver,
        untaxed,
        id,
    })
}

/// A party from its RFC and name columns.
fn party(r: &Row, tax_id: usize, name: usize) -> anyhow::Result<Party> {
    Ok(Party {
        tax_id: r.get::<Option<String>>(tax_id)?.unwrap_or_default(),
        name: r.get(name)?,
        ..Party::default()
    })
}

/// A stored concept, for its taxes and, when it carries no IVA transfer, its amount.
#[derive(Deserialize)]
struct Concept {
    #[serde(default)]
    taxes: Vec<ItemTax>,
    amount: Option<Decimal>,
    discount: Option<Decimal>,
}

/// Every concept's taxes added up per tax, factor and rate, and the amount (less
/// discount) of the concepts without an IVA transfer: the first page on the row, the
/// rest from their pages, one page in memory at a time.
fn concept_taxes(
    conn: &Conn,
    id: &str,
    first: Option<String>,
    count: i64,
) -> anyhow::Result<(Vec<ItemTax>, Decimal)> {
    let mut taxes = Vec::new();
    let mut untaxed = Decimal::ZERO;
    let mut add_page = |page: &str| -> anyhow::Result<()> {
        let concepts: Vec<Concept> = serde_json::from_str(page)?;
        for c in &concepts {
            for t in &c.taxes {
                fold_into(&mut taxes, t);
            }
            let iva = |t: &ItemTax| t.tax == "002" && t.kind == crate::cfdi::TaxKind::Transferred;
            if !c.taxes.iter().any(iva) {
                untaxed += c.amount.unwrap_or_default() - c.discount.unwrap_or_default();
            }
        }
        Ok(())
    };
    if let Some(first) = first {
        add_page(&first)?;
    }
    if count > ITEMS_PAGE as i64 {
        conn.each(
            "SELECT items_json FROM invoice_item_pages WHERE invoice_id = ?1 ORDER BY page",
            params![id],
            |row| add_page(&row.get::<String>(0)?),
        )?;
    }
    Ok((taxes, untaxed))
}

/// A Pago as `invoices.payments_json` stores it (`cfdi::Payment`).
#[derive(Deserialize)]
struct StoredPayment {
    paid_at: String,
    currency: Option<String>,
    exchange_rate: Option<Decimal>,
    related_documents: Vec<StoredDocto>,
}

/// The fields of a stored DoctoRelacionado the summary reads; equal ones within one
/// Pago are one payment, as in the invoices' own aggregates.
#[derive(Deserialize, PartialEq)]
struct StoredDocto {
    uuid: Option<String>,
    currency: Option<String>,
    equivalence: Option<Decimal>,
    installment: Option<u32>,
    previous_balance: Option<Decimal>,
    amount_paid: Option<Decimal>,
    outstanding_balance: Option<Decimal>,
    #[serde(default)]
    taxes: Vec<ItemTax>,
}

/// Calls `f` with each linkable entry (one with an IdDocumento) of the entity's
/// complements of the direction whose FechaPago is in the period, with the invoice it
/// pays when that is stored. One complement is in memory at a time; the paid invoice is
/// read for each entry (an indexed lookup) rather than kept.
pub fn each_payment(conn: &Conn, p: &Period, mut f: impl FnMut(PaidEntry)) -> anyhow::Result<()> {
    // The complements' ids first, sorted (a temporary b-tree of ids only), then each
    // complement by its id: sorting or DISTINCT over whole rows would keep every
    // complement's payments_json in memory until the last one.
    conn.each(
        "SELECT DISTINCT payment_invoice_id FROM payment_entries
         WHERE entity_id = ?1 AND paid_at >= ?2 AND paid_at < ?3
         ORDER BY payment_invoice_id",
        params![p.entity_id, p.from, p.before],
        |row| {
            let id: String = row.get(0)?;
            let Some((cancelled, json, payment_uuid, issuer, receiver)) = conn.opt(
                "SELECT status, payments_json, uuid, issuer_tax_id, issuer_name,
                        receiver_tax_id, receiver_name FROM invoices
         WHERE id = ?1 AND org_id = ?2 AND direction = ?3",
                params![id, p.org_id, p.direction],
                |r| {
                    Ok((
                        r.get::<String>(0)? == "cancelled",
                        r.get::<Option<String>>(1)?,
                        r.get::<String>(2)?,
                        party(r, 3, 4)?,
                        party(r, 5, 6)?,
                    ))
                },
            )?
            else {
                return Ok(());
            };
            let payments: Vec<StoredPayment> =
                serde_json::from_str(json.as_deref().unwrap_or("[]"))?;
            for payment in payments {
                let paid_at = payment.paid_at.as_str();
                if paid_at < p.from || paid_at >= p.before {
                    continue;
                }
                let mut seen: Vec<&StoredDocto> = Vec::new();
                for d in &payment.related_documents {
                    let Some(uuid) = d.uuid.as_ref() else {
                        continue;
                    };
                    if seen.contains(&d) {
                        continue;
                    }
                    seen.push(d);
                    f(PaidEntry {
                        payment_invoice_id: id.clone(),
                        payment_cancelled: cancelled,
                        related_uuid: uuid.clone(),
                        paid_at: payment.paid_at.clone(),
                        currency: d.currency.clone(),
                        amount_paid: d.amount_paid.or(
                            match (d.previous_balance, d.outstanding_balance) {
                                (Some(before), Some(after)) => Some(before - after),
                                _ => None,
                            },
                        ),
                        taxes: d.taxes.clone(),
                        invoice: paid_invoice(conn, p.entity_id, uuid)?,
                        payment_currency: payment.currency.clone(),
                        payment_exchange_rate: payment.exchange_rate,
                        equivalence: d.equivalence,
                        payment_uuid: payment_uuid.clone(),
                        payment_issuer: issuer.clone(),
                        payment_receiver: receiver.clone(),
                    });
                }
            }
            Ok(())
        },
    )
}

/// The entity's processed document with this uuid.
fn paid_invoice(conn: &Conn, entity_id: &str, uuid: &str) -> anyhow::Result<Option<Document>> {
    conn.opt(
        &format!(
            "SELECT {COLUMNS} FROM invoices WHERE {}",
            super::invoices::PROCESSED_BY_UUID
        ),
        params![entity_id, uuid],
        |r| document(conn, r),
    )
}
