//! Optimizers with a fused torch_npu replacement, as msprof-analyze advisor finds them
//! (rules/timeline_fusion_ops.yaml `Optimizer: add:`: `torch_npu.optim.NpuFusedSGD: [SGD.step]`
//! and the others below), from the host op `Optimizer.step#<Name>.step` torch writes per step.
//!
//! Time at stake: 0, the fused optimizer's time is not in the capture; the statement gives the
//! optimizer's own host time as the ceiling.

use super::{FileRule, Keyed, finding, where_file};
use crate::analysis::devices::Device;
use crate::model::{Category, Tables};

pub const RULE: FileRule = FileRule {
    name: "affinity_api",
    run,
};

/// (torch optimizer step, torch_npu fused replacement), msprof-analyze 26.2.0's list.
const OPTIMIZERS: &[(&str, &str)] = &[
    ("AdamW.step", "torch_npu.optim.NpuFusedAdamW"),
    ("SGD.step", "torch_npu.optim.NpuFusedSGD"),
    ("Adadelta.step", "torch_npu.optim.NpuFusedAdadelta"),
    ("Lamb.step", "torch_npu.optim.NpuFusedLamb"),
    ("AdamP.step", "torch_npu.optim.NpuFusedAdamP"),
    ("BertAdam.step", "torch_npu.optim.NpuFusedBertAdam"),
    ("RMSprop.step", "torch_npu.optim.NpuFusedRMSprop"),
    ("RMSpropTF.step", "torch_npu.optim.NpuFusedRMSpropTF"),
    ("Adam.step", "torch_npu.optim.NpuFusedAdam"),
];

fn run(t: &Tables, _: &[Device]) -> Vec<Keyed> {
    let mut out = Vec::new();
    for &(step, fused) in OPTIMIZERS {
        let Some(name) = t.strings.lookup(&format!("Optimizer.step#{step}")) else {
            continue;
        };
        let mut per_file: Vec<(crate::model::FileId, u64, i64)> = Vec::new();
        for i in 0..t.events.len() {
            if t.events.name[i] != name || t.events.category[i] != Category::HostOp {
                continue;
            }
            let file = t.event_file(i);
            match per_file.iter_mut().find(|x| x.0 == file) {
                Some(x) => {
                    x.1 += 1;
                    x.2 = x.2.saturating_add(t.events.dur_ns.at(i));
                }
                None => per_file.push((file, 1, t.events.dur_ns.at(i))),
            }
        }
        for (file, n, ns) in per_file {
            let mut f = finding(
                "affinity_api",
                "msprof-analyze advisor: rules/timeline_fusion_ops.yaml (Optimizer, add)",
            );
            f.subject = format!("Optimizer.step#{step}");
            f.statement = format!(
                "the optimizer runs as Optimizer.step#{step} ({n} call(s), {} on the host): {fused} fuses it",
                crate::units::human_duration(ns as f64)
            );
            f.estimate = "not estimated: the fused optimizer's time is not in the capture (the optimizer's own host time is the ceiling)".into();
            f.evidence.push(format!(
                "{}: Optimizer.step#{step}, {n} call(s)",
                where_file(t, file)
            ));
            f.recommendation = format!("replace the optimizer with {fused} (same arguments)");
            out.push(Keyed {
                key: format!("affinity_api:{step}"),
                finding: f,
            });
        }
    }
    out
}
