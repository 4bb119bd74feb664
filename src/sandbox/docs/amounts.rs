//! The lines and totals of an invoice, in integer cents so that every sum is
//! exact: SubTotal = Σ Importe, IVA = Σ per-line IVA, Total = SubTotal −
//! Descuento + IVA. Drawn from the invoice's items stream, so metadata (the
//! total) and rendering (the lines) always agree.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::catalog::{Product, CREDITS, GOODS, PRODUCTS};
use super::seed::{index, InvoiceSeed, STREAM_ITEMS};
use super::{Currency, Kind};

/// One `cfdi:Concepto`.
#[derive(Debug, Clone)]
pub(super) struct Line {
    pub clave: &'static str,
    pub unit: &'static str,
    pub unit_name: &'static str,
    pub description: &'static str,
    pub qty: i64,
    pub unit_cents: i64,
    /// Importe = qty × unit price.
    pub amount: i64,
    pub discount: i64,
    /// IVA 16% on (amount − discount); `None` when the line is not taxable
    /// (ObjetoImp "01").
    pub iva: Option<i64>,
}

impl Line {
    pub fn tax_base(&self) -> i64 {
        self.amount - self.discount
    }
}

/// Deductions of a payroll receipt.
#[derive(Debug, Clone, Copy)]
pub(super) struct Payroll {
    pub salary: i64,
    pub social_security: i64,
    pub income_tax: i64,
}

#[derive(Debug, Clone)]
pub(super) struct Amounts {
    pub lines: Vec<Line>,
    pub subtotal: i64,
    pub discount: i64,
    /// Σ IVA, `None` when no line is taxable (no `cfdi:Impuestos`).
    pub iva: Option<i64>,
    pub total: i64,
    pub payroll: Option<Payroll>,
}

/// `cents × num / den`, rounded half away from zero (cents are never negative).
pub(super) fn share(cents: i64, num: i64, den: i64) -> i64 {
    (2 * cents * num + den) / (2 * den)
}

/// The lines of an invoice of `kind`, from its seed.
pub(super) fn amounts(kind: Kind, seed: &InvoiceSeed, currency: Currency) -> Amounts {
    let mut rng = seed.stream(STREAM_ITEMS);
    let (lines, payroll) = match kind {
        Kind::IncomePue | Kind::IncomePpd => (income_lines(&mut rng, currency), None),
        Kind::Credit => (credit_lines(&mut rng), None),
        Kind::Transfer => (transfer_lines(&mut rng), None),
        Kind::Payroll => {
            let payroll = payroll(&mut rng);
            (vec![payroll_line(&payroll)], Some(payroll))
        }
        Kind::Payment => (vec![payment_line()], None),
    };
    totals(lines, payroll)
}

fn pick<'a>(rng: &mut ChaCha8Rng, products: &'a [Product]) -> &'a Product {
    &products[index(rng, products.len())]
}

fn totals(lines: Vec<Line>, payroll: Option<Payroll>) -> Amounts {
    let subtotal = lines.iter().map(|l| l.amount).sum();
    let discount = lines.iter().map(|l| l.discount).sum();
    let taxed = lines.iter().any(|l| l.iva.is_some());
    let iva = taxed.then(|| lines.iter().filter_map(|l| l.iva).sum());
    let total = subtotal - discount + iva.unwrap_or(0);
    Amounts {
        lines,
        subtotal,
        discount,
        iva,
        total,
        payroll,
    }
}

/// A taxable line of `qty` units at `unit_cents`.
fn taxable(product: &'static Product, qty: i64, unit_cents: i64) -> Line {
    let amount = qty * unit_cents;
    Line {
        clave: product.clave,
        unit: product.unit,
        unit_name: product.unit_name,
        description: product.description,
        qty,
        unit_cents,
        amount,
        discount: 0,
        iva: Some(share(amount, 16, 100)),
    }
}

