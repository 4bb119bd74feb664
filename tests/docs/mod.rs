//! Tests of the documentation the binary serves: every file under `static/docs` at its
//! URL, no reference to another host, the OpenAPI document against the routes in
//! `src/routes`, real responses against the documented schemas, and the console's files
//! and the security headers (`console.rs`).
//!
//! Run alone with `cargo test --test it docs::`.

mod console;
mod harness;
mod openapi;
mod shapes;
mod static_files;
