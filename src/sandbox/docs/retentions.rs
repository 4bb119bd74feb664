//! The sandbox's CFDI de Retenciones 2.0: deterministic retention documents of any
//! entity, direction and month, with no clock and no state (documented for API users
//! in `/docs/sandbox`, "Retention documents").
//!
//! Each calendar month `M` has a ChaCha8 generator seeded with SHA-256 of
//! `"{tax_id}|{direction}|{YYYY-MM}|retentions"`, which draws which documents there are;
//! document `i` of the month draws the rest from a seed of its own (`"...|retentions|i"`). A document is issued on day 1..=10 of `M` (09:00..18:59) and covers
//! the month before (`Periodo` MesIni = MesFin, `Ejercicio` its year). The rules:
//! - received (the entity is the one withheld from):
//!   - every month, interest from a bank (`CveRetenc` 16): 100.00..=5,000.00 of
//!     interest, ISR withheld 10% of it as a provisional payment (`TipoPagoRet` 04);
//!   - one month in two (drawn), a digital platform's (`CveRetenc` 26): 1,000.00..=
//!     50,000.00 of services, ISR withheld 2.1% (`TipoPagoRet` 03, definitive) and IVA
//!     8%, half of the 16% (`TipoPagoRet` 01);
//!   - each April, dividends from one of the sandbox's companies (`CveRetenc` 14):
//!     5,000.00..=200,000.00, ISR withheld 10% (`TipoPagoRet` 03);
//! - issued (the entity withholds from independent professionals it pays,
//!   `CveRetenc` 01): 1..=2 a month, fees 2,000.00..=40,000.00, ISR withheld 10%
//!   (`TipoPagoRet` 04) and IVA two thirds of the 16% (`TipoPagoRet` 01);
//! - amounts are taxed in full (`MontoTotGrav` = `MontoTotOperacion`, nothing exempt),
//!   each withheld amount is rounded half away from zero to the cent on its own, and
//!   `MontoTotRet` is their sum;
//! - 1 in 10 documents is cancelled 1..=5 days after issue: the first extraction that
//!   lists it sees it active (it gets its XML), any later one cancelled.

use chrono::{Datelike, Months, NaiveDate, NaiveDateTime, TimeDelta};
use rand::Rng;
use rand_chacha::ChaCha8Rng;
use rust_decimal::Decimal;
use std::io;

use super::amounts::{money, share};
use super::catalog::{COMPANIES, EMPLOYEES, PACS};
use super::seed::{base64, choose, fiscal_uuid, hash_seed, index, random_bytes, stream};
use super::stamp::{certificate, SAT_CERTIFICATE_NUMBER};
use super::xml::{el, timestamp, Doc, TFD_NS, TFD_XSD, XSI_NS};
use super::{Direction, Entity};
use quick_xml::events::{BytesDecl, Event};

const RET2_NS: &str = "http://www.sat.gob.mx/esquemas/retencionpago/2";
const RET2_XSD: &str = "http://www.sat.gob.mx/esquemas/retencionpago/2 http://www.sat.gob.mx/esquemas/retencionpago/2/retencionpagov2.xsd";

/// The bank that pays every entity's interest, and the platform that pays for services.
const BANK: Payer = Payer {
    rfc: "BSA000101QK4",
    name: "BANCO SANDBOX DEL AHORRO",
    regime: "601",
};
const PLATFORM: Payer = Payer {
    rfc: "PVS150301TT5",
    name: "PLATAFORMA DE VIAJES SANDBOX",
    regime: "601",
};

struct Payer {
    rfc: &'static str,
    name: &'static str,
    regime: &'static str,
}

/// ISR (001) or IVA (002), as `ImpuestoRet` writes them.
const ISR: &str = "001";
const IVA: &str = "002";

/// One withheld tax (`ImpRetenidos`), in cents.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxWithheld {
    pub tax: &'static str,
    pub base_cents: i64,
    pub amount_cents: i64,
    /// `TipoPagoRet` (c_TipoPagoRet).
    pub payment_type: &'static str,
}

