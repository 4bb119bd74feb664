//! Placeholder removed below.
