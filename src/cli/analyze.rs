//! `profscope analyze [PATH...]`: ingest and print the report. Without a path it analyses the
//! bundled demo root `fixtures/demo/` (found next to the crate, so `cargo run -- analyze` works).

use crate::analysis::bubbles::BubbleOpts;
use crate::ingest::Progress;
use crate::pipeline::{self, RunOpts};
use crate::render::{Format, render};
use crate::report::{AnalyzeOpts, Report};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

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
    #[arg(long, allow_negative_numbers = true)]
    pub batch: Option<i64>,
    /// Run only these analyses (comma-separated)
    #[arg(long, value_delimiter = ',', value_parser = clap::builder::PossibleValuesParser::new(crate::report::analyses::ANALYSES))]
    pub only: Option<Vec<String>>,
    /// Slice to one phase before analysing (CPU forward_eager / forward_cudagraph scopes; device
    /// work follows its launch): prefill or decode.
    #[arg(long, value_enum)]
    pub phase: Option<crate::analysis::phases::Phase>,
    /// How many ranks the run should have; missing ones are reported (default: the world size a
    /// file states, if any).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(1..=crate::cli::MAX_RANKS))]
    pub expected_ranks: Option<u32>,
    /// Files analysed at once (default: the number of CPUs).
    #[arg(long, allow_negative_numbers = true)]
    pub jobs: Option<usize>,
    /// Memory budget for files in flight, e.g. 4G, 512M (default: 3/4 of available memory).
    /// A file is reduced to its results before the next is loaded when the budget is reached.
    #[arg(long, value_parser = parse_bytes)]
    pub max_memory: Option<u64>,
    /// Also write the JSON report to this file (a baseline for `profscope diff`).
    #[arg(long)]
    pub save: Option<PathBuf>,
    /// Exit 1 when `--phase` keeps no event (the report is still printed).
    #[arg(long)]
    pub fail_empty: bool,
    /// Markdown: every section (default: the headline and the top tables, about 60 lines, sized
    /// for a PR comment).
    #[arg(long)]
    pub full: bool,
}

/// A bubble threshold in µs: a finite number, zero or more.
fn parse_gap_us(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
        _ => Err(format!("`{s}` is not a finite number of µs, 0 or more")),
    }
}

/// `4G`, `512M`, `100K`, `12345` → bytes (binary units).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim().to_ascii_uppercase();
    let t = t.trim_end_matches("IB").trim_end_matches('B');
    let (num, shift) = match t.chars().last() {
        Some('G') => (&t[..t.len() - 1], 30),
        Some('M') => (&t[..t.len() - 1], 20),
        Some('K') => (&t[..t.len() - 1], 10),
        _ => (t, 0),
    };
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| format!("bad size `{s}` (use e.g. 4G, 512M)"))?;
    if v <= 0.0 {
        return Err(format!("bad size `{s}`: must be positive"));
    }
    Ok((v * (1u64 << shift) as f64) as u64)
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
        },
        phase: args.phase,
        jobs: args.jobs.unwrap_or_else(rayon::current_num_threads).max(1),
        max_memory: args.max_memory.unwrap_or_else(pipeline::default_max_memory),
    };
    if let Some(save) = &args.save {
        crate::cli::refuse_overwriting_inputs(save, &paths)?;
    }
    let report = report_for(&paths, &opts, args.quiet)?;
    if let Some(path) = &args.save {
        std::fs::write(path, render(&report, Format::Json))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    crate::cli::write_stdout(&crate::render::render_detail(
        &report,
        args.format,
        args.full,
    ))?;
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

/// Analyses `paths` file by file (progress bar unless `quiet`) into a report.
pub fn report_for(paths: &[PathBuf], opts: &RunOpts, quiet: bool) -> anyhow::Result<Report> {
    let progress = Progress::default();
    let bar = (!quiet).then(|| spawn_progress_bar(progress.clone()));
    let t0 = Instant::now();
    let result = pipeline::run(paths, opts, &progress);
    let elapsed = t0.elapsed();
    if let Some((stop, handle)) = bar {
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let _ = handle.join();
    }
    let run = result.context("analyze failed")?;
    let inputs = paths.iter().map(|p| p.display().to_string()).collect();
    let report = Report::build(
        inputs,
        run.summary,
        run.analyses,
        &run.diagnostics,
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

pub(crate) type BarHandle = (
    std::sync::Arc<std::sync::atomic::AtomicBool>,
    std::thread::JoinHandle<()>,
);

/// A progress bar on stderr that appears only when ingest takes more than a second: bytes read of
/// the total, the rate since the start and the time left at that rate (indicatif's own rate
/// starts from the bar's creation, a second in, and read `9.03 TiB/s`, ETA 0 s).
pub(crate) fn spawn_progress_bar(progress: Progress) -> BarHandle {
    use std::sync::atomic::{AtomicBool, Ordering};
    let stop = std::sync::Arc::new(AtomicBool::new(false));
    let stop2 = stop.clone();
    let handle = std::thread::spawn(move || {
        let start = Instant::now();
        let mut bar: Option<indicatif::ProgressBar> = None;
        while !stop2.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(100));
            let elapsed = start.elapsed();
            if bar.is_none() && elapsed >= Duration::from_secs(1) {
                let b = indicatif::ProgressBar::with_draw_target(
                    Some(progress.total()),
                    indicatif::ProgressDrawTarget::stderr(),
                );
                b.set_style(
                    indicatif::ProgressStyle::with_template("{spinner} ingest {wide_bar} {msg}")
                        .expect("valid template"),
                );
                bar = Some(b);
            }
            if let Some(b) = &bar {
                let (done, total) = (progress.done(), progress.total());
                b.set_length(total.max(1));
                b.set_position(done.min(total));
                b.set_message(progress_text(done, total, elapsed));
            }
        }
        if let Some(b) = bar {
            b.finish_and_clear();
        }
    });
    (stop, handle)
}

/// `1.20 GB / 4.30 GB, 310.5 MB/s, about 10 s left` (the rate since ingest began).
fn progress_text(done: u64, total: u64, elapsed: Duration) -> String {
    use crate::render::human_bytes;
    let secs = elapsed.as_secs_f64().max(1e-3);
    let rate = done as f64 / secs;
    let left = if done == 0 || done >= total {
        "time left unknown".to_string()
    } else {
        format!("about {:.0} s left", (total - done) as f64 / rate.max(1.0))
    };
    format!(
        "{} / {}, {}/s, {left}",
        human_bytes(done.min(total)),
        human_bytes(total),
        human_bytes(rate as u64)
    )
}

#[cfg(test)]
mod tests {
    use super::progress_text;
    use std::time::Duration;

    #[test]
    fn progress_says_bytes_rate_and_time_left() {
        // 1.2 GB of 4.8 GB in 4 s: 300 MB/s, 3.6 GB left = 12 s.
        assert_eq!(
            progress_text(1_200_000_000, 4_800_000_000, Duration::from_secs(4)),
            "1.20 GB / 4.80 GB, 300.00 MB/s, about 12 s left"
        );
        // Nothing read yet: no made-up rate or ETA.
        assert_eq!(
            progress_text(0, 1_000_000, Duration::from_secs(1)),
            "0 B / 1.00 MB, 0 B/s, time left unknown"
        );
        // A gzip member can decompress to more than its file size: never past the total.
        assert_eq!(
            progress_text(3_000_000, 1_000_000, Duration::from_secs(1)),
            "1.00 MB / 1.00 MB, 3.00 MB/s, time left unknown"
        );
    }
}