/// One sandbox retention document, as the SAT lists it, with what its XML needs.
#[derive(Debug, Clone, PartialEq)]
pub struct SandboxRetention {
    /// Upper-case fiscal UUID.
    pub uuid: String,
    /// `CveRetenc`.
    pub key: &'static str,
    pub issuer_tax_id: String,
    pub issuer_name: String,
    issuer_regime: &'static str,
    pub receiver_tax_id: String,
    pub receiver_name: String,
    receiver_zip: String,
    /// `FechaExp`, local time.
    pub issued_at: NaiveDateTime,
    /// `Periodo`: the month covered.
    pub period_year: i32,
    pub period_month: u32,
    /// `MontoTotOperacion` (and `MontoTotGrav`), in cents.
    pub operation_cents: i64,
    pub withheld: Vec<SandboxWithheld>,
    /// Some for 1 in 10: 1..=5 days after issue, seen from the second listing on.
    pub cancelled_at: Option<NaiveDateTime>,
    folio: String,
    place_of_issue: String,
    /// The document's own stream seed (seals and stamp).
    seed: [u8; 32],
}

impl SandboxRetention {
    /// `MontoTotRet`: the withheld amounts' sum, in cents.
    pub fn withheld_cents(&self) -> i64 {
        self.withheld.iter().map(|w| w.amount_cents).sum()
    }

    /// `MontoTotOperacion` as a decimal.
    pub fn operation(&self) -> Decimal {
        Decimal::new(self.operation_cents, 2)
    }

    /// When it was stamped (a few seconds after issue) and by which PAC.
    pub fn certification(&self) -> (NaiveDateTime, &'static str) {
        let stamp = self.stamp();
        (stamp.stamped_at, stamp.pac)
    }

    fn stamp(&self) -> RetentionStamp {
        let mut rng = stream(&self.seed, 1);
        let seal = base64(&random_bytes(&mut rng, 256));
        let delay = TimeDelta::seconds(rng.random_range(1..=20));
        RetentionStamp {
            seal,
            stamped_at: self.issued_at + delay,
            pac: choose(&mut rng, PACS),
            sat_seal: base64(&random_bytes(&mut rng, 256)),
        }
    }
}

struct RetentionStamp {
    seal: String,
    stamped_at: NaiveDateTime,
    pac: &'static str,
    sat_seal: String,
}

/// The retention documents of `tax_id` in `direction` issued from `from` to `to`
/// (inclusive), by issue time then UUID.
pub fn retentions_for_period(
    tax_id: &str,
    direction: Direction,
    from: NaiveDate,
    to: NaiveDate,
) -> Vec<SandboxRetention> {
    let entity = Entity::new(tax_id, direction);
    let mut out: Vec<SandboxRetention> = months(from, to)
        .flat_map(|month| month_retentions(&entity, month))
        .filter(|r| from <= r.issued_at.date() && r.issued_at.date() <= to)
        .collect();
    out.sort_by(|a, b| (a.issued_at, &a.uuid).cmp(&(b.issued_at, &b.uuid)));
    out
}

/// The first day of each month that `from..=to` touches.
fn months(from: NaiveDate, to: NaiveDate) -> impl Iterator<Item = NaiveDate> {
    let first = from.with_day(1).unwrap_or(from);
    std::iter::successors(Some(first), |m| m.checked_add_months(Months::new(1)))
        .take_while(move |m| *m <= to)
}

/// What one document is, before its own draws.
enum Kind {
    Interest,
    Platform,
    Dividends,
    Fees,
}

fn month_retentions(entity: &Entity, month: NaiveDate) -> Vec<SandboxRetention> {
    let label = format!(
        "{}|{}|{}|retentions",
        entity.tax_id,
        entity.direction.label(),
        month.format("%Y-%m")
    );
    let seed = hash_seed(&label);
    let mut day = stream(&seed, 0);
    let kinds = match entity.direction {
        Direction::Received => {
            let mut kinds = vec![Kind::Interest];
            if day.random_bool(0.5) {
                kinds.push(Kind::Platform);
            }
            if month.month() == 4 {
                kinds.push(Kind::Dividends);
            }
            kinds
        }
        Direction::Issued => (0..day.random_range(1..=2)).map(|_| Kind::Fees).collect(),
    };
    kinds
        .into_iter()
        .enumerate()
        .map(|(i, kind)| {
            let doc_seed = hash_seed(&format!("{label}|{i}"));
            build(entity, month, i, kind, doc_seed)
        })
        .collect()
}

