//! The SAT's bulk-download web service ("Descarga Masiva") with the taxpayer's e.firma.
#![allow(dead_code)] // Wired in with the web-service provider; the lead removes this.

pub mod credential;
mod names;

pub use credential::{Fiel, FielErrors, FielField, FielSummary};
pub mod client;
pub mod endpoints;
pub mod envelope;
pub mod package;
pub mod responses;
pub mod signing;
