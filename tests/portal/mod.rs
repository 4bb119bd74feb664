//! Integration tests of the SAT portal connector (`cfdi_extract::sat::ciec`) against a
//! fake portal served from this process on 127.0.0.1, built from the recorded SAT pages
//! in `tests/fixtures/sat-portal-pages/` and the CFDI samples in `tests/fixtures/cfdi-samples/`.

mod support;

mod anticaptcha;
mod binary;
mod downloads;
mod failures;
mod listing;
mod login;
