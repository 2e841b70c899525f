//! The memory use case (`profscope memory`, the MCP `memory` tool): gather the evidence under the
//! paths, refuse tables of different machines, attribute.

use crate::analysis::memory::{self, CheckpointWeights, Inputs, Snapshot};
use crate::analysis::weights;
use crate::ingest::evidence::gather::{self, Gathered};
use crate::model::serving::SnapshotRole;
use crate::report::memory::Parallel;
use crate::report::memory::{LogUse, RunMemory};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum MemoryRunError {
    #[error("--tp and --dp must be at least 1")]
    BadParallel,
    #[error("no memory evidence in {paths}: {why}")]
    NoEvidence { paths: String, why: String },
    #[error(
        "the npu-smi tables describe {count} different machines or device sets, which are not one run:\n  {list}\ngive each machine's evidence to its own `profscope memory` call (or compare two runs with --compare)"
    )]
    ManyMachines { count: usize, list: String },
}

/// One run's memory attribution from the evidence under `paths` (`explicit`: npu-smi files with
/// the moment they show).
pub fn one_run(
    paths: &[PathBuf],
    explicit: &[(SnapshotRole, PathBuf)],
    par: Parallel,
) -> Result<RunMemory, MemoryRunError> {
    if par.tp == 0 || par.dp == 0 {
        return Err(MemoryRunError::BadParallel);
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
        return Err(MemoryRunError::NoEvidence {
            paths: show(paths),
            why,
        });
    }
    let machines = gather::machine_groups(&g);
    if machines.len() > 1 {
        let list: Vec<String> = machines
            .iter()
            .map(|(desc, files)| format!("{desc}: {}", files.join(", ")))
            .collect();
        return Err(MemoryRunError::ManyMachines {
            count: machines.len(),
            list: list.join("\n  "),
        });
    }
    Ok(attribute(
        paths.iter().map(|p| p.display().to_string()).collect(),
        &g,
        par,
    ))
}

/// One run's attribution from gathered evidence: the checkpoint's per-device share under `par`,
/// the snapshots with their roles, the logs and the msprof module peaks.
pub fn attribute(inputs: Vec<String>, g: &Gathered, par: Parallel) -> RunMemory {
    let checkpoint = g.checkpoint.as_ref().map(|(path, c)| {
        let w = weights::compute(c, par.tp, par.dp, par.expert_parallel);
        CheckpointWeights {
            path: path.clone(),
            per_device_bytes: w.per_device_bytes,
            tp: w.tp,
            ep: w.ep,
        }
    });
    let inp = Inputs {
        snapshots: g
            .snapshots
            .iter()
            .map(|(s, r)| Snapshot { snap: s, role: *r })
            .collect(),
        logs: g.logs.iter().collect(),
        checkpoint: checkpoint.clone(),
        module_mem: memory::module_peaks(&g.module_tables),
    };
    let attribution = memory::attribute(&inp);
    RunMemory {
        inputs,
        logs: g
            .logs
            .iter()
            .map(|l| LogUse {
                file: l.path.clone(),
                lines: l.lines,
                records: l.records.clone(),
            })
            .collect(),
        checkpoint,
        msprof_files: g.module_tables.files.path.clone(),
        skipped: g.skipped.len(),
        skipped_examples: g.skipped.iter().take(10).cloned().collect(),
        errors: g.errors.clone(),
        attribution,
    }
}

fn show(p: &[PathBuf]) -> String {
    p.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
