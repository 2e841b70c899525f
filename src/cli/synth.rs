//! `profscope synth OUT_DIR`: writes a generated profiling root (see [`crate::synth`]).

use crate::synth::job::{JobOpts, schedule::Slowness, topology::Topology};
use crate::synth::{Export, SynthOpts, generate, generate_job, parse_size};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct SynthArgs {
    /// Output folder (created; existing generated files are overwritten).
    pub out: PathBuf,
    /// Number of ranks (default 2; with --tp/--pp/--dp, their product).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=crate::cli::MAX_RANKS))]
    pub ranks: Option<u32>,
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
    /// A training job instead of a serving root: tensor-parallel size (Megatron rank order;
    /// with --pp / --dp / --ep; each rank writes torch_npu's text export with
    /// profiler_metadata.json's distributed_args and parallel_group_info).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub tp: Option<u32>,
    /// Pipeline-parallel size of the generated job (stages joined by HCCL send / receive).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub pp: Option<u32>,
    /// Data-parallel size of the generated job (default: --ranks / (tp x pp)).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=131072))]
    pub dp: Option<u32>,
    /// Expert-parallel size of the generated job (divides --dp; MoE blocks with all-to-all and
    /// GroupedMatmul).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub ep: Option<u32>,
    /// Steps of the generated job.
    #[arg(long, default_value_t = 6, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub steps: u32,
    /// Microbatches per step of the generated job.
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=1_000))]
    pub microbatches: u32,
    /// Make a pipeline stage of the job slow: its compute takes `--slow-pct` percent.
    #[arg(long)]
    pub slow_stage: Option<u32>,
    /// Expert load of EP index 0 of each EP group, as a multiple of the others' (1: balanced).
    #[arg(long, default_value_t = 1.0)]
    pub expert_skew: f64,
    /// Ranks of the job written as vendor summaries only (step_trace_time.csv,
    /// communication.json, analysis.db; no trace_view.json), comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub summary_only: Vec<u32>,
}

/// Whether the arguments ask for a training job.
fn is_job(a: &SynthArgs) -> bool {
    a.tp.is_some() || a.pp.is_some() || a.dp.is_some() || a.ep.is_some()
}

fn run_job(a: SynthArgs) -> anyhow::Result<ExitCode> {
    let (tp, pp) = (a.tp.unwrap_or(1), a.pp.unwrap_or(1));
    let dp = match (a.dp, a.ranks) {
        (Some(d), _) => d,
        (None, Some(r)) => {
            anyhow::ensure!(
                r % (tp * pp) == 0,
                "--ranks {r} is not a multiple of --tp {tp} x --pp {pp}"
            );
            r / (tp * pp)
        }
        (None, None) => 1,
    };
    let ep = a.ep.unwrap_or(1);
    let world = tp as u64 * pp as u64 * dp as u64;
    anyhow::ensure!(
        world <= crate::cli::MAX_RANKS as u64,
        "--tp {tp} x --pp {pp} x --dp {dp} = {world} ranks: at most {}",
        crate::cli::MAX_RANKS
    );
    if let Some(r) = a.ranks {
        anyhow::ensure!(
            r as u64 == world,
            "--ranks {r} but --tp {tp} x --pp {pp} x --dp {dp} = {world}"
        );
    }
    anyhow::ensure!(dp % ep == 0, "--ep {ep} does not divide --dp {dp}");
    anyhow::ensure!(
        a.expert_skew.is_finite() && a.expert_skew > 0.0 && a.expert_skew <= 100.0,
        "--expert-skew {}: a multiple between 0 and 100",
        a.expert_skew
    );
    let world = world as u32;
    for (what, r) in [
        ("--slow-rank", a.slow_rank),
        ("--slow-stage", a.slow_stage.map(|s| s * tp * dp)),
    ] {
        if let Some(r) = r {
            anyhow::ensure!(
                r < world,
                "{what}: out of the job's range ({world} ranks, {pp} stages)"
            );
        }
    }
    if let Some(r) = a.summary_only.iter().find(|&&r| r >= world) {
        anyhow::bail!("--summary-only {r}: the job has ranks 0 to {}", world - 1);
    }
    let opts = JobOpts {
        topology: Topology { tp, pp, dp, ep },
        steps: a.steps,
        microbatches: a.microbatches,
        slow: Slowness {
            rank: a.slow_rank.map(|r| (r, a.slow_pct)),
            stage: a.slow_stage.map(|s| (s, a.slow_pct)),
            expert_skew: a.expert_skew,
        },
        summary_only: a.summary_only.clone(),
        seed: a.seed,
    };
    generate_job(&a.out, &opts)?;
    eprintln!(
        "profscope synth: wrote a TP{tp} x PP{pp} x DP{dp}{} job of {world} rank(s) to {} ({} steps)",
        if ep > 1 {
            format!(" (EP{ep})")
        } else {
            String::new()
        },
        a.out.display(),
        a.steps
    );
    Ok(ExitCode::SUCCESS)
}

pub fn run(a: SynthArgs) -> anyhow::Result<ExitCode> {
    if is_job(&a) {
        return run_job(a);
    }
    anyhow::ensure!(
        a.slow_stage.is_none() && a.summary_only.is_empty(),
        "--slow-stage and --summary-only describe a training job: give --tp / --pp / --dp"
    );
    let ranks = a.ranks.unwrap_or(2);
    if let Some(r) = a.slow_rank {
        anyhow::ensure!(
            r < ranks,
            "--slow-rank {r}: the root has ranks 0 to {} (--ranks {})",
            ranks - 1,
            ranks
        );
    }
    let opts = SynthOpts {
        ranks,
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
        ranks,
        a.out.display(),
        truth.ranks[0].decode_steps
    );
    Ok(ExitCode::SUCCESS)
}
