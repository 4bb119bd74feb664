//! The HTTP edge's own ground: its one error type (`error`), body reading, ids,
//! pagination, and the
//! per-request fairing (request id, access log line, request metrics), and the pool
//! heavy requests share fairly.

pub mod error;
pub mod heavy;
pub mod idempotency;
pub mod ids;
pub mod json_body;
pub mod pagination;
pub mod query;
pub mod request_log;

use crate::app::Context;
use rocket::State;
use std::sync::Arc;

/// The state handlers share.
pub type Ctx = State<Arc<Context>>;
