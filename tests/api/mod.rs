//! Black-box tests of `cfdi-extract`: every test starts the real binary on its own data
//! directory and port, and talks to it over HTTP (and through its CLI).

mod auth;
mod cli;
mod commit_lost;
mod data_dir;
mod efirma;
mod entities;
mod errors;
mod events;
mod healthcheck;
mod idempotency;
mod instances;
mod isolation;
mod lifecycle;
mod logs;
mod nul;
mod outage;
mod restart;
mod schedules;
mod webhook_block_private;
mod webhook_burst;
mod webhook_fairness;
mod webhook_storage;
mod webhooks;
