//! `profscope export PATH... [--perfetto OUT.json [--window A..B | --step N] [--ranks 0,3]
//! [--streams 2,3]] [--parquet DIR [--run TAG]]`: the tables as a Chrome-trace JSON for the
//! Perfetto UI, windowed, ranks side by side, with derived tracks (export::perfetto), and / or as
//! Hive-partitioned Parquet (export::parquet). Prints what was written as JSON; warns above
//! the UI's ~2 GB limit.

use crate::export::perfetto::{self, PerfettoOpts, UI_LIMIT, Window};
use crate::pipeline::Limits;
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct ExportArgs {
    /// Files or folders (any input analyze reads).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Write a Perfetto-loadable Chrome-trace JSON here.
    #[arg(long, required_unless_present = "parquet")]
    pub perfetto: Option<PathBuf>,
    /// Write the events as Parquet under DIR/run=<tag>/rank=<n>/ (Hive partitions).
    #[arg(long)]
    pub parquet: Option<PathBuf>,
    /// The run tag of the Parquet partition (default: the first input's folder name).
    #[arg(long)]
    pub run: Option<String>,
    /// Keep events overlapping A..B, offsets from each file's first event with a unit
    /// (ns, us, ms, s), e.g. 1.5s..1.6s.
    #[arg(long, conflicts_with = "step")]
    pub window: Option<String>,
    /// Keep the Nth step of each file (ProfilerStep#N, else the Nth forward scope).
    #[arg(long)]
    pub step: Option<u64>,
    /// Only these ranks (comma-separated).
    #[arg(long, value_delimiter = ',')]
    pub ranks: Option<Vec<i32>>,
    /// Only these device streams (comma-separated ids); host threads are kept.
    #[arg(long, value_delimiter = ',')]
    pub streams: Option<Vec<i32>>,
    /// Smallest device gap drawn on the bubbles track, µs.
    #[arg(long, default_value_t = 1.0)]
    pub min_gap_us: f64,
    /// Never show the progress bar.
    #[arg(long)]
    pub quiet: bool,
}

fn dur(s: &str) -> anyhow::Result<i64> {
    let s = s.trim();
    let (num, mult) = [("ns", 1.0), ("us", 1e3), ("ms", 1e6), ("s", 1e9)]
        .iter()
        .find_map(|(u, m)| s.strip_suffix(u).map(|n| (n, *m)))
        .ok_or_else(|| anyhow::anyhow!("`{s}`: give a unit (ns, us, ms, s)"))?;
    let v: f64 = num
        .trim()
        .parse()
        .map_err(|_| anyhow::anyhow!("`{s}`: not a number"))?;
    let ns = v * mult;
    anyhow::ensure!(
        ns.is_finite() && (0.0..=MAX_OFFSET_NS as f64).contains(&ns),
        "`{s}`: a window offset is from 0 to {MAX_OFFSET_NS} ns (about 31 years) after the file's first event"
    );
    Ok(ns.round() as i64)
}

/// The largest `--window` offset (1e18 ns): far past any capture, far from i64 overflow when
/// added to a file's first timestamp.
const MAX_OFFSET_NS: i64 = 1_000_000_000_000_000_000;

/// An error when `--ranks`, `--step` or `--window` matched nothing that the files hold, naming
/// what they hold; the files that could not be read are not counted.
fn nothing_selected(a: &ExportArgs, files: &[perfetto::FileExport]) -> Option<String> {
    let read: Vec<&perfetto::FileExport> = files.iter().filter(|f| f.error.is_none()).collect();
    if read.is_empty() {
        return None;
    }
    let mut present: Vec<i32> = read.iter().map(|f| f.rank).collect();
    present.sort_unstable();
    present.dedup();
    if let Some(want) = &a.ranks {
        let missing: Vec<i32> = want
            .iter()
            .copied()
            .filter(|r| !present.contains(r))
            .collect();
        if !missing.is_empty() {
            return Some(format!(
                "--ranks: no file of rank {missing:?}; the inputs hold ranks {present:?}"
            ));
        }
    }
    let kept: Vec<&&perfetto::FileExport> = read.iter().filter(|f| !f.left_out).collect();
    if let Some(n) = a.step
        && kept
            .iter()
            .all(|f| f.window_ns == Some((i64::MAX, i64::MAX)))
    {
        let most = kept.iter().map(|f| f.steps_in_file).max().unwrap_or(0);
        return Some(format!(
            "--step {n}: no file has that step; the files hold 1 to {most} steps (ProfilerStep#N where named so, else the Nth forward scope)"
        ));
    }
    if a.window.is_some() && kept.iter().all(|f| f.events_written == 0) {
        let span = kept.iter().map(|f| f.span_ns).max().unwrap_or(0);
        return Some(format!(
            "--window {}: no event in it; the files span 0 to {span} ns from their first event",
            a.window.as_deref().unwrap_or("")
        ));
    }
    None
}

