//! `profscope analyze [PATH...]`: ingest and print the report. Without a path it analyses the
//! bundled demo root `fixtures/demo/` (found next to the crate, so `cargo run -- analyze` works).

use crate::analysis::bubbles::BubbleOpts;
use crate::pipeline::{self, RunOpts};
use crate::render::{Format, render};
use crate::report::detail::{self, Detail};
use crate::report::{AnalyzeOpts, Report};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct AnalyzeArgs {
    /// Files or folders to analyse, or a `collect case` manifest.json (default: the bundled demo
    /// root fixtures/demo).
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Never show the progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Smallest idle gap counted as a bubble, µs.
    #[arg(long, default_value_t = 1.0, allow_negative_numbers = true, value_parser = parse_gap_us)]
    pub min_gap_us: f64,
    /// Rows in top-N lists (top events, kernels, largest bubbles).
    #[arg(long, default_value_t = 10, allow_negative_numbers = true)]
    pub top: usize,
    /// Batch size the fixed-batch decode audit requires (default: all qualified replays must agree).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(i64).range(1..))]
    pub batch: Option<i64>,
    /// Run only these analyses (comma-separated; each fills the report key of its name)
    #[arg(long, value_delimiter = ',', value_parser = super::values::only_parser())]
    pub only: Option<Vec<String>>,
    /// Slice to one phase before analysing (CPU forward_eager / forward_cudagraph scopes; device
    /// work follows its launch): prefill or decode.
    #[arg(long, value_enum)]
    pub phase: Option<crate::analysis::phases::Phase>,
    /// How many ranks the run should have; missing ones are reported (default: the world size a
    /// file states, if any).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=crate::cli::MAX_RANKS))]
    pub expected_ranks: Option<u32>,
    /// An eager run of the same workload (a trace file or folder; repeatable): each graph
    /// replay's kernels are mapped to the ops that launched the same kernels at the same
    /// positions of its steps. It is read as a map only, never summed with the run.
    #[arg(long, value_name = "PATH")]
    pub eager_map: Vec<PathBuf>,
    /// Files analysed at once (default: the number of CPUs).
    #[arg(long, allow_negative_numbers = true, value_parser = jobs_parser)]
    pub jobs: Option<usize>,
    /// Memory budget for files in flight, e.g. 4G, 512M (default: 3/4 of available memory).
    /// A file is reduced to its results before the next is loaded when the budget is reached.
    #[arg(long, value_parser = super::values::parse_bytes)]
    pub max_memory: Option<u64>,
    /// Also write the JSON report to this file (a baseline for `profscope diff`).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Exit 1 when `--phase` keeps no event (the report is still printed).
    #[arg(long)]
    pub fail_empty: bool,
    /// Markdown: every section (default: the brief, filled by importance into 8000 bytes or
    /// `--max-bytes`, sized for a PR comment).
    #[arg(long)]
    pub full: bool,
    /// Bound the output to this many bytes, filled by importance (the verdict, the headline, the
    /// top advice, per-rank shares, cross-rank claims, summaries, then lists; docs/json-output.md):
    /// `md` the brief; `json` the report wrapped as the MCP tools return it (`truncated`,
    /// `full_bytes`, `result`, `cut`). An error names the smallest bound that holds the verdict
    /// and the headline.
    #[arg(long, value_name = "BYTES", conflicts_with = "full", value_parser = clap::value_parser!(u64).range(1..))]
    pub max_bytes: Option<u64>,
    /// `capped`: every format lists the 16 devices that matter when a run has more (the lowest
    /// rank, the ranks a verdict names, the slowest, latest and idlest; the per-rank
    /// distributions keep every rank), and JSON (printed or `--save`d) the first 100 entries of
    /// each per-step list (every total and verdict still counts them all; `detail_capped` names
    /// each list cut). `full` lists every device and step.
    #[arg(long, value_enum, default_value_t = Detail::Capped)]
    pub detail: Detail,
    #[command(flatten)]
    pub cache: super::cache::CacheArgs,
    #[command(flatten)]
    pub peaks: PeakArgs,
}

/// The efficiency analysis' peaks, when the chip's are unknown or to be replaced
/// (docs/analyses/efficiency.md).
#[derive(Args, Clone, Copy, Default)]
pub struct PeakArgs {
    /// Efficiency: the dense compute peak, TFLOPS, charged to every dtype instead of the chip's
    /// (what MFU divides by).
    #[arg(long, value_parser = parse_peak, value_name = "TFLOPS")]
    pub peak_tflops: Option<f64>,
    /// Efficiency: the memory bandwidth peak, GB/s (10^9 B/s), instead of the chip's (the
    /// roofline's memory roof).
    #[arg(long, value_parser = parse_peak, value_name = "GBPS")]
    pub peak_gbps: Option<f64>,
}

impl PeakArgs {
    pub fn to_override(self) -> crate::analysis::efficiency::PeakOverride {
        crate::analysis::efficiency::PeakOverride {
            tflops: self.peak_tflops,
            gbps: self.peak_gbps,
        }
    }
}

/// A peak: a finite number above 0.
fn parse_peak(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v > 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a finite number above 0")),
    }
}

/// A bubble threshold in µs: a finite number, zero or more.
fn parse_gap_us(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a finite number of µs, 0 or more")),
    }
}

/// The bundled demo root: `fixtures/demo` in the current directory, else next to the crate.
pub fn demo_root() -> PathBuf {
    let local = PathBuf::from("fixtures/demo");
    if local.is_dir() {
        return local;
    }
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo")
}

