//! The host blocks in synchronous calls while the device has nothing to run (profscope's own
//! evidence: the bubbles analysis's `host_blocked` cause, docs/analyses/bubbles.md): a stream or
//! device sync, a synchronous copy, `.item()` / `.cpu()` / `.tolist()` inside the step. Every
//! such call drains the device's queue; the device idles until the host returns and launches
//! again. msprof-analyze has no rule that measures it (its "syncBN" and "synchronize stream"
//! checks count calls, not the device time they cost).
//!
//! Time at stake: the `host_blocked` idle of the rank with the most of it (what the device would
//! gain if the host kept launching instead of waiting). Reported when it is at least 1% of that
//! rank's device window.

use super::{RunInputs, RunRule, finding};
use crate::contract::Finding;

pub const RULE: RunRule = RunRule {
    name: "host_blocked",
    run,
};

/// Share of the window below which blocked idle is not worth a finding, percent.
const MIN_PCT: f64 = 1.0;

fn run(inputs: &RunInputs<'_>) -> Vec<Finding> {
    let Some((b, c, pct)) = super::worst_by_cause(inputs.bubbles, "host_blocked", MIN_PCT) else {
        return Vec::new();
    };
    let mut f = finding(
        "host_blocked",
        "profscope: bubbles analysis, cause host_blocked (docs/analyses/bubbles.md)",
    );
    f.time_at_stake_ns = c.total_ns;
    // The calls of the largest blocked gaps, most idle first.
    let mut calls: Vec<(String, i64)> = Vec::new();
    for g in b
        .largest
        .iter()
        .filter(|g| g.cause.as_str() == "host_blocked")
    {
        let name = g.evidence.as_ref().map_or("?", |e| e.name.as_str());
        match calls.iter_mut().find(|x| x.0 == name) {
            Some(x) => x.1 += g.dur_ns,
            None => calls.push((name.to_string(), g.dur_ns)),
        }
    }
    let outside = b.host_blocked_outside_ns;
    f.statement = format!(
        "the host blocks in synchronous calls ({}) while the device idles {:.1}% of its window ({} gaps, {:.3} ms on rank {}{})",
        calls
            .iter()
            .map(|x| x.0.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        pct,
        c.count,
        c.total_ns as f64 / 1e6,
        b.device.rank,
        if outside > 0 {
            format!(
                "; {:.3} ms of it waiting on work outside the trace",
                outside as f64 / 1e6
            )
        } else {
            String::new()
        }
    );
    f.estimate = "the host_blocked idle of the rank with the most of it: gaps a synchronous host call held the host for at least half of".into();
    f.evidence = super::idle_evidence(b, "host_blocked", |g| format!(": {}", g.explain()));
    f.recommendation = if b.device.process.contains("Ascend") {
        "take the syncs off the step: keep results on the NPU (no .item() / .cpu() / .tolist() / torch.npu.synchronize() inside the step; read them once per N steps), copy with non_blocking=True from pinned memory (tensor.pin_memory()), and record an event (torch.npu.Event) to wait on only where the value is needed; a call that waited on work outside the trace waited for another stream, process or rank: capture that one too"
    } else {
        "take the syncs off the step: keep results on the GPU (no .item() / .cpu() / .tolist() / torch.cuda.synchronize() inside the step; read them once per N steps), copy with non_blocking=True into pinned memory (tensor.pin_memory()) and wait on a torch.cuda.Event only where the value is needed, avoid cudaFree in the step (PyTorch's caching allocator: no empty_cache(), fewer cudnn.benchmark re-plans); a call that waited on work outside the trace waited for another stream, process or GPU: capture that one too"
    }
    .into();
    vec![f]
}
