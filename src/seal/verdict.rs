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

/// The verification of one document: the API's future `seal` object.
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
