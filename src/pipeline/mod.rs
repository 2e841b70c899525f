//! Analyse a run file by file: every input is ingested into its own tables, analysed, and reduced
//! to its per-file results (`report::analyses::Part`) before its tables are dropped, so a root of
//! 64 ranks never holds 64 ranks' tables. Files run in parallel up to `jobs` and a memory budget
//! (estimated peak bytes per file from its format and size, see [`estimate_bytes`]). The run-level
//! results (ranks, cross_rank, the batch verdict, the summary) are combined from the parts; the
//! report equals the one from analysing all files in one set of tables (tested), except that
//! `summary.distinct_strings` adds the parts' counts.
//!
//! A file that cannot be read does not stop the run: it is listed in `ranks.failed` and as an
//! `input_failed` diagnostic, and the other files are analysed. Only when every file fails is it
//! an error.

mod schedule;

pub use schedule::bounded_map;

use crate::analysis::phases::{self, Phase, SliceInfo};
use crate::analysis::ranks::FileFacts;
use crate::analysis::summary::{self, Summary};
use crate::diag::{Diagnostics, Severity};
use crate::ingest::detect::{Input, InputFormat};
use crate::ingest::{IngestError, IngestOpts, Progress, discover, ingest_one_with};
use crate::report::analyses::{self, Analyses, AnalyzeOpts, Part};

