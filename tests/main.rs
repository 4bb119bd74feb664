//! The integration tests of `cfdi-extract`, one crate (`cargo test --test it`). Most
//! start the real binary on its own data directory and port and talk to it over HTTP and
//! through its CLI; `portal`, `webservice` and `fakews` drive the SAT clients of the
//! library against fakes served from this process.
//!
//! `common` is the harness every module shares; each other module is a feature, one file
//! per area (`flows::summary`, `api::logs`). All tests run in one process: nothing a test
//! starts (server, data directory, fake service, port) is shared with another, and no
//! test changes the process's environment.

mod common;

mod api;
mod docs;
mod fakews;
mod flows;
mod house;
mod portal;
mod webservice;
