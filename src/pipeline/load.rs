//! A report to compare (`profscope diff`, the MCP `diff` tool): a saved JSON report as it is, or a
//! profile analysed here with the default options.

use super::analyze::{PipelineError, RunOpts, report_for};
use crate::ingest::Progress;
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

/// The report at `path` as JSON: read when it is a saved report, else analysed with `opts`
/// (`progress` counts the bytes read).
pub fn report_value(path: &Path, opts: &RunOpts, progress: &Progress) -> Result<Value, LoadError> {
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
    let report = report_for(&[path.to_path_buf()], opts, progress)?;
    Ok(serde_json::to_value(&report).expect("a report serializes"))
}

/// The most earlier reports a history folder may hold (the last N nightly runs; more is a
/// mistaken folder).
pub const MAX_HISTORY: usize = 1000;

/// When `dir` is a folder of saved reports (every `*.json` directly in it is a profscope report,
/// and there is at least one), those reports, sorted by file name; None for anything else (a
/// profile folder). A history of earlier runs is the base of a noise-aware `diff`.
pub fn history(dir: &Path) -> Result<Option<Vec<(String, Value)>>, LoadError> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let read = |e: std::io::Error| LoadError::Read {
        path: dir.display().to_string(),
        source: e,
    };
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(read)?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == "json"))
        .collect();
    if files.is_empty() || files.len() > MAX_HISTORY || !files.iter().all(|f| is_saved_report(f)) {
        return Ok(None);
    }
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let shown = f.display().to_string();
        let bytes = crate::ingest::source::read_regular(&f, 256 << 20).map_err(|source| {
            LoadError::Read {
                path: shown.clone(),
                source,
            }
        })?;
        let v = serde_json::from_slice(&bytes).map_err(|source| LoadError::NotAReport {
            path: shown.clone(),
            source,
        })?;
        out.push((shown, v));
    }
    Ok(Some(out))
}
