//! A report to compare (`profscope diff`, the MCP `diff` tool): a saved JSON report, read
//! streamed into the typed view diff needs within [`Limits`] (report::diff_input checks it), or
//! a profile analysed here with the default options and read through the same view.

use super::analyze::{PipelineError, RunOpts, report_for};
use crate::ingest::Progress;
use crate::report::diff_input::{MAX_VIEW_BYTES, ReportView};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: not a valid profscope report: {source}")]
    NotAReport {
        path: String,
        source: serde_json::Error,
    },
    #[error("analyze failed: {0}")]
    Analyze(#[from] PipelineError),
}

/// The largest saved report `diff` reads: 1 GiB (a `--detail full` report of thousands of ranks
/// is hundreds of MB; what is kept of it is bounded by [`MAX_VIEW_BYTES`] however large it is).
pub const MAX_SAVED_REPORT_BYTES: u64 = 1 << 30;

/// How much of a saved report is read: its size on disk, and the memory its view may keep.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub file_bytes: u64,
    pub view_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            file_bytes: MAX_SAVED_REPORT_BYTES,
            view_bytes: MAX_VIEW_BYTES,
        }
    }
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

/// The report at `path` as diff reads it: read when it is a saved report, else analysed with
/// `opts` (`progress` counts the bytes read).
pub fn report_view(
    path: &Path,
    opts: &RunOpts,
    progress: &Progress,
) -> Result<ReportView, LoadError> {
    if path.is_file() && is_saved_report(path) {
        return saved_report(path, Limits::default());
    }
    let report = report_for(&[path.to_path_buf()], opts, progress)?;
    let text = serde_json::to_vec(&report).expect("a report serializes");
    ReportView::read(text.as_slice(), MAX_VIEW_BYTES).map_err(|source| LoadError::NotAReport {
        path: path.display().to_string(),
        source,
    })
}

/// A saved report read within `limits`: a larger file is refused before it is read, and the
/// rest streamed (never held whole).
pub fn saved_report(path: &Path, limits: Limits) -> Result<ReportView, LoadError> {
    let shown = || path.display().to_string();
    let f = crate::ingest::source::open_regular(path, limits.file_bytes).map_err(|source| {
        LoadError::Read {
            path: shown(),
            source,
        }
    })?;
    let r = std::io::BufReader::with_capacity(1 << 20, std::io::Read::take(f, limits.file_bytes));
    ReportView::read(r, limits.view_bytes).map_err(|source| LoadError::NotAReport {
        path: shown(),
        source,
    })
}

/// The most earlier reports a history folder may hold (the last N nightly runs; more is a
/// mistaken folder).
pub const MAX_HISTORY: usize = 1000;

/// When `dir` is a folder of saved reports (every `*.json` directly in it is a profscope report,
/// and there is at least one), those reports, sorted by file name, each read through `read`
/// (which keeps what it needs of the view: the history's noise needs no per-step samples); None
/// for anything else (a profile folder). A history of earlier runs is the base of a noise-aware
/// `diff`.
pub fn history<T>(
    dir: &Path,
    mut read: impl FnMut(String, ReportView) -> T,
) -> Result<Option<Vec<T>>, LoadError> {
    if !dir.is_dir() {
        return Ok(None);
    }
    let read_dir = |e: std::io::Error| LoadError::Read {
        path: dir.display().to_string(),
        source: e,
    };
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map_err(read_dir)?
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
        let view = saved_report(&f, Limits::default())?;
        out.push(read(f.display().to_string(), view));
    }
    Ok(Some(out))
}
