//! A report to compare (`profscope diff`, the MCP `diff` tool): a saved JSON report as it is, or a
//! profile analysed here with the default options.

use super::analyze::{PipelineError, RunOpts, report_for};
use crate::ingest::Progress;
use crate::report::AnalyzeOpts;
use serde_json::Value;
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a valid JSON report: {source}")]
    NotAReport {
        path: String,
        source: serde_json::Error,
    },
    #[error("analyze failed: {0}")]
    Analyze(#[from] PipelineError),
}

/// True when the file is a profscope report (an object whose first member is `schema_version`
/// and that names the tool), not a trace.
pub fn is_saved_report(path: &Path) -> bool {
    use std::io::Read;
    let Ok(mut f) = crate::ingest::source::open_regular(path, u64::MAX) else {
        return false;
    };
    let mut head = vec![0u8; 4096];
    let n = f.read(&mut head).unwrap_or(0);
    let head = String::from_utf8_lossy(&head[..n]);
    head.trim_start().starts_with('{')
        && head.contains("\"schema_version\"")
        && head.contains("\"tool\": \"profscope\"")
}

/// The report at `path` as JSON: read when it is a saved report, else analysed (`progress`
/// counts the bytes read).
pub fn report_value(path: &Path, progress: &Progress) -> Result<Value, LoadError> {
    let shown = || path.display().to_string();
    if path.is_file() && is_saved_report(path) {
        let text = std::fs::read_to_string(path).map_err(|source| LoadError::Read {
            path: shown(),
            source,
        })?;
        return serde_json::from_str(&text).map_err(|source| LoadError::NotAReport {
            path: shown(),
            source,
        });
    }
    let opts = RunOpts::new(AnalyzeOpts::default(), None);
    let report = report_for(&[path.to_path_buf()], &opts, progress)?;
    Ok(serde_json::to_value(&report).expect("a report serializes"))
}
