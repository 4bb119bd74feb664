//! The sandbox's status service (`sat::status::StatusService`): deterministic answers
//! that agree with the sandbox's own documents (`/docs/sandbox#status`):
//!
//! - a document the sandbox issued (found by its issuer or receiver, its day and its
//!   UUID) that the sandbox cancels is `Cancelado`: "Cancelado sin aceptación" for a
//!   total up to 1,000, otherwise "Cancelado con aceptación", or "Plazo vencido" when
//!   its UUID's last digit is odd. Half of those are listed active by the first
//!   extraction: the status check sees the cancellation first, as with the real SAT;
//! - any other sandbox document is `Vigente`: "Cancelable con aceptación" for an `I`
//!   or `E` over 1,000, "No cancelable" for a `P`, otherwise "Cancelable sin
//!   aceptación"; with acceptance, a UUID ending in `A` has a cancellation "En proceso"
//!   and one ending in `B` a "Solicitud rechazada";
//! - a document the sandbox did not issue (an imported one) is `Vigente`, "Cancelable
//!   sin aceptación", unless its UUID's last twelve digits are zeros: not found (602);
//! - the issuer is on the EFOS list (100) when its RFC starts with `EFO`, else 200;
//! - an expression without its fields is 601.

use std::time::Duration;

use chrono::NaiveDateTime;
use rust_decimal::Decimal;

use super::docs::{self, Direction, SandboxInvoice};
use crate::domain::sat_status::{Cancellable, CancellationStatus, Efos, State};
use crate::sat::status::expression::{self, Fields};
use crate::sat::status::{Answer, Code, StatusError, StatusService, Subject};

pub struct SandboxStatus {
    latency: Duration,
}

impl SandboxStatus {
    /// `latency` is `--sim-latency`.
    pub fn new(latency: Duration) -> Self {
        SandboxStatus { latency }
    }
}

impl StatusService for SandboxStatus {
    fn check(&self, subject: &Subject<'_>) -> Result<Answer, StatusError> {
        std::thread::sleep(self.latency);
        let Some(fields) = expression::fields(subject.expression) else {
            return Ok(not_found(Code::InvalidExpression));
        };
        let issued =
            NaiveDateTime::parse_from_str(subject.issued_at.trim(), "%Y-%m-%dT%H:%M:%S").ok();
        Ok(answer(&fields, issued))
    }
}

fn not_found(code: Code) -> Answer {
    Answer {
        code,
        state: State::NotFound,
        cancellable: None,
        cancellation_status: None,
        efos: Efos::Unknown,
    }
}

fn unescape(rfc: &str) -> String {
    rfc.replace("&amp;", "&")
}

/// The sandbox document named by `fields`, issued on `issued`'s day.
fn find(fields: &Fields, issued: Option<NaiveDateTime>) -> Option<SandboxInvoice> {
    let day = issued?.date();
    let (re, rr) = (unescape(&fields.re), unescape(&fields.rr));
    [(re, Direction::Issued), (rr, Direction::Received)]
        .into_iter()
        .flat_map(|(tax_id, direction)| docs::invoices_for_day(&tax_id, direction, day))
        .find(|inv| inv.uuid.eq_ignore_ascii_case(&fields.id))
}

fn answer(fields: &Fields, issued: Option<NaiveDateTime>) -> Answer {
    let uuid = fields.id.to_ascii_uppercase();
    let efos = if fields.re.to_ascii_uppercase().starts_with("EFO") {
        Efos::Listed
    } else {
        Efos::NotListed
    };
    let found = |state, cancellable, cancellation_status| Answer {
        code: Code::Found,
        state,
        cancellable: Some(cancellable),
        cancellation_status,
        efos,
    };
    let Some(invoice) = find(fields, issued) else {
        if uuid.len() >= 12 && uuid[uuid.len() - 12..].bytes().all(|b| b == b'0') {
            return not_found(Code::NotFound);
        }
        return found(State::Active, Cancellable::WithoutAcceptance, None);
    };
    let small = invoice.total <= Decimal::ONE_THOUSAND;
    let odd = uuid
        .chars()
        .last()
        .and_then(|c| c.to_digit(16))
        .is_some_and(|d| d % 2 == 1);
    if invoice.cancelled_at.is_some() {
        let how = match (small, odd) {
            (true, _) => CancellationStatus::CancelledWithoutAcceptance,
            (false, false) => CancellationStatus::CancelledWithAcceptance,
            (false, true) => CancellationStatus::DeadlinePassed,
        };
        return found(State::Cancelled, Cancellable::No, Some(how));
    }
    let cancellable = match invoice.invoice_type {
        'P' => Cancellable::No,
        'I' | 'E' if !small => Cancellable::WithAcceptance,
        _ => Cancellable::WithoutAcceptance,
    };
    let request = match (cancellable, uuid.chars().last()) {
        (Cancellable::WithAcceptance, Some('A')) => Some(CancellationStatus::InProcess),
        (Cancellable::WithAcceptance, Some('B')) => Some(CancellationStatus::Rejected),
        _ => None,
    };
    found(State::Active, cancellable, request)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use chrono::NaiveDate;

    fn subject_of(inv: &SandboxInvoice) -> (String, String) {
        let expression = format!(
            "https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx?id={}&re={}&rr={}&tt={}&fe=abcdefgh",
            inv.uuid,
            inv.issuer_tax_id.replace('&', "&amp;"),
            inv.receiver_tax_id.replace('&', "&amp;"),
            inv.total
        );
        (
            expression,
            inv.issued_at.format("%Y-%m-%dT%H:%M:%S").to_string(),
        )
    }

    fn check(expression: &str, issued_at: &str) -> Answer {
        SandboxStatus::new(Duration::ZERO)
            .check(&Subject {
                expression,
                issued_at,
            })
            .unwrap()
    }

    #[test]
    fn sandbox_documents_answer_as_the_sandbox_lists_them() {
        let mut seen_cancelled = 0;
        let mut seen_active = 0;
        for day in 1..=28 {
            let day = NaiveDate::from_ymd_opt(2026, 1, day).unwrap();
            for direction in [Direction::Issued, Direction::Received] {
                for inv in docs::invoices_for_day("AAA010101AAA", direction, day) {
                    let (expression, issued_at) = subject_of(&inv);
                    let a = check(&expression, &issued_at);
                    assert_eq!(a.code, Code::Found);
                    if inv.cancelled_at.is_some() {
                        assert_eq!(a.state, State::Cancelled, "{}", inv.uuid);
                        seen_cancelled += 1;
                    } else {
                        assert_eq!(a.state, State::Active, "{}", inv.uuid);
                        seen_active += 1;
                    }
                }
            }
        }
        assert!(seen_cancelled > 0 && seen_active > 0);
    }

    #[test]
    fn imported_documents_are_active_unless_their_uuid_ends_in_zeros() {
        let e = |id: &str| {
            format!("https://verificacfdi.facturaelectronica.sat.gob.mx/default.aspx?id={id}&re=EFO010101AAA&rr=XAXX010101000&tt=1.0&fe=x")
        };
        let a = check(
            &e("6E546729-960A-4505-8E81-2D2952145BD9"),
            "2026-01-01T10:00:00",
        );
        assert_eq!((a.state, a.efos), (State::Active, Efos::Listed));
        let nf = check(
            &e("6E546729-960A-4505-8E81-000000000000"),
            "2026-01-01T10:00:00",
        );
        assert_eq!((nf.state, nf.code), (State::NotFound, Code::NotFound));
        assert_eq!(check("garbage", "x").code, Code::InvalidExpression);
    }
}