/// A `collect case` manifest stands for the profile it points at (its archive when archived,
/// else the profiler root; relative paths are taken from the manifest's folder).
fn from_manifest(p: &std::path::Path) -> PathBuf {
    match crate::collect::manifest::profile_of(p) {
        Some((kind, status, root)) => {
            let root = PathBuf::from(root);
            let root = if root.is_relative() && !root.exists() {
                p.parent().unwrap_or(std::path::Path::new(".")).join(root)
            } else {
                root
            };
            eprintln!(
                "profscope: {} is a {kind} ({status}): analysing {}",
                p.display(),
                root.display()
            );
            root
        }
        None => p.to_path_buf(),
    }
}

pub fn run(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    anyhow::ensure!(
        args.max_bytes.is_none() || args.format != Format::Table,
        "--max-bytes bounds --format md or json, not the table"
    );
    let paths = if args.paths.is_empty() {
        let demo = demo_root();
        anyhow::ensure!(
            demo.is_dir(),
            "no path given and the bundled demo root is not here (fixtures/demo in the current directory or at {}): pass a profiling root, e.g. `profscope analyze ./my_profile_dir`",
            demo.display()
        );
        vec![demo]
    } else {
        args.paths.iter().map(|p| from_manifest(p)).collect()
    };
    // The inputs' files, walked once (and only if an output or the cache needs them).
    let read: Vec<PathBuf> = paths.iter().chain(&args.eager_map).cloned().collect();
    let footprint = crate::ingest::footprint::Footprint::of(&read);
    let opts = RunOpts {
        analyze: AnalyzeOpts {
            bubbles: BubbleOpts {
                min_gap_ns: (args.min_gap_us * 1e3).round() as i64,
                top_n: args.top,
            },
            top_n: args.top,
            batch: args.batch,
            only: args.only.clone(),
            expected_ranks: args.expected_ranks,
            peaks: args.peaks.to_override(),
            ..AnalyzeOpts::default()
        },
        eager_map: args.eager_map.clone(),
        phase: args.phase,
        jobs: args.jobs.unwrap_or_else(rayon::current_num_threads).max(1),
        max_memory: args.max_memory.unwrap_or_else(pipeline::default_max_memory),
        cache: None,
        cache_max_bytes: pipeline::cache::DEFAULT_MAX_BYTES,
    };
    let opts = args.cache.apply(opts, &footprint)?;
    if let Some(save) = &args.save {
        crate::cli::refuse_overwriting_inputs(save, &footprint)?;
    }
    let mut report = report_for(&paths, &opts, args.quiet)?;
    if args.detail == Detail::Capped {
        report.detail_capped = detail::cap_devices(&mut report, detail::DEFAULT_DEVICE_CAP);
    }
    // Tables and Markdown read every step entry; only the JSON's step lists are capped. Past
    // DEFAULT_DEVICE_CAP devices they list fewer devices per list than the JSON (the ones that
    // matter for each list), so a 1,024-rank report reads like a 2-rank one.
    let max_bytes = args.max_bytes.map(|m| m as usize);
    let for_people = match (args.format, max_bytes) {
        (Format::Json, _) => None,
        (Format::Md, Some(m)) => Some(crate::render::markdown_brief::render(&report, Some(m))?),
        (f, _) if args.detail == Detail::Capped => {
            let mut short = report.clone();
            let cut = detail::cap_devices_with(&mut short, detail::PEOPLE_CAPS);
            merge_capped(&mut short.detail_capped, cut);
            Some(crate::render::render_detail(&short, f, args.full))
        }
        (f, _) => Some(crate::render::render_detail(&report, f, args.full)),
    };

    if args.detail == Detail::Capped {
        let steps = detail::cap(&mut report.analyses, detail::DEFAULT_STEP_CAP);
        report.detail_capped.extend(steps);
    }
    if let Some(path) = &args.save {
        std::fs::write(path, render(&report, Format::Json))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    let text = match (for_people, max_bytes) {
        (Some(t), _) => t,
        (None, Some(m)) => {
            let v = serde_json::to_value(&report)?;
            crate::report::budget::bound("analyze", &v, m)?.text + "\n"
        }
        (None, None) => render(&report, Format::Json),
    };
    crate::cli::write_stdout(&text)?;
    let empty = report
        .phase_slice
        .as_ref()
        .is_some_and(|p| p.events_kept == 0);
    Ok(if empty && args.fail_empty {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Analyses `paths` file by file into a report, with a progress bar unless `quiet`.
pub(crate) fn report_for(paths: &[PathBuf], opts: &RunOpts, quiet: bool) -> anyhow::Result<Report> {
    super::progress::with_bar(quiet, |progress| {
        pipeline::report_for(paths, opts, progress)
    })
    .context("analyze failed")
}

/// `--jobs`: a whole number from 1 to 4096.
fn jobs_parser(s: &str) -> Result<usize, String> {
    match s.parse::<usize>() {
        Ok(n) if (1..=4096).contains(&n) => Ok(n),
        _ => Err(format!("`{s}`: a whole number from 1 to 4096")),
    }
}

/// `cut` folded into `into`: a list cut twice keeps the first cut's total and the second's count.
fn merge_capped(into: &mut Vec<detail::CappedList>, cut: Vec<detail::CappedList>) {
    for c in cut {
        match into.iter_mut().find(|x| x.list == c.list) {
            Some(x) => x.listed = c.listed,
            None => into.push(c),
        }
    }
}
