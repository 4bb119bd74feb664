//! The one ingestion path for invoices, shared by extractions, the `invoices import`
//! command and tests. Stage 1 records what the authority's listing says (metadata-only
//! rows, invisible through the API); stage 2 parses a document's XML, stores it byte for
//! byte with its PDF, and keeps payment aggregates right whatever order documents
//! arrive in: every insert recomputes the invoices it can affect from all stored entries.

use crate::cfdi::{Cfdi, CfdiError, InvoiceType};
use crate::db;
use crate::domain::extraction::Direction;
use crate::payments::{self, Entry};
use crate::sat::Metadata;
use rusqlite::{named_params, params, Connection, OptionalExtension};
use std::collections::BTreeSet;

/// The entity documents belong to.
#[derive(Debug, Clone, Copy)]
pub struct Owner<'a> {
    pub org_id: &'a str,
    pub entity_id: &'a str,
}

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("invalid CFDI: {0}")]
    Cfdi(#[from] CfdiError),
    #[error("the XML's UUID {found} is not the listed {expected}")]
    UuidMismatch { expected: String, found: String },
    #[error(transparent)]
    Storage(#[from] anyhow::Error),
}

impl From<rusqlite::Error> for IngestError {
    fn from(e: rusqlite::Error) -> Self {
        IngestError::Storage(e.into())
    }
}

/// Stage 1. Records each listed invoice (new ones metadata-only) and applies status
/// changes such as cancellations. Returns the positions in `listing` whose XML still
/// has to be processed.
pub fn record_listing(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    listing: &[Metadata],
) -> anyhow::Result<Vec<usize>> {
    let now = crate::time::now();
    let mut pending = vec![];
    for (i, m) in listing.iter().enumerate() {
        let uuid = m.uuid.trim().to_uppercase();
        let status = if m.cancelled { "cancelled" } else { "active" };
        let existing: Option<(String, bool, String, Option<String>)> = tx
            .prepare_cached("SELECT id, xml_processed, status, type FROM invoices WHERE entity_id = ?1 AND uuid = ?2")?
            .query_row(params![owner.entity_id, uuid], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))
            .optional()?;
        match existing {
            None => {
                insert_metadata(tx, owner, direction, &uuid, m, status, &now)?;
                pending.push(i);
            }
            Some((id, processed, old_status, kind)) => {
                if old_status != status {
                    tx.prepare_cached("UPDATE invoices SET status = ?2, cancelled_at = ?3, updated_at = ?4 WHERE id = ?1")?
                        .execute(params![id, status, m.cancelled_at, now])?;
                    if processed {
                        let mut affected = BTreeSet::from([uuid.clone()]);
                        if kind.as_deref() == Some("P") {
                            affected.extend(related_uuids(tx, &id)?);
                        }
                        for u in &affected {
                            recompute(tx, owner.entity_id, u)?;
                        }
                    }
                }
                if !processed {
                    pending.push(i);
                }
            }
        }
    }
    Ok(pending)
}

