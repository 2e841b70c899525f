//! Analyse a run file by file: every input is ingested into its own tables, analysed, and reduced
//! to its per-file results (`registry::Part`) before its tables are dropped, so a root of
//! 64 ranks never holds 64 ranks' tables. Files run on the one per-file loop ([`each_file`]:
//! parallel up to `jobs` and a memory budget). The run-level results (ranks, cross_rank, the
//! batch verdict, the summary) are combined from the parts; the report equals the one from
//! analysing all files in one set of tables (tested), except that `summary.distinct_strings` adds
//! the parts' counts.
//!
//! A file that cannot be read does not stop the run: it is listed in `ranks.failed` and as an
//! `input_failed` diagnostic, and the other files are analysed. Only when every file fails is it
//! an error.

use super::cache::{Cache, Identity, Lookup};
use super::drive::{FileRead, Limits, each_file};
use crate::analysis::phases::{self, Phase, SliceInfo};
use crate::analysis::ranks::FileFacts;
use crate::analysis::summary::{self, Summary};
use crate::diag::{Diagnostics, Severity};
use crate::ingest::detect::Input;
use crate::ingest::{IngestError, IngestOpts, Progress, discover};
use crate::registry::{self, Analyses, AnalyzeOpts, Part};
use crate::report::Report;
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Mutex;

#[derive(Debug, Clone)]
pub struct RunOpts {
    pub analyze: AnalyzeOpts,
    pub phase: Option<Phase>,
    /// Files analysed at once (at least 1).
    pub jobs: usize,
    /// Estimated peak bytes allowed in flight; a larger file runs alone.
    pub max_memory: u64,
    /// The result cache's folder; None: no cache.
    pub cache: Option<PathBuf>,
    /// The cache folder's size cap in bytes.
    pub cache_max_bytes: u64,
    /// Eager runs given as maps of the graph replays' ops (`--eager-map`): read for graph mode
    /// only, never summed with the run.
    pub eager_map: Vec<PathBuf>,
}

impl RunOpts {
    /// These analyses and phase, within the default [`Limits`] (one file per CPU, three quarters
    /// of the available memory).
    pub fn new(analyze: AnalyzeOpts, phase: Option<Phase>) -> RunOpts {
        let l = Limits::default();
        RunOpts {
            analyze,
            phase,
            jobs: l.jobs,
            max_memory: l.max_memory,
            cache: None,
            cache_max_bytes: super::cache::DEFAULT_MAX_BYTES,
            eager_map: Vec::new(),
        }
    }

