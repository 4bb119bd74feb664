//! Request-side helpers of the HTTP edge: body reading, ids, pagination.

pub mod ids;
pub mod json_body;
pub mod pagination;
pub mod query;