fn insert_metadata(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    uuid: &str,
    m: &Metadata,
    status: &str,
    now: &str,
) -> anyhow::Result<()> {
    tx.prepare_cached(
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

/// Stage 2 for one document. `listed` is the listing entry it answers, when there is one
/// (it carries the authority's cancellation status). Returns the invoice id.
pub fn ingest_document(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    listed: Option<&Metadata>,
    xml: &[u8],
    pdf: Option<&[u8]>,
) -> Result<String, IngestError> {
    let cfdi = Cfdi::parse_stamped(xml)?;
    store_document(tx, owner, direction, listed, &cfdi, xml, pdf)
}

/// `ingest_document` for a document parsed beforehand (extractions parse on their
/// download thread, outside the write transaction).
pub fn store_document(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    listed: Option<&Metadata>,
    cfdi: &Cfdi,
    xml: &[u8],
    pdf: Option<&[u8]>,
) -> Result<String, IngestError> {
    let uuid = cfdi.uuid()?.to_string();
    if let Some(m) = listed {
        if !m.uuid.trim().eq_ignore_ascii_case(&uuid) {
            return Err(IngestError::UuidMismatch {
                expected: m.uuid.clone(),
                found: uuid,
            });
        }
    }
    let existing = db::invoices::find(tx, owner.entity_id, &uuid)?;
    let mut affected: BTreeSet<String> = BTreeSet::from([uuid.clone()]);
    if let Some((id, _)) = &existing {
        affected.extend(related_uuids(tx, id)?);
    }
    let id = existing
        .map(|(id, _)| id)
        .unwrap_or_else(|| uuid::Uuid::now_v7().to_string());
    let (status, cancelled_at) = match listed {
        Some(m) => (
            if m.cancelled { "cancelled" } else { "active" },
            m.cancelled_at.clone(),
        ),
        None => current_status(tx, &id)?,
    };
    upsert_processed(
        tx,
        owner,
        direction,
        &id,
        &uuid,
        cfdi,
        status,
        cancelled_at.as_deref(),
        pdf.is_some(),
    )?;
    tx.prepare_cached(
        "INSERT OR REPLACE INTO documents (invoice_id, kind, content) VALUES (?1, ?2, ?3)",
    )?
    .execute(params![id, "xml", xml])?;
    if let Some(pdf) = pdf {
        tx.prepare_cached(
            "INSERT OR REPLACE INTO documents (invoice_id, kind, content) VALUES (?1, ?2, ?3)",
        )?
        .execute(params![id, "pdf", pdf])?;
    }
    affected.extend(replace_payment_entries(tx, owner.entity_id, &id, cfdi)?);
    for u in &affected {
        recompute(tx, owner.entity_id, u)?;
    }
    Ok(id)
}

fn current_status(tx: &Connection, id: &str) -> anyhow::Result<(&'static str, Option<String>)> {
    let row: Option<(String, Option<String>)> = tx
        .prepare_cached("SELECT status, cancelled_at FROM invoices WHERE id = ?1")?
        .query_row([id], |r| Ok((r.get(0)?, r.get(1)?)))
        .optional()?;
    Ok(match row {
        Some((s, at)) if s == "cancelled" => ("cancelled", at),
        _ => ("active", None),
    })
}

#[allow(clippy::too_many_arguments)]
fn upsert_processed(
    tx: &Connection,
    owner: Owner,
    direction: Direction,
    id: &str,
    uuid: &str,
    c: &Cfdi,
    status: &str,
    cancelled_at: Option<&str>,
    has_pdf: bool,
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
            created_at, updated_at)
         VALUES (:id, :org, :entity, :uuid, :direction, 1, :type, :version, :series, :folio,
            :issued_at, :certified_at, :issuer, :issuer_name, :issuer_regime, :receiver, :receiver_name,
            :cfdi_use, :currency, :rate, :subtotal, :discount, :transferred, :withheld, :total,
            :method, :form, :status, :cancelled_at, :has_pdf, :items, :items_count, :payments, :now, :now)
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
            payments_json = excluded.payments_json, updated_at = excluded.updated_at",
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
        ":items": serde_json::to_string(db::invoices::first_items(&c.items))?,
        ":items_count": c.items.len() as i64,
        ":payments": payments_json, ":now": now,
    })?;
    db::invoices::store_item_pages(tx, id, &c.items)?;
    Ok(())
}

/// Stored decimal text (exact, as parsed).
fn text(d: Option<rust_decimal::Decimal>) -> Option<String> {
    d.map(|d| d.to_string())
}