fn build(
    entity: &Entity,
    month: NaiveDate,
    i: usize,
    kind: Kind,
    seed: [u8; 32],
) -> SandboxRetention {
    let mut rng = stream(&seed, 0);
    let uuid = fiscal_uuid(rng.random());
    let day = rng.random_range(1..=10);
    let secs = rng.random_range(9 * 3600..19 * 3600);
    let issued_at = month
        .with_day(day)
        .unwrap_or(month)
        .and_hms_opt(0, 0, 0)
        .unwrap_or_default()
        + TimeDelta::seconds(secs);
    let period = month.checked_sub_months(Months::new(1)).unwrap_or(month);
    let cancelled = rng.random_ratio(1, 10);
    let cancel_after = TimeDelta::days(rng.random_range(1..=5));
    let (key, payer, operation_cents, withheld) = draw(entity, kind, &mut rng);
    let own = (
        entity.tax_id.to_string(),
        entity.name.clone(),
        entity.regime,
        entity.zip.clone(),
    );
    let (issuer, receiver) = match entity.direction {
        // Received: withheld by the payer from the entity.
        Direction::Received => (payer, own),
        // Issued: the entity withholds from the professional it pays.
        Direction::Issued => (own, payer),
    };
    SandboxRetention {
        uuid,
        key,
        issuer_tax_id: issuer.0,
        issuer_name: issuer.1,
        issuer_regime: issuer.2,
        receiver_tax_id: receiver.0,
        receiver_name: receiver.1,
        receiver_zip: receiver.3,
        issued_at,
        period_year: period.year(),
        period_month: period.month(),
        operation_cents,
        withheld,
        cancelled_at: cancelled.then_some(issued_at + cancel_after),
        folio: format!("R{}{:02}{:02}", month.format("%Y%m"), i + 1, day),
        place_of_issue: issuer.3,
        seed,
    }
}

