//! Collection (issue 7): the steps and gates that make a captured profiling root trustworthy
//! before anyone analyses it. [`verify`] checks that every rank's analyse() output landed;
//! [`archive`] copies a verified root so that the copy is itself a valid root; [`analyse`] runs
//! the per-rank analyse step; [`case`] drives a serving service through one capture and writes
//! the [`manifest`]; [`msprof`] attaches CANN's dynamic collector to a running service (xLLM);
//! [`memory`] captures the HBM evidence phases around a running service.

pub mod analyse;
pub mod archive;
pub mod case;
pub mod http;
pub mod knowledge;
pub mod manifest;
pub mod memory;
pub mod msprof;
pub mod progress;
pub mod sha256;
pub mod verify;

/// Version of the JSON this module prints (verify / archive results).
pub const SCHEMA_VERSION: &str = "0.1.0";

crate::model::closed_set::closed_set! {
    /// The verdict of a collect step (verify, archive, analyse): exit 0 only when `ok`.
    pub enum Outcome {
        Ok = "ok",
        Failed = "failed",
    }
}

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
    #[error(
        "--tag {0:?}: a tag is one folder-name part (letters, digits, `.`, `_`, `-`; not `.` or `..`)"
    )]
    BadTag(String),
    #[error("{0}: inputs are never written to; choose another archive folder")]
    OutputOnInput(String),
}

/// True for a tag that names one folder inside the archive directory, never a path out of it.
pub fn valid_tag(tag: &str) -> bool {
    !tag.is_empty()
        && tag.len() <= 200
        && tag != "."
        && tag != ".."
        && tag
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-+=@".contains(&b))
}
