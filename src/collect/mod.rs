//! Collection (issue 7, first part): the gates that make a captured profiling root trustworthy
//! before anyone analyses it. [`verify`] checks that every rank's analyse() output landed;
//! [`archive`] copies a verified root to shared storage so that the copy is itself a valid root.
//! The service-driving steps (`collect case`, `collect msprof`) and the per-rank analyse runner
//! come later; their manifest fields are reserved in docs/collect.md.

pub mod archive;
pub mod verify;

/// Version of the JSON this module prints (verify / archive results).
pub const SCHEMA_VERSION: &str = "0.1.0";

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: no `*_ascend_pt` rank folder found")]
    NoRanks(String),
}