#[derive(Debug, Clone)]
pub struct RunOpts {
    pub analyze: AnalyzeOpts,
    pub phase: Option<Phase>,
    /// Files analysed at once (at least 1).
    pub jobs: usize,
    /// Estimated peak bytes allowed in flight; a larger file runs alone.
    pub max_memory: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    #[error(transparent)]
    Discover(#[from] IngestError),
    #[error("no input could be read; first failure: {0}")]
    AllFailed(String),
}

/// The combined results of a run.
pub struct RunResult {
    pub summary: Summary,
    pub analyses: Analyses,
    pub diagnostics: Diagnostics,
    /// Summed over files when `--phase` sliced the tables.
    pub phase_slice: Option<SliceInfo>,
    pub files: usize,
    pub failed: usize,
    /// Sums over files (files run in parallel, so these can exceed the wall time).
    pub ingest_ms: f64,
    pub analysis_ms: f64,
}

/// Estimated peak resident bytes of ingesting and analysing one input (measured ratios in
/// docs/performance.md: JSON about 0.52x the file, `.json.gz` about 8x compressed JSON, the db about
/// 1.3x; rounded up).
pub fn estimate_bytes(i: &Input) -> u64 {
    let factor = match i.format {
        InputFormat::AscendDb => 1.5,
        InputFormat::ChromeJson if i.path.ends_with(".gz") => 6.0,
        InputFormat::ChromeJson => 0.7,
        InputFormat::KernelCsv => 0.7,
    };
    (i.size_bytes as f64 * factor) as u64 + (16 << 20)
}

/// Three quarters of the memory available now (`MemAvailable`), else 8 GiB.
pub fn default_max_memory() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|m| {
            m.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(8 << 30, |kb| kb * 1024 / 4 * 3)
}

struct FilePart {
    part: Option<Part>,
    summary: Option<Summary>,
    diagnostics: Diagnostics,
    slice: Option<SliceInfo>,
    facts_on_error: Option<FileFacts>,
    ingest_ms: f64,
    analysis_ms: f64,
}

fn one_file(input: &Input, o: &RunOpts, progress: &Progress) -> FilePart {
    let t0 = std::time::Instant::now();
    let tables = match ingest_with_fallback(input, progress) {
        Ok(t) => t,
        Err(e) => return failed(input, &e),
    };
    let ingest_ms = t0.elapsed().as_secs_f64() * 1e3;
    let t1 = std::time::Instant::now();
    let (tables, slice) = match o.phase {
        Some(p) => {
            let (t, info) = phases::slice(&tables, p);
            (t, Some(info))
        }
        None => (tables, None),
    };
    let summary = summary::compute(&tables);
    let part = analyses::run_part(&tables, &o.analyze);
    FilePart {
        part: Some(part),
        summary: Some(summary),
        diagnostics: tables.diagnostics.clone(),
        slice,
        facts_on_error: None,
        ingest_ms,
        analysis_ms: t1.elapsed().as_secs_f64() * 1e3,
    }
}

/// The input's tables; if it cannot be read at all, the first of its alternates (other exports of
/// the same capture) that can, with an `input_fallback` diagnostic naming both.
fn ingest_with_fallback(
    input: &Input,
    progress: &Progress,
) -> Result<crate::model::Tables, IngestError> {
    let e = match ingest_one_with(input, IngestOpts::ANALYSIS, progress) {
        Ok(t) => return Ok(t),
        Err(e) => e,
    };
    for alt in &input.alternates {
        if let Ok(mut t) = ingest_one_with(alt, IngestOpts::ANALYSIS, progress) {
            t.diagnostics.add("input_fallback", Severity::DataLoss, || {
                format!(
                    "{e}; read {} (another export of the same capture) instead",
                    alt.path
                )
            });
            return Ok(t);
        }
    }
    Err(e)
}

fn failed(input: &Input, e: &IngestError) -> FilePart {
    let mut d = Diagnostics::default();
    d.add("input_failed", Severity::Error, || e.to_string());
    FilePart {
        part: None,
        summary: None,
        diagnostics: d,
        slice: None,
        facts_on_error: Some(FileFacts {
            path: input.path.clone(),
            rank: crate::ingest::rank::rank_from_path(&input.path).unwrap_or(-1),
            world_size: -1,
            size_bytes: input.size_bytes,
            format: "unknown",
            device_events: 0,
            host_events: 0,
            vendor_overlap_rows: 0,
            window: None,
            truncated: false,
            error: Some(e.to_string()),
        }),
        ingest_ms: 0.0,
        analysis_ms: 0.0,
    }
}

/// Discovers the inputs under `paths` and analyses them file by file.
pub fn run(
    paths: &[std::path::PathBuf],
    o: &RunOpts,
    progress: &Progress,
) -> Result<RunResult, PipelineError> {
    let found = discover(paths)?;
    for i in &found.inputs {
        progress.add_total(i.size_bytes);
    }
    let costs: Vec<u64> = found.inputs.iter().map(estimate_bytes).collect();
    let parts = bounded_map(&costs, o.jobs, o.max_memory, |i| {
        one_file(&found.inputs[i], o, progress)
    });
    let mut diagnostics = found.skipped_diagnostics();
    let mut summaries = Vec::new();
    let mut ok = Vec::new();
    let mut slices = Vec::new();
    let mut first_error = None;
    let mut failed = 0;
    let (mut ingest_ms, mut analysis_ms) = (0.0, 0.0);
    for p in parts {
        ingest_ms += p.ingest_ms;
        analysis_ms += p.analysis_ms;
        diagnostics.merge(p.diagnostics);
        summaries.extend(p.summary);
        slices.extend(p.slice);
        if let Some(f) = p.facts_on_error {
            failed += 1;
            first_error.get_or_insert_with(|| f.error.clone().unwrap_or_default());
            ok.push(Part {
                analyses: Analyses::default(),
                rank_facts: vec![f],
                extracts: Vec::new(),
            });
        }
        ok.extend(p.part);
    }
    if failed == found.inputs.len() {
        return Err(PipelineError::AllFailed(first_error.unwrap_or_default()));
    }
    let analyses = analyses::finish(ok, &o.analyze);
    diagnostics.merge(crate::analysis::vendor_agreement::diagnostics(
        &analyses.vendor_agreement,
    ));
    Ok(RunResult {
        summary: summary::merge(summaries),
        analyses,
        diagnostics,
        phase_slice: slices.into_iter().reduce(|a, b| SliceInfo {
            events_kept: a.events_kept + b.events_kept,
            events_dropped: a.events_dropped + b.events_dropped,
            device_by_launch: a.device_by_launch + b.device_by_launch,
            device_by_own_start: a.device_by_own_start + b.device_by_own_start,
            ..a
        }),
        files: found.inputs.len(),
        failed,
        ingest_ms,
        analysis_ms,
    })
}
