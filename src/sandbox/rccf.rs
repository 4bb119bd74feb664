//! The sandbox's certificate repository, as the SAT's (`rdc.sat.gob.mx/rccf`) answers:
//! the sandbox SAT's stamping certificate by its number, nothing else.

use crate::sat::certificates::Repository;

use super::docs::{sat_certificate, SAT_CERTIFICATE_NUMBER};

pub struct SandboxRepository;

impl Repository for SandboxRepository {
    fn fetch(&self, number: &str) -> Result<Vec<u8>, String> {
        if number == SAT_CERTIFICATE_NUMBER {
            Ok(sat_certificate().der().to_vec())
        } else {
            Err(format!(
                "the sandbox's certificate repository has no certificate {number}"
            ))
        }
    }
}