    fn limits(&self) -> Limits {
        Limits {
            jobs: self.jobs.max(1),
            max_memory: self.max_memory,
        }
    }
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
    /// Whole captures left out for a newer one of the same ranks: (root, root read instead).
    pub other_captures: Vec<(String, String)>,
    /// Sums over files (files run in parallel, so these can exceed the wall time).
    pub ingest_ms: f64,
    pub analysis_ms: f64,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct FilePart {
    part: Option<Part>,
    summary: Option<Summary>,
    diagnostics: Diagnostics,
    slice: Option<SliceInfo>,
    facts_on_error: Option<FileFacts>,
    ingest_ms: f64,
    analysis_ms: f64,
}

/// Decodes bytes as a cached part of `analyze` would be (see [`super::cache::check_entry`]).
pub fn check_cache_entry(bytes: &[u8]) -> Result<(), String> {
    super::cache::check_entry::<FilePart>(bytes)
}

fn one_file(input: &Input, read: FileRead, o: &RunOpts) -> FilePart {
    let tables = match read.tables {
        Ok(t) => t,
        Err(e) => return failed(input, &e),
    };
    let t1 = std::time::Instant::now();
    let (sliced, slice) = match o.phase {
        Some(p) => {
            let (t, info) = phases::slice(&tables, p);
            (Cow::Owned(t), Some(info))
        }
        None => (Cow::Borrowed(&tables), None),
    };
    // The overlap counts (read with `overlaps_later`, on the whole file's tables as the
    // post-pass would have) and the summary run beside the analyses, whose device lists are
    // one thread's work before they fan out.
    let ((overlaps, summary), part) = rayon::join(
        || {
            (
                crate::ingest::overlap_diagnostics(&tables),
                summary::compute(&sliced),
            )
        },
        || registry::run_part(&sliced, &o.analyze),
    );
    let mut diagnostics = sliced.diagnostics.clone();
    diagnostics.merge(overlaps);
    FilePart {
        part: Some(part),
        summary: Some(summary),
        diagnostics,
        slice,
        facts_on_error: None,
        ingest_ms: read.ingest_ms,
        analysis_ms: t1.elapsed().as_secs_f64() * 1e3,
    }
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

/// Analyses `inputs` file by file, in input order; each fresh part is stored in `cache` under
/// the identity its lookup found (`before`, by path), and why one was not stored is returned.
fn analyse_files(
    inputs: &[Input],
    o: &RunOpts,
    progress: &Progress,
    cache: Option<(&Cache, &HashMap<String, Identity>)>,
) -> (Vec<FilePart>, Vec<String>) {
    let mut parts = Vec::with_capacity(inputs.len());
    let not_stored = Mutex::new(Vec::new());
    each_file(
        inputs,
        o.limits(),
        IngestOpts {
            op_inputs: Some(crate::analysis::efficiency::reads_inputs_of),
            // Counted beside the analyses, in `one_file`.
            overlaps_later: true,
            ..IngestOpts::ANALYSIS
        },
        progress,
        |input, read| {
            let part = one_file(input, read, o);
            if let Some((c, before)) = cache
                && part.part.is_some()
                && let Some(id) = before.get(&input.path)
                && let Err(why) = c.store(input, id, &part)
            {
                let mut n = not_stored.lock().unwrap_or_else(|e| e.into_inner());
                n.push(format!("{}: {why}", input.path));
            }
            part
        },
        |_, part| parts.push(part),
    );
    (
        parts,
        not_stored.into_inner().unwrap_or_else(|e| e.into_inner()),
    )
}

/// The parts of `inputs`: unchanged files from the cache, the others analysed and stored; hits,
/// misses and entries not stored become `cache_*` diagnostics.
fn through_cache(
    inputs: &[Input],
    cache: &Cache,
    o: &RunOpts,
    progress: &Progress,
    diagnostics: &mut Diagnostics,
) -> Vec<FilePart> {
    use rayon::prelude::*;
    let looked: Vec<Lookup<FilePart>> = inputs.par_iter().map(|i| cache.lookup(i)).collect();
    let mut served = Vec::with_capacity(inputs.len());
    let mut misses = Vec::new();
    let mut before = HashMap::new();
    for (input, l) in inputs.iter().zip(looked) {
        match l {
            Lookup::Hit(mut part, entry) => {
                diagnostics.add("cache_hit", Severity::Info, || {
                    format!(
                        "{}: results from the cache ({})",
                        input.path,
                        entry.display()
                    )
                });
                part.ingest_ms = 0.0;
                part.analysis_ms = 0.0;
                served.push(Some(part));
            }
            Lookup::Miss(why, identity) => {
                diagnostics.add("cache_miss", Severity::Info, || {
                    format!("{}: {why}; analysed", input.path)
                });
                if let Some(id) = identity {
                    before.insert(input.path.clone(), id);
                }
                misses.push(input.clone());
                served.push(None);
            }
        }
    }
    let (fresh, not_stored) = analyse_files(&misses, o, progress, Some((cache, &before)));
    for why in not_stored {
        diagnostics.add("cache_not_stored", Severity::Info, || why);
    }
    let pruned = cache.prune();
    if pruned.entries > 0 {
        diagnostics.add("cache_pruned", Severity::Info, || {
            let mut m = format!(
                "{}: {} least recently used entries ({} bytes) removed to keep the cache under {} bytes ({} bytes kept)",
                cache.dir().display(),
                pruned.entries,
                pruned.bytes,
                cache.max_bytes(),
                pruned.kept_bytes
            );
            if pruned.over_cap > 0 {
                m += &format!(
                    "; {} of them larger than the cap on their own (raise --cache-max-size to keep such results)",
                    pruned.over_cap
                );
            }
            m
        });
    }
    if pruned.stale_temporaries > 0 {
        diagnostics.add_n(
            "cache_pruned",
            Severity::Info,
            pruned.stale_temporaries as u64,
            || {
                format!(
                    "{}: {} temporary files of writers that stopped mid-write removed",
                    cache.dir().display(),
                    pruned.stale_temporaries
                )
            },
        );
    }
    let mut fresh = fresh.into_iter();
    served
        .into_iter()
        .map(|s| s.or_else(|| fresh.next()).expect("one fresh part per miss"))
        .collect()
}

/// The options a cached part depends on, as text.
fn options_text(o: &RunOpts) -> String {
    format!("{:?} phase={:?}", o.analyze, o.phase)
}

/// Discovers the inputs under `paths` and analyses them file by file (through the result cache
/// when `o.cache` names one).
pub fn run(
    paths: &[std::path::PathBuf],
    o: &RunOpts,
    progress: &Progress,
) -> Result<RunResult, PipelineError> {
    let found = discover(paths)?;
    let mut diagnostics = found.skipped_diagnostics();
    let parts = match &o.cache {
        Some(dir) => {
            let cache = Cache::new(dir, options_text(o)).with_max_bytes(o.cache_max_bytes);
            through_cache(&found.inputs, &cache, o, progress, &mut diagnostics)
        }
        None => analyse_files(&found.inputs, o, progress, None).0,
    };
    let (parts, eager, analyze) =
        with_eager_maps(parts, &found.inputs, o, progress, &mut diagnostics)?;
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
                rank_facts: vec![f],
                ..Part::default()
            });
        }
        ok.extend(p.part);
    }
    if failed == found.inputs.len() {
        return Err(PipelineError::AllFailed(first_error.unwrap_or_default()));
    }
    ok.extend(eager);
    let analyses = registry::finish(ok, &analyze);
    diagnostics.merge(crate::analysis::vendor_agreement::diagnostics(
        &analyses.vendor_agreement,
    ));
    diagnostics.merge(crate::analysis::graph_mode::companions::diagnostics(
        &analyses.ranks.companions,
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
        other_captures: found.other_captures(),
        ingest_ms,
        analysis_ms,
    })
}