fn income_lines(rng: &mut ChaCha8Rng, currency: Currency) -> Vec<Line> {
    let count = rng.random_range(1..=5u32);
    let mut lines: Vec<Line> = (0..count)
        .map(|_| {
            let product = pick(rng, PRODUCTS);
            let qty = i64::from(rng.random_range(1..=product.max_qty));
            let mxn = rng.random_range(product.min_cents..=product.max_cents);
            taxable(product, qty, currency.price_of(mxn))
        })
        .collect();
    // About 1 in 10 income invoices grants a 5-15% discount on one line.
    let discounted = rng.random_ratio(1, 10);
    let index = rng.random_range(0..count) as usize;
    let percent = rng.random_range(5..=15i64);
    if discounted {
        let line = &mut lines[index];
        line.discount = share(line.amount, percent, 100);
        line.iva = Some(share(line.tax_base(), 16, 100));
    }
    lines
}

fn credit_lines(rng: &mut ChaCha8Rng) -> Vec<Line> {
    let count = rng.random_range(1..=2u32);
    (0..count)
        .map(|_| {
            let product = pick(rng, CREDITS);
            let cents = rng.random_range(product.min_cents..=product.max_cents);
            taxable(product, 1, cents)
        })
        .collect()
}

/// Goods moved under a `T` CFDI: quantities but no value (SubTotal must be 0).
fn transfer_lines(rng: &mut ChaCha8Rng) -> Vec<Line> {
    let count = rng.random_range(1..=5u32);
    (0..count)
        .map(|_| {
            let product = pick(rng, &PRODUCTS[..GOODS]);
            let qty = i64::from(rng.random_range(1..=product.max_qty));
            Line {
                iva: None,
                ..taxable(product, qty, 0)
            }
        })
        .collect()
}

/// A fortnightly salary with IMSS (2.5%) and a rough progressive ISR.
fn payroll(rng: &mut ChaCha8Rng) -> Payroll {
    let salary = rng.random_range(6_000..=60_000i64) * 100;
    let isr_percent = (8 + salary / 500_000).min(25);
    Payroll {
        salary,
        social_security: share(salary, 25, 1000),
        income_tax: share(salary, isr_percent, 100),
    }
}

fn payroll_line(payroll: &Payroll) -> Line {
    Line {
        clave: "84111505",
        unit: "ACT",
        unit_name: "Actividad",
        description: "Pago de nómina",
        qty: 1,
        unit_cents: payroll.salary,
        amount: payroll.salary,
        discount: payroll.social_security + payroll.income_tax,
        iva: None,
    }
}

/// The fixed concept of every payment complement.
fn payment_line() -> Line {
    Line {
        clave: "84111506",
        unit: "ACT",
        unit_name: "",
        description: "Pago",
        qty: 1,
        unit_cents: 0,
        amount: 0,
        discount: 0,
        iva: None,
    }
}

/// `cents` as a 2-decimal amount, e.g. `1234.50`.
pub(super) fn money(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    format!("{sign}{}.{:02}", abs / 100, abs % 100)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_rounds_half_away_from_zero() {
        assert_eq!(share(1, 16, 100), 0); // 0.16 cents
        assert_eq!(share(25, 2, 100), 1); // 0.5 cents rounds up
        assert_eq!(share(10_000, 16, 100), 1_600);
    }

    #[test]
    fn money_has_two_decimals() {
        assert_eq!(money(0), "0.00");
        assert_eq!(money(5), "0.05");
        assert_eq!(money(123_450), "1234.50");
    }

    #[test]
    fn totals_are_consistent_for_every_kind() {
        for i in 0u8..200 {
            let seed = InvoiceSeed::new([i; 32], 0);
            for kind in [Kind::IncomePue, Kind::Credit, Kind::Payroll, Kind::Transfer] {
                let a = amounts(kind, &seed, Currency::Mxn);
                let iva: i64 = a.lines.iter().filter_map(|l| l.iva).sum();
                assert_eq!(a.subtotal, a.lines.iter().map(|l| l.amount).sum::<i64>());
                assert_eq!(a.total, a.subtotal - a.discount + iva);
            }
        }
    }
}
