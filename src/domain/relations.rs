//! CFDI relations (CfdiRelacionados, c_TipoRelacion): what each code means, as the
//! invoice object names it, and what credit notes take off an invoice.

use crate::cfdi::Related;
use rust_decimal::Decimal;

/// Each TipoRelacion code and its name; another code shows with a null name.
pub const KINDS: &[(&str, &str)] = &[
    ("01", "credit_note"),
    ("02", "debit_note"),
    ("03", "return"),
    ("04", "substitution"),
    ("05", "transfer"),
    ("06", "invoice_of_transfers"),
    ("07", "advance_applied"),
    ("08", "installments"),
    ("09", "deferred_payments"),
];

/// The TipoRelacion codes of a document that reduces the one it names: a credit note (01)
/// and a return of goods (03).
pub const CREDITING: [&str; 2] = ["01", "03"];

/// What the credit notes of an invoice take off it: `credited`, the sum of their totals
/// (each counted whole, in the invoice's currency), and what is left to pay after its
/// payments (`due`, the spec's `due_amount`) and those credits, never below zero; None
/// when the invoice has no `due_amount`. Which credit notes count is the SQL's to
/// decide (`db::invoices::relations::credits`): active type E documents of the same
/// entity and currency naming this invoice, and no other, with 01 or 03.
pub fn credited(due: Option<Decimal>, credits: &[Decimal]) -> (Decimal, Option<Decimal>) {
    let mut credited = credits.iter().sum::<Decimal>();
    if credits.is_empty() {
        // Nothing credited reads like the other amounts: 0.00, not 0.
        credited.rescale(due.map_or(2, |d| d.scale()));
    }
    let left = due.map(|due| {
        let mut zero = Decimal::ZERO;
        zero.rescale(due.scale());
        (due - credited).max(zero)
    });
    (credited, left)
}

/// The one document `related`'s crediting relations (01, 03) name, however many times;
/// None when they name none or several (such a note credits no invoice: `credited`).
pub fn sole_credited(related: &[Related]) -> Option<&str> {
    let mut named = related
        .iter()
        .filter(|r| {
            r.relation_type
                .as_deref()
                .is_some_and(|t| CREDITING.contains(&t))
        })
        .map(|r| r.uuid.as_str());
    let first = named.next()?;
    named.all(|u| u == first).then_some(first)
}

/// The name of a TipoRelacion code.
pub fn name(code: &str) -> Option<&'static str> {
    KINDS.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

#[cfg(test)]
mod tests {
    use rust_decimal::Decimal;
    use std::str::FromStr;

    fn d(s: &str) -> Decimal {
        Decimal::from_str(s).expect("decimal")
    }

    #[test]
    fn credits_add_up_and_what_is_left_never_goes_below_zero() {
        let (credited, left) = super::credited(Some(d("1000.00")), &[d("116.00"), d("50.50")]);
        assert_eq!(
            (credited.to_string(), left.map(|l| l.to_string())),
            ("166.50".into(), Some("833.50".into()))
        );
        let (credited, left) = super::credited(Some(d("100.00")), &[d("116.00")]);
        assert_eq!(
            (credited.to_string(), left.map(|l| l.to_string())),
            ("116.00".into(), Some("0.00".into()))
        );
        let (credited, left) = super::credited(None, &[]);
        assert_eq!((credited.to_string(), left), ("0.00".into(), None));
    }

    #[test]
    fn a_note_credits_the_one_document_its_01_and_03_relations_name() {
        let r = |kind: &str, uuid: &str| crate::cfdi::Related {
            relation_type: Some(kind.into()),
            uuid: uuid.into(),
        };
        let once = [r("01", "A")];
        assert_eq!(super::sole_credited(&once), Some("A"));
        // Named again, also as a return, beside a substitution of another: still A.
        let again = [r("01", "A"), r("04", "B"), r("03", "A"), r("01", "A")];
        assert_eq!(super::sole_credited(&again), Some("A"));
        assert_eq!(super::sole_credited(&[r("01", "A"), r("01", "B")]), None);
        assert_eq!(super::sole_credited(&[r("04", "A")]), None);
        assert_eq!(super::sole_credited(&[]), None);
    }

    #[test]
    fn codes_have_names_and_unknown_ones_none() {
        assert_eq!(super::name("01"), Some("credit_note"));
        assert_eq!(super::name("04"), Some("substitution"));
        assert_eq!(super::name("07"), Some("advance_applied"));
        assert_eq!(super::name("10"), None);
    }
}