/// The uuids an invoice's stored payment entries name.
fn related_uuids(tx: &Connection, payment_invoice_id: &str) -> anyhow::Result<Vec<String>> {
    let mut stmt = tx.prepare_cached(
        "SELECT DISTINCT related_uuid FROM payment_entries WHERE payment_invoice_id = ?1",
    )?;
    let rows = stmt.query_map([payment_invoice_id], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Replaces a complement's entries (distinct, linkable ones); returns the uuids they name.
fn replace_payment_entries(
    tx: &Connection,
    entity_id: &str,
    id: &str,
    c: &Cfdi,
) -> anyhow::Result<Vec<String>> {
    tx.prepare_cached("DELETE FROM payment_entries WHERE payment_invoice_id = ?1")?
        .execute([id])?;
    if c.invoice_type != InvoiceType::P {
        return Ok(vec![]);
    }
    let mut named = vec![];
    let mut insert = tx.prepare_cached(
        "INSERT INTO payment_entries (payment_invoice_id, entity_id, seq, related_uuid, paid_at, installment,
            previous_balance, amount_paid, outstanding_balance, currency, equivalence)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    for payment in &c.payments {
        // A DoctoRelacionado without IdDocumento cannot be linked: it stays in the
        // complement's own `payments` only.
        let entries: Vec<(String, Entry)> = payment
            .related_documents
            .iter()
            .filter_map(|d| {
                let uuid = d.uuid.clone()?;
                Some((
                    uuid,
                    Entry {
                        payment_uuid: String::new(),
                        payment_cancelled: false,
                        paid_at: payment.paid_at.clone(),
                        installment: d.installment,
                        previous_balance: d.previous_balance,
                        amount_paid: d.amount_paid,
                        outstanding_balance: d.outstanding_balance,
                        currency: d.currency.clone(),
                        equivalence: d.equivalence,
                    },
                ))
            })
            .collect();
        let mut kept: Vec<(String, Entry)> = vec![];
        for (uuid, e) in entries {
            if !kept.iter().any(|(u, k)| *u == uuid && *k == e) {
                kept.push((uuid, e));
            }
        }
        for (uuid, e) in kept {
            let seq = named.len() as i64;
            insert.execute(params![
                id,
                entity_id,
                seq,
                uuid,
                e.paid_at,
                e.installment,
                text(e.previous_balance),
                text(e.amount_paid),
                text(e.outstanding_balance),
                e.currency,
                text(e.equivalence)
            ])?;
            named.push(uuid);
        }
    }
    Ok(named)
}

/// Recomputes one invoice's payment aggregates from every stored entry naming it.
fn recompute(tx: &Connection, entity_id: &str, uuid: &str) -> anyhow::Result<()> {
    type Row = (
        String,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<String>,
        String,
    );
    let row: Option<Row> = tx
        .prepare_cached(
            "SELECT id, type, payment_method, currency, total, status FROM invoices
             WHERE entity_id = ?1 AND uuid = ?2 AND xml_processed = 1",
        )?
        .query_row(params![entity_id, uuid], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
            ))
        })
        .optional()?;
    let Some((id, kind, method, currency, total, status)) = row else {
        return Ok(()); // not here yet: its entries wait for it
    };
    let entries: Vec<Entry> = db::invoices::payments_of(tx, entity_id, uuid)?
        .into_iter()
        .map(|(_, e)| e)
        .collect();
    let agg = payments::aggregate(
        &payments::Invoice {
            invoice_type: kind.as_deref().unwrap_or(""),
            payment_method: method.as_deref(),
            currency: currency.as_deref(),
            total: total.and_then(|t| t.parse().ok()).unwrap_or_default(),
            cancelled: status == "cancelled",
        },
        &entries,
    );
    tx.prepare_cached(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::invoices::{list, Filter};

    const ORG: &str = "org-1";
    const ENTITY: &str = "entity-1";
    const OWNER: Owner = Owner {
        org_id: ORG,
        entity_id: ENTITY,
    };

    fn db() -> Connection {
        let mut conn = Connection::open_in_memory().expect("db");
        crate::db::migrate::apply(&mut conn).expect("schema");
        conn.execute_batch(&format!(
            "INSERT INTO orgs VALUES ('{ORG}', 'Org', 'now');
             INSERT INTO entities VALUES ('{ENTITY}', '{ORG}', 'AAA010101AAA', 'E', x'00', 'valid', 'now', 'now');"
        ))
        .expect("seed");
        conn
    }

    fn sample(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../shared/cfdi-samples/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .expect("sample")
    }

    /// A copy of a stamped sample with another UUID, currency and total (to pair
    /// complements whose paid invoice is not in the sample set).
    fn variant(name: &str, uuid: &str, currency: &str, total: &str) -> Vec<u8> {
        let xml = String::from_utf8(sample(name)).expect("utf8");
        let original = Cfdi::parse(xml.as_bytes()).expect("parses");
        let old_uuid = original.stamp.and_then(|s| s.uuid).expect("stamped");
        let xml = xml
            .replace(&old_uuid, uuid)
            .replace(&old_uuid.to_lowercase(), uuid)
            .replace("Moneda=\"MXN\"", &format!("Moneda=\"{currency}\""))
            .replace(
                &format!("Total=\"{}\"", original.total),
                &format!("Total=\"{total}\""),
            );
        xml.into_bytes()
    }

    fn field(conn: &Connection, uuid: &str, name: &str) -> Option<String> {
        conn.query_row(
            &format!("SELECT {name} FROM invoices WHERE uuid = ?1"),
            [uuid],
            |r| r.get(0),
        )
        .expect("row")
    }

    fn ingest_all(conn: &Connection, docs: &[Vec<u8>]) {
        for d in docs {
            ingest_document(conn, OWNER, Direction::Issued, None, d, None).expect("ingests");
        }
    }

    /// Every permutation of `docs`.
    fn permutations(docs: Vec<Vec<u8>>) -> Vec<Vec<Vec<u8>>> {
        if docs.len() <= 1 {
            return vec![docs];
        }
        let mut out = vec![];
        for i in 0..docs.len() {
            let mut rest = docs.clone();
            let first = rest.remove(i);
            for mut p in permutations(rest) {
                p.insert(0, first.clone());
                out.push(p);
            }
        }
        out
    }

    #[test]
    fn scenario_1_in_both_orders_pays_the_ppd_invoice_in_full() {
        let uuid = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
        let docs = vec![
            sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml"),
            sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml"),
        ];
        for order in permutations(docs) {
            let conn = db();
            ingest_all(&conn, &order);
            assert_eq!(
                field(&conn, uuid, "paid_amount").as_deref(),
                Some("17852.75")
            );
            assert_eq!(field(&conn, uuid, "due_amount").as_deref(), Some("0.00"));
            assert!(field(&conn, uuid, "fully_paid_at").is_some());
        }
    }

    #[test]
    fn scenario_4_and_8_every_order_of_a_usd_invoice_and_its_complements() {
        let uuid = "1A3CD882-EB73-484A-6971-1C2D29C9F264";
        let invoice = variant(
            "cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml",
            uuid,
            "USD",
            "5000.00",
        );
        let payment = sample("cfdi33-pago10-tfd-usd-docto-mxn-payment.xml");
        // A second complement naming the same invoice in MXN: a currency conflict.
        let conflicting = variant(
            "cfdi40-pago20-tfd-full-payment-of-ppd.xml",
            "ABCDEF00-0000-4000-8000-000000000001",
            "MXN",
            "0",
        );
        let conflicting = String::from_utf8(conflicting)
            .expect("utf8")
            .replace("6d7434a6-e3f2-47ad-9e4c-08849946afa0", uuid)
            .replace("6D7434A6-E3F2-47AD-9E4C-08849946AFA0", uuid)
            .into_bytes();
        for order in permutations(vec![invoice, payment, conflicting]) {
            let conn = db();
            ingest_all(&conn, &order);
            assert_eq!(
                field(&conn, uuid, "paid_amount").as_deref(),
                Some("4000.00")
            );
            assert_eq!(field(&conn, uuid, "due_amount").as_deref(), Some("1000.00"));
            let conflicts: bool = conn
                .query_row(
                    "SELECT payment_conflicts FROM invoices WHERE uuid = ?1",
                    [uuid],
                    |r| r.get(0),
                )
                .expect("row");
            assert!(conflicts);
        }
    }

    #[test]
    fn reingesting_is_idempotent_and_keeps_the_xml_byte_for_byte() {
        let conn = db();
        let xml = sample("cfdi33-pago10-duplicate-docto-bom.xml");
        let stamped = sample("cfdi40-ingreso-pue-real-tfd.xml");
        assert!(matches!(
            ingest_document(&conn, OWNER, Direction::Issued, None, &xml, None),
            Err(IngestError::Cfdi(CfdiError::Unstamped))
        ));
        let a = ingest_document(
            &conn,
            OWNER,
            Direction::Issued,
            None,
            &stamped,
            Some(b"%PDF-1.7"),
        )
        .expect("first");
        let b =
            ingest_document(&conn, OWNER, Direction::Issued, None, &stamped, None).expect("again");
        assert_eq!(a, b);
        let n: i64 = conn
            .query_row("SELECT COUNT(*) FROM invoices", [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 1);
        assert_eq!(
            db::invoices::document(&conn, &a, "xml").expect("doc"),
            Some(stamped)
        );
        let has_pdf: bool = conn
            .query_row("SELECT has_pdf FROM invoices", [], |r| r.get(0))
            .expect("row");
        assert!(has_pdf, "a later download without PDF keeps the stored one");
        assert_eq!(
            field(&conn, "C2832671-DA6D-11EF-A83D-00155D012007", "paid_amount").as_deref(),
            Some("1000.00")
        );
    }

    #[test]
    fn metadata_only_invoices_are_invisible_until_processed_and_cancellations_apply() {
        let conn = db();
        let uuid = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
        let meta = Metadata {
            uuid: uuid.to_lowercase(),
            issuer_tax_id: "H&E951128469".into(),
            issuer_name: None,
            receiver_tax_id: "KIJ0906199R1".into(),
            receiver_name: None,
            issued_at: Some("2020-01-01T22:40:38".into()),
            certified_at: None,
            total: Some("17852.75".parse().expect("dec")),
            invoice_type: Some("I".into()),
            cancelled: false,
            cancelled_at: None,
        };
        assert_eq!(
            record_listing(&conn, OWNER, Direction::Issued, std::slice::from_ref(&meta))
                .expect("listing"),
            vec![0]
        );
        let visible = |c: &Connection| {
            list(c, ORG, &Filter::default(), None, 10)
                .expect("list")
                .len()
        };
        assert_eq!(visible(&conn), 0);
        let xml = sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml");
        ingest_document(&conn, OWNER, Direction::Issued, Some(&meta), &xml, None).expect("ingest");
        assert_eq!(visible(&conn), 1);
        assert!(
            record_listing(&conn, OWNER, Direction::Issued, std::slice::from_ref(&meta))
                .expect("again")
                .is_empty()
        );
        let cancelled = Metadata {
            cancelled: true,
            cancelled_at: Some("2020-01-03T10:00:00".into()),
            ..meta
        };
        record_listing(&conn, OWNER, Direction::Issued, &[cancelled]).expect("cancel");
        assert_eq!(field(&conn, uuid, "status").as_deref(), Some("cancelled"));
        assert_eq!(field(&conn, uuid, "due_amount").as_deref(), Some("0.00"));
        let wrong = meta_for("00000000-0000-0000-0000-000000000001");
        assert!(matches!(
            ingest_document(&conn, OWNER, Direction::Issued, Some(&wrong), &xml, None),
            Err(IngestError::UuidMismatch { .. })
        ));
    }

    fn meta_for(uuid: &str) -> Metadata {
        Metadata {
            uuid: uuid.into(),
            issuer_tax_id: String::new(),
            issuer_name: None,
            receiver_tax_id: String::new(),
            receiver_name: None,
            issued_at: None,
            certified_at: None,
            total: None,
            invoice_type: None,
            cancelled: false,
            cancelled_at: None,
        }
    }

    #[test]
    fn a_cancelled_complement_stops_counting() {
        let conn = db();
        let uuid = "6D7434A6-E3F2-47AD-9E4C-08849946AFA0";
        ingest_all(
            &conn,
            &[
                sample("cfdi40-ingreso-ppd-tfd-ampersand-rfc.xml"),
                sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml"),
            ],
        );
        let payment =
            Cfdi::parse(&sample("cfdi40-pago20-tfd-full-payment-of-ppd.xml")).expect("parse");
        let payment_uuid = payment.stamp.and_then(|s| s.uuid).expect("uuid");
        let cancel = Metadata {
            cancelled: true,
            ..meta_for(&payment_uuid)
        };
        record_listing(&conn, OWNER, Direction::Issued, &[cancel]).expect("cancel");
        assert_eq!(field(&conn, uuid, "paid_amount").as_deref(), Some("0.00"));
        assert_eq!(
            field(&conn, uuid, "due_amount").as_deref(),
            Some("17852.75")
        );
    }

    #[test]
    fn every_parseable_stamped_sample_ingests_and_bad_ones_fail_cleanly() {
        let dir = format!("{}/../shared/cfdi-samples", env!("CARGO_MANIFEST_DIR"));
        let conn = db();
        for entry in std::fs::read_dir(dir).expect("dir") {
            let path = entry.expect("entry").path();
            if path.extension().and_then(|e| e.to_str()) != Some("xml") {
                continue;
            }
            let bytes = std::fs::read(&path).expect("read");
            let parsed = Cfdi::parse_stamped(&bytes);
            let ingested = ingest_document(&conn, OWNER, Direction::Received, None, &bytes, None);
            assert_eq!(parsed.is_ok(), ingested.is_ok(), "{}", path.display());
        }
        let half = &sample("cfdi40-ingreso-pue-real-tfd.xml")[..500];
        assert!(matches!(
            ingest_document(&conn, OWNER, Direction::Issued, None, half, None),
            Err(IngestError::Cfdi(_))
        ));
    }
}