/// A party: RFC, name, regime, postal code.
type Party = (String, String, &'static str, String);

/// The key, the other party, the operation and what is withheld, for one kind.
fn draw(
    entity: &Entity,
    kind: Kind,
    rng: &mut ChaCha8Rng,
) -> (&'static str, Party, i64, Vec<SandboxWithheld>) {
    let payer = |p: Payer| {
        (
            p.rfc.to_string(),
            p.name.to_string(),
            p.regime,
            "06000".to_string(),
        )
    };
    let withheld = |tax, base, percent_e2: i64, payment_type| SandboxWithheld {
        tax,
        base_cents: base,
        amount_cents: share(base, percent_e2, 10_000),
        payment_type,
    };
    match kind {
        Kind::Interest => {
            let interest = rng.random_range(10_000..=500_000);
            let isr = withheld(ISR, interest, 1_000, "04");
            ("16", payer(BANK), interest, vec![isr])
        }
        Kind::Platform => {
            let services = rng.random_range(100_000..=5_000_000);
            let isr = withheld(ISR, services, 210, "03");
            let iva = withheld(IVA, services, 800, "01");
            ("26", payer(PLATFORM), services, vec![isr, iva])
        }
        Kind::Dividends => {
            // Any sandbox company but the entity itself.
            let others: Vec<_> = COMPANIES
                .iter()
                .filter(|c| c.rfc != entity.tax_id)
                .collect();
            let company = others[index(rng, others.len())];
            let dividends = rng.random_range(500_000..=20_000_000);
            let isr = withheld(ISR, dividends, 1_000, "03");
            let party = (
                company.rfc.to_string(),
                company.name.to_string(),
                company.regime,
                company.zip.to_string(),
            );
            ("14", party, dividends, vec![isr])
        }
        Kind::Fees => {
            let professional = &EMPLOYEES[index(rng, EMPLOYEES.len())];
            let fees = rng.random_range(200_000..=4_000_000);
            let isr = withheld(ISR, fees, 1_000, "04");
            // Two thirds of the 16% IVA: 10.6667% of the fees, from the IVA itself.
            let iva_cents = share(fees, 16, 100);
            let iva = SandboxWithheld {
                tax: IVA,
                base_cents: fees,
                amount_cents: share(iva_cents, 2, 3),
                payment_type: "01",
            };
            let party = (
                professional.rfc.to_string(),
                professional.name.to_string(),
                "612",
                professional.zip.to_string(),
            );
            ("01", party, fees, vec![isr, iva])
        }
    }
}

/// The stamped RET 2.0 XML of a sandbox retention.
pub fn render_retention_xml(r: &SandboxRetention) -> io::Result<Vec<u8>> {
    let stamp = r.stamp();
    let (certificate_number, certificate) = certificate(&r.issuer_tax_id);
    let mut doc = Doc::new();
    doc.write(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    doc.open(el(
        "retenciones:Retenciones",
        &[
            ("xmlns:retenciones", RET2_NS),
            ("xmlns:xsi", XSI_NS),
            ("xsi:schemaLocation", RET2_XSD),
            ("Version", "2.0"),
            ("FolioInt", &r.folio),
            ("Sello", &stamp.seal),
            ("NoCertificado", &certificate_number),
            ("Certificado", &certificate),
            ("FechaExp", &timestamp(r.issued_at)),
            ("LugarExpRetenc", &r.place_of_issue),
            ("CveRetenc", r.key),
        ],
    ))?;
    doc.leaf(el(
        "retenciones:Emisor",
        &[
            ("RfcE", &r.issuer_tax_id),
            ("NomDenRazSocE", &r.issuer_name),
            ("RegimenFiscalE", r.issuer_regime),
        ],
    ))?;
    doc.open(el("retenciones:Receptor", &[("NacionalidadR", "Nacional")]))?;
    doc.leaf(el(
        "retenciones:Nacional",
        &[
            ("RfcR", &r.receiver_tax_id),
            ("NomDenRazSocR", &r.receiver_name),
            ("DomicilioFiscalR", &r.receiver_zip),
        ],
    ))?;
    doc.close("retenciones:Receptor")?;
    let month = format!("{:02}", r.period_month);
    doc.leaf(el(
        "retenciones:Periodo",
        &[
            ("MesIni", &month),
            ("MesFin", &month),
            ("Ejercicio", &r.period_year.to_string()),
        ],
    ))?;
    doc.open(el(
        "retenciones:Totales",
        &[
            ("MontoTotOperacion", &money(r.operation_cents)),
            ("MontoTotGrav", &money(r.operation_cents)),
            ("MontoTotExent", "0.00"),
            ("MontoTotRet", &money(r.withheld_cents())),
        ],
    ))?;
    for w in &r.withheld {
        doc.leaf(el(
            "retenciones:ImpRetenidos",
            &[
                ("BaseRet", &money(w.base_cents)),
                ("ImpuestoRet", w.tax),
                ("MontoRet", &money(w.amount_cents)),
                ("TipoPagoRet", w.payment_type),
            ],
        ))?;
    }
    doc.close("retenciones:Totales")?;
    doc.open(el("retenciones:Complemento", &[]))?;
    doc.leaf(el(
        "tfd:TimbreFiscalDigital",
        &[
            ("xmlns:tfd", TFD_NS),
            ("xmlns:xsi", XSI_NS),
            ("xsi:schemaLocation", TFD_XSD),
            ("Version", "1.1"),
            ("UUID", &r.uuid),
            ("FechaTimbrado", &timestamp(stamp.stamped_at)),
            ("RfcProvCertif", stamp.pac),
            ("SelloCFD", &stamp.seal),
            ("NoCertificadoSAT", SAT_CERTIFICATE_NUMBER),
            ("SelloSAT", &stamp.sat_seal),
        ],
    ))?;
    doc.close("retenciones:Complemento")?;
    doc.close("retenciones:Retenciones")?;
    super::sealing::seal_and_stamp(&r.uuid, &r.issuer_tax_id, doc.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::retention::Retention;

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").expect("date")
    }

    #[test]
    fn the_same_inputs_give_the_same_documents() {
        let a = retentions_for_period(
            "EKU9003173C9",
            Direction::Received,
            date("2026-01-01"),
            date("2026-06-30"),
        );
        let b = retentions_for_period(
            "EKU9003173C9",
            Direction::Received,
            date("2026-01-01"),
            date("2026-06-30"),
        );
        assert_eq!(a, b);
        let xml = |r: &SandboxRetention| render_retention_xml(r).expect("xml");
        assert_eq!(xml(&a[0]), xml(&b[0]));
    }

    #[test]
    fn received_documents_follow_the_monthly_rules() {
        let docs = retentions_for_period(
            "EKU9003173C9",
            Direction::Received,
            date("2026-01-01"),
            date("2026-12-31"),
        );
        for month in 1..=12u32 {
            let of_month: Vec<_> = docs
                .iter()
                .filter(|r| r.issued_at.month() == month)
                .collect();
            let keys: Vec<_> = of_month.iter().map(|r| r.key).collect();
            assert_eq!(
                keys.iter().filter(|k| **k == "16").count(),
                1,
                "{month}: {keys:?}"
            );
            assert_eq!(keys.contains(&"14"), month == 4, "{month}: {keys:?}");
            for r in &of_month {
                assert!(r.issued_at.day() <= 10);
                assert_eq!(r.receiver_tax_id, "EKU9003173C9");
                // The month before.
                let covered = if month == 1 {
                    (2025, 12)
                } else {
                    (2026, month - 1)
                };
                assert_eq!((r.period_year, r.period_month), covered);
            }
        }
        assert!(docs.iter().any(|r| r.key == "26"));
    }

    #[test]
    fn withheld_amounts_are_worked_out_to_the_cent() {
        let docs = retentions_for_period(
            "EKU9003173C9",
            Direction::Issued,
            date("2026-01-01"),
            date("2026-12-31"),
        );
        assert!(!docs.is_empty());
        for r in &docs {
            assert_eq!(r.key, "01");
            assert_eq!(r.issuer_tax_id, "EKU9003173C9");
            let fees = r.operation_cents;
            // ISR 10%, IVA two thirds of 16%, each rounded half up to the cent.
            assert_eq!(r.withheld[0].amount_cents, (fees * 10 + 50) / 100);
            let iva = (fees * 16 + 50) / 100;
            assert_eq!(r.withheld[1].amount_cents, (iva * 2 * 2 + 3) / 6);
        }
        // By hand: fees of 10,000.00 withhold 1,000.00 of ISR and 1,066.67 of IVA.
        assert_eq!(share(1_000_000, 1_000, 10_000), 100_000);
        assert_eq!(share(share(1_000_000, 16, 100), 2, 3), 106_667);
        // A platform's 12,345.67 withholds 259.26 of ISR (2.1%) and 987.65 of IVA (8%).
        assert_eq!(share(1_234_567, 210, 10_000), 25_926);
        assert_eq!(share(1_234_567, 800, 10_000), 98_765);
    }

    #[test]
    fn the_xml_parses_as_a_stamped_retention_with_its_figures() {
        let docs = retentions_for_period(
            "EKU9003173C9",
            Direction::Received,
            date("2026-04-01"),
            date("2026-04-30"),
        );
        for r in &docs {
            let xml = render_retention_xml(r).expect("xml");
            let parsed = Retention::parse_stamped(&xml).expect("a stamped retention");
            assert_eq!(parsed.uuid().expect("uuid"), r.uuid);
            assert_eq!(parsed.key.as_deref(), Some(r.key));
            assert_eq!(parsed.totals.operation, r.operation());
            assert_eq!(
                parsed.totals.withheld,
                Some(Decimal::new(r.withheld_cents(), 2))
            );
            assert_eq!(parsed.withheld_taxes.len(), r.withheld.len());
            assert_eq!(parsed.issuer.tax_id, r.issuer_tax_id);
        }
    }

    #[test]
    fn about_one_in_ten_is_cancelled_days_after_issue() {
        let docs = retentions_for_period(
            "AAA010101AAA",
            Direction::Received,
            date("2020-01-01"),
            date("2025-12-31"),
        );
        let cancelled: Vec<_> = docs.iter().filter(|r| r.cancelled_at.is_some()).collect();
        assert!(docs.len() > 100, "{}", docs.len());
        assert!(
            (5..=30).contains(&(cancelled.len() * 100 / docs.len())),
            "{} of {}",
            cancelled.len(),
            docs.len()
        );
        for r in cancelled {
            let days = (r.cancelled_at.expect("cancelled") - r.issued_at).num_days();
            assert!((1..=5).contains(&days));
        }
    }
}
