//! The device waits for the host to launch work (profscope's own evidence: the bubbles
//! analysis's `host_dispatch` cause, docs/analyses/bubbles.md). msprof-analyze's nearest rules
//! are "op dispatch" and the ACLNN_CACHE_LIMIT / HOST_CACHE_CAPACITY suggestions; neither says
//! how much idle the host causes.
//!
//! Time at stake: the `host_dispatch` idle of the rank with the most of it (what the device
//! would gain if launches kept ahead of it). Reported when it is at least 5% of that rank's
//! device window.

use super::{RunInputs, RunRule, finding};
use crate::contract::Finding;

pub const RULE: RunRule = RunRule {
    name: "host_dispatch",
    run,
};

/// Share of the window below which host-dispatch idle is not worth a finding, percent.
const MIN_PCT: f64 = 5.0;

fn run(inputs: &RunInputs<'_>) -> Vec<Finding> {
    let Some((b, c, pct)) = super::worst_by_cause(inputs.bubbles, "host_dispatch", MIN_PCT) else {
        return Vec::new();
    };
    let mut f = finding(
        "host_dispatch",
        "profscope: bubbles analysis, cause host_dispatch (docs/analyses/bubbles.md)",
    );
    f.time_at_stake_ns = c.total_ns;
    f.statement = format!(
        "the device waits for the host's launches {:.1}% of its window ({} gaps, {:.3} ms on rank {})",
        pct,
        c.count,
        c.total_ns as f64 / 1e6,
        b.device.rank
    );
    f.estimate = "the host_dispatch idle of the rank with the most of it: gaps whose next task's launch began after the gap did".into();
    f.evidence = super::idle_evidence(b, "host_dispatch", |g| {
        g.launch_op
            .as_ref()
            .map_or_else(String::new, |op| format!(", launched by {op}"))
    });
    f.recommendation = if b.device.process.contains("Ascend") {
        "take launches off the critical path: run the step as a captured graph (vLLM-Ascend: ACL graph mode, not enforce_eager; torch_npu.npu.NPUGraph; training: torchair), export TASK_QUEUE_ENABLE=2, bind the host threads to cores (CPU_AFFINITY_CONF=1), export ACLNN_CACHE_LIMIT=100000; then capture again and compare with profscope diff"
    } else {
        "take launches off the critical path: capture the step as a CUDA graph (torch.cuda.CUDAGraph, or torch.compile(mode=\"reduce-overhead\")), fuse small kernels, and move host syncs (.item(), .cpu()) out of the step; then capture again and compare with profscope diff"
    }
    .into();
    vec![f]
}
