//! Request-side helpers of the HTTP edge: body reading, ids, pagination, and the
//! per-request fairing (request id, access log line, request metrics), and the pool
//! heavy requests share fairly.

pub mod heavy;
pub mod ids;
pub mod json_body;
pub mod pagination;
pub mod query;
pub mod request_log;
