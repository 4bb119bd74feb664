//! A small interpreter of the XSLT the SAT writes its cadena original files in, so the
//! strings come from the SAT's own files (bundled in `src/seal/stylesheets`): a new
//! complement is a new file there and an `xsl:include` line, not new code.

mod compile;
mod program;
mod run;

pub(crate) use compile::compile;
pub(crate) use program::Stylesheet;
pub(crate) use run::{normalize_space, run};

#[cfg(test)]
mod tests;
