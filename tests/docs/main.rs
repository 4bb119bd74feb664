//! Tests of the documentation the binary serves: every file under `static/docs` at its
//! URL, no reference to another host, the OpenAPI document against the routes in
//! `src/routes`, and real responses against the documented schemas.
//!
//! Run alone with `cargo test --test docs`.

mod harness;
mod openapi;
mod shapes;
mod static_files;
