//! The one driver and the use cases. [`drive::each_file`] is the only per-file loop: it reads
//! each input within the job and memory limits and feeds one consumer: the analyses
//! ([`analyze`]), the Perfetto or Parquet writer ([`export`]), or the SQL frames ([`query`],
//! feature `sql`). The use cases the CLI and the MCP server share live here as functions
//! (`report_for`, loading a report for diff, the memory run, the query); progress reaches their
//! callers through the shared [`crate::ingest::Progress`] counters, never through the CLI.

pub mod analyze;
pub mod cache;
pub mod drive;
pub mod export;
pub mod load;
pub mod memory;
#[cfg(feature = "sql")]
pub mod query;
mod schedule;

pub use analyze::{PipelineError, RunOpts, RunResult, report_for, run};
pub use drive::{FileRead, Limits, default_max_memory, each_file, estimate_bytes};
pub use schedule::{bounded_map, bounded_ordered};

/// The run tag when none is given: the first input's folder (or file) name, else `run`.
pub fn default_run_tag(first: &std::path::Path) -> String {
    std::path::absolute(first)
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().to_string()))
        .unwrap_or_else(|| "run".into())
}
