//! `profscope synth OUT_DIR`: writes a generated profiling root (see [`crate::synth`]).

use crate::synth::{Export, SynthOpts, generate, parse_size};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct SynthArgs {
    /// Output folder (created; existing generated files are overwritten).
    pub out: PathBuf,
    /// Number of ranks.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=crate::cli::MAX_RANKS))]
    pub ranks: u32,
    /// Approximate size of each rank's trace_view.json (e.g. 500KB, 100MB, 2GB).
    #[arg(long, default_value = "1MB")]
    pub size: String,
    /// Random seed (same seed, same bytes).
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Also write lmdeploy-style Kineto rank files (`lmdeploy_profile_<rank>.json.gz`).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub kineto: bool,
    /// torch_npu export type per rank: trace_view.json (json), the profiler db with analysis.db
    /// (db), or both from the same run.
    #[arg(long, value_enum, default_value_t = Export::Json)]
    pub export: Export,
    /// Make this rank slow: its compute kernels take `--slow-pct` percent of their normal time.
    #[arg(long)]
    pub slow_rank: Option<u32>,
    /// Compute time of the slow rank, percent of normal.
    #[arg(long, default_value_t = 150, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub slow_pct: u32,
    /// Decode in graph mode as vLLM-Ascend's ACLGraph does: the graphs are captured once
    /// (`aclmdlRICaptureBegin` .. `aclmdlRICaptureEnd`, one `Node@launch` per task), then each
    /// decode step replays the main graph and the MTP graph (`aclmdlRIExecuteAsync`); replayed
    /// tasks carry their graph's `Model Id` and their capture-time connection ids.
    #[arg(long)]
    pub graph_mode: bool,
    /// With --graph-mode: profile the capture apart from the replays, as its own session of the
    /// same rank (`capture_traces/rank<r>_ascend_pt/`), as SGLang's `capture_traces/` does.
    #[arg(long, requires = "graph_mode")]
    pub capture_apart: bool,
}

pub fn run(a: SynthArgs) -> anyhow::Result<ExitCode> {
    if let Some(r) = a.slow_rank {
        anyhow::ensure!(
            r < a.ranks,
            "--slow-rank {r}: the root has ranks 0 to {} (--ranks {})",
            a.ranks - 1,
            a.ranks
        );
    }
    let opts = SynthOpts {
        ranks: a.ranks,
        target_bytes: parse_size(&a.size)?,
        seed: a.seed,
        kineto: a.kineto,
        export: a.export,
        slow: a.slow_rank.map(|r| (r, a.slow_pct)),
        graph_mode: a.graph_mode,
        capture_apart: a.capture_apart,
    };
    let truth = generate(&a.out, &opts)?;
    eprintln!(
        "profscope synth: wrote {} rank(s) to {} ({} decode steps per rank)",
        a.ranks,
        a.out.display(),
        truth.ranks[0].decode_steps
    );
    Ok(ExitCode::SUCCESS)
}
