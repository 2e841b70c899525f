//! `profscope memory PATHS [--npu-smi ROLE=FILE] [--tp N --dp N --expert-parallel]
//! [--compare PATHS --compare-tp N ...] [--require-complete]`: what holds HBM on each device,
//! from npu-smi tables, vLLM logs, safetensors headers and msprof module memory, each number
//! with its source; exit 1 with `--require-complete` when evidence is missing.

use crate::contract::Completeness;
use crate::model::serving::SnapshotRole;
use crate::pipeline::memory::one_run;
use crate::render::Format;
use crate::report::memory::{self, Parallel};
use anyhow::Context;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct MemoryArgs {
    /// Evidence files or folders (searched recursively): npu-smi text, vLLM logs, safetensors
    /// (file, header JSON or index), npu_module_mem.csv, profiler / msprof dbs; or a
    /// `collect memory` run folder (its manifest gives each snapshot's role, and the report is
    /// written into it as report.json and report.txt).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Say what moment an npu-smi snapshot shows: idle, ready, loaded, post_inference, peak
    /// (else: idle when no process holds a device, else from the file name, else loaded).
    #[arg(long = "npu-smi", value_name = "ROLE=FILE")]
    pub npu_smi: Vec<String>,
    /// Tensor-parallel size of the service: the weights are divided by it per device (default:
    /// a run folder's, else 1).
    #[arg(long)]
    pub tp: Option<u64>,
    /// Data-parallel size, replicas of the model (default: a run folder's, else 1).
    #[arg(long)]
    pub dp: Option<u64>,
    /// Experts are sharded over the TP×DP devices (vLLM `--enable-expert-parallel`).
    #[arg(long)]
    pub expert_parallel: bool,
    /// A second run (files or folders) shown side by side, e.g. another TP configuration.
    #[arg(long)]
    pub compare: Vec<PathBuf>,
    /// `--npu-smi` for the `--compare` run.
    #[arg(long = "compare-npu-smi", value_name = "ROLE=FILE")]
    pub compare_npu_smi: Vec<String>,
    /// `--tp` of the `--compare` run (default: `--tp`).
    #[arg(long)]
    pub compare_tp: Option<u64>,
    /// `--dp` of the `--compare` run (default: `--dp`).
    #[arg(long)]
    pub compare_dp: Option<u64>,
    /// `--expert-parallel` for the `--compare` run.
    #[arg(long)]
    pub compare_expert_parallel: bool,
    /// Exit 1 when the attribution is incomplete (evidence missing).
    #[arg(long)]
    pub require_complete: bool,
    /// Output format (json: the report contract, docs/analyses/memory.md).
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
            let file = PathBuf::from(f);
            // A snapshot named on the command line is evidence the report relies on: missing, it
            // is an error, not an empty role.
            anyhow::ensure!(
                file.is_file(),
                "--npu-smi {s}: {} is not a readable file",
                file.display()
            );
            Ok((role, file))
        })
        .collect()
}

/// The evidence of `paths`: a `collect memory` run folder stands for its snapshots (with the roles
/// its manifest gives), its copied log, msprof CSVs and checkpoint, and its TP / DP / EP when the
/// command line gives none; other paths are walked as they are.
struct Evidence {
    paths: Vec<PathBuf>,
    roles: Vec<(SnapshotRole, PathBuf)>,
    par: Option<Parallel>,
    /// The run folder, when `paths` was exactly one.
    run_dir: Option<PathBuf>,
}

fn evidence(paths: &[PathBuf], explicit: Vec<(SnapshotRole, PathBuf)>) -> anyhow::Result<Evidence> {
    use crate::collect::memory as run_dir;
    let mut e = Evidence {
        paths: Vec::new(),
        roles: explicit,
        par: None,
        run_dir: None,
    };
    for p in paths {
        // A folder whose manifest.json is a memory run's; anything else is walked as it is.
        let Some(m) = p.is_dir().then(|| run_dir::read_manifest(p).ok()).flatten() else {
            e.paths.push(p.clone());
            continue;
        };
        let (roles, other) = run_dir::run_evidence(p, &m);
        for (role, file) in roles {
            let role = SnapshotRole::parse(&role).ok_or_else(|| {
                anyhow::anyhow!("{}: unknown snapshot role `{role}`", p.display())
            })?;
            e.roles.push((role, file));
        }
        e.paths.extend(other);
        e.par = Some(Parallel {
            tp: m.tp.max(1),
            dp: m.dp.max(1),
            expert_parallel: m.expert_parallel,
        });
        if paths.len() == 1 {
            e.run_dir = Some(p.clone());
        }
    }
    Ok(e)
}

pub fn run(a: MemoryArgs) -> anyhow::Result<ExitCode> {
    let given = |tp: Option<u64>, dp: Option<u64>, ep: bool, from: Option<Parallel>| Parallel {
        tp: tp.or(from.map(|p| p.tp)).unwrap_or(1),
        dp: dp.or(from.map(|p| p.dp)).unwrap_or(1),
        expert_parallel: ep || from.is_some_and(|p| p.expert_parallel),
    };
    let ev = evidence(&a.paths, roles(&a.npu_smi)?)?;
    let par = given(a.tp, a.dp, a.expert_parallel, ev.par);
    let run = one_run(&ev.paths, &ev.roles, par)?;
    let compare = if a.compare.is_empty() {
        None
    } else {
        let evb = evidence(&a.compare, roles(&a.compare_npu_smi)?)?;
        let par_b = given(
            a.compare_tp.or(a.tp),
            a.compare_dp.or(a.dp),
            a.compare_expert_parallel || a.expert_parallel,
            evb.par,
        );
        Some(one_run(&evb.paths, &evb.roles, par_b)?)
    };
    let incomplete = run.attribution.status != Completeness::Complete
        || compare
            .as_ref()
            .is_some_and(|c| c.attribution.status != Completeness::Complete);
    let r = memory::report(run, compare);
    let text = match a.format {
        Format::Json => serde_json::to_string_pretty(&r)? + "\n",
        f => crate::render::render_sections(&crate::render::memory::sections(&r), f),
    };
    crate::cli::write_stdout(&text)?;
    // A run folder of `collect memory` keeps its report beside its evidence.
    if let Some(dir) = &ev.run_dir {
        let json = dir.join("report.json");
        std::fs::write(&json, serde_json::to_string_pretty(&r)? + "\n")
            .with_context(|| format!("writing {}", json.display()))?;
        let txt = dir.join("report.txt");
        std::fs::write(
            &txt,
            crate::render::render_sections(&crate::render::memory::sections(&r), Format::Table),
        )
        .with_context(|| format!("writing {}", txt.display()))?;
        eprintln!("profscope: wrote {} and {}", json.display(), txt.display());
    }
    Ok(if a.require_complete && incomplete {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
