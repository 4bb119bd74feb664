//! The SAT's public certificate repository (`rdc.sat.gob.mx/rccf`): a certificate by
//! its 20-digit number, at `{base}/{n[0:6]}/{n[6:12]}/{n[12:14]}/{n[14:16]}/{n[16:18]}/{n}.cer`.

use std::time::Duration;

/// The SAT's own repository.
pub const SAT_REPOSITORY_URL: &str = "https://rdc.sat.gob.mx/rccf";

/// A certificate's `.cer` is a couple of KiB; anything far larger is not one.
const MAX_CERTIFICATE_BYTES: u64 = 64 * 1024;

/// Where certificates are fetched from.
pub trait Repository: Send + Sync {
    /// The DER (or PEM) of certificate `number`; `Err` says why not, in words.
    fn fetch(&self, number: &str) -> Result<Vec<u8>, String>;
}

/// Whether `number` is a SAT certificate number (20 digits).
pub fn is_number(number: &str) -> bool {
    number.len() == 20 && number.bytes().all(|b| b.is_ascii_digit())
}

/// The certificate's path under the repository's base.
pub fn path(number: &str) -> String {
    let n = number;
    format!(
        "{}/{}/{}/{}/{}/{n}.cer",
        &n[0..6],
        &n[6..12],
        &n[12..14],
        &n[14..16],
        &n[16..18]
    )
}

/// The repository over HTTP.
pub struct Http {
    base: String,
    agent: ureq::Agent,
}

impl Http {
    pub fn new(base: &str, timeout: Duration) -> Self {
        let config = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            .build();
        Http {
            base: base.trim_end_matches('/').to_string(),
            agent: ureq::Agent::new_with_config(config),
        }
    }
}

impl Repository for Http {
    fn fetch(&self, number: &str) -> Result<Vec<u8>, String> {
        let url = format!("{}/{}", self.base, path(number));
        let mut response = self
            .agent
            .get(&url)
            .call()
            .map_err(|e| format!("the SAT's certificate repository did not answer ({e})"))?;
        match response.status().as_u16() {
            200 => response
                .body_mut()
                .with_config()
                .limit(MAX_CERTIFICATE_BYTES)
                .read_to_vec()
                .map_err(|e| format!("the SAT's certificate repository's answer broke off ({e})")),
            404 => Err(format!(
                "the SAT's certificate repository has no certificate {number}"
            )),
            status => Err(format!(
                "the SAT's certificate repository answered HTTP {status}"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_path_splits_the_number_as_the_sat_does() {
        assert_eq!(
            path("00001000000708361114"),
            "000010/000007/08/36/11/00001000000708361114.cer"
        );
        assert!(is_number("00001000000708361114"));
        assert!(!is_number("0000100000070836111"));
        assert!(!is_number("../../../etc/passwd00"));
    }
}
