//! Operators far below the roofline (profscope's efficiency analysis,
//! docs/analyses/efficiency.md): op classes ranked by the time they lose to the roofline, on the
//! device that loses the most. msprof-analyze's operator_mfu recipe is the peer (per-kernel MFU
//! from mstx-marked FLOPs); TraceLens ranks GPU ops the same way from its performance models.
//!
//! Time at stake: the worst device's Σ time_lost_ns = Σ (time − calls × max(FLOPs ÷ peak,
//! bytes ÷ bandwidth)) over its op classes: what they would save at the roofline. Only devices
//! whose peak and bandwidth are known (else nothing is claimed).

use super::{RunInputs, RunRule, finding};
use crate::contract::{DeviceEfficiency, Finding, OpRow, Roofline};

pub const RULE: RunRule = RunRule {
    name: "roofline_gap",
    run,
};

const SOURCE: &str = "profscope: efficiency analysis (roofline per op class); peers: msprof-analyze cluster operator_mfu, TraceLens performance models";

/// Op classes listed as evidence.
const LISTED: usize = 8;

/// The device's time lost over all its op classes (the listed ones are the first 100).
fn lost(d: &DeviceEfficiency) -> i64 {
    d.total.time_lost_ns
}

fn evidence(d: &DeviceEfficiency, o: &OpRow) -> String {
    let le = o.at_most();
    let mfu = o
        .mfu
        .map_or(String::new(), |m| format!(", MFU {le}{:.1}%", m * 100.0));
    let lost = if o.upper_bound { "≥ " } else { "" };
    format!(
        "{}: {} {} {}: {} call(s), {:.3} ms, {le}{:.2} TFLOPS, {le}{:.1} GB/s{mfu}, {}-bound, {lost}{:.3} ms lost",
        d.device.short(),
        o.op,
        o.dtype,
        o.shape,
        o.calls,
        o.time_ns as f64 / 1e6,
        o.achieved_tflops,
        o.achieved_gbps,
        o.roofline,
        o.time_lost_ns.unwrap_or(0) as f64 / 1e6
    )
}

fn run(inputs: &RunInputs<'_>) -> Vec<Finding> {
    let Some(worst) = inputs.efficiency.iter().max_by_key(|d| lost(d)) else {
        return Vec::new();
    };
    let stake = lost(worst);
    if stake <= 0 {
        return Vec::new();
    }
    let mut ops: Vec<&OpRow> = worst
        .ops
        .iter()
        .filter(|o| o.time_lost_ns > Some(0))
        .collect();
    ops.sort_by_key(|o| std::cmp::Reverse(o.time_lost_ns));
    let class_ns = |c: Roofline| -> i64 {
        ops.iter()
            .filter(|o| o.roofline == c)
            .filter_map(|o| o.time_lost_ns)
            .sum()
    };
    let mut f = finding("roofline_gap", SOURCE);
    f.time_at_stake_ns = stake;
    f.statement = format!(
        "{:.3} ms of {}'s {:.3} ms of modelled compute time is above the roofline, over {} op classes (of the listed ones' lost time: compute-bound {:.3} ms, memory-bound {:.3} ms, latency-bound {:.3} ms)",
        stake as f64 / 1e6,
        worst.device.short(),
        worst.modeled_time_ns as f64 / 1e6,
        worst.ops_total,
        class_ns(Roofline::Compute) as f64 / 1e6,
        class_ns(Roofline::Memory) as f64 / 1e6,
        class_ns(Roofline::Latency) as f64 / 1e6,
    );
    f.estimate = "Σ over the device's op classes of time − calls × max(FLOPs ÷ peak, bytes ÷ bandwidth): the time at the roofline, on the device that loses the most".into();
    f.evidence = ops
        .iter()
        .take(LISTED)
        .map(|o| evidence(worst, o))
        .collect();
    f.recommendation = "largest first: compute-bound classes far from peak want a better-fitting kernel or tiling (AOE / a tuned GEMM), a faster dtype (bf16 / fp16 / int8 instead of fp32) or shapes aligned to the cube / tensor-core tile; memory-bound classes want fusion (fewer round trips to HBM, no layout changes such as TransData between ops) or larger batches; latency-bound classes want batching or graph capture (too little work per call to fill the chip)".into();
    vec![f]
}
