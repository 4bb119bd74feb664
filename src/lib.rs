//! cfdi-extract: a self-hosted service that extracts Mexican electronic invoices (CFDI)
//! from the tax authority, keeps payment balances exact and serves them over a JSON API.
//!
//! Flow: HTTP edge (`routes`, `auth`, `http` with its one error type) -> domain (`domain`, `cfdi`,
//! `payments`) -> storage (`db`). Background work (`jobs`) and the tax-authority
//! providers (`sat`) sit beside the edge and use the same domain and storage.

pub mod app;
pub mod auth;
pub mod catalogs;
pub mod catchers;
pub mod cfdi;

pub mod cli;
pub mod commands;
pub mod config;
pub mod console;
pub mod crypto;
pub mod data_dir;
pub mod db;
pub mod docs;
pub mod domain;
pub mod events;
pub mod export;
pub mod format;
pub mod http;
pub mod ingest;

pub mod jobs;
pub mod logging;
pub mod metrics;
pub mod ops;
pub mod origin;
pub mod password;
pub mod pdf;
pub mod periodic;
pub mod retention;

pub mod routes;
#[cfg(test)]
mod samples;
pub mod sandbox;
pub mod sat;
pub mod seal;
pub mod server;
pub mod summary;
pub mod time;
pub mod webhook_signing;
