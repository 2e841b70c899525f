//! `profscope memory PATHS [--npu-smi ROLE=FILE] [--tp N --dp N --expert-parallel]
//! [--compare PATHS --compare-tp N ...] [--require-complete]`: what holds HBM on each device,
//! from npu-smi tables, vLLM logs, safetensors headers and msprof module memory, each number
//! with its source; exit 1 with `--require-complete` when evidence is missing.

use crate::ingest::evidence::gather;
use crate::model::serving::SnapshotRole;
use crate::render::Format;
use crate::report::memory::{self, Parallel};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct MemoryArgs {
    /// Evidence files or run folders (searched recursively): npu-smi text, vLLM logs,
    /// safetensors (file, header JSON or index), npu_module_mem.csv, profiler / msprof dbs.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Say what moment an npu-smi snapshot shows: idle, ready, loaded, post_inference, peak
    /// (else: idle when no process holds a device, else from the file name, else loaded).
    #[arg(long = "npu-smi", value_name = "ROLE=FILE")]
    pub npu_smi: Vec<String>,
    #[arg(long, default_value_t = 1)]
    pub tp: u64,
    #[arg(long, default_value_t = 1)]
    pub dp: u64,
    #[arg(long)]
    pub expert_parallel: bool,
    /// A second run (files or folders) shown side by side, e.g. another TP configuration.
    #[arg(long)]
    pub compare: Vec<PathBuf>,
    #[arg(long = "compare-npu-smi", value_name = "ROLE=FILE")]
    pub compare_npu_smi: Vec<String>,
    #[arg(long)]
    pub compare_tp: Option<u64>,
    #[arg(long)]
    pub compare_dp: Option<u64>,
    #[arg(long)]
    pub compare_expert_parallel: bool,
    /// Exit 1 when the attribution is incomplete (evidence missing).
    #[arg(long)]
    pub require_complete: bool,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

fn roles(v: &[String]) -> anyhow::Result<Vec<(SnapshotRole, PathBuf)>> {
    v.iter()
        .map(|s| {
            let (r, f) = s
                .split_once('=')
                .ok_or_else(|| anyhow::anyhow!("--npu-smi wants ROLE=FILE, got `{s}`"))?;
            let role = SnapshotRole::parse(r).ok_or_else(|| {
                anyhow::anyhow!(
                    "unknown npu-smi role `{r}` (idle, ready, loaded, post_inference, peak)"
                )
            })?;
            Ok((role, PathBuf::from(f)))
        })
        .collect()
}

pub(crate) fn one_run(
    paths: &[PathBuf],
    explicit: &[(SnapshotRole, PathBuf)],
    par: Parallel,
) -> anyhow::Result<memory::RunMemory> {
    if par.tp == 0 || par.dp == 0 {
        anyhow::bail!("--tp and --dp must be at least 1");
    }
    let g = gather::gather(paths, explicit);
    let found = !g.snapshots.is_empty()
        || !g.logs.is_empty()
        || g.checkpoint.is_some()
        || !g.module_tables.memory.is_empty();
    if !found {
        let why = g.errors.first().cloned().unwrap_or_else(|| {
            "no npu-smi table, vLLM log, safetensors or msprof module memory found".into()
        });
        anyhow::bail!("no memory evidence in {}: {why}", show(paths));
    }
    Ok(memory::run(
        paths.iter().map(|p| p.display().to_string()).collect(),
        &g,
        par,
    ))
}

fn show(p: &[PathBuf]) -> String {
    p.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn run(a: MemoryArgs) -> anyhow::Result<ExitCode> {
    let par = Parallel {
        tp: a.tp,
        dp: a.dp,
        expert_parallel: a.expert_parallel,
    };
    let run = one_run(&a.paths, &roles(&a.npu_smi)?, par)?;
    let compare = if a.compare.is_empty() {
        None
    } else {
        let par_b = Parallel {
            tp: a.compare_tp.unwrap_or(a.tp),
            dp: a.compare_dp.unwrap_or(a.dp),
            expert_parallel: a.compare_expert_parallel || a.expert_parallel,
        };
        Some(one_run(&a.compare, &roles(&a.compare_npu_smi)?, par_b)?)
    };
    let incomplete = run.attribution.status != "complete"
        || compare
            .as_ref()
            .is_some_and(|c| c.attribution.status != "complete");
    let r = memory::report(run, compare);
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&r)? + "\n",
        f => crate::render::render_sections(&crate::render::memory::sections(&r), f),
    };
    crate::cli::write_stdout(&text)?;
    Ok(if a.require_complete && incomplete {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
