//! A rank the others wait for (profscope's cross-rank analysis, docs/analyses/cross_rank.md, and
//! its comparisons within the job's peer sets, docs/analyses/layout.md), reported only where that
//! analysis says the rank stands out (p < 0.05) and the clocks allow an arrival claim. msprof-analyze's slow-rank rule (analyzer/cluster/slow_rank_analyzer.py)
//! compares step_trace_time's compute / communication / free per rank; this one names the rank
//! the collectives wait for, and how long.
//!
//! Time at stake: per collective-waiting rank, its wait beyond the late rank's own
//! (`others_median_wait_ns − wait_ns`): what the others would stop waiting if the late rank
//! arrived with them. Or, for a rank slowest by device time, its mean excess over the others'
//! median times the steps it was slowest in.

use super::{RunInputs, RunRule, finding};
use crate::contract::{Finding, Slowest, WaitedFor};

pub const RULE: RunRule = RunRule {
    name: "slow_rank",
    run,
};

const SOURCE: &str = "profscope: cross_rank waited_for / slowest (binomial p < 0.05, clocks confident); msprof-analyze analyzer/cluster/slow_rank_analyzer.py is the peer rule";

fn run(inputs: &RunInputs<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &inputs.cross_rank.cohorts {
        out.extend(waited(c.waited_for.as_ref(), ""));
        out.extend(slowest(c.slowest.as_ref(), ""));
    }
    // Within the job's peer sets (analyses.layout): the only comparisons when ranks differ in role.
    for c in &inputs.layout.comparisons {
        let among = format!(
            " among its peers ({} of stage {}: ranks {})",
            c.role.replace('_', " "),
            c.stage.map_or("?".into(), |s| s.to_string()),
            c.ranks
                .iter()
                .map(|r| r.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        out.extend(waited(c.waited_for.as_ref(), &among));
        out.extend(slowest(c.slowest.as_ref(), &among));
    }
    out
}

fn waited(w: Option<&WaitedFor>, among: &str) -> Option<Finding> {
    let w = w.filter(|w| w.stands_out)?;
    let mut f = finding("slow_rank", SOURCE);
    f.time_at_stake_ns = (w.others_median_wait_ns - w.wait_ns as f64).max(0.0) as i64;
    f.subject = format!("rank {} waited for{among}", w.rank);
    f.statement = w.statement.clone();
    f.estimate = format!(
        "the other ranks' median collective wait ({:.3} ms) minus rank {}'s own ({:.3} ms)",
        w.others_median_wait_ns / 1e6,
        w.rank,
        w.wait_ns as f64 / 1e6
    );
    f.evidence.push(format!(
        "rank {} ({}): last into {} of {} collectives, {} late on average (p = {:.2e}){among}",
        w.rank,
        w.file,
        w.last_into,
        w.of_collectives,
        crate::units::human_duration(w.mean_lateness_ns),
        w.p_value
    ));
    f.recommendation = format!(
        "find what delays rank {} before its collectives: compare its device time and host launches with a peer's (profscope analyze on its files; cross_rank's widest steps), then its host (CPU binding, other processes, data loading) and its NPU (npu-smi health, frequency)",
        w.rank
    );
    Some(f)
}

fn slowest(s: Option<&Slowest>, among: &str) -> Option<Finding> {
    let s = s.filter(|s| s.stands_out)?;
    let mut f = finding("slow_rank", SOURCE);
    f.time_at_stake_ns = (s.mean_excess_ns * s.steps as f64).max(0.0) as i64;
    f.subject = format!("rank {} slowest{among}", s.rank);
    f.statement = s.statement.clone();
    f.estimate = format!(
        "rank {}'s mean excess over the other ranks' median step ({}) times the {} steps it was slowest in",
        s.rank,
        crate::units::human_duration(s.mean_excess_ns),
        s.steps
    );
    f.evidence.push(format!(
        "rank {} ({}): slowest in {} of {} steps (p = {:.2e}){among}",
        s.rank, s.file, s.steps, s.of_steps, s.p_value
    ));
    f.recommendation = format!(
        "rank {} computes longer than its peers: compare its kernels with a peer's (profscope diff on the two ranks' files), check its NPU's frequency and health (npu-smi info), and the data it is given",
        s.rank
    );
    Some(f)
}
