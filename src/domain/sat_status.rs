//! The SAT's status of a CFDI (its `ConsultaCFDIService` answer) as the service's own
//! values: lower-case wire strings, the same in the API, the database and events.

wire_enum!(
    /// `Estado`, and the service's conclusion `NotRegistered`.
    State {
        /// `Vigente`.
        Active => "active",
        /// `Cancelado`.
        Cancelled => "cancelled",
        /// `No Encontrado` (or any answer whose code is not `S - `).
        NotFound => "not_found",
        /// Not the SAT's word but the service's: not found for longer than the SAT takes
        /// to register a new CFDI (`sat::status::policy`). Never an answer's state.
        NotRegistered => "not_registered",
    }
);

wire_enum!(
    /// `EsCancelable`.
    Cancellable {
        /// `No cancelable`.
        No => "not_cancellable",
        /// `Cancelable sin aceptación`: the issuer cancels alone.
        WithoutAcceptance => "without_acceptance",
        /// `Cancelable con aceptación`: the receiver has 72 hours to accept or reject.
        WithAcceptance => "with_acceptance",
    }
);

wire_enum!(
    /// `EstatusCancelacion` (empty: no cancellation was requested).
    CancellationStatus {
        /// `En proceso`: waiting for the receiver (indefinitely after a rejection).
        InProcess => "in_process",
        /// `Plazo vencido`: the receiver did not answer in 72 hours; cancelled.
        DeadlinePassed => "deadline_passed",
        /// `Cancelado con aceptación`.
        CancelledWithAcceptance => "cancelled_with_acceptance",
        /// `Cancelado sin aceptación`.
        CancelledWithoutAcceptance => "cancelled_without_acceptance",
        /// `Solicitud rechazada`: the receiver refused; the CFDI stays active.
        Rejected => "rejected",
    }
);

wire_enum!(
    /// `ValidacionEFOS`: whether the issuer (and the third party it acts for) is on the
    /// SAT's list of companies invoicing simulated operations, at the time of the check.
    Efos {
        /// `100`.
        Listed => "listed",
        /// `200` (the issuer) or `201` (the issuer and the third party).
        NotListed => "not_listed",
        /// Empty, absent (answers before 2021) or another value.
        Unknown => "unknown",
    }
);

impl Efos {
    /// The answer's code: `100` listed, `200`/`201` not listed, anything else unknown
    /// (the libraries disagree on unknown values; FACTS.md §2).
    pub fn from_code(code: &str) -> Efos {
        match code.trim() {
            "100" => Efos::Listed,
            "200" | "201" => Efos::NotListed,
            _ => Efos::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip() {
        for s in State::ALL {
            assert_eq!(State::parse(s.as_str()), Some(*s));
        }
        for c in CancellationStatus::ALL {
            assert_eq!(CancellationStatus::parse(c.as_str()), Some(*c));
        }
        for c in Cancellable::ALL {
            assert_eq!(Cancellable::parse(c.as_str()), Some(*c));
        }
        assert_eq!(State::parse("Vigente"), None);
    }

    #[test]
    fn efos_codes_follow_the_sat() {
        assert_eq!(Efos::from_code("100"), Efos::Listed);
        assert_eq!(Efos::from_code(" 200 "), Efos::NotListed);
        assert_eq!(Efos::from_code("201"), Efos::NotListed);
        assert_eq!(Efos::from_code(""), Efos::Unknown);
        assert_eq!(Efos::from_code("300"), Efos::Unknown);
    }
}
