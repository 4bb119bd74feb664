//! The seal module against the shared samples: original strings byte for byte as
//! libxslt gives them with the SAT's stylesheets (recorded by
//! `tests/fixtures/seal/record.py`), and each sample's verdict.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod mutations;
mod samples;
