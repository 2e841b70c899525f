//! Errors of the ingest layer: each names the file, and the byte offset where one is known.

#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: malformed JSON at byte {offset}: {what}")]
    Syntax {
        path: String,
        offset: usize,
        what: String,
    },
    #[error("{path}: a JSON object without a `traceEvents` array: not a Chrome trace")]
    NotATrace { path: String },
    #[error(
        "{path}: unsupported input (expected a Chrome trace .json / .json.gz, or an ascend_pytorch_profiler_*.db / msprof_*.db)"
    )]
    Unsupported { path: String },
    #[error("{path}: {what}")]
    Db { path: String, what: String },
    #[error("{path}: {what}")]
    Csv { path: String, what: String },
    #[error("{path}: no profiling inputs found")]
    NothingFound { path: String },
    #[error("{path}: not a regular file or folder (a FIFO, socket or device): not read")]
    NotRegular { path: String },
    #[error("{path}: the path is not valid UTF-8: not read (rename the file or folder)")]
    NotUtf8 { path: String },
}
