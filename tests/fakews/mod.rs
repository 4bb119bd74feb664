//! The fake SAT web service (`tests/common/fake_sat_ws`) against the real client
//! (`cfdi_extract::sat::efirma::client::Client`) and the SAT's public test e.firma:
//! the whole conversation with packages built from sandbox documents, the security
//! checks, and every scripted SAT behaviour.

mod support;

mod conversation;
mod scripts;
mod security;