/// The eager maps of the run's graph replays: the files given with `--eager-map`, and files
/// beside a replay file whose sequences no capture in it matched (same rank, no graph activity
/// of their own: perhaps an eager run of the same workload), read again for their steps (graph
/// mode only; `beside` ones become companions only when their steps map replays). Returns the
/// parts with the beside files' extracts replaced, the given eager maps' parts, and the options
/// the finish reads.
fn with_eager_maps(
    mut parts: Vec<FilePart>,
    inputs: &[Input],
    o: &RunOpts,
    progress: &Progress,
    diagnostics: &mut Diagnostics,
) -> Result<(Vec<FilePart>, Vec<Part>, registry::AnalyzeOpts), PipelineError> {
    let mut analyze = o.analyze.clone();
    let graph_on = registry::run::selected(&analyze, "graph_mode");
    let given = if o.eager_map.is_empty() || !graph_on {
        Vec::new()
    } else {
        let e = discover(&o.eager_map)?;
        diagnostics.merge(e.skipped_diagnostics());
        e.inputs
    };
    let extracts: Vec<Option<&crate::analysis::graph_mode::extract::GraphExtract>> = parts
        .iter()
        .map(|p| p.part.as_ref().and_then(|p| p.graph.first()))
        .collect();
    let beside: Vec<usize> = crate::analysis::graph_mode::companions::eager_candidates(&extracts);
    if given.is_empty() && beside.is_empty() {
        return Ok((parts, Vec::new(), analyze));
    }
    analyze.eager_map = given.iter().map(|i| i.path.clone()).collect();
    analyze.eager_beside = beside.iter().map(|&k| inputs[k].path.clone()).collect();
    let wave = RunOpts {
        analyze: registry::AnalyzeOpts {
            only: Some(vec!["graph_mode".into()]),
            ..analyze.clone()
        },
        phase: None,
        cache: None,
        ..o.clone()
    };
    let again: Vec<Input> = beside.iter().map(|&k| inputs[k].clone()).collect();
    let all: Vec<Input> = given.iter().cloned().chain(again).collect();
    let (fresh, _) = analyse_files(&all, &wave, progress, None);
    let mut fresh = fresh.into_iter();
    let mut eager = Vec::new();
    for (input, p) in given.iter().zip(fresh.by_ref()) {
        diagnostics.merge(p.diagnostics);
        match p.part {
            Some(part) => eager.push(part),
            None => diagnostics.add("input_failed", Severity::Error, || {
                format!("{}: the eager map could not be read", input.path)
            }),
        }
    }
    for (&k, p) in beside.iter().zip(fresh) {
        if let (Some(old), Some(new)) = (parts[k].part.as_mut(), p.part) {
            old.graph = new.graph;
        }
    }
    Ok((parts, eager, analyze))
}

/// Analyses `paths` file by file into the report (`progress` counts the bytes read, for whoever
/// shows it).
pub fn report_for(
    paths: &[PathBuf],
    opts: &RunOpts,
    progress: &Progress,
) -> Result<Report, PipelineError> {
    let t0 = std::time::Instant::now();
    let run = run(paths, opts, progress)?;
    let elapsed = t0.elapsed();
    let inputs = paths.iter().map(|p| p.display().to_string()).collect();
    let report = Report::build(
        inputs,
        run.summary,
        run.analyses,
        &run.diagnostics,
        &run.other_captures,
        Some(run.ingest_ms),
    );
    let mut headline = report.headline.clone();
    if let Some(p) = run.phase_slice.as_ref().filter(|p| p.events_kept == 0) {
        headline.insert(
            0,
            format!(
                "WARNING: the --phase {} slice kept 0 of {} events: nothing below describes that phase (no phase scopes in the input?)",
                p.phase.as_str(),
                p.events_dropped
            ),
        );
    }
    Ok(Report {
        headline,
        analysis_ms: Some(run.analysis_ms),
        wall_ms: Some(elapsed.as_secs_f64() * 1e3),
        phase_slice: run.phase_slice,
        ..report
    })
}
