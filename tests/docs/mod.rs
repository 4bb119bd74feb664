//! Tests of the documentation the binary serves: every file under `static/docs` at its
//! URL, no reference to another host, the OpenAPI document against the routes in
//! `src/routes`, real responses against the documented schemas, and the console's files
//! and the security headers (`console.rs`). The harness is shared with `tests/api`.
//!
//! Run alone with `cargo test --test docs`.

#[allow(dead_code)]
#[path = "../common/efirma_files.rs"]
mod efirma_files;
#[allow(dead_code)]
#[path = "../api/helpers.rs"]
mod helpers;

mod console;
mod harness;
mod openapi;
mod shapes;
mod static_files;