pub fn run(a: ExportArgs) -> anyhow::Result<ExitCode> {
    let window = match (&a.window, a.step) {
        (Some(w), _) => {
            let (x, y) = w
                .split_once("..")
                .ok_or_else(|| anyhow::anyhow!("--window wants A..B"))?;
            let (x, y) = (dur(x)?, dur(y)?);
            anyhow::ensure!(x <= y, "--window: start after end");
            Window::Offsets(x, y)
        }
        (None, Some(n)) => Window::Step(n),
        (None, None) => Window::All,
    };
    let d = crate::ingest::discover(&a.paths)?;
    // Walked once, for whichever outputs are asked for.
    let footprint = crate::ingest::footprint::Footprint::of(&a.paths);
    anyhow::ensure!(
        !d.inputs.is_empty(),
        "no profiling inputs under {:?}",
        a.paths
    );
    if let Some(dir) = &a.parquet {
        anyhow::ensure!(
            !dir.exists() || dir.is_dir(),
            "--parquet {}: exists and is not a folder (the Parquet export writes a folder)",
            dir.display()
        );
        crate::cli::refuse_overwriting_inputs(dir, &footprint)?;
        let tag = a
            .run
            .clone()
            .unwrap_or_else(|| crate::pipeline::default_run_tag(&a.paths[0]));
        let files = crate::pipeline::export::parquet(
            &d.inputs,
            dir,
            &tag,
            Limits::default(),
            &crate::ingest::Progress::default(),
        );
        for f in files.iter().filter(|f| f.error.is_some()) {
            eprintln!(
                "profscope export: warning: {}: {}",
                f.input,
                f.error.as_deref().unwrap_or("")
            );
        }
        let v =
            serde_json::json!({"parquet": dir.display().to_string(), "run": tag, "files": files});
        crate::cli::write_stdout(&(serde_json::to_string_pretty(&v)? + "\n"))?;
    }
    let Some(perfetto) = a.perfetto.clone() else {
        return Ok(ExitCode::SUCCESS);
    };
    crate::cli::refuse_overwriting_inputs(&perfetto, &footprint)?;
    let o = PerfettoOpts {
        window,
        ranks: a.ranks.clone(),
        streams: a.streams.clone(),
        min_gap_ns: (a.min_gap_us * 1e3).round() as i64,
    };
    let f = std::fs::File::create(&perfetto)?;
    let w = std::io::BufWriter::with_capacity(1 << 20, f);
    let (mut w, files) = super::progress::with_bar(a.quiet, |progress| {
        crate::pipeline::export::perfetto(&d.inputs, &o, w, Limits::default(), progress)
    })?;
    w.flush()?;
    drop(w);
    if let Some(why) = nothing_selected(&a, &files) {
        // The file this run created holds no selected event: removed, not left as an answer.
        let _ = std::fs::remove_file(&perfetto);
        anyhow::bail!("{why}");
    }
    let bytes = std::fs::metadata(&perfetto)?.len();
    let mut warnings = Vec::new();
    if bytes > UI_LIMIT {
        warnings.push(format!("{bytes} bytes: above the Perfetto UI's ~2 GB limit for JSON; narrow it with --window / --step / --ranks / --streams, or open it with trace_processor"));
    }
    for f in files.iter().filter(|f| f.error.is_some()) {
        warnings.push(format!("{}: {}", f.path, f.error.as_deref().unwrap_or("")));
    }
    for wmsg in &warnings {
        eprintln!("profscope export: warning: {wmsg}");
    }
    let s = perfetto::ExportSummary {
        out: perfetto.display().to_string(),
        bytes,
        files,
        warnings,
    };
    crate::cli::write_stdout(&(serde_json::to_string_pretty(&s)? + "\n"))?;
    Ok(ExitCode::SUCCESS)
}
