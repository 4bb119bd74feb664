//! What a verification answers, shaped as the API's `seal` object: one status for the
//! document and each check's own, with the reason in words where it is not `valid`.

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Valid,
    Invalid,
    /// Not checked (yet): what is needed is missing, e.g. the SAT's certificate.
    Unverified,
}

/// One check's answer; `reason` says why when it is not `valid`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub status: Status,
    pub reason: Option<String>,
}

impl Check {
    pub fn valid() -> Self {
        Check {
            status: Status::Valid,
            reason: None,
        }
    }

    pub fn invalid(reason: impl Into<String>) -> Self {
        Check {
            status: Status::Invalid,
            reason: Some(reason.into()),
        }
    }

    pub fn unverified(reason: impl Into<String>) -> Self {
        Check {
            status: Status::Unverified,
            reason: Some(reason.into()),
        }
    }
}

/// Every check of a document, in the order they are listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Checks {
    /// `Sello` verifies over the document's original string with the certificate in it.
    pub issuer_seal: Check,
    /// `NoCertificado` is the certificate's serial number as the SAT writes it.
    pub certificate_number: Check,
    /// The certificate belongs to the issuer's RFC.
    pub certificate_rfc: Check,
    /// The document's date lies within the certificate's validity.
    pub certificate_validity: Check,
    /// The certificate is a CSD issued by the SAT (or the sandbox's authority).
    pub certificate_issuer: Check,
    /// The stamp's `SelloCFD` is the document's `Sello`.
    pub stamp_seal_cfd: Check,
    /// The stamp's `SelloSAT` verifies with the SAT certificate it names.
    pub sat_seal: Check,
}

impl Checks {
    fn all(&self) -> [&Check; 7] {
        [
            &self.issuer_seal,
            &self.certificate_number,
            &self.certificate_rfc,
            &self.certificate_validity,
            &self.certificate_issuer,
            &self.stamp_seal_cfd,
            &self.sat_seal,
        ]
    }
}

/// The issuer's certificate as read from the document.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CertificateSummary {
    /// The serial number as the SAT writes it (20 digits for its certificates).
    pub number: String,
    pub rfc: Option<String>,
    pub name: Option<String>,
    pub valid_from: String,
    pub valid_to: String,
}

/// The most characters of one text of a stored `seal` object (a reason, a name).
pub const MAX_TEXT: usize = 300;

/// A document's verification as stored: the answer, and the SAT certificate its stamp
/// waits for (`sat_seal` unverified because that certificate was not at hand), which
/// verifies it again when it arrives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    pub seal: Seal,
    pub awaits: Option<String>,
}

/// The verification of one document: the API's `seal` object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Seal {
    /// `invalid` when any check is, else `unverified` when any is, else `valid`.
    pub status: Status,
    /// The hash the issuer's seal was made with (`SHA-256`, `SHA-1`), once verified.
    pub algorithm: Option<&'static str>,
    pub checks: Checks,
    pub certificate: Option<CertificateSummary>,
    /// `NoCertificadoSAT` of the stamp, when there is one.
    pub sat_certificate_number: Option<String>,
}

impl Seal {
    pub fn new(
        algorithm: Option<&'static str>,
        checks: Checks,
        certificate: Option<CertificateSummary>,
        sat_certificate_number: Option<String>,
    ) -> Self {
        let statuses = checks.all().map(|c| c.status);
        let status = if statuses.contains(&Status::Invalid) {
            Status::Invalid
        } else if statuses.contains(&Status::Unverified) {
            Status::Unverified
        } else {
            Status::Valid
        };
        Seal {
            status,
            algorithm,
            checks,
            certificate,
            sat_certificate_number,
        }
    }

    /// The answer for a document that could not be verified at all (its XML no longer
    /// reads, or is no class the SAT seals): every check unverified, saying why.
    pub fn unreadable(why: &str) -> Self {
        let not = || Check::unverified(why.to_string());
        let checks = Checks {
            issuer_seal: not(),
            certificate_number: not(),
            certificate_rfc: not(),
            certificate_validity: not(),
            certificate_issuer: not(),
            stamp_seal_cfd: not(),
            sat_seal: not(),
        };
        Seal::new(None, checks, None, None)
    }

    /// The same answer with every text cut to `MAX_TEXT` characters, so what is stored
    /// and sent with every document stays small whatever a certificate names.
    pub fn bounded(mut self) -> Self {
        let cut = |text: &mut String| {
            if let Some((at, _)) = text.char_indices().nth(MAX_TEXT) {
                text.truncate(at);
                text.push('…');
            }
        };
        let Checks {
            issuer_seal,
            certificate_number,
            certificate_rfc,
            certificate_validity,
            certificate_issuer,
            stamp_seal_cfd,
            sat_seal,
        } = &mut self.checks;
        for check in [
            issuer_seal,
            certificate_number,
            certificate_rfc,
            certificate_validity,
            certificate_issuer,
            stamp_seal_cfd,
            sat_seal,
        ] {
            if let Some(reason) = check.reason.as_mut() {
                cut(reason);
            }
        }
        if let Some(c) = self.certificate.as_mut() {
            for text in [&mut c.number, &mut c.valid_from, &mut c.valid_to] {
                cut(text);
            }
            for text in [c.rfc.as_mut(), c.name.as_mut()].into_iter().flatten() {
                cut(text);
            }
        }
        if let Some(number) = self.sat_certificate_number.as_mut() {
            cut(number);
        }
        self
    }

    /// The reasons of the checks that failed, for a one-line summary.
    pub fn invalid_reasons(&self) -> Vec<&str> {
        self.reasons(Status::Invalid)
    }

    /// The reasons of the checks not made (yet), for a one-line summary.
    pub fn unverified_reasons(&self) -> Vec<&str> {
        self.reasons(Status::Unverified)
    }

    fn reasons(&self, status: Status) -> Vec<&str> {
        self.checks
            .all()
            .iter()
            .filter(|c| c.status == status)
            .filter_map(|c| c.reason.as_deref())
            .collect()
    }
}
